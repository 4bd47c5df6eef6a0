r"""The dwell-time model on the log's own observations: four families, censoring as the log
shows it, and holding rates per rank or per document.

Each click ``c`` (rank ``r``, query ``q``, document ``d``) has a dwell ``D_c`` whose law is
one of the families below, written with its **mean** ``M_c = exp(eta_c)`` and a shape
shared by all clicks:

* ``exponential``: rate ``1 / M``;
* ``lognormal``: ``log D ~ Normal(eta - s^2 / 2, s)``;
* ``gamma``: shape ``k``, rate ``k / M``;
* ``weibull``: shape ``k``, scale ``M / Gamma(1 + 1/k)``.

``eta_c = beta_r`` (``per-rank``), ``beta`` (``shared``), or, with ``per-document``,
``eta_c = beta_r + tau_q u_q + tau_d v_{q,d}`` with ``u, v ~ Normal(0, 1)`` and
``tau ~ HalfNormal(1)``: a rank effect, a query effect and a (query, document) effect, so
documents the log shows often get their own holding time and the others are shrunk to
their rank and query.  ``beta_r ~ Normal(prior)`` on the log mean dwell in seconds; the
shape has ``log k ~ Normal(0, 1)`` (gamma, Weibull) or ``s ~ HalfNormal(1.5)``
(log-normal).

Likelihood per observation kind (:mod:`bayeschain.inference.dwell.data`):

* ``exact`` ``t``: ``f(t)``;
* ``gap`` ``g``: ``int_0^g f(t) lam e^{-lam (g - t)} dt``, the dwell plus an exponential
  examination time of rate ``lam``;
* ``query`` ``g``: the same with the rate ``lam_w`` of writing the next query
  (``log(1 / lam_w) ~ Normal(log 20, 2)``); computed by Gauss-Legendre quadrature after
  in two pieces (:func:`gap_terms`); for the exponential family the closed form of two
  exponentials (:func:`exponential_gap`);
* ``scan`` delays ``e`` (query to first click): ``lam e^{-lam e}``, with
  ``log(1 / lam) ~ Normal(log 5, 2)``.

``open`` clicks (no end and no later event) are counted, not used: the log knows nothing
of them.  This assumes they end for reasons unrelated to their length: when the last,
satisfied dwells are longer (informative censoring), the rates are biased upward; the
``open`` share per rank is in the fit's attributes so that a reader can judge it.

The session's last clicks (``last``: nothing followed them) are the satisfied ones, or
those after which the user gave up; their dwells get a shift ``delta ~ Normal(0, 1)`` on
the log scale (``dwell_last_shift``), learned from the last clicks whose end is recorded;
where none is (a log without end times) ``delta`` stays its prior, and that uncertainty
goes into every rate.  A rank's holding time is the mixture over its share ``s_r`` of
last clicks (``dwell_last_share``, counted in the log whether or not their times are
known): ``holding_rate_r = exp(-beta_r) / ((1 - s_r) + s_r e^delta)``.  With per-document
effects this is the rate of the rank's *typical* document (``u = v = 0``), not the mean
rate over documents (larger by ``exp((tau_q^2 + tau_d^2) / 2)``).

Documents are keyed by the log's ``(query_id, doc_id)``: runs scored with per-document
rates must use the same query ids as the log (on TREC Session 2013 the log's queries are
their texts and the runs' topics are numbers, so every document there is new to the fit;
CLARA2 logs and runs share query ids).

MPcont weighs a document by its **mean** holding time (for a semi-Markov chain the time
share of a state is ``pi_i m_i / sum_j pi_j m_j`` whatever the holding law), so the
posterior stores ``holding_rate = 1 / M`` per rank for every family, and, per document,
the effects that :func:`document_log_means` turns into each list's rates.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ...errors import ParameterError
from ...posterior.dwell import FAMILIES, click_log_means, dwell_law, family_of, missing_rate
from .data import DwellObservations

QUADRATURE_NODES = 24


@functools.lru_cache(maxsize=4)
def quadrature(nodes: int = QUADRATURE_NODES) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes ``x`` and weights on (0, 1), computed once per ``nodes`` (the
    held-out likelihood asks for them once per posterior draw) and read-only."""
    x, w = np.polynomial.legendre.leggauss(nodes)
    x, w = (x + 1) / 2, w / 2
    x.flags.writeable = w.flags.writeable = False
    return x, w


