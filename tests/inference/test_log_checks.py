"""Predictive checks of click depth and of the dwell-time distribution."""

import numpy as np
import pytest
import xarray as xr

from bayeschain.errors import ParameterError
from bayeschain.inference import Posterior, fit
from bayeschain.inference.log_checks import (
    predictive_click_depth,
    predictive_dwell_distribution,
)

from .logs import click_log, simulate_pages, transition_posterior

THETA = np.array([[0.6, 0.0, 0.4], [0.5, 0.2, 0.3], [0.3, 0.3, 0.4], [0.0, 0.5, 0.5]])


def _exact_depth_pmf(theta, first, land):
    """P(deepest rank = m) from absorbing chains: the walk restricted to ranks <= m stops
    before leaving them with h_m = (I - Q_m)^-1 stop_m; P(depth <= m) = first . h_m."""
    r = theta.shape[0]
    moves = theta[:, 0:1] * land[0] + theta[:, 1:2] * land[1]        # (r, r) rank -> rank
    stop = theta[:, 2]
    cdf = []
    for m in range(1, r + 1):
        q = moves[:m, :m]
        h = np.linalg.solve(np.eye(m) - q, stop[:m])
        cdf.append(first[:m] @ h)
    return np.diff(np.r_[0.0, cdf])


def test_replayed_depth_matches_the_exact_law_of_the_maximum():
    rng = np.random.default_rng(3)
    pages = simulate_pages(rng, 4000, THETA, 4)
    log = click_log(pages)
    check = predictive_click_depth(transition_posterior(THETA, draws=40), log, seed=1)
    # the log's own landing frequencies and first clicks drive the replay
    first = np.bincount([p[0] - 1 for p in pages], minlength=4) / len(pages)
    land = np.zeros((2, 4, 4))
    for p in pages:
        for a, b in zip(p[:-1], p[1:], strict=False):
            land[0 if b > a else 1, a - 1, b - 1] += 1
    land = np.divide(land, land.sum(-1, keepdims=True), out=np.zeros_like(land),
                     where=land.sum(-1, keepdims=True) > 0)
    exact = _exact_depth_pmf(THETA, first, land)
    mean_rep = check.replicated.mean(axis=0)
    se = np.sqrt(exact * (1 - exact) / (len(pages) * 40))
    assert np.all(np.abs(mean_rep - exact) < 5 * se + 1e-12), (mean_rep, exact)
    # the log came from this model: the observed law lies in the predictive band
    assert check.outside(0.99).size == 0
    lo, hi = check.summaries["mean depth"].interval(0.99)
    assert lo <= check.summaries["mean depth"].observed <= hi


def test_certain_stopping_replays_the_first_clicks_exactly():
    log = click_log([[1, 3], [2], [2, 1, 4], [4]])
    stop_now = np.tile([0.0, 0.0, 1.0], (4, 1))
    check = predictive_click_depth(transition_posterior(stop_now, draws=3), log)
    np.testing.assert_array_equal(check.replicated, np.tile([0.25, 0.5, 0, 0.25], (3, 1)))
    np.testing.assert_array_equal(check.observed, [0, 0.25, 0.25, 0.5])
    assert check.outside().tolist() == [1, 2, 3, 4]


def test_a_posterior_from_another_log_is_flagged():
    rng = np.random.default_rng(4)
    deep = click_log(simulate_pages(rng, 800, np.tile([0.8, 0.1, 0.1], (6, 1)), 6))
    shallow = click_log(simulate_pages(rng, 800, np.tile([0.1, 0.1, 0.8], (6, 1)), 6))
    post = fit(shallow, "rwbm-conjugate", draws=200, chains=1, seed=0)
    check = predictive_click_depth(post, deep, seed=0)
    assert check.summaries["mean depth"].p_value == 0.0
    assert check.outside().size >= 2


def _rate_posterior(mu, draws=100):
    da = xr.DataArray(np.broadcast_to(np.asarray(mu, float), (1, draws, len(mu))),
                      dims=("chain", "draw", "rank"), coords={"rank": np.arange(1, len(mu) + 1)})
    return Posterior(xr.DataTree.from_dict({"posterior": xr.Dataset({"holding_rate": da})}))


