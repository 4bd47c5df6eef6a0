r"""Posterior predictive checks that replay the fitted walk itself, from rank 1.

For a subsample of posterior draws, every page of the log is walked again by a simulated
user of that draw (:func:`bayeschain.browsing.page_walk.walk_pages`: start at rank 1, click
with the page's click probabilities, click a result again at once with the repeat
probability, move with the walk's moves, the same boundary rule)
and the replicated log is summarised as the observed one:

* clicks per page (0, 1, ..., with a last bucket for "this many or more");
* the deepest clicked rank of pages with clicks, and the share of clicks at each rank
  (ranks deeper than :data:`DEPTH_BINS` pooled in the last bin);
* the rank of each page's first click and of its last click;
* the distance ``j - i`` of every click-to-click move (0: a repeat; ``-1, -2, ...``
  backward), distances beyond ``DEPTH_BINS - 1`` pooled;
* the share of click-less pages, of backward moves among click-to-click moves (repeats
  left out), and of pages with a click at rank >= 5, the mean clicks per page, and the
  re-clicks per page with other clicks between (a click on a result already clicked on
  the page, not right after its own click: what a walk whose every arrival is a fresh
  click chance overdoes, ``reclicks = "damped"``);
* for logs with sessions, the share of pages with clicks whose last click was followed by
  another query (rather than the end of the session).

Nothing of the log enters a replay but its pages (their lengths and documents): first
clicks, their number and their depth are all the model's.  A posterior whose walk
contradicts the log (for instance click-to-click frequencies used as per-step moves) puts
the observed values far outside the predictive bands.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ParameterError
from ...posterior.draws import draw_indices
from ...posterior.walk import page_tables
from ..clicks.checks import PredictiveCheck
from ..dwell.checks import DistributionCheck

#: deepest-rank and click-rank distributions pool ranks deeper than this
DEPTH_BINS = 10
#: clicks per page: the last bucket holds this many clicks or more
CLICK_BINS = 6


@dataclass(frozen=True)
class LogSummary:
    """What a click log (observed or replayed) shows, per page."""

    clicks: np.ndarray          # (pages,) clicks on the page
    deepest: np.ndarray         # (pages,) deepest clicked rank (0: no click)
    click_ranks: np.ndarray     # (clicks,) rank of every click
    forward: int                # click-to-click moves to a deeper rank
    backward: int               # ... to a higher rank
    deep: int                   # pages with a click at rank >= 5
    first: np.ndarray           # (pages with clicks,) rank of the first click
    last: np.ndarray            # (pages with clicks,) rank of the last click
    steps: np.ndarray           # (click-to-click moves,) j - i, repeats included
    next_query_after_last: float  # share of pages with clicks, NaN without sessions
    later_reclicks: int = 0     # clicks on a result clicked before, other clicks between

    @classmethod
    def from_clicks(cls, n_pages: int, page: np.ndarray, rank: np.ndarray,
                    next_query: np.ndarray | None = None) -> LogSummary:
        """From clicks in order (``page`` non-decreasing, ``rank`` 1-based);
        ``next_query`` (pages,) whether each page was followed by another query (None:
        the log does not say)."""
        page = np.asarray(page, dtype=np.int64)
        rank = np.asarray(rank, dtype=np.int64)
        clicks = np.bincount(page, minlength=n_pages)
        deepest = np.zeros(n_pages, dtype=np.int64)
        np.maximum.at(deepest, page, rank)
        same = page[1:] == page[:-1]
        step = np.diff(rank)[same]
        starts = np.r_[True, ~same] if page.size else np.zeros(0, dtype=bool)
        ends = np.r_[~same, True] if page.size else np.zeros(0, dtype=bool)
        with_clicks = clicks > 0
        after = float(np.mean(np.asarray(next_query)[with_clicks])) \
            if next_query is not None and with_clicks.any() else float("nan")
        again, right_after = reclicks(page, rank)
        return cls(clicks, deepest, rank, int((step > 0).sum()), int((step < 0).sum()),
                   int((deepest >= 5).sum()), rank[starts], rank[ends], step, after,
                   int((again & ~right_after).sum()))

    def statistics(self) -> dict[str, np.ndarray | float]:
        n_pages = self.clicks.size
        per_page = np.bincount(np.minimum(self.clicks, CLICK_BINS - 1),
                               minlength=CLICK_BINS) / max(n_pages, 1)
        with_clicks = self.deepest[self.deepest > 0]
        depth = np.bincount(np.minimum(with_clicks, DEPTH_BINS) - 1,
                            minlength=DEPTH_BINS) / max(with_clicks.size, 1)
        ranks = np.bincount(np.minimum(self.click_ranks, DEPTH_BINS) - 1,
                            minlength=DEPTH_BINS) / max(self.click_ranks.size, 1)
        moves = self.forward + self.backward
        span = DEPTH_BINS - 1
        steps = np.bincount(np.clip(self.steps, -span, span) + span,
                            minlength=2 * span + 1) / max(self.steps.size, 1)
        out = {"clicks per page": per_page, "deepest clicked rank": depth,
               "click rank": ranks, "first clicked rank": _rank_pmf(self.first),
               "last clicked rank": _rank_pmf(self.last),
               "click-to-click distance": steps,
               "click-less pages": float((self.clicks == 0).mean()) if n_pages else 0.0,
               "backward share": self.backward / moves if moves else 0.0,
               "pages with a click at rank >= 5": self.deep / max(n_pages, 1),
               "mean clicks per page": float(self.clicks.mean()) if n_pages else 0.0,
               "re-clicks per page with other clicks between":
                   self.later_reclicks / max(n_pages, 1)}
        if not np.isnan(self.next_query_after_last):
            out["next query after the last click"] = self.next_query_after_last
        return out


def reclicks(page: np.ndarray, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per click (clicks in order, each page's in a row): whether it is on a result
    already clicked on its page, and whether it comes right after a click on the same
    result (an immediate repeat).  A re-click with other clicks between is the first and
    not the second."""
    page, rank = np.asarray(page, dtype=np.int64), np.asarray(rank, dtype=np.int64)
    key = page * (int(rank.max(initial=0)) + 1) + rank
    again = np.ones(key.size, dtype=bool)
    again[np.unique(key, return_index=True)[1]] = False      # first clicks on a result
    right_after = np.r_[False, (page[1:] == page[:-1]) & (rank[1:] == rank[:-1])]
    return again, right_after