def gap_terms(logpdf, g, lam, xp):
    """Log-terms whose log-sum-exp over the last axis is
    ``log int_0^g f(t) lam e^{-lam (g - t)} dt`` for each gap ``g`` (shape (n,)).

    Two pieces split at ``t* = g - 10 / lam`` (floored at ``1e-9 g``): ``[0, t*]`` with
    ``t = t* x^4`` (dense where ``f`` may be singular, ``t^(k-1)``), ``[t*, g]`` with
    ``t = t* + (g - t*) x^2``, where the examination kernel lives; :data:`QUADRATURE_NODES`
    each.  Against adaptive quadrature (tests) the log-integral is within 1e-4 in 95% of
    a grid of families, means, examination rates and gaps, within 0.05 everywhere.
    ``logpdf(t)`` takes ``(n, 2K)`` times; ``xp`` is NumPy or ``pytensor.tensor``."""
    x, w = quadrature()
    g = g[:, None]
    split = xp.maximum(1e-9 * g, g - 10.0 / lam)
    t = xp.concatenate([split * x**4, split + (g - split) * x**2], axis=1)
    # log of the Jacobians split * 4 w x^3 and (g - split) * 2 w x: the nodes' part is a
    # constant, so only two logs per gap are taken, not one per node
    log_jac = xp.concatenate([xp.log(split) + np.log(4 * w * x**3),
                              xp.log(g - split) + np.log(2 * w * x)], axis=1)
    return logpdf(t) + log_jac + xp.log(lam) - lam * (g - t)


def exponential_gap(mu, g, lam, xp):
    """``log`` of the hypoexponential density at ``g`` (exponential dwell of rate ``mu``
    plus exponential examination of rate ``lam``): ``log(a b / (b - a)) - a g +
    log(1 - e^{-(b - a) g})`` with ``a = min, b = max`` of the rates (the limit ``a^2 g
    e^{-a g}`` when they meet)."""
    a, b = xp.minimum(mu, lam), xp.maximum(mu, lam)
    d = b - a
    safe = xp.where(d * g > 1e-10, d, 1.0)
    span = xp.where(d * g > 1e-10, -xp.expm1(-safe * g) / safe, g)
    return xp.log(a) + xp.log(b) - a * g + xp.log(span)


def _dist(family: str, log_mean, shape):
    """The PyMC distribution of a dwell with mean ``exp(log_mean)`` and the family's
    ``shape`` (ignored by the exponential)."""
    import pymc as pm
    import pytensor.tensor as pt

    mean = pt.exp(log_mean)
    if family == "exponential":
        return pm.Exponential.dist(scale=mean)
    if family == "lognormal":
        return pm.LogNormal.dist(mu=log_mean - shape**2 / 2, sigma=shape)
    if family == "gamma":
        return pm.Gamma.dist(alpha=shape, beta=shape / mean)
    if family == "weibull":
        return _Weibull(shape, mean / pt.exp(pt.gammaln(1 + 1 / shape)))
    raise ParameterError(f"dwell family must be one of {', '.join(FAMILIES)}; got {family!r}")


class _Weibull:
    """The Weibull log density written out (PyMC's ``Weibull.dist`` refuses to broadcast
    ``(n, 1)`` parameters against ``(n, K)`` quadrature nodes):
    ``log k - log l + (k - 1) log(t / l) - (t / l)^k``."""

    def __init__(self, k, scale):
        self.k, self.scale = k, scale

    def logp(self, t):
        import pytensor.tensor as pt

        z = t / self.scale
        return pt.log(self.k) - pt.log(self.scale) + (self.k - 1) * pt.log(z) - z**self.k


