"""Vectorised R-hat and bulk ESS against ArviZ's own (the peer), parameter by parameter."""

import numpy as np
import pytest

from bayeschain.posterior.diagnostics import bulk_ess, rank_rhat, rhat_and_ess

az = pytest.importorskip("arviz")


def _ar1(rng, chains, draws, phi, shift=0.0):
    x = np.empty((chains, draws))
    x[:, 0] = rng.normal(size=chains)
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + rng.normal(size=chains)
    return x + shift * np.arange(chains)[:, None]


@pytest.mark.parametrize("chains,draws", [(2, 500), (4, 101), (1, 300), (3, 7)])
def test_equal_to_arviz(chains, draws):
    rng = np.random.default_rng(chains * 1000 + draws)
    cols = [rng.normal(size=(chains, draws)),                     # independent
            _ar1(rng, chains, draws, 0.9),                        # autocorrelated
            _ar1(rng, chains, draws, -0.6),                       # antithetic
            _ar1(rng, chains, draws, 0.5, shift=1.5),             # chains disagree
            np.round(rng.normal(size=(chains, draws))),           # many ties
            np.exp(rng.normal(size=(chains, draws)) * 2),         # heavy tail
            np.cumsum(rng.normal(size=(chains, draws)), axis=1)]  # random walk
    x = np.stack(cols, axis=-1)
    x = x.reshape(chains, draws, 7, 1)                            # trailing dims kept
    rhat, ess = rank_rhat(x), bulk_ess(x)
    assert rhat.shape == ess.shape == (7, 1)
    for j in range(7):
        ref_r = az.rhat(x[:, :, j, 0], method="rank")
        ref_e = az.ess(x[:, :, j, 0], method="bulk")
        if chains < 2:
            assert np.isnan(rhat[j, 0]) and np.isnan(ref_r)
        else:
            assert rhat[j, 0] == pytest.approx(ref_r, rel=1e-12)
        assert ess[j, 0] == pytest.approx(ref_e, rel=1e-10)


@pytest.mark.parametrize("block", [7, 512])
def test_equal_to_arviz_on_many_parameters_at_once(block, monkeypatch):
    """Parameters whose autocorrelation runs end at different lags, ties in a few of them,
    diagnosed in blocks (of 7: the blocks' edges cross them): every one as ArviZ computes
    it alone."""
    from bayeschain.posterior import diagnostics

    monkeypatch.setattr(diagnostics, "CHUNK", block)
    rng = np.random.default_rng(7)
    phis = np.linspace(-0.7, 0.98, 60)
    x = np.stack([_ar1(rng, 2, 400, phi) for phi in phis], axis=-1)
    x[:, :, ::7] = np.round(x[:, :, ::7] * 2) / 2                  # tied draws
    x[:, 200:, 5] = x[:, 200:205, 5].mean()                        # a chain that stuck
    rhat, ess = rhat_and_ess(x)
    assert np.array_equal(rhat, rank_rhat(x)) and np.array_equal(ess, bulk_ess(x))
    for j in range(x.shape[2]):
        assert rhat[j] == pytest.approx(az.rhat(x[:, :, j], method="rank"), rel=1e-12)
        assert ess[j] == pytest.approx(az.ess(x[:, :, j], method="bulk"), rel=1e-10)


def test_no_parameter_and_infinite_draws_are_quiet():
    import warnings

    rhat, ess = rhat_and_ess(np.zeros((2, 10, 0)))
    assert rhat.shape == ess.shape == (0,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rhat, ess = rhat_and_ess(np.full((2, 30, 1), -np.inf))
    assert np.isnan(rhat[0]) and np.isnan(ess[0])


def test_constant_and_non_finite():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 50, 3))
    x[:, :, 1] = 0.25
    x[0, 3, 2] = np.nan
    rhat, ess = rank_rhat(x), bulk_ess(x)
    assert np.isfinite(rhat[0]) and np.isnan(rhat[1]) and np.isnan(rhat[2])
    assert ess[1] == 100 and np.isnan(ess[2])
    assert ess[1] == az.ess(x[:, :, 1], method="bulk")


def test_a_stuck_chain_is_seen():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 400, 1))
    x[1] += 3.0
    assert rank_rhat(x)[0] > 1.5
    assert bulk_ess(_ar1(rng, 2, 400, 0.99)[:, :, None])[0] < 100


def _posterior(rng, independent: bool, marker: str = "independent"):
    import xarray as xr

    from bayeschain.inference.specs import load_spec
    from bayeschain.posterior.container import make_posterior

    spec = load_spec("walk")
    sampled = xr.DataArray(1.0 / (1.0 + np.exp(-rng.normal(size=(2, 2_000, 3)))),
                           dims=("chain", "draw", "rank"))          # click probabilities
    # exact draws whose two chains happen to differ (a shift R-hat reads as > 1.01)
    exact = rng.gamma(5.0, 1.0, size=(2, 2_000, 3)) + np.array([0.0, 0.6])[:, None, None]
    attrs = {"draws": marker} if independent else {}
    holding = xr.DataArray(exact, dims=("chain", "draw", "rank"), attrs=attrs)
    return make_posterior({"click": sampled, "holding_rate": holding},
                          spec=spec, data_digest="test", seed=1, method="nuts (nutpie)")


@pytest.mark.parametrize("marker", ["independent", "laplace"])
def test_exact_independent_draws_do_not_raise_the_mcmc_warning(marker, tmp_path):
    """Draws marked as not a chain's (exact independent draws, or documents' Laplace draws
    around their mode) are left out of the MCMC warning, after a save and load too."""
    import warnings

    from bayeschain.inference.sampling import check_diagnostics
    from bayeschain.posterior.container import Posterior

    rng = np.random.default_rng(5)
    exact = _posterior(rng, independent=True, marker=marker)
    exact.save(tmp_path / "post.nc")
    exact = Posterior.load(tmp_path / "post.nc")
    table = exact.diagnostics()
    assert table.set_index("parameter").loc["holding_rate", "max_rhat"] > 1.01
    assert list(table["draws"]) == ["chain", marker]
    assert list(table["independent"]) == [False, marker == "independent"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_diagnostics(exact)
    with pytest.warns(UserWarning, match="R-hat up to"):
        check_diagnostics(_posterior(rng, independent=False))


def test_conjugate_draws_are_marked_independent():
    from bayeschain.inference import fit
    from bayeschain.simulate import simulate_click_log

    post = fit(simulate_click_log(300, seed=1), "clicks-conjugate")
    table = post.diagnostics()
    assert set(table["parameter"]) == {"transition", "holding_rate"}
    assert table["independent"].all()
    assert post.diagnostics(sampled_only=True).empty
