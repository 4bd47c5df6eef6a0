r"""EPRUM: Expected Precision-Recall with User Modelling (Piwowarski & Dupret, SIGIR 2006).

The list's rank ``k`` is an entry point from which a user reaches element ``x`` with
probability ``P(k ~> x)`` (the navigation matrix ``nav[k, x]``; in classical IR it is 1
iff rank ``k`` points to ``x``).  Navigations are independent (Hypothesis 3.1), so

* an element is seen after ``k`` ranks with the noisy-or probability
  ``P(x in S_k) = 1 - prod_{j<=k} (1 - P(j ~> x))``                               (Eq. 1)
* the number ``F_k`` of distinct ideal elements discovered after ``k`` ranks is a
  Poisson-binomial variable with success probabilities ``P(x in S_k)``, ``x`` ideal
  (Eq. 7); its law is computed exactly by the O(t^2) dynamic programme over elements
  (``method="exact"``), or by the normal approximation with continuity correction
  (``method="normal"``, Lindeberg-Feller; the paper's suggestion for many uncertain
  elements);
* with ``ML`` the number of ranks consulted to discover ``r`` ideal elements and ``A`` the
  indicator that ``r`` is reached within the ``N`` ranks,
  ``E[A / ML] = sum_k (1/k) (P(F_{k-1} < r) - P(F_k < r))
  = 1 - P(F_N < r) / N - sum_{k<N} P(F_k < r) / (k (k + 1))``                       (Eq. 5)
* for an ideal list, ``E[ML*] = 1 + sum_{k>=1} P(F*_k < r)``                        (Eq. 4)
* precision at recall value ``r`` (or level ``l``, ``r = l t``) is
  ``E[ML*] E[A / ML]`` (Section 5).  Without an ideal list, ``E[ML*]`` defaults to ``r``:
  the classical case, where each rank gives access to at most one element.

Graded idealism (Section 3.1): element ``x`` is ideal for the users whose satisfaction
level ``S ~ U[0, 1]`` is at most ``P(x in I)``; precision is integrated over ``S``, which is
a finite sum because the ideal set only changes at the distinct values of ``P(x in I)``.
The number of ideal elements ``t`` changes with ``S``, so a recall *level* maps to a
different recall value at each satisfaction level.

Note: the worked example of Eq. (1) in Section 3.3 prints ``1 - (1 - 0.4)(1 - 0.9)(1 - 1)``
for the third rank; the second factor is ``(1 - 0.6)`` (rank 2 leads 60% of users to the
element); the result, 1, is the same.
"""

from __future__ import annotations

import numpy as np

from ..browsing.base import number
from ..chains.checks import MAX_WORK, check_memory, float_array, plain
from ..errors import ParameterError