def _rank_pmf(ranks: np.ndarray) -> np.ndarray:
    return np.bincount(np.minimum(ranks, DEPTH_BINS) - 1,
                       minlength=DEPTH_BINS) / max(ranks.size, 1)


DISTRIBUTIONS = ("clicks per page", "deepest clicked rank", "click rank",
                 "first clicked rank", "last clicked rank", "click-to-click distance")
#: the scalar statistics, by field of :class:`WalkChecks` -> their label
SCALARS = {"click_less_pages": "click-less pages", "backward_share": "backward share",
           "deep_click_pages": "pages with a click at rank >= 5",
           "mean_clicks_per_page": "mean clicks per page",
           "later_reclicks": "re-clicks per page with other clicks between",
           "next_query_after_last": "next query after the last click"}


@dataclass(frozen=True)
class WalkChecks:
    """The walk replayed on a log's pages against the log (:func:`predictive_walk_checks`):
    six distributions and five scalar statistics (six with sessions), each observed
    against its posterior predictive replications."""

    clicks_per_page: DistributionCheck        # pmf of 0, 1, ..., 5+ clicks per page
    deepest_clicked_rank: DistributionCheck   # pmf of the deepest click, pages with clicks
    click_rank: DistributionCheck             # pmf of the rank of a click
    first_clicked_rank: DistributionCheck     # pmf of the first click's rank
    last_clicked_rank: DistributionCheck      # pmf of the last click's rank
    click_distance: DistributionCheck         # pmf of j - i over click-to-click moves
    click_less_pages: PredictiveCheck         # share of pages without a click
    backward_share: PredictiveCheck           # of click-to-click moves, those upwards
    deep_click_pages: PredictiveCheck         # share of pages with a click at rank >= 5
    mean_clicks_per_page: PredictiveCheck
    later_reclicks: PredictiveCheck | None = None   # re-clicks with other clicks between
    next_query_after_last: PredictiveCheck | None = None   # logs with sessions

    def distributions(self) -> tuple[DistributionCheck, ...]:
        return (self.clicks_per_page, self.deepest_clicked_rank, self.click_rank,
                self.first_clicked_rank, self.last_clicked_rank, self.click_distance)

    def to_datatree(self):
        """ArviZ's layout: the replications in a ``posterior_predictive`` group (dims
        ``(chain, draw, ...)``, one chain), the log's values in ``observed_data``."""
        import xarray as xr

        dims = {"clicks_per_page": "clicks", "deepest_clicked_rank": "rank",
                "click_rank": "rank", "first_clicked_rank": "rank",
                "last_clicked_rank": "rank", "click_distance": "distance"}
        predictive, observed = {}, {}
        for name, dim in dims.items():
            check = getattr(self, name)
            predictive[name] = xr.DataArray(check.replicated[None], dims=("chain", "draw", dim),
                                            coords={dim: check.support})
            observed[name] = xr.DataArray(check.observed, dims=(dim,),
                                          coords={dim: check.support})
        for name in SCALARS:
            check = getattr(self, name)
            if check is None:
                continue
            predictive[name] = xr.DataArray(check.replicated[None], dims=("chain", "draw"))
            observed[name] = xr.DataArray(check.observed)
        return xr.DataTree.from_dict({"posterior_predictive": xr.Dataset(predictive),
                                      "observed_data": xr.Dataset(observed)})


