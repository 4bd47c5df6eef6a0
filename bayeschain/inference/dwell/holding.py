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

from ...errors import FormatError, ParameterError
from ...posterior.dwell import VARIABLES as DWELL_VARIABLES
from ..clicks.conjugate import sample_gamma
from ..clicks.data import ModelData
from ..keys import PARAMETRISATIONS, check_finite, check_table, is_number
from . import model as dwell_model

#: the dwell-time likelihoods; ``none`` learns no dwell parameters
LIKELIHOODS = ("exponential", "lognormal", "gamma", "weibull", "none")
#: how a time without a recorded end is read: as the dwell (``none``), or as the dwell plus
#: an examination or writing time (``examination``: :mod:`~bayeschain.inference.dwell.model`)
CENSORING = ("none", "examination")

#: the keys of ``[holding]``: key -> (type, allowed values or None, default)
KEYS = {"likelihood": (str, LIKELIHOODS, "exponential"),
        "parametrisation": (str, PARAMETRISATIONS + ("per-document",), "per-rank"),
        "censoring": (str, CENSORING, "none"),
        "prior": (list, None, None)}

#: posterior variables of the section
VARIABLES = ("holding_rate", "log_dwell_mean", "log_dwell_sd") + tuple(
    v for v in DWELL_VARIABLES if v != "holding_rate")


def validate(section: dict, source: str = "<string>") -> dict:
    """The ``[holding]`` table with its defaults, or a
    :class:`~bayeschain.errors.FormatError` naming ``source`` and the key: with a
    likelihood, the prior is two finite numbers, a Gamma(shape > 0, rate > 0) for
    ``exponential`` and a Normal(mean, sd > 0) for ``lognormal`` (``prior`` is required
    even with ``likelihood = "none"``, which does not use it)."""
    clean = check_table("holding", section, KEYS, source)
    if not has_parameters(clean):
        return clean
    likelihood, prior = clean["likelihood"], clean["prior"]
    if len(prior) != 2 or not all(is_number(a) for a in prior):
        raise FormatError("[holding] prior must be two numbers: Gamma(shape, rate) for "
                          "an exponential likelihood, Normal(mean, sd) for lognormal "
                          "(and for every family with censoring = 'examination')",
                          file=source)
    check_finite("holding", "prior", prior, source)
    if needs_observations(clean):
        if clean["censoring"] != "examination":
            raise FormatError(f"[holding] {likelihood!r} dwell times and per-document rates "
                              f"are fitted to each click's observation: add "
                              f"censoring = \"examination\"", file=source)
        if clean["parametrisation"] == "pooled":
            raise FormatError("[holding] with censoring = 'examination' the parametrisation "
                              "is per-rank, shared or per-document", file=source)
        if not prior[1] > 0:
            raise FormatError("[holding] Normal prior on the log mean dwell needs sd > 0",
                              file=source)
        return clean
    if likelihood == "exponential" and not (prior[0] > 0 and prior[1] > 0):
        raise FormatError("[holding] Gamma prior needs shape > 0 and rate > 0", file=source)
    if likelihood == "lognormal" and not prior[1] > 0:
        raise FormatError("[holding] Normal prior needs sd > 0", file=source)
    check_finite("holding", "prior", prior, source)
    return clean


def needs_observations(section: dict) -> bool:
    """Whether the section is fitted to each click's dwell observation
    (:mod:`~bayeschain.inference.dwell.model`) rather than to per-rank sums."""
    return has_parameters(section) and (
        section.get("censoring", "none") == "examination"
        or section["likelihood"] in ("gamma", "weibull")
        or section["parametrisation"] == "per-document")


def has_parameters(section: dict) -> bool:
    """Whether the section learns anything (a likelihood other than ``none``)."""
    return section["likelihood"] != "none"


def predictive_checks(section: dict) -> tuple[str, ...]:
    return ("dwell",) if has_parameters(section) else ()


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
                                         coords={"rank": data.coords["rank"]})}


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
