r"""Classical measures by their direct formulas, vectorised over rows of a relevance matrix.

Each function takes relevance of shape ``(..., D)`` (rank axis last, rows padded with 0
beyond the end of each list) and returns ``(...)``.  The same values come out of the P@H
chains (:mod:`bayeschain.measures.chain_forms`); the tests hold the two against each other
to 1e-12.

* ``P@k = (1/k) sum_{i<=k} r[i]``                                   (Precision at cut-off)
* ``AP = (1/RB) sum_i r[i] (1/i) sum_{j<=i} r[j]``                  (ICTIR 2020, Eq. 7)
* ``RBP(p) = (1 - p) sum_i r[i] p^(i-1)``                           (Moffat & Zobel 2008; Eq. 9)
* ``RBP(N) = K(p, N)^-1 sum_{i<=N} r[i] p^(i-1)``, ``K(p, N) = (1 - p^N) / (1 - p)``  (Sec. 6.3)
* ``DCG@k = sum_{i<=k} w(r[i]) / log_b(i + 1)`` (trec_eval) or ``/ max(1, log_b i)`` (Eq. 10)
* ``ERR@k = sum_{i<=k} (1/i) prod_{j<i} (1 - R_j) R_i``, ``R = (2^g - 1) / 2^g_max``  (Eq. 11)

trec_eval's set and rank measures (trec_eval 10, ``m_recip_rank.c``, ``m_recall.c``,
``m_Rprec.c``, ``m_success.c``; missing ranks count as non-relevant, a recall base of 0
scores 0):

* ``RR@k = 1 / min{i <= k : r[i] > 0}`` (0 when no relevant document is in the top k)
* ``R@k = (1/RB) sum_{i<=k} r[i]``                                 (recall at cut-off)
* ``Rprec = (1/RB) sum_{i<=RB} r[i]``                              (precision at rank RB)
* ``Success@k = 1 if sum_{i<=k} r[i] > 0 else 0``

These have no P@H chain form here (RR is ERR's walk with binary satisfaction; the others
are not expectations of a stopping walk).
"""

from __future__ import annotations

import numpy as np

from ..browsing import err_satisfaction, log_discount
from ..chains.checks import check_memory, float_array, plain
from ..errors import ParameterError
from .registry import MAX_CUTOFF, WORKING_ARRAYS


def _ranks(n: int) -> np.ndarray:
    return np.arange(1, n + 1, dtype=float)


def ranked(values, name: str = "relevance", *, keep_bool: bool = False) -> np.ndarray:
    """Ranked lists ``(..., D)``: a finite array of numbers with a rank axis (``D >= 1``);
    booleans stay booleans with ``keep_bool`` (a boolean array is not copied)."""
    if keep_bool and isinstance(values, np.ndarray) and values.dtype == bool:
        if values.ndim == 0 or values.shape[-1] == 0:
            raise ParameterError(f"{name} must have at least one rank on its last axis; got "
                                 f"shape {values.shape}")
        return values
    arr = float_array(values, name, error=ParameterError)
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ParameterError(f"{name} must have at least one rank on its last axis; got shape "
                             f"{arr.shape}")
    if keep_bool and np.asarray(values).dtype == bool:
        return np.asarray(values)
    return arr


def cut(rel, k: int | None) -> np.ndarray:
    """The first ``k`` ranks of each row (zero-padded when a row is shorter).

    ``k`` is an integer from 1 to :data:`~bayeschain.measures.registry.MAX_CUTOFF`, and the
    padded rows must fit in memory (with room for the measure's working arrays).
    """
    rel = np.asarray(rel)
    if k is None:
        return rel
    k = _cutoff(k)
    if rel.shape[-1] >= k:
        return rel[..., :k]
    check_memory(rel.shape[:-1] + (k,), f"the first {k:,} ranks of {rel.shape[:-1]} lists",
                 itemsize=8 * WORKING_ARRAYS, error=ParameterError)
    pad = [(0, 0)] * (rel.ndim - 1) + [(0, k - rel.shape[-1])]
    return np.pad(rel, pad)


