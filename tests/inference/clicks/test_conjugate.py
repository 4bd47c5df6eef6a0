"""Exact conjugate posteriors of the click-to-click chain and dwell rates: recovery of known
parameters, the MP paper's estimator, posterior storage with provenance."""

import numpy as np
import pytest
import xarray as xr

from bayeschain.errors import BayeschainError, ParameterError
from bayeschain.inference import (
    Posterior,
    fit,
    load_spec,
    model_data,
    predictive_backward_share,
    predictive_dwell_means,
)
from bayeschain.io import click_statistics
from bayeschain.simulate import simulate_click_log
from tests.reference.click_transitions import click_transition_truth

N, P, Q, R, C, MU = 10, 0.6, 0.15, 0.05, 0.3, np.linspace(0.02, 0.2, 10)


@pytest.fixture(scope="module")
def big_log():
    """100,000 sessions from known parameters (no examination time, so a dwell is exactly
    the exponential reading time when it is observed)."""
    return simulate_click_log(100_000, n_ranks=N, forward=P, backward=Q, reformulate=R,
                              click=C, holding_rates=MU, examine_time=0.0, max_queries=60,
                              seed=12)


def interval_check(draws, truth, prob):
    """Which true values lie in the equal-tailed ``prob`` interval of the draws."""
    lo = draws.quantile((1 - prob) / 2, dim=("chain", "draw")).values
    hi = draws.quantile(1 - (1 - prob) / 2, dim=("chain", "draw")).values
    return (lo <= truth) & (truth <= hi), hi


def test_parameter_recovery_conjugate(big_log):
    """True transition probabilities (derived exactly from the hidden walk) and dwell rates
    against their credible intervals, on one data set of 100,000 sessions.

    With 48 parameters, about 2.4 fall outside their 95% intervals by chance, so the test
    asks for what holds with high probability: every parameter inside its 99.9% interval
    and at most 6 outside their 95% intervals (P(Binomial(48, 0.05) > 6) < 0.01).  Whether
    the 90% intervals cover at their nominal rate is the calibration benchmark over 100 data
    sets.  Rank 1's backward move is a structural zero (drawn as exactly 0); the last
    rank's forward move is 0 too, a boundary value that an equal-tailed interval never
    contains: its posterior must sit against 0 instead."""
    post = fit(big_log, "clicks-conjugate", draws=2000, chains=2)
    theta = post.transition_probabilities()
    truth = click_transition_truth(N, P, Q, R, C)
    outside95 = 0
    for prob in (0.999, 0.95):
        inside, hi = interval_check(theta, truth, prob)
        inside[0, 1] = True                       # structural zero, checked below
        inside[-1, 0] = hi[-1, 0] < 0.01          # last rank, forward: squeezed against 0
        rates, _ = interval_check(post.holding_rates(), MU, prob)
        if prob == 0.999:
            assert np.all(inside), np.argwhere(~inside)
            assert np.all(rates), np.flatnonzero(~rates)
        else:
            outside95 = int((~inside).sum() + (~rates).sum())
    assert outside95 <= 6
    assert np.all(theta.sel(rank=1, category="backward").values == 0.0)
    # the acceptance's "every true parameter inside": a joint 95% band over all 48
    band = post.simultaneous_interval(["transition", "holding_rate"], 0.95)
    lo, hi = band["transition"]
    inside = (lo <= truth) & (truth <= hi)
    inside[-1, 0] = True                          # the boundary zero, checked above
    assert np.all(inside), np.argwhere(~inside)
    lo, hi = band["holding_rate"]
    assert np.all((lo <= MU) & (MU <= hi))


def test_mp_paper_estimator_is_the_limiting_posterior_mode():
    """Ferrante et al. estimate mu by (n - 1) / (n * mean): the mode of the posterior
    Gamma(a + n, b + S) as a, b -> 0."""
    log = simulate_click_log(2000, holding_rates=0.1, examine_time=0.0, seed=3)
    stats = click_statistics(log)
    data = model_data(stats, 10)
    spec = load_spec("clicks-conjugate").with_keys("holding", prior=[1e-12, 1e-12])
    from bayeschain.inference.dwell.holding import gamma_parameters

    shape, rate = gamma_parameters(data, spec.section("holding")["prior"], shared=False)
    mode = (shape - 1) / rate
    n, mean = data.dwell_n, data.dwell_sum / data.dwell_n
    np.testing.assert_allclose(mode, (n - 1) / (n * mean), rtol=1e-9)