def _logp(dist, t):
    import pymc as pm

    return dist.logp(t) if isinstance(dist, _Weibull) else pm.logp(dist, t)


def add_to_model(obs: DwellObservations, section: dict) -> None:
    """The dwell parameters and the likelihood of ``obs`` in the current PyMC model."""
    import pymc as pm
    import pytensor.tensor as pt

    family, kind = section["likelihood"], section["parametrisation"]
    mean, sd = (float(v) for v in section["prior"])
    model = pm.modelcontext(None)
    c = obs.clicks
    used = c[c["kind"].isin(["exact", "gap", "query"])]
    if kind == "shared":
        one = pm.Normal("dwell_log_mean", mean, sd)
        beta = pm.Deterministic("dwell_rank_log_mean", pt.ones(obs.ranks) * one, dims="rank")
    elif kind in ("per-rank", "per-document"):
        beta = pm.Normal("dwell_rank_log_mean", mean, sd, dims="rank")
    else:
        raise ParameterError(f"[holding] parametrisation {kind!r} is not available for the "
                             f"dwell model on observations (per-rank, shared, per-document)")
    eta = beta[used["rank"].to_numpy() - 1]
    share = obs.last_share()
    if c["last"].any():
        # the session's last clicks (satisfied, or giving up) have their own log shift;
        # a rank's holding time is the mixture over its share of last clicks
        delta = pm.Normal("dwell_last_shift", 0.0, 1.0)
        pm.Deterministic("dwell_last_share", pt.as_tensor(share), dims="rank")
        eta = eta + delta * used["last"].to_numpy(dtype=float, na_value=np.nan)
        beta_all = beta + pt.log((1 - share) + share * pt.exp(delta))
    else:
        beta_all = beta
    pm.Deterministic("holding_rate", pt.exp(-beta_all), dims="rank")
    if kind == "per-document":
        queries, q_index = np.unique(used["query_id"].to_numpy(), return_inverse=True)
        pairs = used["query_id"] + "\x1f" + used["doc_id"]
        docs, d_index = np.unique(pairs.to_numpy(), return_inverse=True)
        model.add_coord("dwell_query", queries)
        model.add_coord("dwell_document", docs)
        tq = pm.HalfNormal("dwell_query_sd", 1.0)
        td = pm.HalfNormal("dwell_document_sd", 1.0)
        u = pm.Normal("dwell_query_z", 0, 1, dims="dwell_query")
        v = pm.Normal("dwell_document_z", 0, 1, dims="dwell_document")
        qe = pm.Deterministic("dwell_query_effect", tq * u, dims="dwell_query")
        de = pm.Deterministic("dwell_document_effect", td * v, dims="dwell_document")
        eta = eta + qe[q_index] + de[d_index]
    if family == "exponential":
        shape = None
    elif family == "lognormal":
        shape = pm.HalfNormal("dwell_shape", 1.5)
    else:
        shape = pm.LogNormal("dwell_shape", 0.0, 1.0)
    kinds = used["kind"].to_numpy()
    times = used["time"].to_numpy(dtype=float, na_value=np.nan)
    terms = []
    exact = kinds == "exact"
    if exact.any():
        d = _dist(family, eta[np.flatnonzero(exact)], shape)
        terms.append(pt.sum(_logp(d, times[exact])))
    rates = {}
    if (kinds == "gap").any() or obs.scan.size:
        mean = pm.LogNormal("examination_time", math.log(5.0), 2.0)
        rates["gap"] = pm.Deterministic("examination_rate", 1 / mean)
        if obs.scan.size:
            terms.append(pt.sum(pm.logp(pm.Exponential.dist(rates["gap"]), obs.scan)))
    if (kinds == "query").any():
        mean = pm.LogNormal("writing_time", math.log(20.0), 2.0)
        rates["query"] = pm.Deterministic("writing_rate", 1 / mean)
    for name, lam in rates.items():
        sel = kinds == name
        if not sel.any():
            continue
        idx = np.flatnonzero(sel)
        g = pt.as_tensor(times[sel])
        if family == "exponential":
            terms.append(pt.sum(exponential_gap(pt.exp(-eta[idx]), g, lam, pt)))
        else:
            d = _dist(family, eta[idx][:, None], shape)
            lp = gap_terms(lambda t, d=d: _logp(d, t), g, lam, pt)
            terms.append(pt.sum(pm.math.logsumexp(lp, axis=1)))
    if not terms:
        raise ParameterError("the click log has no dwell times: nothing to learn for a "
                             "dwell model (the posterior would be the prior)")
    pm.Potential("dwell_likelihood", pt.sum(pt.stack(terms)))


