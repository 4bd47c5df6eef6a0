"""The user whose moves depend on the click is the user who is scored: the walk over
ranks with the clicks marginalised (``m_i = c_i m^c_i + (1 - c_i) m^s_i``) gives P@H the
values of users simulated with their clicks, on given runs (rwbm and, by relevance,
drwbm)."""

import numpy as np
import pytest

from bayeschain.inference import posterior_from_parameters
from bayeschain.io import read_qrels, read_run
from bayeschain.posterior.walk import marginal_moves
from bayeschain.scoring import score
from tests.reference.walk_clicks import walk_paths

N = 6
USERS = 100_000
SKIP = np.array([[0.8, 0.0, 0.05, 0.15], [0.7, 0.15, 0.05, 0.1], [0.6, 0.25, 0.05, 0.1],
                 [0.55, 0.3, 0.05, 0.1], [0.5, 0.35, 0.05, 0.1], [0.4, 0.4, 0.1, 0.1]])
AFTER = np.array([[0.4, 0.0, 0.2, 0.4], [0.3, 0.05, 0.25, 0.4], [0.3, 0.1, 0.2, 0.4],
                  [0.25, 0.15, 0.2, 0.4], [0.2, 0.2, 0.2, 0.4], [0.15, 0.25, 0.2, 0.4]])
CLICK = np.array([0.6, 0.45, 0.35, 0.3, 0.25, 0.2])
GRADES = {"a": 2, "b": 0, "c": 1, "d": 0, "e": 1, "f": 0}


@pytest.fixture(scope="module")
def one_topic(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run")
    (folder / "qrels").write_text("".join(f"1 0 {d} {g}\n" for d, g in GRADES.items()))
    (folder / "run").write_text("".join(f"1 Q0 {d} {k + 1} {10 - k} r\n"
                                        for k, d in enumerate(GRADES)))
    return read_qrels(folder / "qrels"), {"r": read_run(folder / "run")}


def _simulated(paths, gains):
    """Order 1 ``E[T / H]`` and order 2 ``E[T] / E[H]`` over simulated users, with the
    standard error of the first."""
    t = np.array([gains[p].sum() for p in paths])
    h = np.array([len(p) for p in paths], dtype=float)
    ratio = t / h
    return ratio.mean(), ratio.std() / np.sqrt(ratio.size), t.mean() / h.mean()


def test_rwbm_scores_the_click_walk_with_its_clicks_marginalised(one_topic):
    qrels, runs = one_topic
    gains = np.array([GRADES[d] for d in GRADES], dtype=float)
    paths = walk_paths(np.random.default_rng(11), USERS, SKIP, AFTER, CLICK)
    want1, se, want2 = _simulated(paths, gains)
    walk = marginal_moves(SKIP, AFTER, CLICK)[None]
    post = posterior_from_parameters({"walk": walk})
    got1 = float(score(runs, qrels, f"PatH(model='rwbm', order=1)@{N}", post).values.ravel()[0])
    got2 = float(score(runs, qrels, f"PatH(model='rwbm', order=2)@{N}", post).values.ravel()[0])
    assert abs(got1 - want1) < 4 * se
    assert got2 == pytest.approx(want2, rel=0.01)
    # the walk after no click alone (or after a click alone) is another user
    skip_only = float(score(runs, qrels, f"PatH(model='rwbm', order=1)@{N}",
                            posterior_from_parameters({"walk": SKIP[None]})).values.ravel()[0])
    assert abs(skip_only - want1) > 10 * se


def test_drwbm_scores_the_click_walk_by_relevance_of_the_examined_document(one_topic):
    qrels, runs = one_topic
    grades = np.array([GRADES[d] for d in GRADES])
    relevant = grades >= 1
    skip = np.stack([SKIP, SKIP])                                   # (2, N, 4)
    skip[1] = np.array([[0.5, 0.0, 0.2, 0.3]] * N)
    skip[1, 1:, :] = [0.45, 0.1, 0.15, 0.3]
    after = np.stack([AFTER, AFTER])
    after[1] = np.array([[0.2, 0.0, 0.3, 0.5]] * N)
    after[1, 1:, :] = [0.15, 0.05, 0.3, 0.5]
    rows_s = np.where(relevant[:, None], skip[1], skip[0])
    rows_c = np.where(relevant[:, None], after[1], after[0])
    paths = walk_paths(np.random.default_rng(12), USERS, rows_s, rows_c, CLICK)
    _, _, want2 = _simulated(paths, grades.astype(float))
    walk = marginal_moves(skip, after, CLICK)[None]                  # (1, 2, N, 4)
    post = posterior_from_parameters({"walk_by_relevance": walk})
    got2 = float(score(runs, qrels, f"PatH(model='drwbm', order=2)@{N}", post)
                 .values.ravel()[0])
    assert got2 == pytest.approx(want2, rel=0.01)


def test_a_runs_document_gets_the_populations_mean_attractiveness_at_its_rank():
    """With attractiveness per document, at a rank where the log shows no rarer pair the
    scored walk mixes the moves with the mean attractiveness of the fitted population
    there, E[logistic(a + b log i + sd Z)]: against a Monte-Carlo average of 2,000,000
    normal draws."""
    from bayeschain.posterior.walk import population_click

    trend = np.array([[-1.0, -0.6, 1.2], [0.3, -1.1, 0.4]])
    got = population_click(trend, 10)
    z = np.random.default_rng(5).standard_normal(2_000_000)
    for d, (a, b, sd) in enumerate(trend):
        for i in range(10):
            want = np.mean(1.0 / (1.0 + np.exp(-(a + b * np.log(i + 1) + sd * z))))
            assert got[d, i] == pytest.approx(want, abs=1e-3)


def test_a_runs_document_gets_the_rarer_pairs_chance_where_the_log_shows_them():
    """Where the log shows pairs rarer than min_impressions at rank i, a run's document
    gets the chance they share there after the rank's offset, logistic(logit pooled +
    delta_i); at the other ranks the population's mean; a pooled rank beyond the scored
    ranks is ignored."""
    from bayeschain.posterior.walk import population_click, run_click

    trend = np.array([[-1.0, -0.6, 1.2], [0.3, -1.1, 0.4]])
    offset = np.array([[0.0, -0.3, -0.5, -0.6, -0.7, -0.8], [0.0, 0.2, 0.1, 0.0, -0.1, -0.2]])
    pooled = np.array([[0.2, 0.05, 0.3], [0.6, 0.1, 0.4]])
    got = run_click(trend, 6, offset, pooled, [2, 5, 9])
    np.testing.assert_allclose(got[:, [0, 2, 3, 5]],
                               population_click(trend, 6, offset)[:, [0, 2, 3, 5]], rtol=1e-12)
    for d in range(2):
        for k, rank in enumerate((2, 5)):
            odds = pooled[d, k] / (1 - pooled[d, k]) * np.exp(offset[d, rank - 1])
            assert got[d, rank - 1] == pytest.approx(odds / (1 + odds), rel=1e-12)
    np.testing.assert_array_equal(run_click(trend, 6), population_click(trend, 6))
