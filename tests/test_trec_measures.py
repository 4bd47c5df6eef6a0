"""RR, R@k, Rprec, Success@k, Bpref and Judged@k against trec_eval's C code and ir_measures.

trec_eval's printed output is checked in ``tests/test_trec_eval.py``; here the same measures
meet pytrec_eval (trec_eval 9's code) topic by topic, to 1e-12, on generated collections full
of tied scores (trec_eval breaks ties by document id descending), graded and negative
judgements, unjudged documents, short lists and a topic without relevant documents, at
relevance levels 1 and 2.  The ir_measures names (``RR``, ``R@k``, ``Rprec``, ``Success@k``,
``Bpref``, ``Judged@k``) are then checked against ir_measures' own providers (pytrec_eval
and its ``judged`` provider), never against bayeschain's provider.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayeschain.evaluation import evaluate_runs

TOL = 1e-12
CUTOFFS = (1, 2, 5, 10, 30, 100)


def collection(seed: int, ties: bool = True):
    """Qrels and one run as frames (and as pytrec_eval's dicts).

    Doc ids mix lengths and cases (``d9`` > ``d10`` > ``D7`` as strings); grades run from -1
    to 3; a third of the pool is unjudged; topic q1 has no relevant document, topic q2
    ties every score, q9 has qrels but no run; lists are 1 to 120 long."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(10):
        topic = f"q{t}"
        pool = [f"{rng.choice(['d', 'D', 'doc-'])}{i}" for i in range(150)]
        judged = pool[:100]
        grades = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3], size=len(judged))
        if t == 1:
            grades[:] = rng.choice([-1, 0], size=len(judged))
        qrels += [(topic, d, int(g)) for d, g in zip(judged, grades, strict=True)]
        if t == 9:
            continue
        n = int(rng.choice([1, 3, 8, 25, 60, 120]))
        docs = rng.choice(pool, size=n, replace=False)
        if t == 2 and ties:
            scores = np.full(n, 0.5)
        elif ties:
            scores = rng.integers(-3, 4, size=n) / 2.0
        else:
            scores = rng.permutation(n) + rng.random(n) * 0.5
        run += [(topic, str(d), float(s)) for d, s in zip(docs, scores, strict=True)]
    qrels_frame = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    run_frame = pd.DataFrame(run, columns=["query_id", "doc_id", "score"]).sample(
        frac=1, random_state=seed).assign(run_id="gen")
    return qrels_frame, run_frame


def as_dicts(qrels: pd.DataFrame, run: pd.DataFrame):
    q: dict = {}
    for t, d, g in qrels.itertuples(index=False):
        q.setdefault(t, {})[d] = int(g)
    r: dict = {}
    for t, d, s, _ in run.itertuples(index=False):
        r.setdefault(t, {})[d] = float(s)
    return q, r


def ours(qrels, run, measures, level, complete=False):
    table = evaluate_runs(qrels, {"gen": run}, measures, level=level, complete=complete)
    return {(row.topic, row.measure): row.value for row in table.itertuples()}


#: bayeschain measure string -> pytrec_eval (trec_eval) name
PAIRS = {"RR": "recip_rank", "Rprec": "Rprec", "Bpref": "bpref",
         **{f"R@{k}": f"recall_{k}" for k in CUTOFFS},
         **{f"Success@{k}": f"success_{k}" for k in CUTOFFS}}


@pytest.mark.parametrize("seed", [3, 11])
@pytest.mark.parametrize("level", [1, 2])
def test_trec_measures_match_pytrec_eval_on_tied_runs(seed, level):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = collection(seed)
    q, r = as_dicts(qrels, run)
    wanted = {"recip_rank", "Rprec", "bpref", "recall." + ",".join(map(str, CUTOFFS)),
              "success." + ",".join(map(str, CUTOFFS))}
    want = pytrec_eval.RelevanceEvaluator(q, wanted, relevance_level=level).evaluate(r)
    got = ours(qrels, run, list(PAIRS), level)
    assert set(want) == {f"q{t}" for t in range(9)}
    wrong = [(t, m, got[(t, m)], values[name]) for t, values in want.items()
             for m, name in PAIRS.items() if not abs(got[(t, m)] - values[name]) <= TOL]
    assert not wrong, wrong[:10]
    # not a comparison of zeros
    for m in ("RR", "Rprec", "Bpref", "R@30", "Success@5"):
        assert max(got[(t, m)] for t in want) > 0, m
    # with -c, the topic without a run scores 0 (trec_eval -c)
    full = evaluate_runs(qrels, {"gen": run}, list(PAIRS), level=level, complete=True)
    assert (full[full["topic"] == "q9"]["value"] == 0).all()


