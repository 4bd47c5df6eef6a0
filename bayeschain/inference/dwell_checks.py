r"""Posterior predictive checks of whole distributions, against the click log itself.

:class:`DistributionCheck` holds an observed distribution, its replications (one row per
posterior draw) and :class:`~bayeschain.inference.transition_checks.PredictiveCheck` summaries;
``plots.plot_distribution_check`` draws it.  The walk's checks (clicks per page, deepest
click, click ranks) replay the fitted walk (:mod:`~bayeschain.inference.walk_checks`);
this module holds the dwell-time check:

* :func:`predictive_dwell_distribution`: every observed dwell time is replicated from the
  draw's dwell law of its rank (exponential ``mu_i``, or log-normal ``(m_i, s_i)``) and
  the empirical CDF of the replicated times is compared with the observed one on a
  log-spaced time grid, with the median and 90th percentile as summary checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError
from .parameters import draw_indices
from .transition_checks import PredictiveCheck


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
    from ..io.clicklog import ClickLog
    from ..io.clickstats_pandas import observations

    if not isinstance(log, ClickLog):
        raise ParameterError("distribution checks need the click log itself (a ClickLog), "
                             "not aggregated statistics")
    clicks, _, _ = observations(log.events, has_sessions=log.has_sessions)
    if clicks.empty:
        raise ParameterError("the log has no clicks on result pages to check against")
    return clicks


def _dwell_sampler(posterior):
    post = posterior.posterior
    if "holding_rate" in post:
        mu = post["holding_rate"].stack(s=("chain", "draw")).transpose("s", "rank").values
        return mu.shape[0], lambda rows, ranks, rng: rng.exponential(
            1.0 / mu[rows][:, ranks])
    if "log_dwell_mean" in post:
        m = post["log_dwell_mean"].stack(s=("chain", "draw")).transpose("s", "rank").values
        s = post["log_dwell_sd"].stack(s=("chain", "draw")).transpose("s", "rank").values
        return m.shape[0], lambda rows, ranks, rng: np.exp(
            m[rows][:, ranks] + s[rows][:, ranks] * rng.standard_normal((rows.size,
                                                                          ranks.size)))
    raise ParameterError("the dwell check needs holding rates or a log-normal dwell "
                         "posterior")


def predictive_dwell_distribution(posterior, log, *, grid=None, max_draws: int | None = 200,
                                  seed=None) -> DistributionCheck:
    """Empirical CDF of dwell times, observed vs replicated under each posterior draw."""
    post = posterior.posterior
    r = int(post.sizes["rank"])
    clicks = _observations(log)
    d = clicks["dwell"].to_numpy(dtype=float)
    ok = np.isfinite(d) & (d > 0)
    if not ok.any():
        raise ParameterError("the log has no observed dwell times")
    times = d[ok]
    ranks = np.minimum(clicks.loc[ok, "rank"].to_numpy(dtype=int), r) - 1
    rng = np.random.default_rng(seed)
    n_draws, sample = _dwell_sampler(posterior)
    rows = draw_indices(n_draws, max_draws, rng)
    rep = sample(rows, ranks, rng)                            # (draws, clicks)
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
