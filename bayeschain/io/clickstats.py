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

import dataclasses

import pandas as pd

from ..errors import ParameterError
from .clickstats_pandas import statistics_from_observations, statistics_pandas
from .clickstats_sql import DUCKDB_MEMORY
from .clickstats_tables import ClickStats, canonical


def click_statistics(source, *, backend: str = "duckdb", by_query: bool = False,
                     has_sessions: bool | None = None, client=None,
                     npartitions: int | None = None,
                     memory_limit: str | None = None) -> ClickStats:
    """Sufficient statistics of a click log.

    Parameters
    ----------
    source : ClickLog, DataFrame of canonical events, or path / glob of canonical
        CSV / TSV / Parquet files (DuckDB and Dask read files out of core).
    backend : "duckdb" (default), "pandas" or "dask"
    by_query : add a ``query_id`` column to every table.
    has_sessions : whether session ids group a user's pages (default: from the ClickLog,
        True for files and frames).
    client : a ``dask.distributed.Client`` for the Dask backend (default: the current one;
        :func:`~bayeschain.io.clickstats_dask.dask_client` makes one).
    memory_limit : DuckDB's memory limit (:data:`~bayeschain.io.clickstats_sql.DUCKDB_MEMORY`
        by default); beyond it DuckDB spills
        to a temporary folder, removed afterwards.
    """
    from .clicklog import ClickLog

    if isinstance(source, ClickLog):
        sessions = source.has_sessions if has_sessions is None else has_sessions
        if backend == "pandas" and sessions == source.has_sessions:   # its tables, once
            stats = statistics_from_observations(*source.observations(), by_query=by_query)
            return dataclasses.replace(stats,
                                       sessions=int(source.events["session_id"].nunique()))
        source = source.events
    else:
        sessions = True if has_sessions is None else has_sessions
    if backend == "pandas":
        events = source if isinstance(source, pd.DataFrame) else _read_files(source)
        return statistics_pandas(events, has_sessions=sessions, by_query=by_query)
    if backend == "duckdb":
        from .clickstats_sql import statistics_duckdb

        return canonical(statistics_duckdb(source, has_sessions=sessions, by_query=by_query,
                                           memory_limit=memory_limit or DUCKDB_MEMORY))
    if backend == "dask":
        from .clickstats_dask import statistics_dask

        return canonical(statistics_dask(source, has_sessions=sessions, by_query=by_query,
                                       client=client, npartitions=npartitions))
    raise ParameterError(f"unknown backend {backend!r}; valid: duckdb, pandas, dask")


def _read_files(pattern) -> pd.DataFrame:
    import glob

    from .clicklog import read_canonical

    paths = sorted(glob.glob(str(pattern))) or [str(pattern)]
    frames = [read_canonical(p).events for p in paths]
    return pd.concat(frames, ignore_index=True)
