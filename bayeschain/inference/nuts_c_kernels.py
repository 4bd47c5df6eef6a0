"""The C entry points of :mod:`~bayeschain.inference.nuts_c`: Numba ``cfunc`` s of the walk's
log density and of the identity ``expand``, compiled when this module is imported (it is
imported only to sample) and cached on disk, so a second run loads them.  Defined at
module level: Numba caches neither closures nor functions made inside other functions."""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from . import examination
from .nuts_c import ARRAYS

_LOGP = examination._compiled("_logp")
_N = len(ARRAYS)
# the address table's layout (nuts_c._table), which the cfunc below reads by position
assert ARRAYS == ("kind", "p_start", "c_start", "n_coord", "x", "centred", "a0", "free",
                  "lengths", "items", "starts", "move_index", "click_index", "state_ptr",
                  "states", "term_ptr", "targets", "counts", "scalars")


@intrinsic
def _as_pointer(typingctx, address):
    """An integer address as a ``void *``."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(types.int64), codegen


_LOGP_SIG = types.int64(types.uint64, types.CPointer(types.double),
                        types.CPointer(types.double), types.CPointer(types.double),
                        types.voidptr)
_EXPAND_SIG = types.int64(types.uint64, types.uint64, types.CPointer(types.double),
                          types.CPointer(types.double), types.voidptr)


@numba.cfunc(_LOGP_SIG, cache=True)
def logp_cfunc(dim, x_, out_, logp_, user_data):
    """nutpie's ``logp(dim, x, grad, logp, user_data)``: 0, or 4 (log density not
    finite; the gradient is then zero) or 3 (a gradient entry not finite)."""
    t = numba.carray(user_data, (3 * _N + 4,), np.int64)
    theta = numba.carray(x_, (dim,))
    grad = numba.carray(out_, (dim,))
    result = numba.carray(logp_, (1,))
    # the arrays written out one by one (helpers called with constant positions would be
    # compiled once per position: seconds on a cold cache)
    i64, f64 = np.int64, np.float64
    kind = numba.carray(_as_pointer(t[0]), (t[1],), i64)
    p_start = numba.carray(_as_pointer(t[3]), (t[4],), i64)
    c_start = numba.carray(_as_pointer(t[6]), (t[7],), i64)
    n_coord = numba.carray(_as_pointer(t[9]), (t[10],), i64)
    x = numba.carray(_as_pointer(t[12]), (t[13],), f64)
    centred = numba.carray(_as_pointer(t[15]), (t[16],), i64)
    a0 = numba.carray(_as_pointer(t[18]), (t[19],), f64)
    free = numba.carray(_as_pointer(t[21]), (t[22],), i64)
    lengths = numba.carray(_as_pointer(t[24]), (t[25],), i64)
    items = numba.carray(_as_pointer(t[27]), (t[28], t[29]), i64)
    starts = numba.carray(_as_pointer(t[30]), (t[31],), i64)
    move_index = numba.carray(_as_pointer(t[33]), (t[34], t[35]), i64)
    click_index = numba.carray(_as_pointer(t[36]), (t[37], t[38]), i64)
    state_ptr = numba.carray(_as_pointer(t[39]), (t[40],), i64)
    states = numba.carray(_as_pointer(t[42]), (t[43],), i64)
    term_ptr = numba.carray(_as_pointer(t[45]), (t[46],), i64)
    targets = numba.carray(_as_pointer(t[48]), (t[49],), i64)
    counts = numba.carray(_as_pointer(t[51]), (t[52],), f64)
    scalars = numba.carray(_as_pointer(t[54]), (t[55],), f64)
    base = 3 * _N
    lp = _LOGP(theta, kind, p_start, c_start, n_coord, x, centred, a0, scalars[0],
               scalars[1], t[base], t[base + 1], free, t[base + 2], lengths, items, starts,
               move_index, click_index, t[base + 3] != 0, state_ptr, states, term_ptr,
               targets, counts, grad)
    result[0] = lp
    if not np.isfinite(lp):
        for i in range(dim):
            grad[i] = 0.0
        return 4
    for i in range(dim):
        if not np.isfinite(grad[i]):
            return 3
    return 0


@numba.cfunc(_EXPAND_SIG, cache=True)
def expand_cfunc(dim, n_expanded, x_, out_, user_data):
    """nutpie's ``expand``: the draw itself."""
    if n_expanded != dim:
        return -1
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (dim,))
    for i in range(dim):
        out[i] = x[i]
    return 0
