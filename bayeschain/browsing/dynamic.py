"""Dynamic browsing models: transitions depend on the relevance of the list.

* ``ap`` (Ferrante & Ferro, ICTIR 2020, Section 6.2): the user moves on after a
  non-relevant document and, at a relevant rank ``i``, stops with probability
  ``r[i] / (R_N - R_{i-1})`` (``R_i = r[1] + ... + r[i]``), so that the stopping rank is
  uniform over the relevant documents retrieved.  ``E[T(H) / H]`` is then AP with the
  retrieved relevant documents as recall base; multiplying by ``R_N / RB`` gives AP with
  recall base ``RB``.
* ``err`` (Section 6.5): at rank ``i`` the user is satisfied and stops with
  ``R_i = (2^g_i - 1) / 2^g_max``; the paper sets ``R_N = 1`` (there is no End state for an
  unsatisfied user), so ``E[1/H]`` is ERR computed with ``R_N = 1``.  ``R`` is computed as
  ``2^(g - g_max) - 2^(-g_max)`` (exact for integer grades, and without the overflow of
  ``2^g`` for grades of 1024 and more) or, for grades below 1, as
  ``-2^(g - g_max) expm1(-g log 2)`` (no cancellation).
* ``drwbm``: the random walk of Section 3 with relevance-dependent moves: at a relevant
  rank (grade >= ``level``, default 1) the user moves forward with ``p_rel`` and backward
  with ``q_rel``, at any other rank with ``p`` and ``q``; the rest is stopping mass (rank 1
  has no backward move and rank N no forward move, as in ``rwbm``).  Its parameters are
  what the walk fitted by relevance class (spec ``walk-relevance``) estimates.

Relevance has shape ``(..., N)``; each leading index gets its own chain.
"""

from __future__ import annotations

import numpy as np

from ..chains import Tridiagonal
from ..chains.checks import float_array, plain
from ..errors import ParameterError
from .base import REQUIRED, browsing_model, number, per_rank, walk_from_moves


def _relevance(relevance, n_ranks: int) -> np.ndarray:
    rel = float_array(relevance, "relevance", error=ParameterError)
    if rel.ndim == 0 or rel.shape[-1] != n_ranks:
        raise ParameterError(f"relevance has shape {rel.shape}, expected {n_ranks} ranks on its "
                             f"last axis")
    return rel


@browsing_model("ap", dynamic=True)
def ap_walk(n_ranks: int, relevance) -> Tridiagonal:
    """Stop only at relevant ranks, uniformly over the relevant documents retrieved."""
    r = (_relevance(relevance, n_ranks) > 0).astype(float)
    total = r.sum(axis=-1, keepdims=True)
    before = np.cumsum(r, axis=-1) - r          # R_{i-1}
    remaining = total - before                  # R_N - R_{i-1}
    with np.errstate(invalid="ignore", divide="ignore"):
        stop = np.where(remaining > 0, r / np.where(remaining > 0, remaining, 1), 1.0)
    return walk_from_moves(1.0 - stop, np.zeros_like(stop))


def top_grade(grades, *, keepdims: bool = False) -> np.ndarray:
    """The top of each list's grading scale: its largest grade, negatives as 0, at least 1
    (ERR's ``g_max``; trec_eval 10's graded RBP divides by it)."""
    g = float_array(grades, "grades", error=ParameterError)
    if g.ndim == 0 or g.shape[-1] == 0:
        raise ParameterError(f"grades must have at least one rank on their last axis; got "
                             f"shape {g.shape}")
    return np.maximum(np.clip(g, 0, None).max(axis=-1, keepdims=keepdims), 1.0)


def err_satisfaction(relevance, max_grade=None) -> np.ndarray:
    """ERR's satisfaction probability ``(2^g - 1) / 2^g_max`` (Chapelle et al., CIKM 2009).

    Negative grades count as 0.  ``max_grade`` (scalar, or an array broadcasting against
    ``relevance``, e.g. ``(B, 1)``) defaults to the largest grade in each list (at least 1).
    Computed as ``2^(g - g_max) - 2^(-g_max)`` (grades >= 1: exact for integer grades, no
    overflow for any finite grade) and ``-2^(g - g_max) expm1(-g log 2)`` (grades below 1).
    """
    g = np.clip(float_array(relevance, "relevance", error=ParameterError), 0, None)
    if g.ndim == 0:
        raise ParameterError("relevance must have a rank axis (an array (..., N))")
    if max_grade is None:
        gmax = top_grade(g, keepdims=True)
    else:
        gmax = float_array(max_grade, "max_grade", error=ParameterError)
        try:
            np.broadcast_shapes(gmax.shape, g.shape)
        except ValueError:
            raise ParameterError(f"max_grade of shape {gmax.shape} does not broadcast against "
                                 f"relevance of shape {g.shape}") from None
        if np.any(g > gmax):
            raise ParameterError(f"relevance grade {plain(g.max())} above "
                                 f"max_grade={plain(max_grade)}")
    with np.errstate(under="ignore"):
        scale = np.exp2(g - gmax)                         # 2^(g - g_max) <= 1: no overflow
        big = scale - np.exp2(-gmax)
        small = -scale * np.expm1(-g * np.log(2.0))
    return np.where(g >= 1, big, small)


@browsing_model("err", dynamic=True, max_grade=None)
def err_walk(n_ranks: int, relevance, *, max_grade=None) -> Tridiagonal:
    """Stop at rank i with ERR's satisfaction probability R_i (and R_N = 1)."""
    sat = err_satisfaction(_relevance(relevance, n_ranks), max_grade)
    return walk_from_moves(1.0 - sat, np.zeros_like(sat))


@browsing_model("drwbm", dynamic=True, p=REQUIRED, q=REQUIRED, p_rel=REQUIRED, q_rel=REQUIRED,
                level=1)
def relevance_walk(n_ranks: int, relevance, *, p, q, p_rel, q_rel, level=1) -> Tridiagonal:
    """Random walk whose forward / backward moves depend on the relevance of the rank
    (relevant: grade >= ``level``, the rule of every binary measure)."""
    relevant = _relevance(relevance, n_ranks) >= number(level, "level")
    forward = np.where(relevant, per_rank(p_rel, n_ranks, "p_rel"), per_rank(p, n_ranks, "p"))
    backward = np.where(relevant, per_rank(q_rel, n_ranks, "q_rel"),
                        per_rank(q, n_ranks, "q"))
    return walk_from_moves(forward, backward)
