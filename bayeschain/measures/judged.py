r"""Measures that tell judged documents from unjudged ones: Judged@k, bpref, RBP's residual.

Each takes the grades ``(..., D)`` (rank axis last, rows padded with 0), ``judged`` (booleans
of the same shape: the document at that rank has a qrels line, whatever its grade) and the
list lengths.  Without a judged mask every rank of the list counts as judged (the grades
given are then the judgements).  A negative grade is a qrels line, so Judged counts it as
judged, as ir_measures does; bpref and rbp_resid follow trec_eval, which reads a negative
grade as "in the pool but unjudged" (``form_res_rels.c``: ``RELVALUE_UNJUDGED``).

* ``Judged@k = #{i <= m : judged[i]} / m`` with ``m = min(k, N)`` (N the list length; no
  cut-off: ``m = N``; an empty list scores 0): ir_measures' ``Judged`` (its
  ``judged_provider``, which divides by the retrieved documents when ``k > N``).
* ``bpref = (1/R) sum_{relevant retrieved r} (1 - min(n_r, R) / min(N, R))``, the term being
  1 when ``n_r = 0``: ``n_r`` is the number of judged non-relevant documents
  (``0 <= grade < level``) ranked above ``r``, ``R`` the recall base, ``N`` the topic's judged
  non-relevant documents; unjudged documents (and negative grades) are skipped, and
  ``R = 0`` scores 0.  Buckley & Voorhees, SIGIR 2004, as trec_eval 10 computes it
  (``m_bpref.c``: the minimum with ``R`` in numerator and denominator is trec_eval's, not
  the paper's ``n_r / R``).
* ``rbp_resid(p) = p^N + (1 - p) sum_{i <= N, i unjudged} p^(i-1)``: the most RBP can rise
  if every unjudged retrieved document (no qrels line, or a negative grade) and every rank
  beyond the list had gain 1 (Moffat & Zobel, TOIS 2008, Sec. 5).  As trec_eval 10
  (``m_rbp_resid.c``) it is 0 when no retrieved document is unjudged: the tail ``p^N`` is
  only counted together with an unjudged retrieved document.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from .classical import check_persistence, per_list, ranked


def _inside(rel: np.ndarray, lengths) -> tuple[np.ndarray, np.ndarray]:
    """List lengths ``(...)`` and the mask of ranks inside each list."""
    n = np.full(rel.shape[:-1], rel.shape[-1]) if lengths is None else \
        np.broadcast_to(per_list(lengths, "lengths", rel.shape[:-1]), rel.shape[:-1])
    if np.any(n > rel.shape[-1]):
        raise ParameterError(f"list lengths must be at most the {rel.shape[-1]} ranks given")
    return n, np.arange(rel.shape[-1]) < n[..., None]


def _judged(rel: np.ndarray, judged, inside: np.ndarray) -> np.ndarray:
    if judged is None:
        return inside
    mask = np.asarray(judged)
    if mask.dtype != bool or mask.shape != rel.shape:
        raise ParameterError(f"judged must be booleans shaped like the grades {rel.shape}; got "
                             f"dtype {mask.dtype}, shape {mask.shape}")
    return mask & inside


def judged_at(relevance, judged=None, k: int | None = None, lengths=None) -> np.ndarray:
    """``Judged@k``: the fraction of the top ``min(k, N)`` documents that have a judgement."""
    rel = ranked(relevance)
    n, inside = _inside(rel, lengths)
    mask = _judged(rel, judged, inside)
    m = n if k is None else np.minimum(n, k)
    count = np.sum(mask & (np.arange(rel.shape[-1]) < m[..., None]), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(m > 0, count / np.where(m > 0, m, 1), 0.0)


def bpref(relevance, judged=None, level: float = 1, recall_base=None,
          nonrelevant_base=None, lengths=None) -> np.ndarray:
    """trec_eval's ``bpref`` (see the module docstring); ``recall_base`` defaults to the
    relevant documents retrieved and ``nonrelevant_base`` to the judged non-relevant ones
    retrieved."""
    rel = ranked(relevance)
    _, inside = _inside(rel, lengths)
    mask = _judged(rel, judged, inside) & (rel >= 0)
    relevant = mask & (rel >= level)
    nonrel = mask & (rel < level)
    above = np.cumsum(nonrel, axis=-1)          # at a relevant rank: judged non-relevant above
    shape = rel.shape[:-1]
    r = relevant.sum(axis=-1).astype(float) if recall_base is None else \
        np.broadcast_to(per_list(recall_base, "recall_base", shape), shape)
    n_retrieved = nonrel.sum(axis=-1)
    n = n_retrieved.astype(float) if nonrelevant_base is None else \
        np.broadcast_to(per_list(nonrelevant_base, "nonrelevant_base", shape), shape)
    if np.any(n < n_retrieved):
        raise ParameterError("nonrelevant_base is smaller than the judged non-relevant "
                             "documents retrieved")
    denominator = np.minimum(n, r)[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        penalty = np.minimum(above, r[..., None]) / np.where(denominator > 0, denominator, 1)
    term = np.where(above > 0, 1.0 - penalty, 1.0)
    total = np.sum(np.where(relevant, term, 0.0), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(r > 0, total / np.where(r > 0, r, 1), 0.0)


def rbp_residual(relevance, p, judged=None, lengths=None) -> np.ndarray:
    """trec_eval 10's ``rbp_resid``: ``p^N + (1 - p) sum_{unjudged i} p^(i-1)``, or 0 when
    no retrieved document is unjudged (see the module docstring)."""
    rel = ranked(relevance)
    p = check_persistence(p)
    if p.ndim:
        raise ParameterError("the RBP residual takes one persistence p")
    p = float(p)
    n, inside = _inside(rel, lengths)
    unjudged = inside & ~(_judged(rel, judged, inside) & (rel >= 0))
    powers = p ** np.arange(rel.shape[-1])
    mass = np.sum(np.where(unjudged, powers, 0.0), axis=-1)
    return np.where(unjudged.any(axis=-1), p ** n + (1 - p) * mass, 0.0)
