"""The ir_measures provider gives the numbers of ``bayeschain eval``."""

from pathlib import Path

import pytest

from bayeschain.evaluation import evaluate_runs
from bayeschain.io import read_qrels, read_run

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"


def test_ir_measures_provider_matches_bayeschain_eval():
    ir_measures = pytest.importorskip("ir_measures")
    from bayeschain.integrations.ir_measures import register_ir_measures

    MP, PatH = register_ir_measures()  # noqa: N806
    qrels = list(ir_measures.read_trec_qrels(str(DATA / "qrels.test")))
    run = list(ir_measures.read_trec_run(str(DATA / "results.test")))
    provider = ir_measures.providers.registry["bayeschain"]
    wanted = {ir_measures.AP(rel=1): "AP", ir_measures.RBP(p=0.8, rel=1): "RBP(p=0.8)",
              ir_measures.P @ 10: "P@10", MP(model="GL_AD_ID"): "MP(model='GL_AD_ID')",
              PatH(model="rwbm", p=0.5, q=0.25): "PatH(model='rwbm', p=0.5, q=0.25)"}
    ours = evaluate_runs(read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test"),
                         list(wanted.values()))
    means = ours.groupby("measure")["value"].mean()
    got = provider.calc_aggregate(list(wanted), qrels, run)
    for measure, text in wanted.items():
        assert got[measure] == pytest.approx(means[text], abs=1e-12), text
    # through ir_measures' default pipeline too (only bayeschain provides MP and PatH)
    default = ir_measures.calc_aggregate([MP(model="GL_AD_ID"), PatH(model="sfbm", p=0.5)],
                                         qrels, run)
    assert default[MP(model="GL_AD_ID")] == pytest.approx(means["MP(model='GL_AD_ID')"])
    per_query = {m.query_id: m.value for m in provider.iter_calc([ir_measures.AP(rel=1)],
                                                                  qrels, run)}
    assert set(per_query) == {"301", "302", "303"}
