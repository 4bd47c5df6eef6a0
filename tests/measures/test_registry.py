"""Measure strings: parsing, round trips, errors that list the valid names."""

import numpy as np
import pytest

from bayeschain.errors import ParameterError
from bayeschain.measures import MEASURES, evaluate, parse_measure


@pytest.mark.parametrize("text", ["AP", "P@10", "RBP(p=0.8)", "nDCG@10", "ERR@20",
                                  "PatH(model='rwbm', p=0.5, q=0.25, loss=0.25)",
                                  "RBP(p=0.9, gains={1: 0.5, 2: 1})@100", "AP@5"])
def test_repr_round_trips(text):
    m = parse_measure(text)
    assert repr(m) == text
    assert parse_measure(repr(m)) == m


@pytest.mark.parametrize(("alias", "canonical"), [("map", "AP"), ("P_10", "P@10"),
                                                  ("ndcg_cut_5", "nDCG@5"),
                                                  ("map_cut_100", "AP@100")])
def test_trec_eval_names(alias, canonical):
    assert repr(parse_measure(alias)) == canonical


@pytest.mark.parametrize(("text", "message"), [
    ("Foo", "unknown measure 'Foo'; valid names: AP, DCG, ERR"),
    ("RBP(x=1)", "no parameter"),
    ("P", "needs a cut-off"),
    ("P@0", "positive integer"),
    ("P@1.5", "positive integer"),
    ("RBP(0.8)", "must be named"),
    ("RBP(p=foo)", "literal"),
    ("AP +", "cannot parse"),
    ("RBP(p=0.8, p=0.9)", "repeated"),
])
def test_parse_errors(text, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(")):
        parse_measure(text)


def test_impossible_parameters():
    r = np.array([1, 0, 1.0])
    with pytest.raises(ParameterError, match="persistence"):
        evaluate("RBP(p=1.5)", r)
    with pytest.raises(ParameterError, match="probability"):
        evaluate("PatH(model='sfbm', p=-0.1)", r)
    with pytest.raises(ParameterError, match="exceeds 1"):
        evaluate("PatH(model='rwbm', p=0.8, q=0.4)", r)
    with pytest.raises(ParameterError, match="unknown browsing model 'walk'"):
        evaluate("PatH(model='walk')", r)
    with pytest.raises(ParameterError, match="needs parameter"):
        evaluate("PatH(model='rwbm', p=0.5)", r)
    with pytest.raises(ParameterError, match="NaN"):
        evaluate("AP", np.array([1, np.nan]))
    with pytest.raises(ParameterError, match="1-D"):
        evaluate("AP", np.ones((2, 2, 2)))


def test_single_and_batch_agree():
    rng = np.random.default_rng(0)
    rel = rng.integers(0, 3, (6, 12)).astype(float)
    for name in ["AP", "P@5", "RBP(p=0.7)", "nDCG@10", "ERR@10", "PatH(model='rwbm', p=.5, q=.2)"]:
        batch = evaluate(name, rel)
        singles = [evaluate(name, row) for row in rel]
        np.testing.assert_allclose(batch, singles, atol=1e-12)
        assert isinstance(singles[0], float)


def test_every_measure_has_docs():
    for name in MEASURES:
        spec = MEASURES.get(name)
        assert spec.summary and spec.reference


def test_ir_measures_fixture_values():
    """ir_measures' cwl fixtures (published values, tolerance 1e-4): AP, P@k, RBP(p=0.9)."""
    from pathlib import Path

    from bayeschain.evaluation import evaluate_runs
    from bayeschain.io import read_qrels, read_run

    data = Path(__file__).resolve().parents[2] / "data" / "ir_measures"
    table = evaluate_runs(read_qrels(data / "cwl.qrels"), read_run(data / "cwl.run"),
                          ["AP", "P@1", "P@5", "P@10", "P@20", "RBP(p=0.9)"])
    got = table.set_index(["measure", "topic"])["value"]
    expected = {"AP": (0.7087, 0.7438, 0.3068), "P@1": (1, 1, 0), "P@5": (0.6, 0.6, 0),
                "P@10": (0.5, 0.6, 0.4), "P@20": (0.25, 0.3, 0.2),
                "RBP(p=0.9)": (0.3501, 0.3996, 0.1988)}
    for measure, values in expected.items():
        for topic, value in zip(("T1", "T2", "T3"), values, strict=True):
            assert got[(measure, topic)] == pytest.approx(value, abs=1e-4)
