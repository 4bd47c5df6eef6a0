"""Browsing models: parameters (and, for dynamic models, relevance) -> an absorbing chain.

A browsing model (Ferrante & Ferro, ICTIR 2020, Section 3) is a Markov chain over the ranks
1..N plus an absorbing End state.  Every model here moves between adjacent ranks only, so
it returns the transient block as :class:`~bayeschain.chains.Tridiagonal` bands, with any
leading batch axes that its parameters or the relevance carry (posterior draws,
run-topics).  Models register themselves in :data:`MODELS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..chains import Tridiagonal
from ..chains.checks import check_memory, float_array, plain
from ..errors import ParameterError
from ..registry import Registry

#: Marks a parameter without default.
REQUIRED = object()


@dataclass(frozen=True)
class BrowsingModel:
    """A registered browsing model.

    Attributes
    ----------
    name : str
    build : callable ``build(n_ranks, relevance, **params) -> Tridiagonal``
    params : dict
        Accepted parameters and their defaults (:data:`REQUIRED` when there is none).
    dynamic : bool
        Whether the transitions depend on the relevance of the list (Carterette's dynamic
        measures); static models give one chain for every run.
    """

    name: str
    build: Callable[..., Tridiagonal]
    params: dict[str, Any] = field(default_factory=dict)
    dynamic: bool = False
    description: str = ""

    def chain(self, n_ranks: int, relevance=None, **params) -> Tridiagonal:
        """Build the chain, checking parameter names and filling defaults."""
        unknown = set(params) - set(self.params)
        if unknown:
            raise ParameterError(
                f"browsing model {self.name!r} has no parameter(s) {sorted(unknown)}; "
                f"valid: {sorted(self.params)}")
        full = {k: params.get(k, v) for k, v in self.params.items()}
        missing = [k for k, v in full.items() if v is REQUIRED]
        if missing:
            raise ParameterError(f"browsing model {self.name!r} needs parameter(s) {missing}")
        if isinstance(n_ranks, bool) or not isinstance(n_ranks, int | np.integer) \
                or n_ranks < 1:
            raise ParameterError(f"a ranked list needs a positive integer number of ranks, got "
                                 f"{plain(n_ranks)}")
        if self.dynamic and relevance is None:
            raise ParameterError(f"browsing model {self.name!r} depends on the relevance of "
                                 f"the list; pass relevance")
        return self.build(int(n_ranks), relevance, **full)


MODELS: Registry[BrowsingModel] = Registry("browsing model")


def browsing_model(name: str, *, dynamic: bool = False, **params: Any):
    """Decorator registering ``build(n_ranks, relevance, **params)`` as a browsing model."""

    def register(build: Callable[..., Tridiagonal]) -> Callable[..., Tridiagonal]:
        MODELS.add(name, BrowsingModel(name, build, dict(params), dynamic,
                                       (build.__doc__ or "").strip().split("\n")[0]))
        return build

    return register


def get_model(name: str) -> BrowsingModel:
    """The registered browsing model called ``name`` (error lists the valid names)."""
    return MODELS.get(name)


def build_chain(name: str, n_ranks: int, relevance=None, **params) -> Tridiagonal:
    """Build the transient block of browsing model ``name`` for a list of ``n_ranks``."""
    return get_model(name).chain(n_ranks, relevance, **params)


def per_rank(value, n_ranks: int, name: str) -> np.ndarray:
    """A probability given as a scalar, a per-rank array ``(..., N)`` or with draw axes.

    Raises :class:`ParameterError` for values outside [0, 1], NaN, non-numbers, or a wrong
    rank axis.
    """
    arr = float_array(value, name, finite=False, error=ParameterError)
    if arr.ndim == 0:
        arr = np.full(n_ranks, float(arr))
    elif arr.shape[-1] == 1:
        check_memory(arr.shape[:-1] + (n_ranks,), f"{name} over {n_ranks:,} ranks",
                     error=ParameterError)
        arr = np.broadcast_to(arr, arr.shape[:-1] + (n_ranks,))
    elif arr.shape[-1] != n_ranks:
        raise ParameterError(f"{name} has {arr.shape[-1]} ranks on its last axis; the list has "
                             f"{n_ranks}")
    if not np.all(np.isfinite(arr)) or np.any((arr < 0) | (arr > 1)):
        raise ParameterError(f"{name} must be a probability in [0, 1]; got {plain(arr)}")
    return np.array(arr, dtype=float)


def number(value, name: str, *, low: float | None = None, high: float | None = None,
           above: float | None = None) -> float:
    """A real scalar parameter (not a string or a boolean), finite and within bounds."""
    if isinstance(value, bool | np.bool_) or \
            not isinstance(value, int | float | np.integer | np.floating):
        raise ParameterError(f"{name} must be a number; got {plain(value)}")
    x = float(value)
    if not np.isfinite(x) or (low is not None and x < low) or (high is not None and x > high) \
            or (above is not None and x <= above):
        bounds = [f">= {plain(low)}" if low is not None else "",
                  f"> {plain(above)}" if above is not None else "",
                  f"<= {plain(high)}" if high is not None else ""]
        what = " and ".join(b for b in bounds if b) or "finite"
        raise ParameterError(f"{name} must be a finite number {what}; got {plain(value)}")
    return x


def extend_ranks(values: np.ndarray, n: int) -> np.ndarray:
    """``(draws, R)`` per-rank values cut to ``n`` ranks, or extended to ``n`` with the last
    rank's value (a posterior fitted on R ranks applied to longer lists)."""
    values = np.asarray(values)
    if values.shape[1] >= n:
        return values[:, :n]
    return np.concatenate([values, np.repeat(values[:, -1:], n - values.shape[1], axis=1)],
                          axis=1)


def walk_from_moves(forward: np.ndarray, backward: np.ndarray) -> Tridiagonal:
    """Bands of a walk with forward probabilities ``p_i`` and backward ``q_i`` per rank.

    Rank 1 has no backward move and rank N no forward move (the paper's Section 3 matrix:
    their mass is stopping mass).  Checks ``p_i + q_i <= 1``.
    """
    forward, backward = np.broadcast_arrays(forward, backward)
    upper = np.array(forward, dtype=float)
    lower = np.array(backward, dtype=float)
    upper[..., -1] = 0.0
    lower[..., 0] = 0.0
    if np.any(upper + lower > 1 + 1e-12):
        i = np.unravel_index(np.argmax(upper + lower), upper.shape)[-1]
        raise ParameterError(f"forward + backward probability exceeds 1 at rank {i + 1} "
                             f"({upper[..., i].max():.4g} + {lower[..., i].max():.4g})")
    return Tridiagonal(lower, np.zeros_like(upper), upper)
