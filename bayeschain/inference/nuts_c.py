"""nutpie on the walk's Numba log density through C callbacks, without Python per step.

nutpie's ``from_pyfunc`` calls a Python function for every gradient: on TREC Session 2013
that costs about 95 us on top of the likelihood's 57 us, under the GIL, so two chains run
no faster than one.  nutpie's own PyMC path instead calls a Numba ``cfunc`` by address from
its Rust threads; this module gives the walk's :func:`~bayeschain.inference.examination._logp`
the same entry: one compiled ``cfunc`` (cached on disk, the same for every model) that
reads the model's arrays from a table of addresses and shapes (``user_data``), and an
``expand`` that returns the unconstrained draw itself (the named quantities are computed
from it afterwards, :meth:`WalkModel.expand`).

It uses nutpie's lower-level classes (``_lib.LogpFunc``, ``ExpandFunc``, ``PyMcModel``,
``PySampler.from_pymc``, as nutpie's PyMC backend does); :func:`c_model` returns ``None``
when they are not there (another nutpie version) and the caller falls back to
``from_pyfunc``.  C signatures (nutpie's): ``logp(dim, x, grad, logp, user_data) -> int``
(0 ok, 3 non-finite gradient, 4 non-finite log density) and
``expand(dim, n_expanded, x, out, user_data) -> int``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: the order of the model's arguments in the address table (arrays), after theta
ARRAYS = ("kind", "p_start", "c_start", "n_coord", "x", "centred", "a0", "free", "lengths",
          "items", "starts", "move_index", "click_index", "state_ptr", "states", "term_ptr",
          "targets", "counts", "scalars")
#: float arrays among them (the others are int64)
FLOATS = ("x", "a0", "counts", "scalars")
#: 2-D arrays among them
MATRICES = ("items", "move_index", "click_index")

def _table(model) -> tuple[np.ndarray, list]:
    """The address table of a :class:`~bayeschain.inference.examination.WalkModel`: for
    each of :data:`ARRAYS` its address and two extents, then the integer scalars; and the
    arrays it points to (kept alive by the caller)."""
    (kind, p_start, c_start, n_coord, x, centred, a0, prior_sd, dev_sd, n_groups, n_ranks,
     free, n_move_coords, lengths, items, starts, move_index, click_index, rescale,
     state_ptr, states, term_ptr, targets, counts) = model._args()
    named = dict(kind=kind, p_start=p_start, c_start=c_start, n_coord=n_coord, x=x,
                 centred=centred, a0=a0, free=free, lengths=lengths, items=items,
                 starts=starts, move_index=move_index, click_index=click_index,
                 state_ptr=state_ptr, states=states, term_ptr=term_ptr, targets=targets,
                 counts=counts, scalars=np.array([prior_sd, dev_sd], dtype=np.float64))
    keep = []
    table = []
    for name in ARRAYS:
        dtype = np.float64 if name in FLOATS else np.int64
        a = np.ascontiguousarray(named[name], dtype=dtype)
        if name in MATRICES:
            a = a.reshape(a.shape[0], -1) if a.ndim == 2 else a.reshape(-1, 1)
        keep.append(a)
        table += [a.ctypes.data, a.shape[0], a.shape[1] if a.ndim == 2 else 0]
    table += [int(n_groups), int(n_ranks), int(n_move_coords), int(bool(rescale))]
    return np.array(table, dtype=np.int64), keep


def _compile():
    """The two cfuncs, from :mod:`~bayeschain.inference.nuts_c_kernels` (compiled at its
    import, cached on disk by Numba)."""
    from . import nuts_c_kernels

    return nuts_c_kernels.logp_cfunc, nuts_c_kernels.expand_cfunc


def c_model(model, init) -> Any | None:
    """A nutpie compiled model of ``model``'s density whose draws are the unconstrained
    vector ``theta`` (``init(seed)``: a starting point), or ``None`` when this nutpie
    lacks the classes used (see the module) or Numba is absent."""
    try:
        from nutpie import _lib
        from nutpie.sample import CompiledModel
    except ImportError:
        return None
    needed = ("LogpFunc", "ExpandFunc", "PyMcModel", "PyVariable", "PySampler")
    if not all(hasattr(_lib, n) for n in needed) or not hasattr(_lib.PySampler, "from_pymc"):
        return None
    from ..chains.jit import numba_available

    if not numba_available():
        return None
    logp, expand = _compile()
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
            logp_fn = _lib.LogpFunc(logp.address, address, self)
            expand_fn = _lib.ExpandFunc(self.ndim, self.ndim, expand.address, address, self)
            sizes = {"unconstrained": self.ndim}
            variables = _lib.PyVariable.new_variables(["theta"], ["float64"],
                                                      [(self.ndim,)], sizes,
                                                      {"theta": ["unconstrained"]})
            return _lib.PyMcModel(logp_fn, expand_fn, variables, self.ndim, sizes,
                                  self.coords, init, None)

        def _make_sampler(self, settings, init_mean, cores, progress_type, store):
            return _lib.PySampler.from_pymc(settings, cores, self._make_model(init_mean),
                                            progress_type, store)

    compiled = WalkCModel(dims={"theta": ("unconstrained",)}, ndim=int(model.ndim),
                          table=table, arrays=keep)
    try:                     # the classes' signatures are nutpie's to change: try them once
        compiled._make_model(np.zeros(compiled.ndim))
    except (TypeError, AttributeError, ValueError):
        return None
    return compiled
