r"""Topics as a sample of a population: a hierarchical model for bounded scores.

Per-topic scores ``y_st`` of system ``s`` on topic ``t`` lie in ``[0, upper]`` (P@H with
grades as gains is at most the top grade); ``x = y / upper`` lies in ``[0, 1]`` and takes
the values 0 (no relevant document reached) and 1 exactly.  A zero-one-inflated Beta model
(Ospina & Ferrari 2010) with crossed system and topic effects, in the style of Carterette's
Bayesian evaluation:

* ``P(x_st = 0) = pi0_st``, ``logit pi0_st = zeta + e_s + c_t``;
* ``P(x_st = 1 | x_st > 0) = pi1``, ``logit pi1 = eta``;
* otherwise ``x_st ~ Beta(mu_st phi, (1 - mu_st) phi)``, ``logit mu_st = alpha + a_s + b_t``;
* ``a_s = tau_a z_s``, ``b_t = tau_b w_t``, ``c_t = tau_c v_t``, ``e_s ~ N(0, 1)``,
  ``z, w, v ~ N(0, 1)`` (non-centred); priors ``alpha ~ N(0, 1.5)``, ``zeta ~ N(-2, 1.5)``,
  ``eta ~ N(-4, 1.5)``, ``log phi ~ N(log 10, 1)``, ``tau_a ~ HalfNormal(0.5)``,
  ``tau_b, tau_c ~ HalfNormal(1)``.

The quantity compared is each system's **population mean score**, the expectation over a
new topic ``(b, c) ~ N(0, tau_b^2) x N(0, tau_c^2)``:

``m_s = upper E_{b,c}[(1 - pi0) (pi1 + (1 - pi1) mu)]``,

computed per posterior draw with 512 fixed quasi-random normal pairs.

**User-model uncertainty.** ``imputations`` posterior draws of the scores (spread over the
user-model posterior) are each fitted, and their posterior draws pooled (multiple
imputation: the pooled draws integrate over the user-model posterior as well as the
topics).  The model is compiled once (nutpie) and refitted with new data.

The model is validated by simulation-based calibration: ``benchmarks/bench_topic_model.py``
simulates collections from the prior with an independent NumPy simulator and checks the
coverage of the 90% intervals of ``m_s`` (RESULTS.md).
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from ..errors import ParameterError

#: quasi-random standard normal pairs for the expectation over a new topic
_NEW_TOPICS = 512


def _new_topic_normals() -> np.ndarray:
    from scipy.stats import norm, qmc

    u = qmc.Sobol(2, scramble=True, seed=0).random(_NEW_TOPICS)
    return norm.ppf(u)                                            # (512, 2)


def _model(x: np.ndarray, n_systems: int, n_topics: int):
    """The PyMC model for the scaled scores ``x (systems, topics)`` (NaN: not observed)."""
    import pymc as pm
    import pytensor.tensor as pt

    seen = ~np.isnan(x)
    s_idx, t_idx = np.nonzero(seen)
    y = x[seen]
    with pm.Model() as model:
        y_d = pm.Data("y", y)
        s_d = pm.Data("s_idx", s_idx.astype(np.int64))
        t_d = pm.Data("t_idx", t_idx.astype(np.int64))
        alpha = pm.Normal("alpha", 0.0, 1.5)
        zeta = pm.Normal("zeta", -2.0, 1.5)
        eta = pm.Normal("eta", -4.0, 1.5)
        log_phi = pm.Normal("log_phi", np.log(10.0), 1.0)
        tau_a = pm.HalfNormal("tau_system", 0.5)
        tau_b = pm.HalfNormal("tau_topic", 1.0)
        tau_c = pm.HalfNormal("tau_topic_zero", 1.0)
        z = pm.Normal("z_system", 0.0, 1.0, shape=n_systems)
        e = pm.Normal("system_zero", 0.0, 1.0, shape=n_systems)
        w = pm.Normal("z_topic", 0.0, 1.0, shape=n_topics)
        v = pm.Normal("z_topic_zero", 0.0, 1.0, shape=n_topics)
        mu = pm.math.invlogit(alpha + tau_a * z[s_d] + tau_b * w[t_d])
        logit0 = zeta + e[s_d] + tau_c * v[t_d]
        phi = pt.exp(log_phi)
        zero = pt.eq(y_d, 0.0)
        one = pt.eq(y_d, 1.0)
        inner = pt.clip(y_d, 1e-12, 1 - 1e-12)
        beta = (pt.gammaln(phi) - pt.gammaln(mu * phi) - pt.gammaln((1 - mu) * phi)
                + (mu * phi - 1) * pt.log(inner) + ((1 - mu) * phi - 1) * pt.log1p(-inner))
        log_pi0 = -pt.softplus(-logit0)
        log_not0 = -pt.softplus(logit0)
        ll = pt.switch(zero, log_pi0,
                       log_not0 + pt.switch(one, -pt.softplus(-eta),
                                            -pt.softplus(eta) + beta))
        pm.Potential("likelihood", pt.sum(ll))
    return model


def population_means(draws: dict[str, np.ndarray], upper: float) -> np.ndarray:
    """``m_s`` per draw (see the module docstring): ``(draws, systems)``."""
    normals = _new_topic_normals()                                    # (K, 2)
    alpha, zeta, eta = (np.asarray(draws[k])[:, None, None] for k in ("alpha", "zeta", "eta"))
    a = (draws["tau_system"][:, None] * draws["z_system"])[:, :, None]       # (D, S, 1)
    e = draws["system_zero"][:, :, None]
    b = draws["tau_topic"][:, None, None] * normals[None, None, :, 0]         # (D, 1, K)
    c = draws["tau_topic_zero"][:, None, None] * normals[None, None, :, 1]
    mu = 1.0 / (1.0 + np.exp(-(alpha + a + b)))
    pi0 = 1.0 / (1.0 + np.exp(-(zeta + e + c)))
    pi1 = 1.0 / (1.0 + np.exp(-eta))
    return upper * np.mean((1 - pi0) * (pi1 + (1 - pi1) * mu), axis=-1)


class TopicModel:
    """The zero-one-inflated Beta topic model for ``systems x topics`` scores, compiled
    once and refitted with new data of the same shape (imputations, calibration)."""

    def __init__(self, n_systems: int, n_topics: int):
        import nutpie

        self.shape = (n_systems, n_topics)
        example = np.full(self.shape, 0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._compiled = nutpie.compile_pymc_model(_model(example, *self.shape))

    def sample(self, x: np.ndarray, *, draws: int = 1000, tune: int = 1000,
               chains: int = 2, seed: int = 2026, progress: bool = False) -> dict:
        """Posterior draws (flattened over chains) for scaled scores ``x`` in [0, 1]."""
        import nutpie

        x = np.asarray(x, dtype=float)
        if x.shape != self.shape:
            raise ParameterError(f"scores must be {self.shape}, got {x.shape}")
        seen = ~np.isnan(x)
        s_idx, t_idx = np.nonzero(seen)
        model = self._compiled.with_data(y=x[seen], s_idx=s_idx, t_idx=t_idx)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace = nutpie.sample(model, draws=draws, tune=tune, chains=chains, seed=seed,
                                  progress_bar=progress, target_accept=0.9)
        post = trace.posterior if hasattr(trace, "posterior") else trace["posterior"]
        out = {name: np.asarray(post[name].values).reshape((-1,) + post[name].shape[2:])
               for name in ("alpha", "zeta", "eta", "log_phi", "tau_system", "tau_topic",
                            "tau_topic_zero", "z_system", "system_zero")}
        stats = trace.sample_stats if hasattr(trace, "sample_stats") else \
            trace["sample_stats"]
        out["divergences"] = int(np.asarray(stats["diverging"]).sum())
        return out


def topic_model(scores: xr.DataArray, *, upper: float | None = None, imputations: int = 4,
                draws: int = 1000, tune: int = 1000, chains: int = 2, seed: int = 2026,
                progress: bool = False) -> xr.DataArray:
    """Posterior of each run's population mean score (see the module docstring).

    Parameters
    ----------
    scores : ``(chain, draw, run, topic)`` from :func:`bayeschain.score`
    upper : the largest score possible (default: 1, or the largest score seen when it is
        above 1, e.g. graded P@H); scores are divided by it
    imputations : user-model posterior draws of the scores fitted and pooled

    Returns ``(chain, draw, run, topic)`` with the single pseudo-topic ``"population"``,
    ready for :func:`bayeschain.compare`; ``attrs["uncertainty"]`` says what it includes.
    """
    values = scores.transpose("chain", "draw", "run", "topic").values.astype(float)
    runs = [str(r) for r in scores["run"].values]
    flat = values.reshape((-1,) + values.shape[2:])
    if len(runs) < 2 or flat.shape[2] < 3:
        raise ParameterError("the topic model needs at least two runs and three topics")
    if np.nanmin(flat) < 0:
        raise ParameterError("the topic model takes scores >= 0")
    top = float(np.nanmax(flat))
    upper = max(1.0, top) if upper is None else float(upper)
    if top > upper:
        raise ParameterError(f"a score ({top:g}) exceeds upper={upper:g}")
    rng = np.random.default_rng(seed)
    picks = np.sort(rng.choice(flat.shape[0], size=min(imputations, flat.shape[0]),
                               replace=False))
    model = TopicModel(len(runs), flat.shape[2])
    pooled, divergences = [], 0
    for k, i in enumerate(picks):
        fitted = model.sample(flat[i] / upper, draws=draws, tune=tune, chains=chains,
                              seed=seed + k, progress=progress)
        divergences += fitted.pop("divergences")
        pooled.append(population_means(fitted, upper).reshape(chains, draws, len(runs)))
    means = np.concatenate(pooled, axis=0)                     # imputations x chains
    out = xr.DataArray(means[..., None], dims=("chain", "draw", "run", "topic"),
                       coords={"chain": np.arange(means.shape[0]), "draw": np.arange(draws),
                               "run": runs, "topic": ["population"]}, name="score")
    source = scores.attrs.get("uncertainty", "user-model posterior")
    out.attrs["uncertainty"] = (f"{source} ({len(picks)} imputations) + topic sampling "
                                f"(zero-one-inflated Beta topic x system model)")
    out.attrs["divergences"] = divergences
    return out
