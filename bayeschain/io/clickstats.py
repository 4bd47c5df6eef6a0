"""Observations and sufficient statistics of a click log (pandas, DuckDB, Dask).

Definitions (the same in the three backends; the tests hold them equal):

* events are ordered by ``seq`` within each session; a page is a query event with a
  ``serp_id`` (a query without one, such as TREC's final ``currentquery``, only tells that
  the user reformulated); a page's clicks are the click events with its ``serp_id``;
  clicks on documents not on the page (null rank) are counted (``off_page_clicks``) and
  left out of the click sequences;
* **transitions**: consecutive clicks ``i -> j`` on one page (forward ``j > i``, backward
  ``j < i``, repeat ``j = i``);
* **what followed the last click** of a page (and what followed a page without clicks):
  ``next_query`` when the session has a later query event, ``end`` otherwise, ``unknown``
  for logs without sessions;
* **first clicks**: the rank of each page's first click;
* **dwell** of a click: ``end_time - time`` when the log records the click's end,
  otherwise the time to the next event of the session.  A click with no later event (the
  session's last action) is *right-censored*: its dwell is unknown beyond "at least
  something", so it only adds to ``censored``.  Dwell times <= 0 (clock ties) are counted
  in ``nonpositive`` and left out of ``n``, ``sum`` and ``sum_log``.

Tables (``by_query=True`` adds a ``query_id`` column to each):

* ``transitions``: ``from_rank, to_rank, count``
* ``last_clicks``: ``rank, outcome, count``
* ``first_clicks``: ``rank, count``
* ``dwell``: ``rank, n, sum, sum_log, sum_log2, censored, nonpositive`` (``sum_log2`` is
  the sum of squared log dwell times, for log-normal models)
* ``pages``: ``outcome, clicked, count``
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ParameterError

TABLES = {
    "transitions": (["from_rank", "to_rank"], ["count"]),
    "last_clicks": (["rank", "outcome"], ["count"]),
    "first_clicks": (["rank"], ["count"]),
    "dwell": (["rank"], ["n", "sum", "sum_log", "sum_log2", "censored", "nonpositive"]),
    "pages": (["outcome", "clicked"], ["count"]),
}


@dataclass(frozen=True)
class ClickStats:
    """Sufficient statistics of a click log (see the module docstring)."""

    transitions: pd.DataFrame
    last_clicks: pd.DataFrame
    first_clicks: pd.DataFrame
    dwell: pd.DataFrame
    pages: pd.DataFrame
    off_page_clicks: int = 0

    def table(self, name: str) -> pd.DataFrame:
        return getattr(self, name)

    def backward_share(self) -> float:
        """Share of click-to-click transitions that go to a higher rank (backward)."""
        t = self.transitions
        total = t["count"].sum()
        return float(t.loc[t["to_rank"] < t["from_rank"], "count"].sum() / total) if total \
            else float("nan")

    def clicks_per_rank(self) -> pd.Series:
        """Clicks on each rank (first clicks plus the arrivals of transitions)."""
        first = self.first_clicks.groupby("rank")["count"].sum()
        moved = self.transitions.groupby("to_rank")["count"].sum()
        return first.add(moved, fill_value=0).astype(int).sort_index()

    def transition_matrix(self, n_ranks: int | None = None) -> np.ndarray:
        """Counts ``C[i-1, j-1]`` of transitions from rank ``i`` to ``j``."""
        t = self.transitions.groupby(["from_rank", "to_rank"])["count"].sum().reset_index()
        n = n_ranks or int(max(t["from_rank"].max(), t["to_rank"].max())) if len(t) else \
            (n_ranks or 0)
        m = np.zeros((n, n))
        keep = (t["from_rank"] <= n) & (t["to_rank"] <= n)
        np.add.at(m, (t.loc[keep, "from_rank"].to_numpy() - 1,
                      t.loc[keep, "to_rank"].to_numpy() - 1), t.loc[keep, "count"].to_numpy())
        return m


def _end_label(has_sessions: bool) -> str:
    return "end" if has_sessions else "unknown"


def observations(events: pd.DataFrame, *, has_sessions: bool = True):
    """Per-click and per-page observations (pandas).

    Returns ``clicks`` (on-page clicks with ``k`` (order on the page), ``next_rank``,
    ``outcome`` of the page, ``dwell``, ``censored``) and ``pages`` (``serp_id``,
    ``query_id``, ``outcome``, ``clicked``), plus the number of off-page clicks.
    """
    ev = events.sort_values(["session_id", "seq"], kind="stable").reset_index(drop=True)
    session = ev["session_id"].to_numpy()
    same_next = np.r_[session[1:] == session[:-1], False]
    next_time = np.where(same_next, np.r_[ev["time"].to_numpy()[1:], np.nan], np.nan)
    is_query = (ev["event"] == "query").to_numpy()
    # queries strictly after each event in its session
    q_from_end = pd.Series(is_query[::-1]).groupby(session[::-1]).cumsum().to_numpy()[::-1]
    later_queries = q_from_end - is_query
    end_label = _end_label(has_sessions)
    outcome = np.where(later_queries > 0, "next_query", end_label)

    is_page = is_query & ev["serp_id"].notna().to_numpy()   # queries shown with a page
    pages = pd.DataFrame({"serp_id": ev["serp_id"][is_page].to_numpy(),
                          "query_id": ev["query_id"][is_page].to_numpy(),
                          "outcome": outcome[is_page]})
    is_click = ~is_query
    on_page = is_click & ev["rank"].notna().to_numpy()
    off_page = int((is_click & ~on_page).sum())
    clicks = ev[on_page].copy()
    clicks["next_time"] = next_time[on_page]
    clicks = clicks.sort_values(["serp_id", "seq"], kind="stable")
    grp = clicks.groupby("serp_id", sort=False)
    clicks["k"] = grp.cumcount() + 1
    clicks["next_rank"] = grp["rank"].shift(-1)
    page_outcome = pages.set_index("serp_id")["outcome"]
    clicks["outcome"] = page_outcome.reindex(clicks["serp_id"]).to_numpy()
    end = clicks["end_time"].to_numpy(dtype=float)
    start = clicks["time"].to_numpy(dtype=float)
    after = clicks["next_time"].to_numpy(dtype=float)
    dwell = np.where(np.isfinite(end), end - start, after - start)
    clicks["dwell"] = dwell
    has_clock = np.isfinite(start)
    clicks["censored"] = has_clock & ~np.isfinite(dwell)
    pages["clicked"] = pages["serp_id"].isin(clicks["serp_id"])
    return clicks.reset_index(drop=True), pages, off_page


def statistics_pandas(events: pd.DataFrame, *, has_sessions: bool = True,
                      by_query: bool = False) -> ClickStats:
    """Sufficient statistics with pandas (small, in-memory logs; the reference backend)."""
    clicks, pages, off_page = observations(events, has_sessions=has_sessions)
    return statistics_from_observations(clicks, pages, off_page, by_query=by_query)


def statistics_from_observations(clicks: pd.DataFrame, pages: pd.DataFrame, off_page: int,
                                 *, by_query: bool = False) -> ClickStats:
    """The tables from :func:`observations` output (a subset of the clicks keeps the
    statistics of those clicks: what followed them, their dwell)."""
    q = ["query_id"] if by_query else []
    moved = clicks[clicks["next_rank"].notna()]
    transitions = (moved.assign(from_rank=moved["rank"], to_rank=moved["next_rank"])
                   .groupby(q + ["from_rank", "to_rank"]).size().rename("count").reset_index())
    last = clicks[clicks["next_rank"].isna()]
    last_clicks = last.groupby(q + ["rank", "outcome"]).size().rename("count").reset_index()
    first = clicks[clicks["k"] == 1]
    first_clicks = first.groupby(q + ["rank"]).size().rename("count").reset_index()
    d = clicks["dwell"].to_numpy()
    valid = np.isfinite(d) & (d > 0)
    dw = clicks.assign(n=valid.astype(np.int64), sum=np.where(valid, d, 0.0),
                       sum_log=np.where(valid, np.log(np.where(valid, d, 1.0)), 0.0),
                       sum_log2=np.where(valid, np.log(np.where(valid, d, 1.0)) ** 2, 0.0),
                       censored=clicks["censored"].astype(np.int64),
                       nonpositive=(np.isfinite(d) & (d <= 0)).astype(np.int64))
    dwell = dw.groupby(q + ["rank"])[TABLES["dwell"][1]].sum().reset_index()
    page_counts = pages.groupby(q + ["outcome", "clicked"]).size().rename("count").reset_index()
    return _finish(ClickStats(transitions, last_clicks, first_clicks, dwell, page_counts,
                              off_page))


def _finish(stats: ClickStats) -> ClickStats:
    """Canonical types and row order, so that backends compare equal."""
    tables = {}
    for name, (keys, values) in TABLES.items():
        t = stats.table(name).copy()
        cols = (["query_id"] if "query_id" in t else []) + keys
        for c in cols:
            if c in ("from_rank", "to_rank", "rank"):
                t[c] = t[c].astype("int64")
            elif c == "clicked":
                t[c] = t[c].astype(bool)
            else:
                t[c] = t[c].astype(str)
        for c in values:
            t[c] = t[c].astype("float64" if c.startswith("sum") else "int64")
        tables[name] = t[cols + values].sort_values(cols).reset_index(drop=True)
    return ClickStats(**tables, off_page_clicks=int(stats.off_page_clicks))


def click_statistics(source, *, backend: str = "duckdb", by_query: bool = False,
                     has_sessions: bool | None = None, client=None,
                     npartitions: int | None = None) -> ClickStats:
    """Sufficient statistics of a click log.

    Parameters
    ----------
    source : ClickLog, DataFrame of canonical events, or path / glob of canonical
        CSV / TSV / Parquet files (DuckDB and Dask read files out of core).
    backend : "duckdb" (default), "pandas" or "dask"
    by_query : add a ``query_id`` column to every table.
    has_sessions : whether session ids group a user's pages (default: from the ClickLog,
        True for files and frames).
    client : a ``dask.distributed.Client`` for the Dask backend (default: the current one).
    """
    from .clicklog import ClickLog

    if isinstance(source, ClickLog):
        sessions = source.has_sessions if has_sessions is None else has_sessions
        source = source.events
    else:
        sessions = True if has_sessions is None else has_sessions
    if backend == "pandas":
        events = source if isinstance(source, pd.DataFrame) else _read_files(source)
        return statistics_pandas(events, has_sessions=sessions, by_query=by_query)
    if backend == "duckdb":
        from .clickstats_sql import statistics_duckdb

        return _finish(statistics_duckdb(source, has_sessions=sessions, by_query=by_query))
    if backend == "dask":
        from .clickstats_dask import statistics_dask

        return _finish(statistics_dask(source, has_sessions=sessions, by_query=by_query,
                                       client=client, npartitions=npartitions))
    raise ParameterError(f"unknown backend {backend!r}; valid: duckdb, pandas, dask")


def _read_files(pattern) -> pd.DataFrame:
    import glob

    from .clicklog import read_canonical

    paths = sorted(glob.glob(str(pattern))) or [str(pattern)]
    frames = [read_canonical(p).events for p in paths]
    return pd.concat(frames, ignore_index=True)