def top(rel, k: int | None) -> np.ndarray:
    """The first ``k`` ranks of each row, without padding (for measures to which missing
    ranks add nothing); ``k`` as for :func:`cut`."""
    rel = np.asarray(rel)
    return rel if k is None else rel[..., :_cutoff(k)]


def _cutoff(k) -> int:
    """``k`` as a cut-off: an integer from 1 to :data:`MAX_CUTOFF`."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= MAX_CUTOFF:
        raise ParameterError(f"cut-off must be an integer from 1 to {MAX_CUTOFF:,}, got "
                             f"{plain(k)}")
    return int(k)


def _base(recall_base, found: np.ndarray, shape: tuple) -> np.ndarray:
    """The recall base of each list: given, or the relevant documents retrieved."""
    if recall_base is None:
        return found.astype(float)
    return np.broadcast_to(per_list(recall_base, "recall_base", shape), shape)


def _over_base(count: np.ndarray, rb: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(rb > 0, count / np.where(rb > 0, rb, 1), 0.0)


def reciprocal_rank(binary, k: int | None = None) -> np.ndarray:
    """``RR@k``: one over the rank of the first relevant document in the top ``k`` (0 when
    there is none), trec_eval's ``recip_rank`` without a cut-off."""
    rel = top(ranked(binary), k) > 0
    first = np.argmax(rel, axis=-1)
    return np.where(rel.any(axis=-1), 1.0 / (first + 1.0), 0.0)


def recall_at(binary, recall_base=None, k: int | None = None) -> np.ndarray:
    """``R@k``: relevant documents in the top ``k`` over the recall base ``RB`` (default: the
    relevant documents retrieved); 0 when ``RB = 0`` (trec_eval's ``recall_k``)."""
    rel = ranked(binary) > 0
    found = top(rel, k).sum(axis=-1)
    rb = _base(recall_base, rel.sum(axis=-1), found.shape)
    return _over_base(found, rb)


def r_precision(binary, recall_base=None) -> np.ndarray:
    """``Rprec``: relevant documents in the top ``RB`` over ``RB`` (precision at the rank that
    equals the recall base, where it also equals recall); 0 when ``RB = 0``."""
    rel = ranked(binary) > 0
    cum = np.cumsum(rel, axis=-1)
    rb = _base(recall_base, cum[..., -1], cum.shape[:-1])
    at = np.clip(rb, 1, rel.shape[-1]).astype(np.int64) - 1
    found = np.take_along_axis(cum, at[..., None], axis=-1)[..., 0]
    return _over_base(np.where(rb > 0, found, 0), rb)


def success_at(binary, k: int | None = None) -> np.ndarray:
    """``Success@k``: 1 when a relevant document is in the top ``k``, else 0."""
    return (top(ranked(binary), k) > 0).any(axis=-1).astype(float)


def precision_at(binary, k: int) -> np.ndarray:
    """``P@k``: relevant documents in the top ``k`` over ``k`` (missing ranks count as 0)."""
    if k is None:
        raise ParameterError("precision_at needs a cut-off k")
    return cut(ranked(binary), k).sum(axis=-1, dtype=float) / k