def test_the_trec_eval_names_are_the_same_measures():
    qrels, run = collection(5)
    got = ours(qrels, run, [*PAIRS, *PAIRS.values()], 1)
    from bayeschain.measures import parse_measure

    for ours_name, trec in PAIRS.items():
        assert repr(parse_measure(trec)) == ours_name
        for t in (f"q{i}" for i in range(9)):
            assert got[(t, ours_name)] == got[(t, repr(parse_measure(trec)))]


IR_NAMES = ["RR", "RR(rel=2)", "Rprec", "Rprec(rel=2)", "Bpref", "Bpref(rel=2)",
            *[f"R@{k}" for k in CUTOFFS], *[f"Success@{k}" for k in CUTOFFS],
            "Success(rel=2)@10"]


def _ir_measures_reference():
    ir_measures = pytest.importorskip("ir_measures")
    ref = ir_measures.providers.registry["pytrec_eval"]
    if not ref.is_available():
        pytest.skip("ir_measures' pytrec_eval provider is unavailable")
    return ir_measures, ref


def _bayeschain_string(name: str) -> tuple[str, int]:
    """``RR(rel=2)`` -> (``RR``, 2): the measure string and the level."""
    if "(rel=2)" in name:
        return name.replace("(rel=2)", ""), 2
    return name, 1


@pytest.mark.parametrize("seed", [3, 8])
def test_ir_measures_names_match_ir_measures_pytrec_eval_provider(seed):
    ir_measures, ref = _ir_measures_reference()
    qrels, run = collection(seed)
    q, r = as_dicts(qrels, run)
    measures = [ir_measures.parse_measure(name) for name in IR_NAMES]
    assert all(ref.supports(m) for m in measures)
    want = {(m.query_id, str(m.measure)): m.value for m in ref.iter_calc(measures, q, r)}
    by_level: dict[int, list[str]] = {}
    for name in IR_NAMES:
        text, level = _bayeschain_string(name)
        by_level.setdefault(level, []).append(text)
    got = {}
    for level, texts in by_level.items():
        values = ours(qrels, run, texts, level, complete=True)
        for name in IR_NAMES:
            text, lv = _bayeschain_string(name)
            if lv == level:
                got.update({(t, name): v for (t, m), v in values.items() if m == text})
    # ir_measures reports every qrels topic (trec_eval -c): q9, without a run, scores 0
    assert {t for t, _ in want} == {f"q{t}" for t in range(10)}
    assert all(got[("q9", n)] == want[("q9", n)] == 0 for n in IR_NAMES)
    wrong = [(k, got.get(k), v) for k, v in want.items() if not abs(got[k] - v) <= TOL]
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("seed", [4, 9])
def test_judged_matches_ir_measures_judged_provider(seed):
    """ir_measures' judged provider orders tied scores by doc id ascending (trec_eval:
    descending), so this collection has no ties; negative grades are qrels lines and count
    as judged; a cut-off beyond the list divides by the list's length."""
    ir_measures = pytest.importorskip("ir_measures")
    provider = ir_measures.providers.registry["judged"]
    qrels, run = collection(seed, ties=False)
    q, r = as_dicts(qrels, run)
    names = ["Judged@1", "Judged@5", "Judged@10", "Judged@100", "Judged"]
    measures = [ir_measures.parse_measure(n) for n in names]
    want = {(m.query_id, str(m.measure)): m.value for m in provider.iter_calc(measures, q, r)}
    got = ours(qrels, run, names, 1, complete=True)
    assert {t for t, _ in want} == {f"q{t}" for t in range(10)}     # q9 (no run) scores 0
    wrong = [(k, got[k], v) for k, v in want.items() if not abs(got[k] - v) <= TOL]
    assert not wrong, wrong[:10]
    assert any(0 < v < 1 for v in want.values())              # a mix of judged and not
