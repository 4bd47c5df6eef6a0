r"""Posterior predictive checks of whole distributions, against the click log itself.

:class:`DistributionCheck` holds an observed distribution, its replications (one row per
posterior draw) and :class:`~bayeschain.inference.clicks.checks.PredictiveCheck` summaries;
``plots.plot_distribution_check`` draws it.  The walk's checks (clicks per page, deepest
click, click ranks) replay the fitted walk (:mod:`~bayeschain.inference.walk.checks`);
this module holds the dwell-time check:

* :func:`predictive_dwell_distribution`: every observed dwell time is replicated from the
  draw's dwell law of its rank (exponential ``mu_i``, or log-normal ``(m_i, s_i)``; for the
  model on each click's observation, the time the log shows: dwell of the click's rank,
  query and document in the fitted family, plus the examination or writing time) and
  the empirical CDF of the replicated times is compared with the observed one on a
  log-spaced time grid, with the median and 90th percentile as summary checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import ParameterError
from ...posterior.draws import draw_indices, draws_of
from ..clicks.checks import PredictiveCheck


@dataclass(frozen=True)
class DistributionCheck:
    """An observed distribution against its posterior predictive replications."""

    label: str
    support: np.ndarray            # depths 1..R, or the time grid (seconds)
    observed: np.ndarray           # pmf (depth) or CDF (dwell) on the support
    replicated: np.ndarray         # (draws, support)
    kind: str                      # "pmf" or "cdf"
    summaries: dict[str, PredictiveCheck] = field(default_factory=dict)

    def band(self, prob: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Equal-tailed ``prob`` predictive band of the distribution at each support point."""
        return tuple(np.quantile(self.replicated, [(1 - prob) / 2, (1 + prob) / 2], axis=0))

    def outside(self, prob: float = 0.95) -> np.ndarray:
        """Support points where the observed distribution leaves the band."""
        lo, hi = self.band(prob)
        return self.support[(self.observed < lo - 1e-12) | (self.observed > hi + 1e-12)]


def _observations(log):
    from ...io.clicklog import ClickLog

    if not isinstance(log, ClickLog):
        raise ParameterError("distribution checks need the click log itself (a ClickLog), "
                             "not aggregated statistics")
    clicks, _, _ = log.observations()
    if clicks.empty:
        raise ParameterError("the log has no clicks on result pages to check against")
    return clicks


def _dwell_sampler(posterior):
    post = posterior.posterior
    if "holding_rate" in post:
        mu = draws_of(posterior, "holding_rate")
        return mu.shape[0], lambda rows, ranks, rng: rng.exponential(
            1.0 / mu[rows][:, ranks])
    if "log_dwell_mean" in post:
        m = draws_of(posterior, "log_dwell_mean")
        s = draws_of(posterior, "log_dwell_sd")
        return m.shape[0], lambda rows, ranks, rng: np.exp(
            m[rows][:, ranks] + s[rows][:, ranks] * rng.standard_normal((rows.size,
                                                                          ranks.size)))
    raise ParameterError("the dwell check needs holding rates or a log-normal dwell "
                         "posterior")


def _observed_times(posterior, log, rng, max_draws):
    """The times the log shows and their replications ``(draws, times)``.

    Sufficient-statistics posteriors: the dwell (or the time to the next event) of each
    click, replicated from the draw's law of its rank.  Posteriors of the model on each
    click's observation (:mod:`~bayeschain.inference.dwell.model`): each exact dwell, gap
    and query gap as the log shows it, replicated as the model says it arises: the dwell
    of the click's rank, query and document, plus an examination (gap) or writing (query)
    time."""
    from ...posterior.draws import draws_of
    from ...posterior.dwell import click_log_means, family_of, missing_rate, sample_dwell

    post = posterior.posterior
    r = int(post.sizes["rank"])
    if "dwell_family" in posterior.attrs:          # the model on each click's observation
        from .data import dwell_observations

        obs = dwell_observations(log, r).clicks
        obs = obs[obs["kind"].isin(["exact", "gap", "query"])]
        if obs.empty:
            raise ParameterError("the log has no observed dwell times")
        n_draws = int(post.sizes["chain"] * post.sizes["draw"])
        rows = draw_indices(n_draws, max_draws, rng)
        eta = click_log_means(posterior, obs, seed=rng)[rows]
        shape = draws_of(posterior, "dwell_shape")[rows][:, None] \
            if "dwell_shape" in post else None
        rep = sample_dwell(family_of(posterior), eta, shape, rng)
        for kind, rate in (("gap", "examination_rate"), ("query", "writing_rate")):
            sel = (obs["kind"] == kind).to_numpy()
            if sel.any():
                missing_rate(posterior, rate, kind, int(sel.sum()))
                lam = draws_of(posterior, rate)[rows][:, None]
                rep[:, sel] += rng.exponential(1.0 / np.broadcast_to(lam, (rows.size,
                                                                           sel.sum())))
        return obs["time"].to_numpy(dtype=float, na_value=np.nan), rep
    clicks = _observations(log)
    d = clicks["dwell"].to_numpy(dtype=float, na_value=np.nan)
    ok = np.isfinite(d) & (d > 0)
    if not ok.any():
        raise ParameterError("the log has no observed dwell times")
    ranks = np.minimum(clicks.loc[ok, "rank"].to_numpy(dtype=int), r) - 1
    n_draws, sample = _dwell_sampler(posterior)
    rows = draw_indices(n_draws, max_draws, rng)
    return d[ok], sample(rows, ranks, rng)


def predictive_dwell_distribution(posterior, log, *, grid=None, max_draws: int | None = 200,
                                  seed=None) -> DistributionCheck:
    """Empirical CDF of dwell times, observed vs replicated under each posterior draw."""
    rng = np.random.default_rng(seed)
    times, rep = _observed_times(posterior, log, rng, max_draws)   # rep: (draws, times)
    if grid is None:
        lo, hi = np.quantile(times, [0.01, 0.99])
        grid = np.geomspace(max(lo, 1e-3), max(hi, 2 * max(lo, 1e-3)), 60)
    grid = np.asarray(grid, dtype=float)
    obs = np.searchsorted(np.sort(times), grid, side="right") / times.size
    rep_sorted = np.sort(rep, axis=1)
    cdf = np.stack([np.searchsorted(row, grid, side="right") for row in rep_sorted]) / \
        times.size
    summaries = {f"{int(q * 100)}th percentile (s)": PredictiveCheck(
        float(np.quantile(times, q)), np.quantile(rep, q, axis=1)) for q in (0.5, 0.9)}
    return DistributionCheck("dwell time (s)", grid, obs, cdf, "cdf", summaries)
