"""RR, R@k, Rprec, Success@k (classical.py) and Judged@k, bpref, rbp_resid (judged.py).

The references are loops transcribed from trec_eval 10's C code (``m_recip_rank.c``,
``m_recall.c``, ``m_Rprec.c``, ``m_success.c``, ``m_bpref.c``, ``m_rbp_resid.c``; a
document's ``rel`` there is its grade, -1 when it has no qrels line and -2 when its grade
is negative) and from ir_measures' ``judged_provider``; the vectorised code must agree on
random batches with padding, ties of nothing and lists of every length."""

from __future__ import annotations

import numpy as np
import pytest

from bayeschain.errors import ParameterError
from bayeschain.measures import evaluate

NONPOOL, UNJUDGED = -1, -2


def trec_rels(grades, judged, n):
    """trec_eval's results_rel_list of a list: grade, -1 unjudged, -2 negative grade."""
    return [(-2 if g < 0 else int(g)) if j else -1 for g, j in zip(grades[:n], judged[:n],
                                                                   strict=True)]


def ref_recip_rank(rels, level, k=None):
    for i, r in enumerate(rels[:k] if k else rels):
        if r >= level:
            return 1.0 / (i + 1)
    return 0.0


def ref_recall(rels, level, num_rel, k):
    if num_rel == 0:
        return 0.0
    return sum(r >= level for r in rels[:k]) / num_rel


def ref_rprec(rels, level, num_rel):
    look = min(len(rels), num_rel)
    if look == 0:
        return 0.0
    return sum(r >= level for r in rels[:look]) / num_rel


def ref_success(rels, level, k):
    return float(any(r >= level for r in rels[:k]))


def ref_bpref(rels, level, num_rel, num_nonrel):
    bpref, nonrel_so_far = 0.0, 0
    for r in rels:
        if r in (NONPOOL, UNJUDGED):
            continue
        if 0 <= r < level:
            nonrel_so_far += 1
        elif nonrel_so_far > 0:
            bpref += 1.0 - min(nonrel_so_far, num_rel) / min(num_nonrel, num_rel)
        else:
            bpref += 1.0
    return bpref / num_rel if num_rel else bpref


def ref_rbp_resid(rels, p):
    unj, total, cur = 0, 0.0, 1.0
    for r in rels:
        if r < 0:
            unj += 1
            total += cur
        cur *= p
    return cur + (1 - p) * total if unj else 0.0


def ref_judged(judged, n, k):
    m = n if k is None else min(k, n)
    return sum(judged[:m]) / m if m else 0.0


def batch(seed, rows=40, width=30):
    """Grades, judged mask, lengths, and per level the topic's recall base and judged
    non-relevant count (those retrieved plus 0 to 3 that were not)."""
    rng = np.random.default_rng(seed)
    grades = rng.choice([-1, 0, 0, 1, 1, 2, 3], size=(rows, width)).astype(float)
    judged = rng.random((rows, width)) < 0.7
    grades[~judged] = 0                       # unjudged documents have grade 0
    lengths = rng.integers(0, width + 1, rows)
    lengths[:3] = (0, 1, width)
    outside = np.arange(width) >= lengths[:, None]
    grades[outside], judged[outside] = 0, False
    grades[3][grades[3] >= 1] = 0             # a topic without relevant documents
    unretrieved = rng.integers(0, 4, (rows, 4))   # judged grades 0..3 not retrieved
    unretrieved[3, 1:] = 0

    def bases(level):
        rel = ((grades >= level) & judged).sum(1) + unretrieved[:, level:].sum(1)
        nonrel = ((grades >= 0) & (grades < level) & judged).sum(1) + \
            unretrieved[:, :level].sum(1)
        return rel, nonrel

    return grades, judged, lengths, bases


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", [1, 2])
def test_rank_measures_match_trec_eval_loops(seed, level):
    grades, judged, lengths, bases = batch(seed)
    num_rel, num_nonrel = bases(level)
    ctx = {"judged": judged, "lengths": lengths, "recall_base": num_rel,
           "nonrelevant_base": num_nonrel, "level": level}
    got = {m: evaluate(m, grades, **ctx)
           for m in ("RR", "RR@3", "R@5", "R@50", "Rprec", "Success@1", "Success@7", "Bpref")}
    for i, (g, j, n) in enumerate(zip(grades, judged, lengths, strict=True)):
        r = trec_rels(g, j, n)
        assert got["RR"][i] == pytest.approx(ref_recip_rank(r, level), abs=1e-15)
        assert got["RR@3"][i] == pytest.approx(ref_recip_rank(r, level, 3), abs=1e-15)
        assert got["R@5"][i] == pytest.approx(ref_recall(r, level, num_rel[i], 5))
        assert got["R@50"][i] == pytest.approx(ref_recall(r, level, num_rel[i], 50))
        assert got["Rprec"][i] == pytest.approx(ref_rprec(r, level, num_rel[i]))
        assert got["Success@1"][i] == ref_success(r, level, 1)
        assert got["Success@7"][i] == ref_success(r, level, 7)
        assert got["Bpref"][i] == pytest.approx(
            ref_bpref(r, level, num_rel[i], num_nonrel[i]), abs=1e-14)
    assert np.ptp(got["Bpref"]) > 0 and np.ptp(got["Rprec"]) > 0


