r"""Expected Search Length on weak orders (Cooper 1968; Bollmann & Raghavan, SIGIR 1988).

A retrieval result is a weak order: a sequence of tie levels, level ``l`` holding ``r_l``
relevant and ``n_l`` non-relevant documents.  The user reads the levels in order, each in
a uniformly random order, until ``i`` relevant documents are found (or everything is
read, when fewer than ``i`` exist).  The search length is the number of non-relevant
documents read.

If the ``i``-th relevant document lies in level ``L`` (``R_{L-1} < i <= R_L``), all
``j = n_1 + ... + n_{L-1}`` earlier non-relevant documents are read, plus ``X`` of the
``n_L`` in level ``L``, where ``X`` is the number of non-relevant documents before the
``k = i - R_{L-1}``-th relevant one in a random order of ``r_L`` relevant and ``n_L``
non-relevant documents (negative hypergeometric):

``P(X = x) = C(x + k - 1, x) C(r_L - k + n_L - x, n_L - x) / C(r_L + n_L, n_L)``,
``x = 0..n_L``, and ``esl_i = j + k n_L / (r_L + 1)`` (Cooper's formula).

With fewer than ``i`` relevant documents the user reads every non-relevant document.
Distributions are exact fractions on request (:class:`fractions.Fraction`), floats
otherwise.  Section 4 of Bollmann & Raghavan combines two results by convolution: the
search length of inspecting both is the sum of the two independent search lengths.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import comb

import numpy as np

from ..chains.checks import check_memory, float_array, plain
from ..errors import ParameterError

#: Most documents a weak order may hold (the exact law has one term per non-relevant one).
MAX_DOCUMENTS = 10_000_000
#: Most documents in the tie level where the wanted relevant document lies: its exact law
#: takes binomial coefficients of that many digits (about 2 s for 4,000 on one core).
MAX_LEVEL = 4_000


def _levels(levels) -> list[tuple[int, int]]:
    if isinstance(levels, str | bytes | dict) or not hasattr(levels, "__iter__"):
        raise ParameterError(f"levels must be a sequence of (relevant, non-relevant) pairs; "
                             f"got {plain(levels)}")
    out = []
    for idx, level in enumerate(levels):
        try:
            pair = tuple(level)
            rel, non = (int(x) for x in pair)
        except (TypeError, ValueError, OverflowError):
            raise ParameterError(f"level {idx} must be a (relevant, non-relevant) pair of "
                                 f"counts, got {plain(level)}") from None
        if any(isinstance(x, bool | np.bool_) for x in pair) or rel < 0 or non < 0 or \
                (rel, non) != pair:
            raise ParameterError(f"level {idx}: counts must be non-negative integers, got "
                                 f"{plain(level)}")
        if rel + non == 0:
            raise ParameterError(f"level {idx} is empty (the weak order has no empty ranks)")
        out.append((rel, non))
    total = sum(r + n for r, n in out)
    if total > MAX_DOCUMENTS:
        raise ParameterError(f"the weak order holds {total:,} documents; the limit is "
                             f"{MAX_DOCUMENTS:,}")
    return out


def search_length_distribution(levels: Sequence, wanted: int, *, exact: bool = False):
    """Law of the number of non-relevant documents read before the ``wanted``-th relevant.

    Returns a list of :class:`~fractions.Fraction` (``exact=True``) or a float array, whose
    entry ``x`` is ``P(search length = x)``.
    """
    lv = _levels(levels)
    if isinstance(wanted, bool) or not isinstance(wanted, int | np.integer) or wanted < 1:
        raise ParameterError(f"wanted must be a positive integer number of relevant "
                             f"documents, got {plain(wanted)}")
    i = int(wanted)
    before = 0
    found = 0
    probs: list[Fraction] = []
    for rel, non in lv:
        if found + rel >= i:
            if rel + non > MAX_LEVEL:
                raise ParameterError(f"the tie level holding relevant document {i} has "
                                     f"{rel + non:,} documents; the exact law is limited to "
                                     f"levels of {MAX_LEVEL:,}")
            k = i - found
            total = comb(rel + non, non)
            probs = [Fraction(0)] * before + [
                Fraction(comb(x + k - 1, x) * comb(rel - k + non - x, non - x), total)
                for x in range(non + 1)]
            break
        found += rel
        before += non
    else:  # fewer than `wanted` relevant documents: every non-relevant one is read
        probs = [Fraction(0)] * before + [Fraction(1)]
    return probs if exact else np.array([float(p) for p in probs])


def expected_search_length(levels: Sequence, wanted: int, *, exact: bool = False):
    """``esl_i``: expected non-relevant documents read before the ``i``-th relevant one."""
    probs = search_length_distribution(levels, wanted, exact=True)
    value = sum((x * p for x, p in enumerate(probs)), Fraction(0))
    return value if exact else float(value)


def convolve_search_lengths(first, second):
    """Law of the sum of two independent search lengths (Bollmann & Raghavan, Sec. 4).

    Fractions in, fractions out; floats otherwise.  ``E`` of the result is the sum of the
    two expectations, which makes ``esl`` additive (a ratio scale under their axioms).
    """
    try:
        first, second = list(first), list(second)
    except TypeError:
        raise ParameterError(f"convolve_search_lengths takes two laws (sequences of "
                             f"probabilities); got {plain(first)} and {plain(second)}") from None
    if not first or not second:
        raise ParameterError("convolve_search_lengths needs two non-empty laws")
    if all(isinstance(x, Fraction) for x in first + second):
        check_memory(len(first) * len(second), "the convolution of two exact laws",
                     itemsize=64, error=ParameterError)
        out = [Fraction(0)] * (len(first) + len(second) - 1)
        for a, pa in enumerate(first):
            for b, pb in enumerate(second):
                out[a + b] += pa * pb
        return out
    return np.convolve(float_array(first, "first law", ndim=1, low=0.0, error=ParameterError),
                       float_array(second, "second law", ndim=1, low=0.0, error=ParameterError))


def levels_from_scores(scores, relevant) -> list[tuple[int, int]]:
    """The weak order of a ranked list with tied scores: one level per distinct score,
    best first, counting relevant and non-relevant documents."""
    scores = float_array(scores, "scores", ndim=1, error=ParameterError)
    rel = float_array(relevant, "relevant", ndim=1, error=ParameterError).astype(bool)
    if scores.shape != rel.shape:
        raise ParameterError(f"scores and relevant must be 1-D arrays of the same length; got "
                             f"{scores.size} and {rel.size}")
    values, inverse = np.unique(-scores, return_inverse=True)
    n_rel = np.bincount(inverse, weights=rel, minlength=values.size).astype(int)
    n_all = np.bincount(inverse, minlength=values.size)
    return [(int(a), int(b - a)) for a, b in zip(n_rel, n_all, strict=True)]


def levels_from_run(run, qrels, topic, *, level: int = 1) -> list[tuple[int, int]]:
    """Weak order of one topic of a TREC run (:func:`~bayeschain.io.read_run` frame):
    documents with equal scores share a level; relevant means a qrels grade >= ``level``,
    unjudged documents count as non-relevant."""
    rows = run[run["query_id"].astype(str) == str(topic)]
    if rows.empty:
        raise ParameterError(f"topic {topic!r} is not in the run")
    judged = qrels[qrels["query_id"].astype(str) == str(topic)]
    grades = dict(zip(judged["doc_id"].astype(str), judged["relevance"], strict=True))
    rel = np.array([grades.get(str(d), 0) >= level for d in rows["doc_id"]])
    return levels_from_scores(rows["score"].to_numpy(dtype=float, na_value=np.nan), rel)
