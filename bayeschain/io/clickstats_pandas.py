"""The pandas back end of :func:`bayeschain.io.click_statistics`: a log's observations
(clicks with what followed them, pages with their outcome) and their counts."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .clickstats_tables import TABLES, ClickStats, canonical


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
    is_query = (ev["event"] == "query").to_numpy(dtype=bool)
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
    end = clicks["end_time"].to_numpy(dtype=float, na_value=np.nan)
    start = clicks["time"].to_numpy(dtype=float, na_value=np.nan)
    after = clicks["next_time"].to_numpy(dtype=float, na_value=np.nan)
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
    stats = statistics_from_observations(clicks, pages, off_page, by_query=by_query)
    return dataclasses.replace(stats, sessions=int(events["session_id"].nunique()))


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
    return canonical(ClickStats(transitions, last_clicks, first_clicks, dwell, page_counts,
                              off_page))