@pytest.mark.parametrize("seed", [0, 1])
def test_judged_and_rbp_resid_match_their_definitions(seed):
    grades, judged, lengths, _ = batch(seed)
    for p in (0.5, 0.9, 0.0):
        got = evaluate(f"RBPresid(p={p})", grades, judged=judged, lengths=lengths)
        for i in range(len(grades)):
            want = ref_rbp_resid(trec_rels(grades[i], judged[i], lengths[i]), p)
            assert got[i] == pytest.approx(want, abs=1e-15)
    for k in (None, 1, 5, 100):
        name = "Judged" if k is None else f"Judged@{k}"
        got = evaluate(name, grades, judged=judged, lengths=lengths)
        for i in range(len(grades)):
            assert got[i] == pytest.approx(ref_judged(judged[i], lengths[i], k), abs=1e-15)


def test_hand_computed_values():
    # ranks: judged non-relevant, relevant, unjudged, relevant (grade 2), judged -1
    g = np.array([0, 1, 0, 2, -1.0])
    j = np.array([True, True, False, True, True])
    # bpref with R = 3, N = 4: 1 - 1/3 at rank 2 and at rank 4 (the unjudged and the
    # negative grade are skipped): (2/3 + 2/3) / 3
    assert evaluate("Bpref", g, judged=j, recall_base=3, nonrelevant_base=4) == \
        pytest.approx(4 / 9)
    # rbp_resid(0.5): ranks 3 and 5 unjudged (the -1 is trec_eval's "in the pool,
    # unjudged"): 0.5^5 + 0.5 (0.5^2 + 0.5^4)
    assert evaluate("RBPresid(p=0.5)", g, judged=j) == pytest.approx(0.5**5 + 0.5 * 0.3125)
    # Judged counts the -1 line as judged (ir_measures): 4 of 5
    assert evaluate("Judged", g, judged=j) == pytest.approx(0.8)
    assert evaluate("Judged@3", g, judged=j) == pytest.approx(2 / 3)
    assert evaluate("RR", g) == 0.5 and evaluate("RR@1", g) == 0.0
    assert evaluate("Rprec", g, recall_base=2) == 0.5          # 1 relevant in the top 2
    assert evaluate("R@4", g, recall_base=4) == 0.5
    assert evaluate("Success@2", g) == 1.0 and evaluate("Success@1", g) == 0.0
    # without a judged mask every rank of the list is judged: no residual
    assert evaluate("RBPresid(p=0.5)", np.array([1, 0, 1.0])) == 0.0


def test_inconsistent_judgement_counts_are_refused():
    g = np.array([0, 0, 1.0])
    with pytest.raises(ParameterError, match="nonrelevant_base is smaller"):
        evaluate("Bpref", g, nonrelevant_base=1)
    with pytest.raises(ParameterError, match="judged must be booleans"):
        evaluate("Bpref", g, judged=np.array([1, 0, 1]))
    with pytest.raises(ParameterError, match="judged must be booleans"):
        evaluate("Judged@2", g, judged=np.array([True, False]))
    with pytest.raises(ParameterError, match="takes no cut-off"):
        evaluate("Bpref@5", g)
