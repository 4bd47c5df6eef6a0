"""NUTS (PyMC) against the exact conjugate posterior, and the pooled model's recovery."""

import warnings

import numpy as np
import pytest

from bayeschain.inference import fit, load_spec, parse_spec
from bayeschain.io import click_statistics
from bayeschain.simulate import simulate_click_log

pytest.importorskip("pymc")

SMALL = dict(n_ranks=5, forward=0.6, backward=0.15, reformulate=0.05, click=0.4,
             holding_rates=[0.05, 0.08, 0.1, 0.12, 0.15], examine_time=0.0, max_queries=20)


@pytest.fixture(scope="module")
def stats():
    return click_statistics(simulate_click_log(5_000, seed=21, **SMALL))


def small_spec(name, ranks=5):
    return parse_spec(load_spec(name).text.replace("ranks = 10", f"ranks = {ranks}"))


def test_nuts_agrees_with_the_conjugate_posterior(stats):
    """Posterior means within 0.1 posterior sd (Monte-Carlo error of 2 x 1000 NUTS draws
    is about sd / 40), for every transition probability and dwell rate; no divergences."""
    exact = fit(stats, small_spec("rwbm-conjugate"), draws=4000, chains=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # a diagnostics warning fails the test
        nuts = fit(stats, small_spec("rwbm-nuts"), draws=1000, chains=2)
    assert nuts.divergences() == 0
    for name in ("transition", "holding_rate"):
        a = exact.posterior[name]
        b = nuts.posterior[name]
        sd = a.std(("chain", "draw")).values
        gap = np.abs(a.mean(("chain", "draw")).values - b.mean(("chain", "draw")).values)
        mask = sd > 0                           # the structural zero has no spread
        assert np.all(gap[mask] < 0.1 * sd[mask]), (name, (gap / np.where(sd > 0, sd, 1)).max())
        assert np.all(gap[~mask] == 0)          # both fix rank 1's backward move at 0


def test_walk_click_laws_match_simulated_frequencies():
    """The exact click laws of the hidden walk against a simulated log (50,000 sessions,
    5 standard errors per probability)."""
    from bayeschain.inference.data import model_data
    from bayeschain.inference.models import walk_click_laws

    n, p, q, r = 6, 0.55, 0.2, 0.05
    c = np.linspace(0.5, 0.25, n)
    log = simulate_click_log(50_000, n_ranks=n, forward=p, backward=q, reformulate=r,
                             click=c, examine_time=0.0, max_queries=200, seed=31)
    data = model_data(click_statistics(log), n)
    laws = walk_click_laws(p, q, r, c, n)
    total = data.moves.sum(1) + data.leave.sum(1)
    for i in range(n):
        freq = np.r_[data.moves[i], data.leave[i]] / total[i]
        law = np.r_[laws["next"][i], laws["stop"][i], laws["reformulate"][i]]
        assert np.all(np.abs(freq - law) < 5 * np.sqrt(law * (1 - law) / total[i]) + 1e-9)
    pages = data.first.sum() + data.no_click.sum()
    law = np.r_[laws["first"], laws["first_stop"], laws["first_reformulate"]]
    freq = np.r_[data.first, data.no_click] / pages
    assert np.all(np.abs(freq - law) < 5 * np.sqrt(law * (1 - law) / pages) + 1e-9)


def test_hidden_walk_recovers_its_parameters():
    """NUTS on the hidden-examination walk: the true (p, q, r, s) and click probabilities
    lie in their 99% intervals (10,000 sessions, 4 ranks)."""
    n, p, q, r = 4, 0.55, 0.2, 0.05
    c = np.array([0.5, 0.4, 0.35, 0.3])
    log = simulate_click_log(10_000, n_ranks=n, forward=p, backward=q, reformulate=r,
                             click=c, examine_time=0.0, max_queries=200, seed=32)
    post = fit(click_statistics(log), small_spec("rwbm-hidden", n), draws=400, tune=400,
               chains=2)
    assert post.divergences() == 0
    truth = {"walk": np.array([p, q, r, 1 - p - q - r]), "click": c}
    for name, value in truth.items():
        draws = post.posterior[name]
        lo = draws.quantile(0.005, dim=("chain", "draw")).values
        hi = draws.quantile(0.995, dim=("chain", "draw")).values
        assert np.all((lo <= value) & (value <= hi)), (name, lo, hi)


def test_pooled_and_lognormal_models_recover_their_truth():
    """The hierarchical model's per-rank rates and the log-normal dwell model on data with
    known parameters (99% intervals)."""
    rates = np.array([0.05, 0.08, 0.1, 0.12, 0.15])
    log = simulate_click_log(5_000, seed=41, **{**SMALL, "holding_rates": rates})
    stats = click_statistics(log)
    pooled = fit(stats, small_spec("rwbm-pooled"), draws=400, tune=500, chains=2)
    mu = pooled.holding_rates()
    lo, hi = mu.quantile([0.005, 0.995], dim=("chain", "draw")).values
    assert np.all((lo <= rates) & (rates <= hi))
    # exponential dwell times are log-normal only approximately: check the log-scale mean,
    # E[log T] = -log(mu) - Euler's gamma, against the log-normal model's posterior
    lognormal = fit(stats, small_spec("dwell-lognormal"), draws=400, tune=500, chains=2)
    m = lognormal.posterior["log_dwell_mean"]
    lo, hi = m.quantile([0.005, 0.995], dim=("chain", "draw")).values
    expected = -np.log(rates) - np.euler_gamma
    assert np.all((lo <= expected) & (expected <= hi))
