"""MP and MPcont scored under a learned jump kernel (issue 17, item 3): an ID / LID decay
exponent (specs ``jumps-id``) or free jump rows (``jumps-free``), against ``evaluate`` at
the paper's exponent and the dense definitions of ``tests/reference/markov_jumps.py``."""

from pathlib import Path

import numpy as np
import pytest

from bayeschain.errors import ParameterError
from bayeschain.evaluation import evaluate_runs
from bayeschain.inference import Posterior, fit, load_spec, posterior_from_parameters
from bayeschain.io import read_qrels, read_run
from bayeschain.io.lists import ranked_lists
from bayeschain.measures.markov import MODELS
from bayeschain.posterior.jumps import jump_kernel
from bayeschain.scoring import score
from tests.reference.markov_jumps import dense_mp

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"
DECAY_MODELS = [m for m in MODELS if m != "CONST"]


@pytest.fixture(scope="module")
def trec():
    qrels = read_qrels(DATA / "qrels.test")
    runs = {"full": read_run(DATA / "results.test"), "trunc": read_run(DATA / "results.trunc")}
    return qrels, runs


def lists_of(trec, cutoff=None):
    """(run, topic, 0/1 relevance of the list) of every scored pair."""
    qrels, runs = trec
    lists = ranked_lists(runs, qrels)
    for run, topic, rel, n in zip(lists.run_ids, lists.query_ids, lists.relevance,
                                  lists.lengths, strict=True):
        n = int(n) if cutoff is None else min(int(n), cutoff)
        yield run, topic, (rel[:n] >= 1).astype(float)


def assert_width(trec, scores, cutoff=None):
    """Spread over the draws wherever two relevant documents make a chain; none where the
    chain has one state (MP = the precision of the single relevant rank, or 0)."""
    width = scores.std(("chain", "draw"))
    for run, topic, rel in lists_of(trec, cutoff):
        w = float(width.sel(run=run, topic=topic))
        assert w > 1e-6 if rel.sum() >= 2 else w < 1e-15, (run, topic, w)


def free_posterior(seed: int, draws: int, ranks: int = 10):
    rng = np.random.default_rng(seed)
    p = rng.gamma(1.0, size=(draws, ranks, ranks))
    p[:, np.arange(ranks), np.arange(ranks)] = 0.0
    p /= p.sum(axis=-1, keepdims=True)
    return p, posterior_from_parameters({"jump": p})


