r"""``[holding]``: the dwell time after a click on rank ``i``, from the per-rank sufficient
statistics of :mod:`bayeschain.inference.clicks.data` (``n_i``, ``S_i = sum t``, ``sum log t``,
``sum (log t)^2``), so the cost does not grow with the size of the log.  Right-censored
times with no known lower bound contribute a factor 1 to either likelihood.

* ``likelihood = "exponential"``: ``log L = n_i log mu_i - mu_i S_i``.

  - ``per-rank``: ``mu_i ~ Gamma(a, b)`` (shape, rate); the posterior is
    ``Gamma(a + n_i, b + S_i)``, exact (conjugate).
  - ``shared``: one ``mu ~ Gamma(a, b)``; the posterior is
    ``Gamma(a + sum_i n_i, b + sum_i S_i)``, exact.
  - ``pooled`` (NUTS only): ``log mu_i = c + d log(i) + tau z_i`` with ``z ~ N(0, 1)``.

  Under the limiting prior ``a, b -> 0`` the posterior is ``Gamma(n, S)``, whose mode
  ``(n - 1) / S = (n - 1) / (n * mean)`` is the estimator of Ferrante, Ferro & Maistro
  (SIGIR 2014, Section 5.5): their "inverse of the sample mean multiplied by (n - 1)/n".
* ``likelihood = "lognormal"`` (NUTS only): ``log t ~ Normal(m_i, s_i)`` per rank, with
  ``m_i ~ Normal(prior)`` and ``s_i ~ HalfNormal(1)``; the likelihood uses ``n``,
  ``sum log t`` and ``sum (log t)^2``.
* ``likelihood = "none"``: no dwell parameters.

The statistics above take the time to the next event as the dwell when the log records no
end (``censoring = "none"``, the default of the click-to-click specs).  With
``censoring = "examination"`` the section fits the model of
:mod:`bayeschain.inference.dwell.model` to each click's own observation instead: an exact
dwell where the end is recorded, dwell plus an examination time to the next click, dwell
plus a writing time to the next query; families ``exponential``, ``lognormal``, ``gamma``,
``weibull``; parametrisation ``per-rank``, ``shared`` or ``per-document`` (rank, query and
(query, document) effects).  Its ``prior`` is Normal(mean, sd) on the log of the mean dwell
in seconds, whatever the family.  NUTS only.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...errors import ParameterError
from ...posterior.container import INDEPENDENT_DRAWS
from ..clicks.conjugate import sample_gamma
from ..clicks.data import ModelData
from . import model as dwell_model
from .spec import has_parameters, needs_observations


def gamma_parameters(data: ModelData, prior, shared: bool) -> tuple[np.ndarray, np.ndarray]:
    """Posterior Gamma ``(shape, rate)`` of the exponential dwell rates, per rank or
    shared."""
    a, b = (float(x) for x in prior)
    n = data.dwell_n.sum() if shared else data.dwell_n
    s = data.dwell_sum.sum() if shared else data.dwell_sum
    return a + n, b + s


def conjugate_draws(data: ModelData, section: dict, chains: int, draws: int,
                    rng) -> dict[str, xr.DataArray]:
    """Exact posterior draws of ``holding_rate`` (chain, draw, rank); none without a
    likelihood."""
    if not has_parameters(section):
        return {}
    likelihood, kind = section["likelihood"], section["parametrisation"]
    if needs_observations(section):
        raise ParameterError("dwell times with censoring = 'examination' have no conjugate "
                             "posterior; use method='nuts'")
    if likelihood != "exponential" or kind == "pooled":
        raise ParameterError(f"{likelihood} dwell times with {kind} rates have no conjugate "
                             f"posterior; use method='nuts'")
    shared = kind == "shared"
    shape, rate = gamma_parameters(data, section["prior"], shared)
    mu = sample_gamma(shape, rate, chains, draws, rng)
    if shared:
        mu = np.broadcast_to(mu[:, :, None], (chains, draws, data.ranks))
    return {"holding_rate": xr.DataArray(mu, dims=("chain", "draw", "rank"),
                                         coords={"rank": data.coords["rank"]},
                                         attrs={"draws": INDEPENDENT_DRAWS})}


def add_to_model(data: ModelData, section: dict) -> None:
    """The dwell parameters and their likelihood in the current PyMC model:
    ``holding_rate`` (exponential) or ``log_dwell_mean`` and ``log_dwell_sd``
    (log-normal)."""
    import pymc as pm
    import pytensor.tensor as pt

    if needs_observations(section):
        if data.dwell_obs is None:
            raise ParameterError("this dwell model is fitted to the click log itself (each "
                                 "click's times), not to aggregated statistics")
        dwell_model.add_to_model(data.dwell_obs, section)
        return
    likelihood = section["likelihood"]
    if likelihood == "exponential":
        shape, rate = (float(x) for x in section["prior"])
        kind = section["parametrisation"]
        if kind == "per-rank":
            mu = pm.Gamma("holding_rate", alpha=shape, beta=rate, dims="rank")
        elif kind == "shared":
            one = pm.Gamma("holding_rate_shared", alpha=shape, beta=rate)
            mu = pm.Deterministic("holding_rate", pt.ones(data.ranks) * one, dims="rank")
        else:  # pooled
            log_rank = np.log(np.arange(1, data.ranks + 1))
            c = pm.Normal("log_rate_intercept", np.log(shape / rate), 2.0)
            d = pm.Normal("log_rate_slope", 0.0, 1.0)
            tau = pm.HalfNormal("log_rate_sd", 1.0)
            z = pm.Normal("log_rate_offset", 0.0, 1.0, dims="rank")
            mu = pm.Deterministic("holding_rate", pt.exp(c + d * log_rank + tau * z),
                                  dims="rank")
        pm.Potential("dwell_likelihood",
                     pt.sum(data.dwell_n * pt.log(mu) - mu * data.dwell_sum))
    elif likelihood == "lognormal":
        mean, sd = (float(x) for x in section["prior"])
        m = pm.Normal("log_dwell_mean", mean, sd, dims="rank")
        s = pm.HalfNormal("log_dwell_sd", 1.0, dims="rank")
        n, s1, s2 = data.dwell_n, data.dwell_sum_log, data.dwell_sum_log2
        pm.Potential("dwell_likelihood", pt.sum(
            -n * pt.log(s) - (s2 - 2 * m * s1 + n * m**2) / (2 * s**2) - s1
            - 0.5 * n * np.log(2 * np.pi)))
