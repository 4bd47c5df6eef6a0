r"""PyMC models of click transitions and dwell times, sampled with NUTS.

All likelihoods use the sufficient statistics of :mod:`bayeschain.inference.data`, so the
cost of a gradient does not grow with the size of the log.

* **Transitions** after a click on rank ``i``: ``n_i ~ Multinomial(N_i, theta_i)``.
  ``per-rank``: ``theta_i ~ Dirichlet(alpha)`` (rank 1's backward move fixed at 0);
  ``shared``: one ``theta``;
  ``pooled`` (hierarchical): ``logit theta_ic = a_c + b_c log(i) + sigma_c z_ic`` with
  ``z ~ N(0, 1)`` (non-centred), category 0 fixed at 0 for identifiability; sparse deep
  ranks are pulled towards the trend.
* **Exponential dwell**: ``log L = n_i log mu_i - mu_i S_i``; ``per-rank`` /
  ``shared``: ``mu ~ Gamma(a, b)``; ``pooled``: ``log mu_i = c + d log(i) + tau z_i``.
* **Log-normal dwell**: ``log t ~ Normal(m_i, s_i)`` per rank, with
  ``m_i ~ Normal(prior)`` and ``s_i ~ HalfNormal(1)``; the likelihood uses ``n``,
  ``sum log t`` and ``sum (log t)^2``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ..errors import ParameterError
from .data import ModelData
from .posterior import Posterior, make_posterior
from .specs import ModelSpec


def build_model(data: ModelData, spec: ModelSpec):
    """The PyMC model for ``data`` under ``spec`` (returns ``pm.Model``)."""
    import pymc as pm
    import pytensor.tensor as pt

    coords = {"rank": np.arange(1, data.ranks + 1), "category": list(data.categories),
              "to_rank": np.arange(1, data.ranks + 1)}
    log_rank = np.log(np.arange(1, data.ranks + 1))
    with pm.Model(coords=coords) as model:
        trans = spec.section("transitions")
        if trans is not None:
            alpha = np.asarray(trans["prior"], dtype=float)
            counts = data.transitions
            totals = counts.sum(axis=1)
            kind = trans["parametrisation"]
            if kind == "per-rank":
                theta = _per_rank_dirichlet(pm, pt, alpha, data)
            elif kind == "shared":
                shared = pm.Dirichlet("transition_shared", a=alpha, dims="category")
                theta = pm.Deterministic("transition", pt.broadcast_to(shared, counts.shape),
                                         dims=("rank", "category"))
            else:  # pooled
                k = len(data.categories)
                a = pm.Normal("trend_intercept", 0.0, 2.0, shape=k - 1)
                b = pm.Normal("trend_slope", 0.0, 1.0, shape=k - 1)
                sigma = pm.HalfNormal("rank_sd", 1.0, shape=k - 1)
                z = pm.Normal("rank_offset", 0.0, 1.0, shape=(data.ranks, k - 1))
                eta = a + b * log_rank[:, None] + sigma * z
                logits = pt.concatenate([pt.zeros((data.ranks, 1)), eta], axis=1)
                theta = pm.Deterministic("transition", pm.math.softmax(logits, axis=1),
                                         dims=("rank", "category"))
            seen = totals > 0
            if seen.any():
                pm.Multinomial("transitions_observed", n=totals[seen], p=theta[seen],
                               observed=counts[seen])
        jumps = spec.section("jumps")
        if jumps is not None:
            if jumps["family"] == "free":
                raise ParameterError("free jump rows are conjugate: use method='conjugate'")
            from .jumps import jump_model

            jump_model(data, jumps, pm, pt)
        hold = spec.section("holding")
        if hold is not None and hold["likelihood"] == "exponential":
            shape, rate = (float(x) for x in hold["prior"])
            kind = hold["parametrisation"]
            if kind == "per-rank":
                mu = pm.Gamma("holding_rate", alpha=shape, beta=rate, dims="rank")
            elif kind == "shared":
                one = pm.Gamma("holding_rate_shared", alpha=shape, beta=rate)
                mu = pm.Deterministic("holding_rate", pt.ones(data.ranks) * one, dims="rank")
            else:
                c = pm.Normal("log_rate_intercept", np.log(shape / rate), 2.0)
                d = pm.Normal("log_rate_slope", 0.0, 1.0)
                tau = pm.HalfNormal("log_rate_sd", 1.0)
                z = pm.Normal("log_rate_offset", 0.0, 1.0, dims="rank")
                mu = pm.Deterministic("holding_rate", pt.exp(c + d * log_rank + tau * z),
                                      dims="rank")
            pm.Potential("dwell_likelihood",
                         pt.sum(data.dwell_n * pt.log(mu) - mu * data.dwell_sum))
        elif hold is not None and hold["likelihood"] == "lognormal":
            mean, sd = (float(x) for x in hold["prior"])
            m = pm.Normal("log_dwell_mean", mean, sd, dims="rank")
            s = pm.HalfNormal("log_dwell_sd", 1.0, dims="rank")
            n, s1, s2 = data.dwell_n, data.dwell_sum_log, data.dwell_sum_log2
            pm.Potential("dwell_likelihood", pt.sum(
                -n * pt.log(s) - (s2 - 2 * m * s1 + n * m**2) / (2 * s**2) - s1
                - 0.5 * n * np.log(2 * np.pi)))
    return model


def _per_rank_dirichlet(pm, pt, alpha: np.ndarray, data: ModelData):
    """Per-rank Dirichlet rows, with rank 1's backward move a structural zero (as in the
    conjugate path): nothing lies above rank 1."""
    cats = list(data.categories)
    k = len(cats)
    if "backward" not in cats:
        return pm.Dirichlet("transition", a=np.broadcast_to(alpha, (data.ranks, k)),
                            dims=("rank", "category"))
    b = cats.index("backward")
    others = [i for i in range(k) if i != b]
    first = pm.Dirichlet("transition_rank1", a=alpha[others])
    row1 = pt.set_subtensor(pt.zeros(k)[others], first)
    rows = [row1[None, :]]
    if data.ranks > 1:
        rows.append(pm.Dirichlet("transition_deeper",
                                 a=np.broadcast_to(alpha, (data.ranks - 1, k))))
    return pm.Deterministic("transition", pt.concatenate(rows, axis=0),
                            dims=("rank", "category"))


def fit_nuts(data: ModelData, spec: ModelSpec, *, progress: bool = False) -> Posterior:
    """Sample the model with NUTS and wrap the draws in a :class:`Posterior`."""
    import pymc as pm

    s = spec.sampler
    model = build_model(data, spec)
    if not model.free_RVs:
        raise ParameterError("the spec defines no parameter to fit")
    with model:
        idata = pm.sample(draws=s["draws"], tune=s["tune"], chains=s["chains"],
                          cores=min(s["chains"], 2), random_seed=s["seed"],
                          target_accept=s["target_accept"], progressbar=progress,
                          compute_convergence_checks=False)
    post = _group(idata, "posterior")
    keep = [v for v in ("transition", "holding_rate", "log_dwell_mean", "log_dwell_sd", "jump",
                        "jump_exponent") if v in post]
    variables = {v: post[v] for v in keep}
    stats = _group(idata, "sample_stats")
    sample_stats = xr.Dataset({"diverging": stats["diverging"]}) if "diverging" in stats \
        else None
    return make_posterior(variables, spec=spec, data_digest=data.digest, seed=s["seed"],
                          method="nuts", sample_stats=sample_stats,
                          extra_attrs={"transitions_observed": int(data.transitions.sum()),
                                       "dwell_observed": int(data.dwell_n.sum())})


def _group(idata, name: str) -> xr.Dataset:
    """A group of PyMC's result as a Dataset (InferenceData or DataTree alike)."""
    group = idata[name] if not hasattr(idata, name) else getattr(idata, name)
    return group.to_dataset() if hasattr(group, "to_dataset") else group