def test_replicated_dwell_cdf_is_the_exponential_cdf():
    rng = np.random.default_rng(5)
    pages = [[1, 2] for _ in range(3000)]
    mu = np.array([0.1, 0.02])
    dwell = [[rng.exponential(1 / mu[0]), rng.exponential(1 / mu[1])] for _ in pages]
    check = predictive_dwell_distribution(_rate_posterior(mu), click_log(pages, dwell),
                                          grid=[5.0, 20.0, 60.0, 200.0], seed=0)
    t = np.array([5.0, 20.0, 60.0, 200.0])
    exact = 0.5 * (1 - np.exp(-mu[0] * t)) + 0.5 * (1 - np.exp(-mu[1] * t))
    se = np.sqrt(exact * (1 - exact) / (6000 * 100))
    np.testing.assert_array_less(np.abs(check.replicated.mean(axis=0) - exact), 5 * se)
    assert check.outside(0.99).size == 0


def test_exponential_fit_to_lognormal_dwell_is_flagged():
    rng = np.random.default_rng(6)
    pages = [[1] for _ in range(2000)]
    dwell = [[float(rng.lognormal(3.0, 1.2))] for _ in pages]
    post = fit(click_log(pages, dwell), "rwbm-conjugate", draws=200, chains=1, seed=0)
    check = predictive_dwell_distribution(post, click_log(pages, dwell), seed=0)
    assert check.summaries["50th percentile (s)"].p_value == 1.0   # median far below
    assert check.outside().size > 10


def test_checks_need_the_log_and_the_right_posterior():
    log = click_log([[1, 2]])
    with pytest.raises(ParameterError, match="ClickLog"):
        predictive_click_depth(transition_posterior(THETA), log.events)
    with pytest.raises(ParameterError, match="transition"):
        predictive_click_depth(_rate_posterior([0.1]), log)
    with pytest.raises(ParameterError, match="holding rates"):
        predictive_dwell_distribution(transition_posterior(THETA), click_log([[1]], [[3.0]]))
    never = np.tile([0.5, 0.5, 0.0], (4, 1))
    never[0] = [1.0, 0.0, 0.0]
    never[3] = [0.0, 1.0, 0.0]
    with pytest.raises(ParameterError, match="did not stop"):
        predictive_click_depth(transition_posterior(never), log, max_steps=50)


def test_hidden_walk_replay_matches_a_log_simulated_from_the_walk():
    """The hidden-examination walk's exact click-to-click law drives the replay; a log
    simulated from the same walk lies inside the predictive band."""
    from bayeschain.simulate import simulate_click_log

    n, p, q, r, c = 6, 0.55, 0.2, 0.05, 0.35
    log = simulate_click_log(3000, n_ranks=n, forward=p, backward=q, reformulate=r,
                             click=c, seed=12)
    walk = xr.DataArray(np.tile([p, q, r, 1 - p - q - r], (1, 50, 1)),
                        dims=("chain", "draw", "move"),
                        coords={"move": ["forward", "backward", "reformulate", "stop"]})
    click = xr.DataArray(np.full((1, 50, n), c), dims=("chain", "draw", "rank"),
                         coords={"rank": np.arange(1, n + 1)})
    post = Posterior(xr.DataTree.from_dict(
        {"posterior": xr.Dataset({"walk": walk, "click": click})}))
    check = predictive_click_depth(post, log, seed=2)
    assert check.outside(0.99).size == 0
    for name in ("mean depth", "backward share"):
        lo, hi = check.summaries[name].interval(0.99)
        assert lo <= check.summaries[name].observed <= hi, name
    assert 0.05 < check.summaries["backward share"].observed < 0.5


def test_replicated_dwell_cdf_under_a_lognormal_posterior():
    from scipy.stats import lognorm

    rng = np.random.default_rng(9)
    pages = [[1] for _ in range(2000)]
    dwell = [[float(rng.lognormal(3.0, 0.8))] for _ in pages]
    draws = 100
    ds = xr.Dataset({"log_dwell_mean": (("chain", "draw", "rank"), np.full((1, draws, 1), 3.0)),
                     "log_dwell_sd": (("chain", "draw", "rank"), np.full((1, draws, 1), 0.8))},
                    coords={"rank": [1]})
    post = Posterior(xr.DataTree.from_dict({"posterior": ds}))
    grid = np.array([5.0, 20.0, 60.0])
    check = predictive_dwell_distribution(post, click_log(pages, dwell), grid=grid, seed=0)
    exact = lognorm(s=0.8, scale=np.exp(3.0)).cdf(grid)
    se = np.sqrt(exact * (1 - exact) / (2000 * draws))
    np.testing.assert_array_less(np.abs(check.replicated.mean(axis=0) - exact), 5 * se)
    assert check.outside(0.99).size == 0
