"""nutpie on the walk's Numba log density through C callbacks, without Python per step.

nutpie's ``from_pyfunc`` calls a Python function for every gradient: on TREC Session 2013
that costs about 95 us on top of the likelihood's 57 us, under the GIL, so two chains run
no faster than one.  nutpie's own PyMC path instead calls a Numba ``cfunc`` by address from
its Rust threads; this module gives the walk's :func:`~bayeschain.inference.walk.model._logp`
the same entry: one compiled ``cfunc`` (cached on disk, the same for every model) that
reads the model's arrays from a table of addresses and shapes (``user_data``), and an
``expand`` that returns the unconstrained draw itself (the named quantities are computed
from it afterwards, :meth:`WalkModel.expand`).

The cfuncs are defined at module level and compiled when this module is imported (only
to sample), cached on disk: Numba caches neither closures nor functions made inside other
functions.

**Private classes, chosen by version and checked.**  nutpie has no public entry for a
compiled C density: this bridge uses its lower-level classes (``_lib.LogpFunc``,
``ExpandFunc``, ``PyMcModel``, ``PySampler.from_pymc``) the way nutpie's own PyMC backend
does, and their signatures change between releases (0.16.11 passes two more arguments to
``_make_sampler`` than 0.16.8).  So :func:`c_model` is used only on the nutpie releases
it was tested with (:data:`TESTED`), raises :class:`CPathUnavailable` otherwise, and
:mod:`~bayeschain.inference.walk.sampler` verifies it at its first use in a process (a
few draws whose log density and gradient, as nutpie reports them, must equal the
model's) and falls back to nutpie's public ``from_pyfunc`` on any failure, saying so once.
C signatures (nutpie's): ``logp(dim, x, grad, logp, user_data) -> int`` (0 ok, 3
non-finite gradient, 4 non-finite log density) and
``expand(dim, n_expanded, x, out, user_data) -> int``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ...chains.jit import cached_cfunc
from . import model as examination

#: nutpie releases the C bridge is used with: from the first tested release up to, not
#: including, the first untested minor release (the lower-level classes are nutpie's to
#: change; a release outside this range samples through ``from_pyfunc``)
TESTED = ((0, 16, 8), (0, 17, 0))


class CPathUnavailable(Exception):
    """The C bridge cannot be used with this nutpie (the message says why)."""


def nutpie_version() -> tuple[int, ...]:
    """nutpie's version as a tuple of its leading integers (``(0, 16, 11)``)."""
    import nutpie

    parts = []
    for piece in str(nutpie.__version__).split("."):
        digits = "".join(ch for ch in piece if ch.isdigit()) if piece[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)

#: the order of the model's arguments in the address table (arrays), after theta
ARRAYS = ("kind", "p_start", "c_start", "n_coord", "x", "centred", "a0", "free", "lengths",
          "items", "starts", "move_index", "click_index", "state_ptr", "states", "term_ptr",
          "targets", "counts", "combo_click", "combo_offset", "clicked", "scalars")
#: float arrays among them (the others are int64)
FLOATS = ("x", "a0", "counts", "scalars")
#: 2-D arrays among them
MATRICES = ("items", "move_index", "click_index")

def _table(model) -> tuple[np.ndarray, list]:
    """The address table of a :class:`~bayeschain.inference.walk.model.WalkModel`: for
    each of :data:`ARRAYS` its address and two extents, then the integer scalars and the
    address of the likelihood's block kernel (:meth:`WalkModel.block_kernel`); and the
    arrays it points to (kept alive by the caller)."""
    args = model.kernel_arguments()
    named = args._asdict()
    named["scalars"] = np.array([args.prior_sd, args.dev_sd], dtype=np.float64)
    keep = []
    table = []
    for name in ARRAYS:
        dtype = np.float64 if name in FLOATS else np.int64
        a = np.ascontiguousarray(named[name], dtype=dtype)
        if name in MATRICES:
            a = a.reshape(a.shape[0], -1) if a.ndim == 2 else a.reshape(-1, 1)
        keep.append(a)
        table += [a.ctypes.data, a.shape[0], a.shape[1] if a.ndim == 2 else 0]
    table += [int(args.n_groups), int(args.n_ranks), int(args.n_move_coords),
              int(bool(args.rescale)), int(args.n_sets), int(args.n_click_coords),
              int(args.reclick_coord), int(args.reader_coord), model.block_kernel()]
    return np.array(table, dtype=np.int64), keep


_LOGP = examination.compiled("logp_kernel")
_N = len(ARRAYS)


