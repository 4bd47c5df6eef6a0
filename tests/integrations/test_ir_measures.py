"""bayeschain's ir_measures provider against ir_measures' own pytrec_eval provider.

The reference is trec_eval's C code (pytrec_eval, through ir_measures' ``pytrec_eval``
provider), never bayeschain: every measure both providers accept is compared topic by topic
to 1e-12, on trec_eval's own test collection (``data/trec_eval``) and on a generated
collection full of tied scores, graded and negative judgements, unjudged documents and
short rankings.

The measures both providers accept are AP, AP@k and P@k at any relevance level ``rel``
(ir_measures' ``supports``; the test asserts that this is still the set).  bayeschain's
provider offers no nDCG, RR, Rprec, R@k, Success or Bpref and pytrec_eval no RBP, MP or
PatH, so those are not compared here (nDCG and RBP are checked against trec_eval's printed
output in ``tests/test_trec_eval.py``).  MP and PatH, which only bayeschain provides, are
checked through ir_measures' default pipeline against their definitional special cases,
again with pytrec_eval as the reference: MP with the constant model rescaled by recall is
AP (Ferrante, Ferro & Maistro, SIGIR 2014), P@H under DFBM cut at k is P@k (Ferrante &
Ferro, ICTIR 2020, Sec. 6.1).

The files are read here with a few lines of code (qid iter docno rel / qid Q0 docno rank
score runid; ``#`` lines are comments; tokens after the runid are ignored, as trec_eval
does), not with bayeschain's or ir_measures' readers: ir_measures' readers reject
``results.trunc`` and ``qrels.test.with-comments``.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pytrec_eval", reason="pytrec_eval (pip install pytrec-eval-terrier>=0.5) "
                    "is the reference implementation these tests compare with")

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"
TOL = 1e-12
P_CUTOFFS = (1, 2, 3, 5, 10, 15, 20, 30, 100, 200, 500, 1000)
AP_CUTOFFS = (None, 5, 10, 15, 20, 30, 100, 200, 500, 1000)


@pytest.fixture(scope="module")
def providers():
    from bayeschain.integrations.ir_measures import register_ir_measures

    mp, path = register_ir_measures()
    ours = ir_measures.providers.registry["bayeschain"]
    ref = ir_measures.providers.registry["pytrec_eval"]
    if not ref.is_available():
        pytest.skip("ir_measures' pytrec_eval provider is unavailable (needs "
                    "pytrec-eval-terrier>=0.5)")
    return ours, ref, mp, path


def read_qrels(path):
    out = []
    for line in Path(path).read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        qid, _iter, doc, rel = line.split()
        out.append(ir_measures.Qrel(qid, doc, int(rel)))
    return out


def read_run(path):
    out = []
    for line in Path(path).read_text().splitlines():
        if line.strip():
            qid, _q0, doc, _rank, score, _runid = line.split()[:6]
            out.append(ir_measures.ScoredDoc(qid, doc, float(score)))
    return out


def measures_for(levels):
    """AP, AP@k and P@k at each level, as ir_measures measures."""
    out = []
    for rel in levels:
        out += [ir_measures.AP(rel=rel) if k is None else ir_measures.AP(rel=rel) @ k
                for k in AP_CUTOFFS]
        out += [ir_measures.P(rel=rel) @ k for k in P_CUTOFFS]
    return out


def per_query(metrics):
    table = {}
    for m in metrics:
        key = (str(m.query_id), m.measure)
        assert key not in table, f"{key} reported twice"
        table[key] = float(m.value)
    return table


def tied_collection(seed=14):
    """Qrels and a run whose scores tie a lot (trec_eval breaks ties by docno descending).

    Doc ids mix lengths and cases (``d9`` > ``d10`` > ``D7`` as strings), grades run from -1
    to 3, a third of the retrieved documents are unjudged, one topic has no relevant
    document, one topic has all its documents tied, lists are 1 to 60 long, one run topic
    has no qrels and one qrels topic has no run; rows are shuffled.
    """
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(14):
        topic = f"q{t}"
        pool = [f"{rng.choice(['d', 'D', 'doc-'])}{i}" for i in range(90)]
        judged = pool[:60]
        grades = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3], size=len(judged))
        if t == 1:
            grades[:] = rng.choice([-1, 0], size=len(judged))   # nothing relevant
        if t != 12:                                              # q12: a run without qrels
            qrels += [ir_measures.Qrel(topic, d, int(g))
                      for d, g in zip(judged, grades, strict=True)]
        if t == 13:                                              # q13: qrels without a run
            continue
        n = int(rng.choice([1, 2, 4, 9, 25, 60]))
        docs = rng.choice(pool, size=n, replace=False)
        if t == 2:
            scores = np.full(n, 0.5)                             # one tie over the list
        else:
            scores = rng.integers(-2, 3, size=n) / 2.0           # five score values
        run += [ir_measures.ScoredDoc(topic, str(d), float(s))
                for d, s in zip(docs, scores, strict=True)]
    run = [run[i] for i in rng.permutation(len(run))]
    return qrels, run


CASES = {
    "qrels.test-results.test": ("qrels.test", "results.test", (1,)),
    "qrels.test-results.trunc": ("qrels.test", "results.trunc", (1,)),
    "with-comments-results.test": ("qrels.test.with-comments", "results.test", (1,)),
    "rel_level-results.test": ("qrels.rel_level", "results.test", (1, 2, 3, 4)),
    "comment.test": ("qrels.comment.test", "results.comment.test", (1, 2, 3)),
}


def load_case(name):
    if name == "generated-ties":
        qrels, run = tied_collection()
        return qrels, run, (1, 2, 3)
    q, r, levels = CASES[name]
    return read_qrels(DATA / q), read_run(DATA / r), levels


def test_the_shared_measures_are_ap_and_precision(providers):
    """The comparison below covers what both providers accept; if either provider gains a
    measure the other has, this fails so that the comparison is widened."""
    ours, ref, _, _ = providers
    m = ir_measures
    candidates = [m.AP, m.AP @ 10, m.AP(rel=2), m.P @ 10, m.P(rel=2) @ 5, m.RR, m.RR(rel=2),
                  m.Rprec, m.nDCG, m.nDCG @ 10, m.R @ 10, m.Success @ 10, m.Bpref,
                  m.NumRet, m.NumRel, m.NumQ, m.SetP, m.SetR, m.SetF, m.SetAP, m.infAP,
                  m.IPrec @ 0.5, m.RBP(p=0.8, rel=1)]
    both = {str(c) for c in candidates if ours.supports(c) and ref.supports(c)}
    assert both == {"AP", "AP@10", "AP(rel=2)", "P@10", "P(rel=2)@5"}


@pytest.mark.parametrize("case", [*CASES, "generated-ties"])
def test_provider_matches_pytrec_eval_per_query(providers, case):
    ours, ref, _, _ = providers
    qrels, run, levels = load_case(case)
    wanted = measures_for(levels)
    assert all(ours.supports(m) and ref.supports(m) for m in wanted)
    got = per_query(ours.iter_calc(wanted, qrels, run))
    want = per_query(ref.iter_calc(wanted, qrels, run))
    # ir_measures reports every qrels topic (trec_eval -c): one missing from the run scores 0
    topics = {q.query_id for q in qrels}
    assert {t for t, _ in want} == topics
    assert set(got) == set(want) == set(itertools.product(topics, wanted))
    missing = topics - {d.query_id for d in run}
    assert all(got[(t, m)] == 0 for t in missing for m in wanted)
    wrong = [(t, str(m), got[(t, m)], v) for (t, m), v in want.items()
             if not abs(got[(t, m)] - v) <= TOL]
    assert not wrong, wrong[:10]
    # not a comparison of zeros: AP and P@k for larger k are positive on some topic
    rel = levels[0]
    for m in (ir_measures.AP(rel=rel), ir_measures.AP(rel=rel) @ 100,
              ir_measures.P(rel=rel) @ 30, ir_measures.P(rel=rel) @ 100):
        assert max(want[(t, m)] for t in topics) > 0, m
    assert case not in ("qrels.test-results.trunc", "generated-ties") or missing


def test_mp_and_path_through_the_default_pipeline_reduce_to_ap_and_precision(providers):
    """Only bayeschain provides MP and PatH, so ir_measures' default pipeline sends them to
    it; their special cases must equal pytrec_eval's AP and P@k topic by topic."""
    _, ref, mp, path = providers
    for qrels_name, run_name, rel in (("qrels.test", "results.test", 1),
                                      ("qrels.rel_level", "results.test", 2)):
        qrels, run = read_qrels(DATA / qrels_name), read_run(DATA / run_name)
        markov = mp(model="CONST", rescale="recall", rel=rel)
        got = per_query(ir_measures.iter_calc([markov], qrels, run))
        want = per_query(ref.iter_calc([ir_measures.AP(rel=rel)], qrels, run))
        assert len(want) == 3
        for (topic, _), value in want.items():
            assert got[(topic, markov)] == pytest.approx(value, abs=TOL), (qrels_name, topic)
    # P@H under DFBM with the list cut at k is P@k when the list has at least k documents
    # (every results.test list has 500); gains are the grades, so binary qrels here
    qrels, run = read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test")
    cutoffs = (1, 5, 10, 30, 100, 500)
    dfbm = {k: path(model="dfbm") @ k for k in cutoffs}
    got = per_query(ir_measures.iter_calc(list(dfbm.values()), qrels, run))
    want = per_query(ref.iter_calc([ir_measures.P @ k for k in cutoffs], qrels, run))
    assert len(got) == len(want) == 3 * len(cutoffs)
    for k in cutoffs:
        for topic in ("301", "302", "303"):
            assert got[(topic, dfbm[k])] == pytest.approx(want[(topic, ir_measures.P @ k)],
                                                          abs=TOL), (k, topic)


def test_judged_only_is_computed_or_not_claimed(providers):
    """A measure the provider says it supports must be computed as pytrec_eval computes it;
    one it cannot compute must not be claimed (supports() False), so that ir_measures
    routes it elsewhere."""
    ours, ref, _, _ = providers
    qrels, run = read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test")
    for measure in (ir_measures.AP(judged_only=False), ir_measures.AP(judged_only=True),
                    ir_measures.P(judged_only=True) @ 10):
        if not ours.supports(measure):
            continue
        got = per_query(ours.iter_calc([measure], qrels, run))
        want = per_query(ref.iter_calc([measure], qrels, run))
        assert set(got) == set(want)
        for key, value in want.items():
            assert got[key] == pytest.approx(value, abs=TOL), key