def average_precision(binary, recall_base=None, k: int | None = None) -> np.ndarray:
    """AP with recall base ``RB`` (default: relevant documents retrieved); 0 when ``RB = 0``.

    Computed from the positions of the relevant documents only: the k-th relevant
    document of a row, at rank ``i``, contributes ``k / i``.
    """
    rel = cut(ranked(binary, keep_bool=True), k) > 0
    shape = rel.shape[:-1]
    flat = rel.reshape(-1, rel.shape[-1])
    per_row = flat.sum(axis=-1)
    rows, cols = np.nonzero(flat)                  # row-major: ranks ascending in each row
    kth = np.arange(rows.size) - np.repeat(np.cumsum(per_row) - per_row, per_row) + 1
    total = np.bincount(rows, weights=kth / (cols + 1.0), minlength=flat.shape[0])
    total = total.reshape(shape)
    rb = per_row.reshape(shape).astype(float) if recall_base is None else \
        per_list(recall_base, "recall_base", shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(rb > 0, total / np.where(rb > 0, rb, 1), 0.0)


def per_list(values, name: str, shape: tuple) -> np.ndarray:
    """One count (a finite whole number >= 0) per list (``shape``), or one for all."""
    arr = float_array(values, name, low=0.0, error=ParameterError)
    if np.any(arr != np.round(arr)):
        raise ParameterError(f"{name} must be whole numbers (counts); got {plain(arr)}")
    try:
        np.broadcast_shapes(arr.shape, shape)
    except ValueError:
        raise ParameterError(f"{name} must have one value per list, shape {shape}; got shape "
                             f"{arr.shape}") from None
    return arr


def check_persistence(p) -> np.ndarray:
    p = float_array(p, "RBP persistence p", finite=False, error=ParameterError)
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p >= 1)):
        raise ParameterError(f"RBP persistence p must lie in [0, 1), got {plain(p)}")
    return p


def _persistence_for(p: np.ndarray, gains: np.ndarray) -> None:
    """``p`` is one number, ``(draws, 1)`` for a posterior's draws, or broadcasts against
    the lists' leading axes."""
    if p.ndim == 0 or _draw_column(p, gains):
        return
    try:
        np.broadcast_shapes(p.shape, gains.shape[:-1])
    except ValueError:
        raise ParameterError(f"RBP persistence p of shape {p.shape} does not match the "
                             f"{gains.shape[:-1]} lists") from None


def _draw_column(p: np.ndarray, gains: np.ndarray) -> bool:
    """``p`` of shape ``(draws, 1)`` against gains ``(lists, N)``: a posterior's
    persistence per draw, scored on every list (result ``(draws, lists)``)."""
    return p.ndim == 2 and p.shape[1] == 1 and gains.ndim == 2


def rank_biased_precision(gains, p, k: int | None = None) -> np.ndarray:
    """``RBP(p) = (1 - p) sum_i g[i] p^(i-1)`` (the infinite-list normalisation).

    Binary (boolean) gains with a scalar ``p`` are summed over the relevant positions only.
    """
    g = cut(ranked(gains, "gains", keep_bool=True), k)
    p = check_persistence(p)
    _persistence_for(p, g)
    if p.ndim == 0 and g.dtype == bool:
        flat = g.reshape(-1, g.shape[-1])
        rows, cols = np.nonzero(flat)
        top = np.bincount(rows, weights=float(p) ** cols, minlength=flat.shape[0])
        return (1 - float(p)) * top.reshape(g.shape[:-1])
    g = g.astype(float)
    if _draw_column(p, g):            # p (draws, 1), gains (lists, N): one matrix product
        return (1 - p) * (p ** np.arange(g.shape[-1]) @ g.T)
    powers = p[..., None] ** np.arange(g.shape[-1])
    return (1 - p) * np.sum(g * powers, axis=-1)


def rank_biased_precision_finite(gains, p, lengths=None) -> np.ndarray:
    """``RBP(N) = sum_{i<=N} g[i] p^(i-1) / K(p, N)`` with ``K(p, N) = (1 - p^N)/(1 - p)``.

    ``lengths`` gives each row's list length N (default: the width of ``gains``).  This is
    ``E[T(H)] / E[H]`` for the SFBM with constant ``p`` on a list of N documents (Sec. 6.3).
    """
    g = ranked(gains, "gains")
    p = check_persistence(p)
    _persistence_for(p, g)
    n = np.full(g.shape[:-1], g.shape[-1]) if lengths is None else \
        per_list(lengths, "lengths", g.shape[:-1])
    inside = np.arange(g.shape[-1]) < n[..., None]
    if _draw_column(p, g):            # p (draws, 1), gains (lists, N): one matrix product
        top = p ** np.arange(g.shape[-1]) @ np.where(inside, g, 0.0).T
    else:
        powers = p[..., None] ** np.arange(g.shape[-1])
        top = np.sum(np.where(inside, g * powers, 0.0), axis=-1)
    k = np.where(p > 0, (1 - p**n) / np.where(p < 1, 1 - p, 1), 1.0)
    k = np.where(n > 0, k, 1.0)  # an empty list scores 0 (its numerator is 0)
    return top / k


