r"""Topic sampling as a hierarchical model (in the style of Carterette's Bayesian evaluation).

Per-topic scores ``y_st`` (system ``s``, topic ``t``; by default the posterior-mean score
of each run and topic) are modelled as

``y_st ~ Normal(mu + a_s + b_t, sigma)``, ``a_s ~ Normal(0, tau_a)``,
``b_t ~ Normal(0, tau_b)``, half-normal priors on ``tau_a``, ``tau_b``, ``sigma``,

so the system effects ``a_s`` generalise to the population of topics the given ones are a
sample of.  The result has the ``(chain, draw, run, topic)`` layout of
:func:`~bayeschain.scoring.score` with a single pseudo-topic ``"population"`` holding
``mu + a_s``, ready for :func:`~bayeschain.comparison.compare`; its ``attrs["uncertainty"]``
says what it includes.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ..errors import ParameterError


def topic_model(scores: xr.DataArray, *, draws: int = 1000, chains: int = 2, tune: int = 1000,
                seed: int = 2026, progress: bool = False) -> xr.DataArray:
    """Posterior of each run's population-level mean score (see the module docstring)."""
    import pymc as pm

    y = scores.mean(("chain", "draw")).transpose("run", "topic").values
    runs = [str(r) for r in scores["run"].values]
    seen = ~np.isnan(y)
    if seen.sum() < 3 or len(runs) < 2:
        raise ParameterError("the topic model needs at least two runs and three scores")
    s_idx, t_idx = np.nonzero(seen)
    scale = float(np.nanstd(y)) or 1.0
    with pm.Model(coords={"run": runs, "topic": [str(t) for t in scores["topic"].values]}):
        mu = pm.Normal("mu", float(np.nanmean(y)), 2 * scale)
        tau_a = pm.HalfNormal("tau_system", scale)
        tau_b = pm.HalfNormal("tau_topic", scale)
        sigma = pm.HalfNormal("sigma", scale)
        a = pm.Normal("system", 0.0, 1.0, dims="run") * tau_a
        b = pm.Normal("topic_effect", 0.0, 1.0, dims="topic") * tau_b
        pm.Normal("y", mu + a[s_idx] + b[t_idx], sigma, observed=y[seen])
        pm.Deterministic("run_mean", mu + a, dims="run")
        idata = pm.sample(draws=draws, tune=tune, chains=chains, cores=min(chains, 2),
                          random_seed=seed, target_accept=0.95, progressbar=progress,
                          compute_convergence_checks=False)
    post = idata.posterior if hasattr(idata, "posterior") else idata["posterior"]
    run_mean = post["run_mean"]
    out = run_mean.expand_dims(topic=["population"]).transpose("chain", "draw", "run",
                                                               "topic")
    out = xr.DataArray(out.values, dims=("chain", "draw", "run", "topic"),
                       coords={"run": runs, "topic": ["population"]}, name="score")
    out.attrs["uncertainty"] = ("topic sampling (hierarchical topic x system model on the "
                                "posterior-mean scores)")
    return out
