"""Posterior scoring: single draws reproduce evaluate; comparisons behave."""

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from bayeschain.errors import ParameterError
from bayeschain.evaluation import evaluate_runs
from bayeschain.inference import posterior_from_parameters
from bayeschain.io import read_qrels, read_run
from bayeschain.scoring import score

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"


@pytest.fixture(scope="module")
def trec():
    qrels = read_qrels(DATA / "qrels.test")
    runs = {"full": read_run(DATA / "results.test"), "trunc": read_run(DATA / "results.trunc")}
    return qrels, runs


@pytest.mark.parametrize(("scored", "evaluated", "backward"), [
    ("PatH(model='sfbm', order=2)", "PatH(model='sfbm', p=0.55, order=2)", 0.0),
    ("PatH(model='sfbm', order=1)", "PatH(model='sfbm', p=0.55, order=1)", 0.0),
    ("PatH(model='rwbm', order=2)", "PatH(model='rwbm', p=0.55, q=0.2, order=2)", 0.2),
    ("PatH(model='rwbm', order=1)@20", "PatH(model='rwbm', p=0.55, q=0.2, order=1)@20", 0.2),
    ("RBP", "RBP(p=0.55)", 0.0),
    ("MPcont(model='GL_AD_ID')", "MPcont(model='GL_AD_ID')", 0.2),
])
def test_single_draw_reproduces_evaluate(trec, scored, evaluated, backward):
    qrels, runs = trec
    mu = np.linspace(0.5, 2.0, 1000)[None, :]
    walk = [[0.55, backward, 0.05, 0.4 - backward]]
    post = posterior_from_parameters({"walk": walk, "holding_rate": mu})
    got = score(runs, qrels, scored, post)
    assert got.dims == ("chain", "draw", "run", "topic")
    ref = evaluate_runs(qrels, runs, [evaluated], holding_rates=mu[0])
    # order 1 is a truncated series on both sides, each exact to 1e-12 per term
    tol = 1e-10 if "order=1" in scored else 1e-15
    for row in ref.itertuples():
        assert float(got.sel(run=row.run, topic=row.topic)[0, 0]) == pytest.approx(
            row.value, rel=1e-12, abs=tol)
    assert np.isnan(got.sel(run="trunc", topic="302")).all()   # topic missing from the run


def test_identical_runs_get_bit_identical_scores(trec):
    """A run and its copies, wherever their rows fall in the batch, score the same to the
    last bit under every draw (a comparison must see a tie, not a one-ulp difference).
    Forty-three runs of 100-document lists: a bare BLAS product of this size gives the
    rows past the last full block of eight other last bits than the same row inside it
    (measured with OpenBLAS)."""
    qrels, runs = trec
    base = runs["full"].groupby("query_id").head(100)
    rng = np.random.default_rng(4)
    many = {}
    for k in range(40):
        shuffled = base.copy()
        shuffled["score"] = rng.permutation(shuffled["score"].to_numpy())
        many[f"r{k:02d}"] = shuffled
    for twin in ("z1", "z2", "z3"):                 # the last rows of the batch
        many[twin] = many["r00"].copy()
    walks = rng.dirichlet([6, 1, 1, 2], size=(300, 1))[:, 0]
    got = score(many, qrels, "PatH(model='rwbm', order=2)",
                posterior_from_parameters({"walk": walks}))
    for twin in ("z1", "z2", "z3"):
        np.testing.assert_array_equal(got.sel(run=twin).values, got.sel(run="r00").values)


def test_distinct_rows_group_as_numpy_unique_does():
    """Each row maps to a distinct row equal to it byte for byte, and there are as many
    distinct rows as np.unique finds (binary gains with many repeats, graded gains,
    continuous values, a single row)."""
    from bayeschain.scoring.score import distinct_rows

    rng = np.random.default_rng(9)
    for a in (rng.integers(0, 2, (3000, 6)).astype(float),
              rng.integers(0, 4, (500, 3)).astype(float) * 0.5,
              rng.random((200, 50)), np.ones((1, 4)), np.repeat(rng.random((3, 7)), 5, 0)):
        distinct, inverse = distinct_rows(a)
        np.testing.assert_array_equal(distinct[inverse], a)
        assert distinct.shape[0] == np.unique(a, axis=0).shape[0]


