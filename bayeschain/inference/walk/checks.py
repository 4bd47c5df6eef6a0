r"""Posterior predictive checks that replay the fitted walk itself, from rank 1.

For a subsample of posterior draws, every page of the log is walked again by a simulated
user of that draw (:func:`bayeschain.browsing.page_walk.walk_pages`: start at rank 1, click
with the page's click probabilities, click a result again at once with the repeat
probability, move with the walk's moves, the same boundary rule)
and the replicated log is summarised as the observed one:

* clicks per page (0, 1, ..., with a last bucket for "this many or more");
* the deepest clicked rank of pages with clicks, and the share of clicks at each rank
  (ranks deeper than :data:`DEPTH_BINS` pooled in the last bin);
* the share of click-less pages, of backward moves among click-to-click moves (repeats
  left out), and of pages with a click at rank >= 5, and the mean clicks per page.

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

    @classmethod
    def from_clicks(cls, n_pages: int, page: np.ndarray, rank: np.ndarray) -> LogSummary:
        """From clicks in order (``page`` non-decreasing, ``rank`` 1-based)."""
        page = np.asarray(page, dtype=np.int64)
        rank = np.asarray(rank, dtype=np.int64)
        clicks = np.bincount(page, minlength=n_pages)
        deepest = np.zeros(n_pages, dtype=np.int64)
        np.maximum.at(deepest, page, rank)
        same = page[1:] == page[:-1]
        step = np.diff(rank)[same]
        return cls(clicks, deepest, rank, int((step > 0).sum()), int((step < 0).sum()),
                   int((deepest >= 5).sum()))

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
        return {"clicks per page": per_page, "deepest clicked rank": depth,
                "click rank": ranks,
                "click-less pages": float((self.clicks == 0).mean()) if n_pages else 0.0,
                "backward share": self.backward / moves if moves else 0.0,
                "pages with a click at rank >= 5": self.deep / max(n_pages, 1),
                "mean clicks per page": float(self.clicks.mean()) if n_pages else 0.0}


DISTRIBUTIONS = ("clicks per page", "deepest clicked rank", "click rank")
#: the scalar statistics, by field of :class:`WalkChecks` -> their label
SCALARS = {"click_less_pages": "click-less pages", "backward_share": "backward share",
           "deep_click_pages": "pages with a click at rank >= 5",
           "mean_clicks_per_page": "mean clicks per page"}


@dataclass(frozen=True)
class WalkChecks:
    """The walk replayed on a log's pages against the log (:func:`predictive_walk_checks`):
    three distributions and four scalar statistics, each observed against its posterior
    predictive replications."""

    clicks_per_page: DistributionCheck        # pmf of 0, 1, ..., 5+ clicks per page
    deepest_clicked_rank: DistributionCheck   # pmf of the deepest click, pages with clicks
    click_rank: DistributionCheck             # pmf of the rank of a click
    click_less_pages: PredictiveCheck         # share of pages without a click
    backward_share: PredictiveCheck           # of click-to-click moves, those upwards
    deep_click_pages: PredictiveCheck         # share of pages with a click at rank >= 5
    mean_clicks_per_page: PredictiveCheck

    def distributions(self) -> tuple[DistributionCheck, DistributionCheck, DistributionCheck]:
        return self.clicks_per_page, self.deepest_clicked_rank, self.click_rank

    def to_datatree(self):
        """ArviZ's layout: the replications in a ``posterior_predictive`` group (dims
        ``(chain, draw, ...)``, one chain), the log's values in ``observed_data``."""
        import xarray as xr

        dims = {"clicks_per_page": "clicks", "deepest_clicked_rank": "rank",
                "click_rank": "rank"}
        predictive, observed = {}, {}
        for name, dim in dims.items():
            check = getattr(self, name)
            predictive[name] = xr.DataArray(check.replicated[None], dims=("chain", "draw", dim),
                                            coords={dim: check.support})
            observed[name] = xr.DataArray(check.observed, dims=(dim,),
                                          coords={dim: check.support})
        for name in SCALARS:
            check = getattr(self, name)
            predictive[name] = xr.DataArray(check.replicated[None], dims=("chain", "draw"))
            observed[name] = xr.DataArray(check.observed)
        return xr.DataTree.from_dict({"posterior_predictive": xr.Dataset(predictive),
                                      "observed_data": xr.Dataset(observed)})


def observed_summary(log, data) -> LogSummary:
    """The log's own clicks on the pages of ``data`` (its :class:`PageData`), in page
    order."""

    obs, _, _ = log.observations()
    obs = obs.sort_values(["serp_id", "seq"], kind="stable")
    row = np.searchsorted(data.page_ids, obs["serp_id"].to_numpy(dtype=np.int64))
    row = np.clip(row, 0, data.page_ids.size - 1)
    ok = data.page_ids[row] == obs["serp_id"].to_numpy(dtype=np.int64)
    return LogSummary.from_clicks(data.page_ids.size, row[ok],
                                  obs["rank"].to_numpy(dtype=np.int64)[ok])


def predictive_walk_checks(posterior, log, *, qrels=None, max_draws: int | None = 100,
                           seed=None) -> WalkChecks:
    """Replay the fitted walk on every page of ``log`` under ``max_draws`` posterior draws.

    Returns :class:`WalkChecks`: the clicks per page, the deepest clicked rank and the
    click-rank histogram (:class:`~bayeschain.inference.dwell.checks.DistributionCheck`;
    the first also lists the scalar statistics by label, for printing), and the scalar
    statistics (click-less pages, backward share, pages with a click at rank >= 5, mean
    clicks per page) as :class:`~bayeschain.inference.clicks.checks.PredictiveCheck`.
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
                                        data.click_index[cfg])
    boundary = posterior.metadata.boundary
    rng = np.random.default_rng(seed)
    replicated = []
    for d in range(rows.size):
        walked = walk_pages(lengths, move_index, click_index, tables.moves[d],
                            tables.click[d], repeat=tables.repeat[d],
                            moves_click=tables.moves_click[d], boundary=boundary,
                            seed=int(rng.integers(2**32)))
        if np.any(walked.outcome < 0):
            raise ParameterError("replayed users did not leave the page: the walk's leave "
                                 "probabilities are (nearly) zero")
        replicated.append(LogSummary.from_clicks(cfg.size, walked.click_page,
                                                 walked.click_rank).statistics())
    scalars = [k for k, v in observed.items() if np.ndim(v) == 0]
    summaries = {k: PredictiveCheck(float(observed[k]), np.array([r[k] for r in replicated]))
                 for k in scalars}
    support = {"clicks per page": np.arange(CLICK_BINS),
               "deepest clicked rank": np.arange(1, DEPTH_BINS + 1),
               "click rank": np.arange(1, DEPTH_BINS + 1)}
    laws = [DistributionCheck(name, support[name], np.asarray(observed[name]),
                              np.stack([r[name] for r in replicated]), "pmf",
                              summaries if name == DISTRIBUTIONS[0] else {})
            for name in DISTRIBUTIONS]
    return WalkChecks(*laws, **{field: summaries[label] for field, label in SCALARS.items()})
