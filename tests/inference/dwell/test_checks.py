"""Predictive checks of the dwell-time distribution."""

import numpy as np
import pytest
import xarray as xr

from bayeschain.errors import ParameterError
from bayeschain.inference import Posterior, fit
from bayeschain.inference.dwell.checks import predictive_dwell_distribution
from tests.inference.logs import click_log, transition_posterior

THETA = np.array([[0.6, 0.0, 0.4], [0.5, 0.2, 0.3], [0.3, 0.3, 0.4], [0.0, 0.5, 0.5]])


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
    post = fit(click_log(pages, dwell), "clicks-conjugate", draws=200, chains=1, seed=0)
    check = predictive_dwell_distribution(post, click_log(pages, dwell), seed=0)
    assert check.summaries["50th percentile (s)"].p_value == 1.0   # median far below
    assert check.outside().size > 10


def test_checks_need_the_log_and_the_right_posterior():
    log = click_log([[1, 2]], [[3.0, 4.0]])
    with pytest.raises(ParameterError, match="ClickLog"):
        predictive_dwell_distribution(_rate_posterior([0.1]), log.events)
    with pytest.raises(ParameterError, match="holding rates"):
        predictive_dwell_distribution(transition_posterior(THETA), click_log([[1]], [[3.0]]))


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