@intrinsic
def _as_pointer(typingctx, address):
    """An integer address as a ``void *``."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(types.int64), codegen


def _cfunc(signature):
    """``numba.cfunc`` with its on-disk cache keyed by the sources of the density it calls
    (:func:`~bayeschain.chains.jit.cached_cfunc`), or without it when the cache cannot be
    written (a full disk, a file-size limit, a read-only folder: the rule of
    :mod:`bayeschain.chains.jit`), so that a cache never sends the walk to the slower
    Python callback, nor runs a kernel older than its sources."""
    return lambda func: cached_cfunc(signature, func)


_LOGP_SIG = types.int64(types.uint64, types.CPointer(types.double),
                        types.CPointer(types.double), types.CPointer(types.double),
                        types.voidptr)
_EXPAND_SIG = types.int64(types.uint64, types.uint64, types.CPointer(types.double),
                          types.CPointer(types.double), types.voidptr)


@_cfunc(_LOGP_SIG)
def logp_cfunc(dim, x_, out_, logp_, user_data):
    """nutpie's ``logp(dim, x, grad, logp, user_data)``: 0, or 4 (log density not
    finite; the gradient is then zero) or 3 (a gradient entry not finite)."""
    t = numba.carray(user_data, (3 * _N + 9,), np.int64)
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
    combo_click = numba.carray(_as_pointer(t[54]), (t[55],), i64)
    combo_offset = numba.carray(_as_pointer(t[57]), (t[58],), i64)
    clicked = numba.carray(_as_pointer(t[60]), (t[61],), i64)
    scalars = numba.carray(_as_pointer(t[63]), (t[64],), f64)
    base = 3 * _N
    lp = _LOGP(theta, kind, p_start, c_start, n_coord, x, centred, a0, scalars[0],
               scalars[1], t[base], t[base + 1], free, t[base + 2], t[base + 4],
               t[base + 5], t[base + 6], t[base + 7], lengths, items, starts,
               move_index, click_index, combo_click, combo_offset, t[base + 3] != 0,
               state_ptr, states, clicked, term_ptr, targets, counts, grad, np.empty(0),
               t[base + 8])
    result[0] = lp
    if not np.isfinite(lp):
        for i in range(dim):
            grad[i] = 0.0
        return 4
    for i in range(dim):
        if not np.isfinite(grad[i]):
            return 3
    return 0


@_cfunc(_EXPAND_SIG)
def expand_cfunc(dim, n_expanded, x_, out_, user_data):
    """nutpie's ``expand``: the draw itself."""
    if n_expanded != dim:
        return -1
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (dim,))
    for i in range(dim):
        out[i] = x[i]
    return 0


def c_model(model, init) -> Any:
    """A nutpie compiled model of ``model``'s density whose draws are the unconstrained
    vector ``theta`` (``init(seed)``: a starting point).  Raises
    :class:`CPathUnavailable` on a nutpie outside :data:`TESTED` or without the classes
    used (see the module)."""
    version = nutpie_version()
    low, high = TESTED
    if not low <= version < high:
        raise CPathUnavailable(f"nutpie {'.'.join(map(str, version))} is outside the "
                               f"releases the C bridge was tested with "
                               f"({'.'.join(map(str, low))} to before "
                               f"{'.'.join(map(str, high))})")
    try:
        from nutpie import _lib
        from nutpie.sample import CompiledModel
    except ImportError as exc:
        raise CPathUnavailable(f"nutpie's lower-level classes are missing ({exc})") from exc
    needed = ("LogpFunc", "ExpandFunc", "PyMcModel", "PyVariable", "PySampler")
    missing = [n for n in needed if not hasattr(_lib, n)]
    if missing or not hasattr(_lib.PySampler, "from_pymc"):
        raise CPathUnavailable(f"nutpie lacks {', '.join(missing) or 'PySampler.from_pymc'}")
    table, keep = _table(model)

    @dataclass(frozen=True, eq=False)
    class WalkCModel(CompiledModel):
        ndim: int
        table: np.ndarray
        arrays: list

        @property
        def n_dim(self) -> int:
            return self.ndim

        @property
        def shapes(self) -> dict:
            return {"theta": (self.ndim,)}

        @property
        def coords(self) -> dict:
            return {"unconstrained": np.arange(self.ndim)}

        def _make_model(self, init_mean):
            address = self.table.ctypes.data
            logp_fn = _lib.LogpFunc(logp_cfunc.address, address, self)
            expand_fn = _lib.ExpandFunc(self.ndim, self.ndim, expand_cfunc.address, address,
                                        self)
            sizes = {"unconstrained": self.ndim}
            variables = _lib.PyVariable.new_variables(["theta"], ["float64"],
                                                      [(self.ndim,)], sizes,
                                                      {"theta": ["unconstrained"]})
            return _lib.PyMcModel(logp_fn, expand_fn, variables, self.ndim, sizes,
                                  self.coords, init, None)

        def _make_sampler(self, settings, init_mean, cores, progress_type, *rest):
            # nutpie 0.16.8 passes (store,), 0.16.11 (extra_callback, extra_callback_rate,
            # store): handed on as they come, in the order nutpie's PyMC backend uses
            return _lib.PySampler.from_pymc(settings, cores, self._make_model(init_mean),
                                            progress_type, *rest)

    compiled = WalkCModel(dims={"theta": ("unconstrained",)}, ndim=int(model.ndim),
                          table=table, arrays=keep)
    try:                     # the classes' signatures are nutpie's to change: try them once
        compiled._make_model(np.zeros(compiled.ndim))
    except Exception as exc:  # noqa: BLE001 - any failure of nutpie's internals
        raise CPathUnavailable(f"nutpie's model classes refused the bridge "
                               f"({type(exc).__name__}: {exc})") from exc
    return compiled
