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
#: positions in the address table (see nuts_c._table)
_SCALARS = ARRAYS.index("scalars")


@intrinsic
def _as_pointer(typingctx, address):
    """An integer address as a ``void *``."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(types.int64), codegen


@numba.njit(cache=True)
def _ints(table, k):
    return numba.carray(_as_pointer(table[3 * k]), (table[3 * k + 1],), np.int64)


@numba.njit(cache=True)
def _floats(table, k):
    return numba.carray(_as_pointer(table[3 * k]), (table[3 * k + 1],), np.float64)


@numba.njit(cache=True)
def _matrix(table, k):
    return numba.carray(_as_pointer(table[3 * k]), (table[3 * k + 1], table[3 * k + 2]),
                        np.int64)


_LOGP_SIG = types.int64(types.uint64, types.CPointer(types.double),
                        types.CPointer(types.double), types.CPointer(types.double),
                        types.voidptr)
_EXPAND_SIG = types.int64(types.uint64, types.uint64, types.CPointer(types.double),
                          types.CPointer(types.double), types.voidptr)


@numba.cfunc(_LOGP_SIG, cache=True)
def logp_cfunc(dim, x_, out_, logp_, user_data):
    """nutpie's ``logp(dim, x, grad, logp, user_data)``: 0, or 4 (log density not
    finite; the gradient is then zero) or 3 (a gradient entry not finite)."""
    table = numba.carray(user_data, (3 * _N + 4,), np.int64)
    theta = numba.carray(x_, (dim,))
    grad = numba.carray(out_, (dim,))
    result = numba.carray(logp_, (1,))
    scalars = _floats(table, _SCALARS)
    base = 3 * _N
    lp = _LOGP(theta, _ints(table, 0), _ints(table, 1), _ints(table, 2), _ints(table, 3),
               _floats(table, 4), _ints(table, 5), _floats(table, 6), scalars[0], scalars[1],
               table[base], table[base + 1], _ints(table, 7), table[base + 2],
               _ints(table, 8), _matrix(table, 9), _ints(table, 10), _matrix(table, 11),
               _matrix(table, 12), table[base + 3] != 0, _ints(table, 13), _ints(table, 14),
               _ints(table, 15), _ints(table, 16), _floats(table, 17), grad)
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