def test_draws_are_scored_independently(trec):
    qrels, runs = trec
    walks = np.array([[0.3, 0.1, 0.1, 0.5], [0.7, 0.1, 0.05, 0.15]])
    got = score(runs, qrels, "PatH(model='rwbm', order=2)", posterior_from_parameters(
        {"walk": walks}))
    for i, (p, q, _, _) in enumerate(walks):
        one = score(runs, qrels, "PatH(model='rwbm', order=2)",
                    posterior_from_parameters({"walk": walks[i:i + 1]}))
        np.testing.assert_allclose(got[0, i].values, one[0, 0].values, equal_nan=True)
        assert p > 0 and q > 0


def test_parameters_from_the_posterior_are_not_given_twice(trec):
    qrels, runs = trec
    post = posterior_from_parameters({"walk": [[0.5, 0.2, 0.1, 0.2]]})
    with pytest.raises(ParameterError, match="come from the posterior"):
        score(runs, qrels, "PatH(model='sfbm', p=0.5)", post)
    with pytest.raises(ParameterError, match="no parameter learned from clicks"):
        score(runs, qrels, "nDCG@10", post)


def test_forward_only_measures_refuse_a_walk_that_moves_backward(trec):
    """SFBM and RBP would score a chain that is not the fitted walk."""
    qrels, runs = trec
    post = posterior_from_parameters({"walk": [[0.5, 0.2, 0.1, 0.2]]})
    for measure in ("PatH(model='sfbm', order=2)", "RBP"):
        with pytest.raises(ParameterError, match="moves backward"):
            score(runs, qrels, measure, post)


def test_draw_blocks_and_dask_give_the_local_numbers(trec):
    qrels, runs = trec
    walks = np.random.default_rng(4).dirichlet([20, 5, 2, 8], size=37)
    post = posterior_from_parameters({"walk": walks})
    measure = "PatH(model='rwbm', order=2)"
    whole = score(runs, qrels, measure, post, draw_block=1000)
    blocks = score(runs, qrels, measure, post, draw_block=5)
    # equal up to the last bit of BLAS's summation order for other matrix shapes
    np.testing.assert_allclose(whole.values, blocks.values, rtol=1e-14, atol=1e-16)
    distributed = pytest.importorskip("dask.distributed")
    rel_post = posterior_from_parameters({"walk_by_relevance": np.stack(
        [walks, walks[:, [1, 0, 2, 3]]], axis=1)})
    dynamic = "PatH(model='drwbm', order=2)"
    rel_whole = score(runs, qrels, dynamic, rel_post, draw_block=1000)
    rel_blocks = score(runs, qrels, dynamic, rel_post, draw_block=8)
    np.testing.assert_array_equal(rel_whole.values, rel_blocks.values)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = score(runs, qrels, measure, post, draw_block=10, client=client)
        rel_remote = score(runs, qrels, dynamic, rel_post, draw_block=10, client=client)
    np.testing.assert_allclose(whole.values, remote.values, rtol=1e-14, atol=1e-16)
    assert np.array_equal(np.isnan(whole.values), np.isnan(remote.values))
    # the relevance-dependent walk: one solve per list and draw, identical on the cluster
    np.testing.assert_array_equal(rel_whole.values, rel_remote.values)


def test_msm_sessions_under_posterior_draws():
    from bayeschain.measures import msm
    from bayeschain.scoring import score_sessions

    sessions = {"s1": np.array([[1, 0], [0, 2], [1, 1.0]]), "s2": np.array([[0], [1], [0.0]])}
    walks = np.random.default_rng(5).dirichlet([5, 2, 2, 3], size=6)
    got = score_sessions(sessions, posterior_from_parameters({"walk": walks},
                                                             boundary="rescale"),
                         discount="log")
    assert got.dims == ("chain", "draw", "session")
    for i, (p, q, r, s) in enumerate(walks):
        for name, matrix in sessions.items():
            assert float(got.sel(session=name)[0, i]) == pytest.approx(
                msm(matrix, p, q, r, s, "log"), rel=1e-13)


