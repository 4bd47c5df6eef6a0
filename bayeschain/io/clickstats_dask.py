"""Click-log statistics on a Dask cluster (logs partitioned across workers).

Events are shuffled so that every session lies in one partition, each partition's
statistics are computed by the pandas backend, and the partial tables are summed: the
statistics are sums over pages and clicks, and pages never span sessions, so the result
equals the single-machine one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pandas as pd

from .clickstats_pandas import statistics_pandas
from .clickstats_tables import TABLES, ClickStats
from .event_window import FRAME_ROW


def _partition_tables(part: pd.DataFrame, has_sessions: bool, by_query: bool) -> pd.DataFrame:
    """One partition's statistics as a long frame: table, key columns, value columns."""
    if FRAME_ROW in part:                # a frame's order: ties in seq keep it
        part = part.sort_values(FRAME_ROW).drop(columns=FRAME_ROW)
    stats = statistics_pandas(part, has_sessions=has_sessions, by_query=by_query)
    frames = [stats.table(name).assign(table=name) for name in TABLES]
    frames.append(pd.DataFrame({"table": ["off_page", "sessions"],
                                "count": [stats.off_page_clicks, stats.sessions]}))
    return pd.concat(frames, ignore_index=True)


def statistics_dask(source, *, has_sessions: bool = True, by_query: bool = False,
                    client=None, npartitions: int | None = None) -> ClickStats:
    """Sufficient statistics with Dask (see :mod:`bayeschain.io.clickstats`)."""
    import dask.dataframe as dd

    if isinstance(source, pd.DataFrame):
        ddf = dd.from_pandas(source.assign(**{FRAME_ROW: np.arange(len(source))}),
                             npartitions=npartitions or 4)
    else:
        from .clickstats_sql import check_files

        # the rows checked as DuckDB checks them (a bad row named by file and row) before
        # the cluster reads them: Dask's readers would take a rank 0 silently
        check_files(source, ties=True)    # the shuffle does not keep the files' order
        text = str(source)
        suffix = text.lower()
        ddf = dd.read_parquet(text) if suffix.endswith(".parquet") else dd.read_csv(
            text, sep="\t" if suffix.endswith(".tsv") else ",",
            dtype={"session_id": str, "query_id": str, "doc_id": str, "event": str,
                   "serp_id": "Int64", "rank": "Int64", "time": float, "end_time": float,
                   "seq": "int64"})
    import dask

    ddf = ddf.shuffle(on="session_id")
    tasks = [dask.delayed(_partition_tables)(part, has_sessions, by_query)
             for part in ddf.to_delayed()]
    done = client.gather(client.compute(tasks)) if client is not None else dask.compute(*tasks)
    combined = pd.concat(done, ignore_index=True)
    tables = {}
    for name, (keys, values) in TABLES.items():
        cols = (["query_id"] if by_query else []) + keys
        rows = combined[combined["table"] == name]
        tables[name] = rows.groupby(cols, dropna=False)[values].sum().reset_index() \
            if len(rows) else pd.DataFrame(columns=cols + values)
    off_page = int(combined.loc[combined["table"] == "off_page", "count"].sum())
    # every session lies in one partition: their counts add up
    sessions = int(combined.loc[combined["table"] == "sessions", "count"].sum())
    return ClickStats(**tables, off_page_clicks=off_page, sessions=sessions)


@contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None) -> Iterator:
    """A ``dask.distributed`` client: of the running cluster whose scheduler is at
    ``scheduler`` (``tcp://host:8786``), or of a local cluster of ``workers`` processes
    (one thread each) started here and shut down on exit.  Distributed's own log lines
    below ERROR (its shuffle announces every shuffle as a WARNING) are silenced meanwhile."""
    import logging

    from distributed import Client, LocalCluster

    from ..errors import ParameterError

    if (scheduler is None) == (workers is None):
        raise ParameterError("give a scheduler's address or a number of local workers")
    if workers is not None and workers < 1:
        raise ParameterError(f"a local Dask cluster needs at least one worker, got {workers}")
    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        if scheduler is not None:
            try:
                client = Client(scheduler, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise ParameterError(f"cannot reach the Dask scheduler at {scheduler}: "
                                     f"{exc}".splitlines()[0]) from None
            with client:
                yield client
        else:       # the workers' scratch space: a folder of ours, removed afterwards
            import shutil
            import tempfile

            import dask

            scratch = tempfile.mkdtemp(prefix="bayeschain-dask-")
            try:
                with dask.config.set({"temporary-directory": scratch}), \
                        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                     dashboard_address=None, local_directory=scratch) as cluster, \
                        Client(cluster) as client:
                    yield client
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    finally:
        logger.setLevel(level)