def discounted_cumulative_gain(gains, k: int | None = None, base: float = 2.0,
                               variant: str = "trec") -> np.ndarray:
    """``DCG@k = sum_{i<=k} w(r[i]) * discount(i)``.

    The discount is :func:`~bayeschain.browsing.log_discount` (trec_eval's or Järvelin's).
    """
    g = cut(ranked(gains, "gains"), k)
    return np.sum(g * log_discount(_ranks(g.shape[-1]), base, variant), axis=-1)


def normalized_dcg(gains, ideal, k: int | None = None, base: float = 2.0,
                   variant: str = "trec") -> np.ndarray:
    """``nDCG@k = DCG@k / ideal DCG@k`` (ideal: the topic's judged gains sorted descending).

    As in trec_eval, a topic without positive judgements scores 0.

    nDCG does not change when every gain is multiplied by one positive number, and it is
    computed so: the gains and the ideal gains of a list are divided by the power of two
    nearest above their largest magnitude (exact in binary floating point, so ordinary
    gains give the same bits), and gains of 1e308 cannot overflow the sums.
    """
    gains = ranked(gains, "gains")
    ideal = ranked(ideal, "ideal")
    try:
        np.broadcast_shapes(ideal.shape[:-1], gains.shape[:-1])
    except ValueError:
        raise ParameterError(f"ideal has lists {ideal.shape[:-1]}, the gains "
                             f"{gains.shape[:-1]}: one row of judged grades per list") from None
    gains, ideal = _scaled_together(gains, ideal)
    top = discounted_cumulative_gain(gains, k, base, variant)
    if np.any(np.diff(ideal, axis=-1) > 0):  # not already sorted descending
        ideal = np.sort(ideal, axis=-1)[..., ::-1]
    best = discounted_cumulative_gain(ideal, k, base, variant)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(best > 0, top / np.where(best > 0, best, 1), 0.0)


def _scaled_together(gains: np.ndarray, ideal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both arrays divided, list by list, by 2**e with 2**(e-1) <= their largest magnitude
    < 2**e (lists of zeros unchanged): exact, and every value at most 1 in magnitude."""
    def largest(a):
        return np.max(np.abs(a), axis=-1, keepdims=True, initial=0.0)

    with np.errstate(invalid="ignore"):
        big = np.maximum(largest(gains)[..., 0], largest(ideal)[..., 0])
    _, exponent = np.frexp(np.where(np.isfinite(big) & (big > 0), big, 1.0))
    if not np.any(exponent):                # already within [0.5, 1) or zero: no change
        return gains, ideal
    factor = np.ldexp(1.0, -exponent)[..., None]
    return gains * factor, ideal * factor


def expected_reciprocal_rank(grades, k: int | None = None, max_grade=None) -> np.ndarray:
    """``ERR@k = sum_{i<=k} (1/i) prod_{j<i} (1 - R_j) R_i`` (Chapelle et al. 2009)."""
    g = cut(ranked(grades, "grades"), k)
    sat = err_satisfaction(g, max_grade)
    reach = np.cumprod(np.concatenate([np.ones(sat.shape[:-1] + (1,)), 1 - sat[..., :-1]],
                                      axis=-1), axis=-1)
    return np.sum(reach * sat / _ranks(g.shape[-1]), axis=-1)