@pytest.mark.parametrize("model", DECAY_MODELS)
def test_unit_exponent_posterior_reproduces_evaluate(trec, model):
    qrels, runs = trec
    family = model.split("_")[2]
    post = posterior_from_parameters({"jump_exponent": [1.0]}, jump_family=family)
    for measure in (f"MP(model='{model}')", f"MP(model='{model}', rescale='recall')@30"):
        got = score(runs, qrels, measure, post)
        ref = evaluate_runs(qrels, runs, [measure])
        assert got.sizes["draw"] == 1 and "uncertainty" not in got.attrs
        for row in ref.itertuples():
            assert float(got.sel(run=row.run, topic=row.topic)[0, 0]) == pytest.approx(
                row.value, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("model", ["GL_AD_LID", "GL_OR_LID", "LO_AD_LID", "LO_OR_LID"])
def test_exponent_draws_equal_the_dense_definition(trec, model):
    qrels, runs = trec
    g = np.array([0.3, 1.0, 2.2])
    mu = np.random.default_rng(1).uniform(0.2, 3.0, (3, 500))
    post = posterior_from_parameters({"jump_exponent": g, "holding_rate": mu},
                                     jump_family="LID")
    mp = score(runs, qrels, f"MP(model='{model}')", post)
    cont = score(runs, qrels, f"MPcont(model='{model}')", post)
    for run, topic, rel in lists_of(trec):
        for d in range(3):
            assert float(mp.sel(run=run, topic=topic)[0, d]) == pytest.approx(
                dense_mp(rel, model, g[d]), abs=1e-12)
            assert float(cont.sel(run=run, topic=topic)[0, d]) == pytest.approx(
                dense_mp(rel, model, g[d], mu=mu[d]), abs=1e-12)


def test_jumps_id_posterior_has_posterior_width(trec):
    """Exponents spread as a jumps-id fit's: the scores spread over the draws, and draw
    blocks give the numbers of one pass (to a few units in the last place: NumPy's
    reductions may take another SIMD path for another batch size)."""
    qrels, runs = trec
    g = np.random.default_rng(2).gamma(20.0, 1 / 20.0, size=40)
    post = posterior_from_parameters({"jump_exponent": g}, jump_family="ID")
    got = score(runs, qrels, "MP(model='GL_AD_ID')", post)
    assert_width(trec, got)
    blocks = score(runs, qrels, "MP(model='GL_AD_ID')", post, draw_block=7)
    np.testing.assert_allclose(blocks.values, got.values, rtol=1e-14, atol=1e-15)


def test_free_rows_posterior_equals_the_dense_definition(trec):
    qrels, runs = trec
    p, post = free_posterior(3, 5)
    mu = np.random.default_rng(4).uniform(0.2, 3.0, (5, 10))
    both = posterior_from_parameters({"jump": p, "holding_rate": mu})
    for method in ("closed", "chain"):
        mp = score(runs, qrels, f"MP(method='{method}')@10", post)
        cont = score(runs, qrels, f"MPcont(model='GL_AD_LID', method='{method}')@10", both)
        for run, topic, rel in lists_of(trec, cutoff=10):
            for d in range(5):
                assert float(mp.sel(run=run, topic=topic)[0, d]) == pytest.approx(
                    dense_mp(rel, "GL_AD_ID", free=p[d]), abs=1e-12)
                assert float(cont.sel(run=run, topic=topic)[0, d]) == pytest.approx(
                    dense_mp(rel, "GL_AD_ID", free=p[d], mu=mu[d]), abs=1e-12)
    assert_width(trec, mp, cutoff=10)


def test_refusals_say_what_to_do(trec):
    qrels, runs = trec
    lid = posterior_from_parameters({"jump_exponent": [0.8, 1.1]}, jump_family="LID")
    with pytest.raises(ParameterError, match=r"GL_AD_ID.*the ID decay.*LID decay.*"
                                             r"GL_AD_LID"):
        score(runs, qrels, "MP(model='GL_AD_ID')", lid)
    with pytest.raises(ParameterError, match="uniform weights.*LID decay"):
        score(runs, qrels, "MP(model='CONST')", lid)
    _, free = free_posterior(5, 2)
    with pytest.raises(ParameterError, match=r"covers ranks 1\.\.10.*MP@10"):
        score(runs, qrels, "MP", free)
    with pytest.raises(ParameterError, match="GL_AD models.*'LO_AD_ID' is not one"):
        score(runs, qrels, "MP(model='LO_AD_ID')@10", free)
    with pytest.raises(ParameterError, match="no holding rates"):
        score(runs, qrels, "MPcont@10", free)
    walk = posterior_from_parameters({"walk": [[0.5, 0.1, 0.1, 0.3]],
                                      "holding_rate": np.ones((1, 10))})
    with pytest.raises(ParameterError, match="jumps-id.*fixed reference"):
        score(runs, qrels, "MP", walk)
    fixed = score(runs, qrels, "MP", walk, fixed_reference=True)
    assert fixed.attrs["uncertainty"].startswith("no user-model uncertainty")
    with pytest.raises(ParameterError, match="not both"):
        posterior_from_parameters({"walk": [[0.5, 0.1, 0.1, 0.3]], "jump_exponent": [1.0]})
    with pytest.raises(ParameterError, match="no jump kernel"):
        jump_kernel(walk)


def test_family_is_read_from_the_fitted_spec_and_kept_by_files(trec, tmp_path):
    """A posterior made as fit makes it (the spec's TOML in its attrs) says its family
    through [jumps]; a saved and loaded constructed posterior keeps jump_family."""
    import xarray as xr

    from bayeschain.posterior.container import make_posterior

    qrels, runs = trec
    spec = load_spec("jumps-id").with_keys("jumps", family="LID")
    g = xr.DataArray(np.array([[0.7, 1.4]]), dims=("chain", "draw"))
    post = make_posterior({"jump_exponent": g}, spec=spec, data_digest="test", seed=1,
                          method="nuts")
    assert jump_kernel(post).family == "LID"
    got = score(runs, qrels, "MP(model='GL_OR_LID')", post)
    for run, topic, rel in lists_of(trec):
        assert float(got.sel(run=run, topic=topic)[0, 1]) == pytest.approx(
            dense_mp(rel, "GL_OR_LID", 1.4), abs=1e-12)
    built = posterior_from_parameters({"jump_exponent": [0.7, 1.4]}, jump_family="LID")
    built.save(tmp_path / "jumps.nc")
    loaded = Posterior.load(tmp_path / "jumps.nc")
    np.testing.assert_array_equal(score(runs, qrels, "MP(model='GL_OR_LID')", loaded).values,
                                  got.values)


def test_fitted_free_rows_score_with_width(trec):
    """A conjugate jumps-free fit to clicks from a known non-reversible chain."""
    from tests.inference.clicks.test_jumps import sample_moves, stats_from_moves

    qrels, runs = trec
    truth, _ = free_posterior(6, 1, ranks=6)
    post = fit(stats_from_moves(sample_moves(truth[0], 300, 7)),
               load_spec("jumps-free").with_keys("model", ranks=6),
               draws=200, chains=2)
    kernel = jump_kernel(post)
    assert kernel.kind == "matrix" and kernel.draws.shape == (400, 6, 6)
    got = score(runs, qrels, "MP@6", post)
    assert_width(trec, got, cutoff=6)
    for run, topic, rel in lists_of(trec, cutoff=6):
        for d in (0, 399):
            assert float(got.sel(run=run, topic=topic).values.reshape(-1)[d]) == \
                pytest.approx(dense_mp(rel, "GL_AD_ID", free=kernel.draws[d]), abs=1e-12)


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")
def test_fitted_jumps_id_posterior_scores_with_width(trec):
    """The one small NUTS fit: jumps-id on clicks from the ID decay with g = 1.3; its
    family comes from the spec, its exponent draws spread the scores, each draw is the
    dense definition's MP."""
    pytest.importorskip("pymc")
    from bayeschain.inference.clicks.jumps import decay_matrix
    from tests.inference.clicks.test_jumps import sample_moves, stats_from_moves

    qrels, runs = trec
    post = fit(stats_from_moves(sample_moves(decay_matrix("ID", 1.3, 8), 300, 2)),
               load_spec("jumps-id").with_keys("model", ranks=8),
               draws=100, tune=200, chains=2)
    kernel = jump_kernel(post)
    assert (kernel.kind, kernel.family, kernel.draws.shape) == ("exponent", "ID", (200,))
    got = score(runs, qrels, "MP(model='GL_OR_ID')", post)
    assert_width(trec, got)
    flat = got.stack(sample=("chain", "draw")).transpose("sample", ...)
    for run, topic, rel in lists_of(trec):
        for d in (0, 199):
            assert float(flat.sel(run=run, topic=topic)[d]) == pytest.approx(
                dense_mp(rel, "GL_OR_ID", kernel.draws[d]), abs=1e-12)
    with pytest.raises(ParameterError, match="LID decay.*ID decay"):
        score(runs, qrels, "MP(model='GL_OR_LID')", post)
