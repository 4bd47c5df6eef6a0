"""compare(): every probability column recomputed from its definition on the score draws."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayeschain.comparison import compare, hdi
from bayeschain.errors import ParameterError
from bayeschain.inference import posterior_from_parameters
from bayeschain.io import read_qrels, read_run
from bayeschain.scoring import score

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"


def _scores(values, runs=None, topics=None, chains=2):
    """(samples, runs, topics) -> the (chain, draw, run, topic) layout of score()."""
    v = np.asarray(values, dtype=float)
    s, r, t = v.shape
    runs = runs or [f"r{i}" for i in range(r)]
    topics = topics or [f"t{i}" for i in range(t)]
    return xr.DataArray(v.reshape(chains, s // chains, r, t),
                        dims=("chain", "draw", "run", "topic"),
                        coords={"chain": range(chains), "draw": range(s // chains),
                                "run": runs, "topic": topics})


@pytest.fixture(scope="module")
def draws():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.6, (1, 1, 12))
    noise = rng.normal(0, 0.02, (400, 3, 12))
    values = base + noise
    values[:, 1] += 0.004                     # a small true difference, smaller than rope
    values[:, 2, 3] = np.nan                  # a run without one topic
    return values


@pytest.mark.parametrize("topics", ["fixed", "bayesian-bootstrap"])
def test_each_column_is_its_definition(draws, topics):
    rope = 0.02                               # wider than the difference
    got = compare(_scores(draws), rope=rope, topics=topics, seed=5)
    if topics == "fixed":
        w = np.ones(draws.shape[::2])
    else:                                     # the documented weights: Dirichlet(1) per draw
        w = np.random.default_rng(5).dirichlet(np.ones(draws.shape[2]), size=draws.shape[0])
    # trec_eval -c: the topic run 2 lacks scores 0 (an empty ranking)
    means = np.sum(np.nan_to_num(draws, nan=0.0) * w[:, None, :], axis=-1) / \
        w.sum(-1)[:, None]
    for row in got.pairs.itertuples(index=False):
        i, j = int(row.A[1]), int(row.B[1])
        d = means[:, i] - means[:, j]
        cols = dict(zip(got.pairs.columns, row, strict=True))
        assert cols["mean_diff"] == pytest.approx(d.mean(), abs=1e-15)
        assert cols["P(A>B)"] == np.mean(d > 0)
        assert cols["P(A<B)"] == np.mean(d < 0)
        assert cols["P(|A-B|<=rope)"] == np.mean(np.abs(d) <= rope)
        assert cols["P(A-B>rope)"] == np.mean(d > rope)
        assert cols["P(B-A>rope)"] == np.mean(d < -rope)
        lo, hi = cols["hdi_0.95_low"], cols["hdi_0.95_high"]
        assert np.mean((d >= lo) & (d <= hi)) >= 0.95
    winners = means.argmax(axis=1)
    np.testing.assert_allclose(got.best.values, np.bincount(winners, minlength=3) / len(d))
    # the rope is wider than the difference: P(A>B) and P(A-B>rope) differ
    row = got.pairs[(got.pairs.A == "r0") & (got.pairs.B == "r1")].iloc[0]
    assert row["P(A<B)"] > 0.5 > row["P(B-A>rope)"]


def test_identical_runs_tie_and_split_p_best():
    rng = np.random.default_rng(1)
    one = rng.uniform(0, 1, (200, 1, 8))
    got = compare(_scores(np.concatenate([one, one], axis=1), runs=["x", "y"]))
    assert got.best.to_dict() == {"x": 0.5, "y": 0.5}
    assert got.ties == 1.0
    row = got.pairs.iloc[0]
    assert row["P(A>B)"] == row["P(A<B)"] == 0.0 and row["P(|A-B|<=rope)"] == 1.0


def test_order_invariant_and_decomposed(draws):
    s = _scores(draws)
    a = compare(s, rope=0.001, seed=2)
    b = compare(s.isel(run=[2, 0, 1]), rope=0.001, seed=2)
    pd.testing.assert_frame_equal(a.pairs, b.pairs)
    assert a.best.sum() == pytest.approx(1.0)
    parts = a.decomposition[(a.decomposition.A == "r0") & (a.decomposition.B == "r1")]
    assert list(parts.source) == ["user model (topics fixed)", "topics (posterior-mean scores)",
                                  "user model + topics"]
    fixed = compare(s, rope=0.001, topics="fixed").pairs.iloc[0]
    width = fixed["hdi_0.95_high"] - fixed["hdi_0.95_low"]
    assert parts.iloc[0]["hdi_width"] == pytest.approx(width)
    combined = a.pairs.iloc[0]
    assert parts.iloc[2]["hdi_width"] == pytest.approx(combined["hdi_0.95_high"]
                                                       - combined["hdi_0.95_low"])
    assert "topic sampling" in a.uncertainty
    with pytest.raises(ParameterError, match="topics"):
        compare(s, topics="jackknife")


def test_reports_escape_run_names():
    names = ["a|b", "\\input{/etc/passwd}", "=HYPERLINK(1)"]
    got = compare(_scores(np.random.default_rng(3).uniform(0, 1, (40, 3, 4)), runs=names))
    md = got.to_markdown()
    table = [line for line in md.splitlines() if line.startswith("|")]
    cells = {line.count("|") - line.count("\\|") for line in table}
    assert len(cells) == 1                       # every row has the header's columns
    tex = got.to_latex()
    assert "\\input" not in tex and "\\textbackslash{}input\\{" in tex
    csv = got.to_csv()
    assert "'=HYPERLINK(1)" in csv and "\n=HYPERLINK" not in csv


def test_hdi_is_the_shortest_interval():
    """Definition, by brute force over every pair of samples: no interval holding at least
    as many samples is shorter; and the known HDI of Exp(1) at 90% is [0, -log(0.1)]."""
    rng = np.random.default_rng(0)
    x = rng.exponential(size=300)
    lo, hi = hdi(x, 0.9)
    inside = np.sum((x >= lo) & (x <= hi))
    assert inside >= 0.9 * x.size and lo in x and hi in x
    xs = np.sort(x)
    shortest = min(xs[j] - xs[i] for i in range(xs.size) for j in range(i, xs.size)
                   if j - i + 1 >= inside)
    assert hi - lo <= shortest + 1e-15
    big = rng.exponential(size=200_000)
    lo, hi = hdi(big, 0.9)
    assert lo == pytest.approx(0.0, abs=1e-3) and hi == pytest.approx(np.log(10), rel=0.02)


def test_a_measure_without_learned_parameters_is_a_labelled_fixed_reference():
    qrels = read_qrels(DATA / "qrels.test")
    runs = {"full": read_run(DATA / "results.test"), "trunc": read_run(DATA / "results.trunc")}
    post = posterior_from_parameters({"walk": [[0.5, 0.1, 0.1, 0.3], [0.6, 0.1, 0.1, 0.2]]})
    with pytest.raises(ParameterError, match="fixed reference"):
        score(runs, qrels, "MP", post)
    s = score(runs, qrels, "MP", post, fixed_reference=True)
    assert np.all(s.isel(draw=0) .fillna(-1) == s.isel(draw=1).fillna(-1))
    got = compare(s, topics="fixed")
    assert got.uncertainty.startswith("no user-model uncertainty")
    assert "no user-model uncertainty" in got.to_markdown()


def test_rbp_persistence_under_a_posterior_is_an_error():
    qrels = read_qrels(DATA / "qrels.test")
    runs = {"full": read_run(DATA / "results.test")}
    post = posterior_from_parameters({"walk": [[0.5, 0.0, 0.1, 0.4]]})
    for measure in ("RBP(p=0.5)", "RBP(p=0.95)"):
        with pytest.raises(ParameterError, match="come from the posterior"):
            score(runs, qrels, measure, post)


def test_compare_is_callable_from_the_package():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c",
                          "import bayeschain as bc; print(callable(bc.compare))"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