def test_conjugate_fit_uses_the_aggregated_counts(big_log):
    """Statistics scaled tenfold (as from 10^6 sessions instead of 10^5) give tenfold
    observation counts and a tighter posterior; the fit's speed is timed in
    benchmarks/bench_inference.py, not here."""
    stats = click_statistics(big_log)
    scaled = type(stats)(**{name: stats.table(name).assign(**{
        c: stats.table(name)[c] * 10 for c in ("count", "n", "sum", "censored")
        if c in stats.table(name)}) for name in ("transitions", "last_clicks",
                                                  "first_clicks", "dwell", "pages")})
    post = fit(scaled, "clicks-conjugate", draws=400, chains=1)
    small = fit(stats, "clicks-conjugate", draws=400, chains=1)
    assert post.attrs["transitions_observed"] == 10 * small.attrs["transitions_observed"]
    sd_big = post.holding_rates().std(("chain", "draw")).values
    sd_small = small.holding_rates().std(("chain", "draw")).values
    assert np.all(sd_big < 0.5 * sd_small)           # ~ 1 / sqrt(10) of the spread


def test_predictive_checks(big_log):
    stats = click_statistics(big_log)
    data = model_data(stats, N)
    post = fit(stats, "clicks-conjugate", draws=500, chains=2)
    check = predictive_backward_share(post, data, seed=1)
    assert 0.01 < check.p_value < 0.99
    lo, hi = check.interval()
    assert lo <= check.observed <= hi
    for dwell in predictive_dwell_means(post, data, seed=2):
        assert 0.001 < dwell.p_value < 0.999


def test_save_and_load_with_provenance(tmp_path, big_log):
    pytest.importorskip("h5netcdf")
    post = fit(big_log, "clicks-conjugate", draws=50, chains=2, seed=5)
    path = post.save(tmp_path / "post.nc")
    back = Posterior.load(path, spec=load_spec("clicks-conjugate"))
    np.testing.assert_array_equal(back.holding_rates().values, post.holding_rates().values)
    assert back.attrs["seed"] == 5 and back.attrs["method"] == "conjugate"
    assert back.attrs["data_digest"] == post.attrs["data_digest"]
    with pytest.raises(BayeschainError, match="exists"):
        post.save(path)
    with pytest.raises(BayeschainError, match="fitted with spec"):
        Posterior.load(path, spec=load_spec("jumps-free"))
    post.tree.attrs["bayeschain_version"] = "0.0.1"
    old = post.save(tmp_path / "old.nc")
    with pytest.raises(BayeschainError, match="refit"):
        Posterior.load(old)
    junk = tmp_path / "junk.nc"
    junk.write_text("not netcdf")
    with pytest.raises(BayeschainError, match="not a (readable )?bayeschain posterior"):
        Posterior.load(junk)


def test_non_conjugate_specs_need_nuts(big_log):
    with pytest.raises(ParameterError, match="nuts"):
        fit(big_log, "clicks-pooled", method="conjugate")


def test_posterior_works_with_arviz(big_log):
    az = pytest.importorskip("arviz")
    post = fit(big_log, "clicks-conjugate", draws=100, chains=2)
    summary = az.summary(post.to_arviz(), var_names=["holding_rate"])
    assert len(summary) == 10


def test_simultaneous_band_holds_the_stated_share_of_draws_jointly():
    """Independent normal coordinates: the joint band is +-z with
    Phi(z) = (1 + prob^(1/K)) / 2, and truths drawn from the posterior fall all inside it
    with probability prob."""
    from scipy.stats import norm

    rng = np.random.default_rng(0)
    k, prob = 48, 0.95
    x = rng.normal(size=(1, 40000, k))
    post = Posterior(xr.DataTree.from_dict(
        {"posterior": xr.Dataset({"a": (("chain", "draw", "k"), x)})}))
    lo, hi = post.simultaneous_interval("a", prob)
    jointly = np.all((x[0] >= lo) & (x[0] <= hi), axis=1).mean()
    assert prob <= jointly <= prob + 0.005
    z = norm.ppf((1 + prob ** (1 / k)) / 2)
    # extreme order statistics: about 0.06 standard error each, 0.01 for their mean
    np.testing.assert_allclose(hi, z, atol=0.3)
    np.testing.assert_allclose(lo, -z, atol=0.3)
    assert abs(hi.mean() - z) < 0.05 and abs(lo.mean() + z) < 0.05
    truths = rng.normal(size=(2000, k))
    covered = np.all((truths >= lo) & (truths <= hi), axis=1).mean()
    assert abs(covered - prob) < 4 * np.sqrt(prob * (1 - prob) / 2000)
