"""Static browsing models: transitions depend on rank only (Ferrante & Ferro, ICTIR 2020).

* ``dfbm``: deterministic forward browsing; the user reads ranks 1..k and stops (Precision).
* ``sfbm``: stochastic forward browsing; at rank i the user goes on with ``p_i`` and stops
  with ``1 - p_i`` (RBP with constant p; AP/ERR/DCG with other ``p_i``).
* ``rwbm``: random walk; forward ``p_i``, backward ``q_i``, stop ``1 - p_i - q_i``.  Rank 1
  moves forward with ``p_1`` and stops otherwise; rank N moves back with ``q_N`` and stops
  otherwise (the matrix of Section 3).  ``p1`` and ``qN`` override the two boundary
  probabilities; Figure 1d of the paper uses ``p1 = p + q`` (stop mass kept at ``1-p-q``).
* ``dcg``: the forward walk whose stopping law gives DCG as ``E[T(H)]`` (Appendix D):
  ``P(H >= i) = discount(i)``, hence ``p_i = discount(i + 1) / discount(i)``.
"""

from __future__ import annotations

import numpy as np

from ..chains import Tridiagonal
from ..chains.checks import float_array, plain
from ..errors import ParameterError
from .base import REQUIRED, browsing_model, number, per_rank, walk_from_moves


@browsing_model("dfbm", cutoff=None)
def dfbm(n_ranks: int, relevance=None, *, cutoff=None) -> Tridiagonal:
    """Deterministic forward browsing: read ranks 1..cutoff (default all) and stop."""
    if cutoff is not None and (isinstance(cutoff, bool) or
                               not isinstance(cutoff, int | np.integer) or cutoff < 1):
        raise ParameterError(f"dfbm cutoff must be a positive integer, got {plain(cutoff)}")
    k = n_ranks if cutoff is None else int(cutoff)
    forward = (np.arange(n_ranks) < min(k, n_ranks) - 1).astype(float)
    return walk_from_moves(forward, np.zeros(n_ranks))


@browsing_model("sfbm", p=REQUIRED)
def sfbm(n_ranks: int, relevance=None, *, p) -> Tridiagonal:
    """Stochastic forward browsing: continue with p_i, stop with 1 - p_i (stop at rank N)."""
    forward = per_rank(p, n_ranks, "p")
    return walk_from_moves(forward, np.zeros_like(forward))


@browsing_model("rwbm", p=REQUIRED, q=REQUIRED, p1=None, qN=None)
def rwbm(n_ranks: int, relevance=None, *, p, q, p1=None, qN=None) -> Tridiagonal:  # noqa: N803
    """Random walk: forward p_i, backward q_i, stop 1 - p_i - q_i."""
    forward = per_rank(p, n_ranks, "p")
    backward = per_rank(q, n_ranks, "q")
    forward, backward = (np.array(a) for a in np.broadcast_arrays(forward, backward))
    if p1 is not None:
        forward[..., 0] = per_rank(p1, 1, "p1")[..., 0]
    if qN is not None:
        backward[..., -1] = per_rank(qN, 1, "qN")[..., 0]
    return walk_from_moves(forward, backward)


def log_discount(ranks: np.ndarray, base: float = 2.0, variant: str = "trec") -> np.ndarray:
    """DCG discount: ``1 / log_b(i + 1)`` (``"trec"``, as trec_eval's ndcg) or
    ``1 / max(1, log_b i)`` (``"jarvelin"``, Järvelin & Kekäläinen 2002 and the paper's Eq. 10).
    """
    i = float_array(ranks, "ranks", error=ParameterError)
    base = number(base, "DCG log base", above=1.0)
    if variant == "trec":
        return np.log(base) / np.log(i + 1.0)
    if variant == "jarvelin":
        return 1.0 / np.maximum(1.0, np.log(i) / np.log(base))
    raise ParameterError(f"unknown DCG discount {plain(variant)}; use 'trec' or 'jarvelin'")


@browsing_model("dcg", base=2.0, variant="trec")
def dcg_walk(n_ranks: int, relevance=None, *, base=2.0, variant="trec") -> Tridiagonal:
    """Forward walk with P(H >= i) equal to the DCG discount of rank i (Appendix D)."""
    base = number(base, "DCG log base", above=1.0)
    reach = log_discount(np.arange(1, n_ranks + 2), base, variant)
    if variant == "trec":
        reach = reach / reach[0]  # P(H >= 1) = 1; trec's rank-1 discount is already 1 for b=2
    forward = np.minimum(reach[1:] / reach[:-1], 1.0)
    return walk_from_moves(forward, np.zeros_like(forward))