def test_cdf_bands_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayeschain.measures import path_distribution
    from bayeschain.plots import plot_cdf_bands, plot_difference, plot_forest
    from bayeschain.scoring import path_cdf_bands

    walks = np.random.default_rng(6).dirichlet([10, 3, 1, 4], size=30)
    post = posterior_from_parameters({"walk": walks})
    rel = np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1.0])
    bands = path_cdf_bands(rel, "rwbm", post, max_draws=None)
    lo, mid, hi = bands.values
    assert np.all(lo <= mid + 1e-12) and np.all(mid <= hi + 1e-12)
    cdfs = np.stack([path_distribution(rel, "rwbm", p=p, q=q).cdf(bands["x"].values)
                     for p, q, _, _ in walks])
    np.testing.assert_allclose(mid, np.quantile(cdfs, 0.5, axis=0), atol=1e-12)
    scores = xr.DataArray(np.random.default_rng(7).random((1, 50, 2, 3)),
                          dims=("chain", "draw", "run", "topic"),
                          coords={"run": ["A", "B"]})
    fig, axes = plt.subplots(1, 3)
    plot_cdf_bands(axes[0], bands, label="r")
    plot_forest(axes[1], scores)
    plot_difference(axes[2], scores, "A", "B")
    fig.savefig(tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 10_000


# --- relevance-dependent walk (drwbm) -------------------------------------------------

DRWBM = np.array([[[0.6, 0.1, 0.1, 0.2], [0.3, 0.25, 0.2, 0.25]]])  # non-relevant, relevant


@pytest.mark.parametrize("order", [1, 2])
def test_single_draw_drwbm_reproduces_evaluate(trec, order):
    qrels, runs = trec
    post = posterior_from_parameters({"walk_by_relevance": DRWBM})
    got = score(runs, qrels, f"PatH(model='drwbm', order={order})@30", post)
    ref = evaluate_runs(qrels, runs, [f"PatH(model='drwbm', p=0.6, q=0.1, p_rel=0.3, "
                                      f"q_rel=0.25, order={order})@30"])
    tol = 1e-10 if order == 1 else 1e-14
    for row in ref.itertuples():
        assert float(got.sel(run=row.run, topic=row.topic)[0, 0]) == pytest.approx(
            row.value, rel=1e-12, abs=tol)


def test_drwbm_needs_a_posterior_by_relevance(trec):
    qrels, runs = trec
    with pytest.raises(ParameterError, match="walk-relevance"):
        score(runs, qrels, "PatH(model='drwbm', order=2)",
              posterior_from_parameters({"walk": [[0.5, 0.2, 0.1, 0.2]]}))
    with pytest.raises(ParameterError, match="drwbm"):
        score(runs, qrels, "PatH(model='rwbm', order=2)",
              posterior_from_parameters({"walk_by_relevance": DRWBM}))


@pytest.mark.parametrize("order", [1, 2])
def test_drwbm_counts_relevant_by_the_posteriors_level_as_evaluate_does(order):
    """At level 2 on graded qrels, a rank is relevant when its grade is >= 2 in both paths
    (score once used grade >= level, evaluate grade > 0), and the dense chain built from
    that definition agrees."""
    qrels = read_qrels(DATA / "qrels.rel_level")
    runs = {"full": read_run(DATA / "results.test")}
    post = posterior_from_parameters({"walk_by_relevance": DRWBM}, relevance_level=2)
    measure = f"PatH(model='drwbm', order={order})@30"
    got = score(runs, qrels, measure, post, level=2)
    ref = evaluate_runs(qrels, runs, [f"PatH(model='drwbm', p=0.6, q=0.1, p_rel=0.3, "
                                      f"q_rel=0.25, order={order})@30"], level=2)
    one = evaluate_runs(qrels, runs, [f"PatH(model='drwbm', p=0.6, q=0.1, p_rel=0.3, "
                                      f"q_rel=0.25, order={order})@30"], level=1)
    tol = 1e-10 if order == 1 else 1e-14
    for row in ref.itertuples():
        assert float(got.sel(run=row.run, topic=row.topic)[0, 0]) == pytest.approx(
            row.value, rel=1e-12, abs=tol)
    assert not np.allclose(ref["value"], one["value"])        # the level matters here
    if order == 2:                 # the definition: a dense chain over one list
        from bayeschain.io.lists import ranked_lists

        lists = ranked_lists(runs, qrels, level=2)
        i = 0
        rel = lists.relevance[i, :min(int(lists.lengths[i]), 30)]
        n = rel.size
        relevant = rel >= 2
        fwd = np.where(relevant, 0.3, 0.6)
        bwd = np.where(relevant, 0.25, 0.1)
        P = np.diag(fwd[:-1], 1) + np.diag(bwd[1:], -1)
        visits = np.linalg.solve((np.eye(n) - P).T, np.eye(n)[0])
        expect = visits @ np.clip(rel, 0, None) / visits.sum()
        topic = lists.query_ids[i]
        assert float(got.sel(run="full", topic=topic)[0, 0]) == pytest.approx(expect, rel=1e-12)


@pytest.mark.parametrize(("scored", "evaluated"), [
    ("RBP(finite=True)@5", "RBP(p=0.55, finite=True)@5"),
    ("RBP(gains='graded')", "RBP(p=0.55, gains='graded')"),
    ("RBP(gains={1: 0.5, 2: 1})@5", "RBP(p=0.55, gains={1: 0.5, 2: 1})@5"),
    ("PatH(model='sfbm', order=2, gains={1: 1, 2: 3})",
     "PatH(model='sfbm', p=0.55, order=2, gains={1: 1, 2: 3})"),
])
def test_measure_parameters_are_honoured_under_a_posterior(scored, evaluated):
    """score once re-implemented RBP and ignored its parameters (all variants gave the
    same numbers); every parameter now means under a posterior what it means in evaluate."""
    qrels = read_qrels(DATA / "qrels.rel_level")
    runs = {"full": read_run(DATA / "results.test")}
    post = posterior_from_parameters({"walk": [[0.55, 0.0, 0.05, 0.4]]})
    got = score(runs, qrels, scored, post)
    ref = evaluate_runs(qrels, runs, [evaluated])
    plain = score(runs, qrels, "RBP", post)
    for row in ref.itertuples():
        assert float(got.sel(run=row.run, topic=row.topic)[0, 0]) == pytest.approx(
            row.value, rel=1e-12, abs=1e-15)
    assert not np.allclose(got.values, plain.values, equal_nan=True)


def test_rbp_under_many_draws_is_the_definition():
    """RBP = (1 - p) sum_i g_i p^(i-1) per draw, recomputed here from the relevance lists."""
    from bayeschain.io.lists import ranked_lists

    qrels = read_qrels(DATA / "qrels.test")
    runs = {"full": read_run(DATA / "results.test")}
    ps = np.array([0.3, 0.55, 0.8, 0.95])
    walks = np.stack([ps, 0 * ps, 0.05 * (1 - ps), 0.95 * (1 - ps)], axis=1)
    got = score(runs, qrels, "RBP", posterior_from_parameters({"walk": walks}))
    lists = ranked_lists(runs, qrels)
    for i, topic in enumerate(lists.query_ids):
        g = (lists.relevance[i] >= 1).astype(float)
        for d, p in enumerate(ps):
            expect = (1 - p) * np.sum(g * p ** np.arange(g.size))
            assert float(got.sel(run="full", topic=topic)[0, d]) == pytest.approx(expect,
                                                                                  rel=1e-12)
