r"""Posterior predictive checks of whole distributions, against the click log itself.

The checks of :mod:`~bayeschain.inference.checks` use aggregated counts.  These two need the
per-page and per-click observations, so they take the :class:`~bayeschain.io.ClickLog`:

* :func:`predictive_click_depth`: the deepest clicked rank of each page with clicks.  For
  every posterior draw each observed page is replayed: it starts at its observed first
  click (the transition model does not model first clicks), then after a click on rank
  ``i`` the next click lands on rank ``j`` or the user leaves the page:

  - click-transition posterior: the draw's ``theta_i`` (forward, backward, stop,
    reformulate); a forward (backward) move lands on ``j`` with the log's frequency of
    ``i -> j`` among forward (backward) moves from ``i`` (uniform over the deeper (higher)
    ranks when the log has none);
  - hidden-examination walk: the exact click-to-click law of the draw's walk
    (:func:`~bayeschain.inference.models.walk_click_laws`), repeats included.

  Ranks deeper than the posterior's are pooled into its last rank, as in the fit.  The
  replay also gives the share of backward moves among click-to-click moves.
* :func:`predictive_dwell_distribution`: every observed dwell time is replicated from the
  draw's dwell law of its rank (exponential ``mu_i``, or log-normal ``(m_i, s_i)``) and
  the empirical CDF of the replicated times is compared with the observed one on a
  log-spaced time grid, with the median and 90th percentile as summary checks.

Both return a :class:`DistributionCheck`: the observed distribution, its replications (one
row per posterior draw) and :class:`~bayeschain.inference.checks.PredictiveCheck` summaries;
``plots.plot_distribution_check`` draws them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import ParameterError
from .checks import PredictiveCheck


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


def _draw_rows(n_draws: int, max_draws: int | None, rng) -> np.ndarray:
    idx = np.arange(n_draws)
    if max_draws is not None and n_draws > max_draws:
        idx = np.sort(rng.choice(idx, max_draws, replace=False))
    return idx


def _observations(log):
    from ..io.clicklog import ClickLog
    from ..io.clickstats import observations

    if not isinstance(log, ClickLog):
        raise ParameterError("distribution checks need the click log itself (a ClickLog), "
                             "not aggregated statistics")
    clicks, _, _ = observations(log.events, has_sessions=log.has_sessions)
    if clicks.empty:
        raise ParameterError("the log has no clicks on result pages to check against")
    return clicks


def _landing_probabilities(clicks: pd.DataFrame, r: int) -> np.ndarray:
    """``(2, r, r)`` landing probabilities of forward (0) and backward (1)
    moves from each rank, from the log (uniform over the possible ranks when unseen)."""
    moved = clicks[clicks["next_rank"].notna()]
    frm = np.minimum(moved["rank"].to_numpy(dtype=int), r) - 1
    to = np.minimum(moved["next_rank"].to_numpy(dtype=int), r) - 1
    counts = np.zeros((2, r, r))
    fwd = moved["next_rank"].to_numpy(dtype=int) > moved["rank"].to_numpy(dtype=int)
    bwd = moved["next_rank"].to_numpy(dtype=int) < moved["rank"].to_numpy(dtype=int)
    np.add.at(counts[0], (frm[fwd], to[fwd]), 1.0)
    np.add.at(counts[1], (frm[bwd], to[bwd]), 1.0)
    ranks = np.arange(r)
    for i in range(r):
        for d, allowed in ((0, ranks > i), (1, ranks < i)):
            if counts[d, i].sum() == 0:
                # unseen: uniform over the possible ranks (the pooled last rank stays put)
                counts[d, i] = allowed if allowed.any() else (ranks == i)
    return counts / counts.sum(axis=-1, keepdims=True)


def _click_kernel(posterior, clicks: pd.DataFrame, r: int, rows: np.ndarray) -> np.ndarray:
    """``(draws, r, r + 1)``: after a click on rank i, the next click on rank j (columns
    ``0..r-1``) or leaving the page (column ``r``), for the selected posterior draws."""
    post = posterior.posterior
    if "transition" in post:
        t = post["transition"]
        cats = list(t["category"].values)
        theta = t.stack(s=("chain", "draw")).transpose("s", "rank", "category").values[rows]
        land = _landing_probabilities(clicks, r)                          # (2, r, r)
        nxt = (theta[..., cats.index("forward"), None] * land[0]
               + theta[..., cats.index("backward"), None] * land[1])
    elif "walk" in post and "click" in post:
        from .models import walk_click_laws

        moves = list(post["walk"]["move"].values)
        walk = post["walk"].stack(s=("chain", "draw")).transpose("s", "move").values[rows]
        click = post["click"].stack(s=("chain", "draw")).transpose("s", "rank").values[rows]
        nxt = np.stack([walk_click_laws(w[moves.index("forward")], w[moves.index("backward")],
                                        w[moves.index("reformulate")], c, r)["next"]
                        for w, c in zip(walk, click, strict=True)])
    else:
        raise ParameterError("the click-depth check needs a click-transition posterior "
                             "('transition') or a hidden-walk posterior ('walk', 'click')")
    leave = np.clip(1.0 - nxt.sum(axis=-1, keepdims=True), 0.0, None)
    return np.concatenate([nxt, leave], axis=-1)


def predictive_click_depth(posterior, log, *, max_draws: int | None = 200,
                           max_steps: int = 1000, seed=None) -> DistributionCheck:
    """Deepest clicked rank per clicked page, observed vs posterior predictive (with the
    mean depth and the share of backward moves among click-to-click moves, repeats left
    out, as summaries)."""
    post = posterior.posterior
    r = int(post.sizes["rank"])
    n_draws = int(post.sizes["chain"] * post.sizes["draw"])
    rng = np.random.default_rng(seed)
    rows = _draw_rows(n_draws, max_draws, rng)
    clicks = _observations(log)
    kernel = np.cumsum(_click_kernel(posterior, clicks, r, rows), axis=-1)
    first = np.minimum(clicks.loc[clicks["k"] == 1, "rank"].to_numpy(dtype=int), r) - 1
    observed_depth = np.minimum(
        clicks.groupby("serp_id", sort=False)["rank"].max().to_numpy(dtype=int), r)
    draws, n_pages = rows.size, first.size
    rank = np.broadcast_to(first, (draws, n_pages)).copy()
    depth = rank.copy()
    forward = np.zeros(draws)
    backward = np.zeros(draws)
    alive = np.ones((draws, n_pages), dtype=bool)
    for _ in range(max_steps):
        if not alive.any():
            break
        dd, pp = np.nonzero(alive)
        cur = rank[dd, pp]
        u = rng.random(cur.size) * kernel[dd, cur, -1]
        outcome = np.minimum((kernel[dd, cur] < u[:, None]).sum(axis=1), r)
        moving = outcome < r
        np.add.at(forward, dd[moving & (outcome > cur)], 1.0)
        np.add.at(backward, dd[moving & (outcome < cur)], 1.0)
        rank[dd[moving], pp[moving]] = outcome[moving]
        depth[dd, pp] = np.maximum(depth[dd, pp], rank[dd, pp])
        alive[dd[~moving], pp[~moving]] = False
    else:
        raise ParameterError(f"replayed pages did not stop within {max_steps} clicks: the "
                             f"posterior's stop probabilities are (nearly) zero")
    rep = np.stack([np.bincount(row, minlength=r) for row in depth]) / n_pages
    obs = np.bincount(observed_depth - 1, minlength=r) / n_pages
    moved = clicks[clicks["next_rank"].notna()]
    ahead = moved["next_rank"].to_numpy(dtype=float) - moved["rank"].to_numpy(dtype=float)
    total = np.maximum(forward + backward, 1.0)
    summaries = {
        "mean depth": PredictiveCheck(float(observed_depth.mean()), (depth + 1).mean(axis=1)),
        "backward share": PredictiveCheck(float((ahead < 0).sum() / max((ahead != 0).sum(), 1)),
                                          backward / total)}
    return DistributionCheck("deepest clicked rank", np.arange(1, r + 1), obs, rep, "pmf",
                             summaries)


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
    rows = _draw_rows(n_draws, max_draws, rng)
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