def observed_summary(log, data) -> LogSummary:
    """The log's own clicks on the pages of ``data`` (its :class:`PageData`), in page
    order."""

    import pandas as pd

    obs, pages, _ = log.observations()
    obs = obs.sort_values(["serp_id", "seq"], kind="stable")
    row = np.searchsorted(data.page_ids, obs["serp_id"].to_numpy(dtype=np.int64))
    row = np.clip(row, 0, data.page_ids.size - 1)
    ok = data.page_ids[row] == obs["serp_id"].to_numpy(dtype=np.int64)
    next_query = None
    if data.sessions:
        outcome = pd.Series(pages["outcome"].to_numpy(),
                            index=pages["serp_id"].to_numpy(dtype=np.int64))
        next_query = (outcome.reindex(data.page_ids) == "next_query").to_numpy()
    return LogSummary.from_clicks(data.page_ids.size, row[ok],
                                  obs["rank"].to_numpy(dtype=np.int64)[ok], next_query)


def predictive_walk_checks(posterior, log, *, qrels=None, max_draws: int | None = 100,
                           seed=None) -> WalkChecks:
    """Replay the fitted walk on every page of ``log`` under ``max_draws`` posterior draws.

    Returns :class:`WalkChecks`: the clicks per page, the deepest clicked rank, the
    click-rank histogram, the first and the last click's rank and the click-to-click
    distances (:class:`~bayeschain.inference.dwell.checks.DistributionCheck`; the first
    also lists the scalar statistics by label, for printing), and the scalar statistics
    (click-less pages, backward share, pages with a click at rank >= 5, mean clicks per
    page, re-clicks per page with other clicks between; with sessions, the share of last
    clicks followed by another query) as
    :class:`~bayeschain.inference.clicks.checks.PredictiveCheck`.
    """
    from ...browsing.page_walk import walk_pages
    from .prediction import pages_for

    data = pages_for(posterior, log, qrels, 1)
    observed = observed_summary(log, data).statistics()
    post = posterior.posterior
    rows = draw_indices(int(post.sizes["chain"] * post.sizes["draw"]), max_draws, seed)
    tables = page_tables(posterior, data, rows, seed=seed)
    cfg = data.page_config
    lengths, move_index, click_index = (data.lengths[cfg], data.move_index[cfg],
                                        tables.click_index[cfg])
    boundary = posterior.metadata.boundary
    rng = np.random.default_rng(seed)
    replicated = []
    for d in range(rows.size):
        walked = walk_pages(lengths, move_index, click_index, tables.moves[d],
                            tables.click[d], repeat=tables.repeat[d],
                            reclick=float(tables.reclick[d]),
                            second_look=1.0 if tables.second_look is None else
                            float(tables.second_look[d]),
                            moves_click=tables.moves_click[d], boundary=boundary,
                            seed=int(rng.integers(2**32)))
        if np.any(walked.outcome < 0):
            raise ParameterError("replayed users did not leave the page: the walk's leave "
                                 "probabilities are (nearly) zero")
        replicated.append(LogSummary.from_clicks(
            cfg.size, walked.click_page, walked.click_rank,
            walked.outcome == 0 if data.sessions else None).statistics())
    scalars = [k for k, v in observed.items() if np.ndim(v) == 0]
    summaries = {k: PredictiveCheck(float(observed[k]), np.array([r[k] for r in replicated]))
                 for k in scalars}
    ranks = np.arange(1, DEPTH_BINS + 1)
    support = {"clicks per page": np.arange(CLICK_BINS), "deepest clicked rank": ranks,
               "click rank": ranks, "first clicked rank": ranks, "last clicked rank": ranks,
               "click-to-click distance": np.arange(1 - DEPTH_BINS, DEPTH_BINS)}
    laws = [DistributionCheck(name, support[name], np.asarray(observed[name]),
                              np.stack([r[name] for r in replicated]), "pmf",
                              summaries if name == DISTRIBUTIONS[0] else {})
            for name in DISTRIBUTIONS]
    return WalkChecks(*laws, **{field: summaries[label] for field, label in SCALARS.items()
                                if label in summaries})