def _gap_logpdf(family: str, eta, shape, t, lam) -> np.ndarray:
    """``log`` density of dwell + exponential(``lam``) at each ``t`` (one draw)."""
    from scipy.special import logsumexp

    law = dwell_law(family, eta[:, None], shape)
    return logsumexp(gap_terms(law.logpdf, t, lam, np), axis=1)


def heldout_loglik(posterior, obs: DwellObservations, *, max_draws: int | None = 200,
                   seed=0) -> dict[str, float]:
    """Log predictive density of held-out dwell observations (``obs`` from a log the fit
    did not see): per observation ``log mean_draws p(y | draw)`` with ``p`` the model's
    likelihood of its kind (exact, gap, query; scan delays included), averaged per kind
    and over all (``"all"``, nats per observation).  Documents and queries the fit never
    saw get population draws, as in scoring."""
    from scipy.special import logsumexp

    from ...posterior.draws import draw_indices, draws_of

    post = posterior.posterior
    family = family_of(posterior)
    rng = np.random.default_rng(seed)
    n = int(post.sizes["chain"] * post.sizes["draw"])
    rows = draw_indices(n, max_draws, rng)
    c = obs.clicks[obs.clicks["kind"].isin(["exact", "gap", "query"])]
    eta = click_log_means(posterior, c, seed=rng)[rows]                        # (D, n)
    shape = draws_of(posterior, "dwell_shape")[rows][:, None] if "dwell_shape" in post \
        else None
    kinds = c["kind"].to_numpy()
    times = c["time"].to_numpy(dtype=float, na_value=np.nan)
    out, parts = {}, []
    for kind in ("exact", "gap", "query"):
        sel = kinds == kind
        if not sel.any():
            continue
        e, t = eta[:, sel], times[sel]
        if kind == "exact":
            lp = dwell_law(family, e, shape).logpdf(t)
        else:
            rate = "examination_rate" if kind == "gap" else "writing_rate"
            missing_rate(posterior, rate, kind, int(sel.sum()))
            lam = draws_of(posterior, rate)[rows]
            if family == "exponential":
                lp = exponential_gap(np.exp(-e), t, lam[:, None], np)
            else:
                lp = np.stack([_gap_logpdf(family, e[i], None if shape is None else
                                           shape[i], t, lam[i]) for i in range(rows.size)])
        point = logsumexp(lp, axis=0) - np.log(rows.size)
        out[kind] = float(point.mean())
        parts.append(point)
    if obs.scan.size and "examination_rate" in post:
        lam = draws_of(posterior, "examination_rate")[rows][:, None]
        point = logsumexp(np.log(lam) - lam * obs.scan, axis=0) - np.log(rows.size)
        out["scan"] = float(point.mean())
        parts.append(point)
    if not parts:
        raise ParameterError("the held-out log has no dwell observations")
    out["all"] = float(np.concatenate(parts).mean())
    return out