def _navigation(nav) -> np.ndarray:
    p = float_array(nav, "navigation probabilities", finite=False, error=ParameterError)
    if p.ndim != 2 or 0 in p.shape:
        raise ParameterError(f"navigation probabilities must be a (ranks x elements) matrix; "
                             f"got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ParameterError("navigation probabilities P(k ~> x) must lie in [0, 1]")
    return p


def seen_probabilities(nav) -> np.ndarray:
    """``P(x in S_k)`` for ``k = 1..N`` (rows) and every element (columns), Eq. (1)."""
    p = _navigation(nav)
    return 1.0 - np.cumprod(1.0 - p, axis=0)


def poisson_binomial(probs) -> np.ndarray:
    """``(rows, t + 1)``: the law of the number of successes among ``t`` independent
    Bernoulli trials with the success probabilities of each row of ``probs`` ``(rows, t)``
    (the Poisson-binomial law, by the dynamic programme that adds one trial at a time)."""
    probs = np.asarray(probs, dtype=float)
    law = np.zeros((probs.shape[0], probs.shape[1] + 1))
    law[:, 0] = 1.0
    for j in range(probs.shape[1]):
        pj = probs[:, j:j + 1]
        law[:, 1:] = law[:, 1:] * (1 - pj) + law[:, :-1] * pj
        law[:, 0] *= 1 - pj[:, 0]
    return law


def discovered_distribution(nav, ideal, *, method: str = "exact") -> np.ndarray:
    """``P(F_k = f)`` for ``k = 0..N`` (rows; ``F_0 = 0``) and ``f = 0..t`` (columns).

    Parameters
    ----------
    nav : array (N, M)
        ``P(k ~> x)`` from rank ``k`` to element ``x``.
    ideal : bool array (M,)
        Which elements are ideal.
    method : "exact" or "normal"
        Poisson-binomial dynamic programme (O(N t^2)), or the normal approximation.
    """
    seen = seen_probabilities(nav)
    mask = float_array(ideal, "ideal", error=ParameterError)
    if mask.shape != (seen.shape[1],):
        raise ParameterError(f"ideal must flag each of the {seen.shape[1]} elements; got shape "
                             f"{mask.shape}")
    mask = mask.astype(bool)
    probs = np.vstack([np.zeros((1, int(mask.sum()))), seen[:, mask]])   # (N + 1, t)
    t = probs.shape[1]
    if method == "exact":
        _check_work(probs.shape[0], t, 1)
        return poisson_binomial(probs)
    if method == "normal":
        from scipy.special import ndtr  # the normal CDF (scipy.stats loads in ~1 s)

        mean = probs.sum(axis=1, keepdims=True)
        sd = np.sqrt((probs * (1 - probs)).sum(axis=1, keepdims=True))
        f = np.arange(t + 2) - 0.5
        with np.errstate(divide="ignore", invalid="ignore"):
            cdf = np.where(sd > 0, ndtr((f - mean) / np.where(sd > 0, sd, 1)),
                           (f >= mean).astype(float))
        return np.diff(cdf, axis=1)
    raise ParameterError(f"method must be 'exact' or 'normal', got {plain(method)}")


def _check_work(ranks: int, ideal: int, levels: int) -> None:
    """The exact law costs ``(N + 1) t^2`` per satisfaction level."""
    work = float(ranks) * (ideal + 1) * ideal * levels
    if work > MAX_WORK:
        raise ParameterError(f"the exact law of discovered elements takes about {work:.3g} "
                             f"operations ({ranks:,} ranks, {ideal:,} ideal elements, "
                             f"{levels:,} satisfaction levels); the limit is {MAX_WORK:.3g}: "
                             f"use method='normal'")


def _below(law: np.ndarray, needed: float) -> np.ndarray:
    """``P(F_k < needed)`` for each k (rows of ``law``)."""
    f = np.arange(law.shape[1])
    return law[:, f < needed].sum(axis=1)


def expected_inverse_search_length(nav, ideal, recall: float, *,
                                   method: str = "exact") -> float:
    """``E[A / ML]`` for ``recall`` ideal elements (Eq. 5)."""
    law = discovered_distribution(nav, ideal, method=method)
    below = _below(law, recall)            # k = 0..N, below[0] = 1 for recall > 0
    k = np.arange(1, law.shape[0])
    return float(np.sum((below[:-1] - below[1:]) / k))


def expected_minimum_length(nav, ideal, recall: float, *, method: str = "exact") -> float:
    """``E[ML*] = 1 + sum_k P(F*_k < r)`` for an ideal list (Eq. 4).

    The list must give access to ``recall`` ideal elements for sure by its last rank.
    """
    law = discovered_distribution(nav, ideal, method=method)
    below = _below(law, recall)
    if below[-1] > 1e-12:
        raise ParameterError("the ideal list does not reach the recall for every user "
                             f"(P(F_N < r) = {below[-1]:.3g})")
    return float(1.0 + below[1:].sum())


def eprum_precision(nav, ideal, *, recall: float | None = None,
                    recall_level: float | None = None, ideal_nav=None,
                    ideal_length: float | None = None, method: str = "exact") -> float:
    """EPRUM precision at a recall value ``r`` or a recall level ``l`` (``r = l t``).

    Parameters
    ----------
    nav : array (N, M)
        Navigation probabilities of the evaluated list.
    ideal : array (M,)
        Binary idealism (bool), or graded idealism ``P(x in I)`` in [0, 1]: precision is
        then integrated over the users' satisfaction level (Section 3.1).
    recall, recall_level
        Exactly one: the number of ideal elements wanted, or the share of them.
    ideal_nav : array (N*, M), optional
        Navigation probabilities of an ideal list, giving ``E[ML*]`` by Eq. (4).
    ideal_length : float, optional
        ``E[ML*]`` given directly; default ``r`` (one ideal element per rank at best).
    """
    if (recall is None) == (recall_level is None):
        raise ParameterError("give exactly one of recall (a number of ideal elements) and "
                             "recall_level (a share in (0, 1])")
    if recall_level is not None:
        recall_level = number(recall_level, "recall_level", above=0.0, high=1.0)
    if recall is not None:
        recall = number(recall, "recall", above=0.0)
    if ideal_length is not None:
        ideal_length = number(ideal_length, "ideal_length", above=0.0)
    grade = float_array(ideal, "idealism P(x in I)", finite=False, error=ParameterError)
    if not np.all(np.isfinite(grade)) or np.any((grade < 0) | (grade > 1)):
        raise ParameterError("idealism P(x in I) must lie in [0, 1]")
    levels = np.unique(grade[grade > 0])                     # satisfaction thresholds
    if method == "exact" and levels.size > 1:
        _check_work(_navigation(nav).shape[0] + 1, int((grade > 0).sum()), levels.size)
    edges = np.r_[0.0, levels]
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        ideal_set = grade >= hi                               # ideal for S in (lo, hi]
        t = int(ideal_set.sum())
        r = float(recall) if recall is not None else float(recall_level) * t
        value = expected_inverse_search_length(nav, ideal_set, r, method=method)
        if ideal_nav is not None:
            ml_star = expected_minimum_length(ideal_nav, ideal_set, r, method=method)
        else:
            ml_star = float(np.ceil(r - 1e-12)) if ideal_length is None else float(ideal_length)
        total += (hi - lo) * ml_star * value
    return total


def pointer_navigation(pointers, n_elements: int) -> np.ndarray:
    """Classical IR: ``P(k ~> x) = 1`` iff rank ``k`` points to element ``x``."""
    if isinstance(n_elements, bool) or not isinstance(n_elements, int | np.integer) \
            or n_elements < 1:
        raise ParameterError(f"n_elements must be a positive integer; got {plain(n_elements)}")
    idx = float_array(pointers, "pointers", ndim=1, error=ParameterError)
    if np.any(idx < 0) or np.any(idx >= n_elements) or np.any(idx != np.round(idx)):
        raise ParameterError(f"pointers must be integers in 0..{n_elements - 1}")
    idx = idx.astype(np.int64)
    check_memory((idx.size, int(n_elements)), "the navigation matrix", error=ParameterError)
    nav = np.zeros((idx.size, int(n_elements)))
    nav[np.arange(idx.size), idx] = 1.0
    return nav
