"""Click-log statistics in DuckDB: out of core, on CSV / Parquet files, globs or frames.

The SQL mirrors :func:`bayeschain.io.clickstats.statistics_pandas` step by step; see that
module for the definitions.  DuckDB sorts the events by session and ``seq`` and hands them
over in chunks of whole sessions, on which one window pass
(:mod:`bayeschain.io.event_window`) finds, for every event, the next and previous on-page
click and whether a later query exists; every statistic is an aggregate over those chunks,
read by DuckDB in place and summed.  DuckDB streams files and spills its sort to disk, so
logs larger than memory work; ``memory_limit`` (default 1.5 GB) caps its memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import FormatError
from .clickstats_tables import TABLES, ClickStats
from .event_window import FRAME_ROW

#: DuckDB's memory limit unless the caller sets one (beyond it DuckDB spills to disk)
DUCKDB_MEMORY = "1.5GB"

# Every statistic is an aggregate over the window pass (``obs``: a chunk of whole sessions
# of :mod:`bayeschain.io.event_window`; see clickstats for the definitions): the next
# on-page click of the session belongs to the same page iff its serp_id is this click's; a
# page was clicked iff the next on-page click is on it.  The tables add up over chunks.
_TABLE_SQL = {
    "transitions": """SELECT {q} rank AS from_rank, next_click_rank AS to_rank, COUNT(*) AS count
                      FROM obs WHERE on_page AND next_click_serp = serp_id GROUP BY ALL""",
    "last_clicks": """SELECT {q} rank, outcome, COUNT(*) AS count FROM obs
                      WHERE on_page AND (next_click_serp IS NULL OR next_click_serp <> serp_id)
                      GROUP BY ALL""",
    "first_clicks": """SELECT {q} rank, COUNT(*) AS count FROM obs
                       WHERE on_page AND (prev_click_serp IS NULL OR prev_click_serp <> serp_id)
                       GROUP BY ALL""",
    "dwell": """SELECT {q} rank,
                  SUM(CASE WHEN dwell > 0 AND NOT isnan(dwell) THEN 1 ELSE 0 END) AS n,
                  SUM(CASE WHEN dwell > 0 AND NOT isnan(dwell) THEN dwell ELSE 0 END) AS sum,
                  SUM(CASE WHEN dwell > 0 AND NOT isnan(dwell) THEN ln(dwell) ELSE 0 END)
                      AS sum_log,
                  SUM(CASE WHEN dwell > 0 AND NOT isnan(dwell) THEN ln(dwell) ^ 2 ELSE 0 END)
                      AS sum_log2,
                  SUM(CASE WHEN has_clock AND (dwell IS NULL OR isnan(dwell)) THEN 1 ELSE 0
                      END) AS censored,
                  SUM(CASE WHEN dwell <= 0 THEN 1 ELSE 0 END) AS nonpositive
                FROM obs WHERE on_page GROUP BY ALL""",
    "pages": """SELECT {q} outcome, COALESCE(next_click_serp = serp_id, false) AS clicked,
                  COUNT(*) AS count
                FROM obs WHERE event = 'query' AND serp_id IS NOT NULL GROUP BY ALL""",
}


#: the checks made on files read out of core, row by row: the first row failing one is
#: named (the in-memory reader's rules, :func:`~bayeschain.io.clicklog.validate_events`)
_CHECK_SQL = """
SELECT filename, {row}, CASE
    WHEN session_id IS NULL OR CAST(session_id AS VARCHAR) = '' THEN 'an empty session_id'
    WHEN event IS NULL OR event NOT IN ('query', 'click')
        THEN 'event ' || COALESCE(event, '(empty)') || ' (expected query or click)'
    WHEN rank IS NOT NULL AND (rank < 1 OR rank > {max_rank})
        THEN 'rank ' || rank || ' (expected 1 to {max_rank:,})'
    WHEN serp_id IS NOT NULL AND serp_id < 0 THEN 'serp_id ' || serp_id || ' (expected >= 0)'
    WHEN seq IS NULL THEN 'an empty seq'
    WHEN isinf(time) THEN 'time ' || time || ' (expected a finite time)'
    WHEN isinf(end_time) THEN 'end_time ' || end_time || ' (expected a finite time)'
    WHEN NOT isnan(time) AND end_time < time THEN 'end_time before time'
  END AS reason
FROM {source} WHERE reason IS NOT NULL LIMIT 1
"""

#: ... and page by page: a result page announced by two query events (its clicks would
#: count twice), a click before the query event of its page in ``seq`` order (the window
#: pass orders events by ``seq``; the in-memory reader orders a click and its query by time
#: first and drops the clicks before their query, counting them), or a page whose events
#: lie in two sessions (the pass reads the events session by session)
_PAGE_CHECK_SQL = """
SELECT serp_id, COUNT(*) FILTER (WHERE event = 'query') AS queries,
       MIN(seq) FILTER (WHERE event = 'query') AS query_seq,
       MIN(seq) FILTER (WHERE event = 'click') AS click_seq,
       MIN(session_id) <> MAX(session_id) AS two_sessions
FROM {source} WHERE serp_id IS NOT NULL
GROUP BY serp_id HAVING queries > 1 OR click_seq < query_seq OR two_sessions LIMIT 1
"""


def _check_files(con, source, pages: bool = True) -> None:
    """The first row of canonical files breaking a rule the statistics rely on, as a
    FormatError naming the file and the row (Parquet: the 1-based row; CSV: its ``seq``);
    ``pages``: the rules page by page too (else the caller checks them, :func:`page_error`)."""
    from .clicklog import MAX_RANK

    bad = con.execute(_CHECK_SQL.format(row=_row(source), max_rank=MAX_RANK,
                                        source=_rows_source(con, source))).fetchone()
    if bad is not None:
        _fail(source, bad, bad[2])
    page = con.execute(_PAGE_CHECK_SQL.format(source=source_sql(con, source))).fetchone() \
        if pages else None
    if page is not None:
        serp, queries, query_seq, click_seq, two_sessions = page
        early = click_seq is not None and query_seq is not None and click_seq < query_seq
        if queries > 1 or early or not two_sessions:
            page_error(con, source, serp, queries, query_seq, click_seq)
        two_sessions_error(con, source, serp)


def _parquet(source) -> bool:
    return str(source).lower().endswith(".parquet")


def _row(source) -> str:
    """The SQL naming a row of the files: Parquet's 1-based row, CSV's ``seq``."""
    return "file_row_number + 1" if _parquet(source) else "seq"


def _rows_source(con, source) -> str:
    """A FROM clause on the files that names each row's file and row (:func:`_row`)."""
    return source_sql(con, source, extra="filename=true" + (", file_row_number=true"
                                                            if _parquet(source) else ""))


def _fail(source, where, reason, rows: str = "row"):
    """The FormatError naming ``where`` (file, row: Parquet's row number, CSV's seq);
    ``rows="rows"`` for the rows a CSV seq names when it names two."""
    row = f"row {where[1]}" if _parquet(source) else \
        f"the {rows} with seq {where[1]}" if where[1] is not None else "a row"
    raise FormatError(f"{row}: {reason}", file=where[0])


def page_error(con, source, serp: int, queries: int, query_seq, click_seq) -> None:
    """The FormatError of result page ``serp`` announced by ``queries`` > 1 query events or
    clicked (first at ``click_seq``) before its query event (at ``query_seq``), naming the
    file and the row of the second query event or of the first click."""
    event, order = ("query", "seq OFFSET 1") if queries > 1 else ("click", "seq")
    where = con.execute(f"SELECT filename, {_row(source)} "
                        f"FROM {_rows_source(con, source)} WHERE serp_id = ? AND "
                        f"event = '{event}' ORDER BY {order} LIMIT 1", [serp]).fetchone()
    _fail(source, where, f"result page {serp} is announced by a second query event; each "
                         f"serp_id belongs to one query event" if queries > 1 else
                         f"a click on result page {serp} before its query event in seq order "
                         f"(seq {click_seq} < {query_seq}): out of core a page's clicks must "
                         f"follow its query")


def tie_error(con, source, session, seq: int) -> None:
    """The FormatError of two events of ``session`` with the same ``seq`` in files, naming
    the file and the row of the second: out of core a session's events are ordered by
    ``seq`` alone, so tied events would be read in an arbitrary order, and the pages and
    statistics could change from run to run."""
    where = con.execute(f"SELECT filename, {_row(source)} FROM {_rows_source(con, source)} "
                        f"WHERE session_id = ? AND seq = ? ORDER BY filename, {_row(source)} "
                        f"LIMIT 1 OFFSET 1", [session, seq]).fetchone()
    reason = (f"session {session} has two events with seq {seq}: out of core the events of "
              f"a session are ordered by seq, and tied events would be read in an arbitrary "
              f"order; give each event its own seq (in memory tied events keep the file's "
              f"order)")
    _fail(source, where or (str(source), None), reason, rows="rows")   # a CSV seq: both


#: the first (session, seq) of two events or more (for the Dask backend, whose shuffle
#: does not keep the files' order; DuckDB's own pass finds ties as it reads)
_TIE_SQL = """
SELECT session_id, seq FROM {source} GROUP BY session_id, seq HAVING COUNT(*) > 1 LIMIT 1
"""


def two_sessions_error(con, source, serp: int) -> None:
    """The FormatError of result page ``serp`` whose events lie in two sessions, naming the
    file and the row of its first event (in seq order) outside the first one's session."""
    rows = con.execute(f"SELECT filename, {_row(source)}, "
                       f"session_id FROM {_rows_source(con, source)} WHERE serp_id = ? "
                       f"ORDER BY seq", [serp]).fetchall()
    where = next((r for r in rows if r[2] != rows[0][2]), (str(source), None, "?"))
    _fail(source, where, f"result page {serp} has events in two sessions ({rows[0][2]} "
                         f"and {where[2]}): out of core a page's query and clicks must "
                         f"share one session")


def source_sql(con, source, extra: str = "") -> str:
    """A FROM clause for a frame (registered, with its row number :data:`FRAME_ROW`), a
    Parquet/CSV/TSV file or glob (``extra``: more options of DuckDB's reader)."""
    if isinstance(source, pd.DataFrame):
        con.register("events_frame", source.assign(
            **{FRAME_ROW: np.arange(len(source), dtype=np.int64)}))
        return "events_frame"
    text = str(source)
    suffix = Path(text.replace("*", "x")).suffix.lower()
    quoted = text.replace("'", "''")
    more = f", {extra}" if extra else ""
    if suffix == ".parquet":
        return f"read_parquet('{quoted}'{more})"
    if suffix in (".csv", ".tsv"):
        sep = "\\t" if suffix == ".tsv" else ","
        return (f"read_csv('{quoted}', delim='{sep}', header=true, "
                "types={'session_id': 'VARCHAR', 'query_id': 'VARCHAR', 'doc_id': 'VARCHAR', "
                "'serp_id': 'BIGINT', 'rank': 'BIGINT', 'time': 'DOUBLE', "
                "'end_time': 'DOUBLE', 'seq': 'BIGINT', 'event': 'VARCHAR'}" + more + ")")
    raise FormatError("DuckDB reads canonical click logs as .parquet, .csv or .tsv "
                      "(files or globs)", file=text)


@contextmanager
def duckdb_connection(source=None, *, memory_limit: str = DUCKDB_MEMORY,
                      threads: int | None = None,
                      temp_directory: str | None = None) -> Iterator:
    """A DuckDB connection under ``memory_limit`` that spills to ``temp_directory`` or to a
    folder of ours, removed on exit (never DuckDB's default ``.tmp`` in the working
    directory); DuckDB's errors become FormatErrors naming ``source``."""
    import shutil
    import tempfile

    import duckdb

    con = duckdb.connect()
    spill = None if temp_directory else tempfile.mkdtemp(prefix="bayeschain-duckdb-")
    try:
        try:
            con.execute(f"SET memory_limit = '{memory_limit}'")
            con.execute("SET preserve_insertion_order = false")
            if threads:
                con.execute(f"SET threads = {int(threads)}")
            folder = (temp_directory or spill).replace("'", "''")
            con.execute(f"SET temp_directory = '{folder}'")
            yield con
        except duckdb.Error as exc:
            raise FormatError(f"DuckDB could not read the click log: {exc}".splitlines()[0],
                              file=str(source) if source is not None
                              and not isinstance(source, pd.DataFrame) else None) from None
    finally:
        con.close()
        if spill:
            shutil.rmtree(spill, ignore_errors=True)


def check_files(source, *, memory_limit: str = DUCKDB_MEMORY, ties: bool = False) -> None:
    """Check canonical files (a file or a glob) out of core: a FormatError naming the file
    and the first row that breaks a rule the statistics rely on (:func:`_check_files`);
    ``ties``: also two events of a session with the same ``seq`` (:func:`tie_error`)."""
    with duckdb_connection(source, memory_limit=memory_limit) as con:
        _check_files(con, source)
        tie = con.execute(_TIE_SQL.format(source=source_sql(con, source))).fetchone() \
            if ties else None
        if tie is not None:
            tie_error(con, source, *tie)


@contextmanager
def duckdb_events(source, *, memory_limit: str = DUCKDB_MEMORY, threads: int | None = None,
                  temp_directory: str | None = None, check_pages: bool = True) -> Iterator:
    """A DuckDB connection (:func:`duckdb_connection`) on the log's events, files checked
    first (:func:`_check_files`; ``check_pages=False``: the caller checks the pages);
    ``(con, src)`` with ``src`` the FROM clause of the events, for
    :func:`~bayeschain.io.event_window.session_chunks`."""
    with duckdb_connection(source, memory_limit=memory_limit, threads=threads,
                           temp_directory=temp_directory) as con:
        if not isinstance(source, pd.DataFrame):
            _check_files(con, source, pages=check_pages)
        yield con, source_sql(con, source)


class ChunkStatistics:
    """The tables of :data:`_TABLE_SQL` summed over chunks of whole sessions
    (:class:`~bayeschain.io.event_window.SessionChunk`), each read by DuckDB in place
    (on a cursor of ``con``: ``con`` itself streams the chunks)."""

    def __init__(self, con, *, has_sessions: bool = True, by_query: bool = False):
        self.con, self.by_query = con.cursor(), by_query
        self.end_label = "end" if has_sessions else "unknown"
        self.parts = {name: [] for name in _TABLE_SQL}
        self.off_page = self.sessions = 0

    #: the chunks' tables held before they are summed (by query they grow with the log)
    HELD = 16

    def add(self, chunk) -> None:
        q = "query_id," if self.by_query else ""
        self.con.register("obs", chunk.obs(self.end_label, query_ids=self.by_query))
        try:
            for name, sql in _TABLE_SQL.items():
                self.parts[name].append(self.con.execute(sql.format(q=q)).df())
        finally:
            self.con.unregister("obs")
        self.off_page += int((chunk.is_click & (chunk.rank < 0)).sum())   # SQL's rule
        self.sessions += chunk.sessions
        if len(self.parts["dwell"]) >= self.HELD:
            self.parts = {name: [table] for name, table in self._summed().items()}

    def _summed(self) -> dict[str, pd.DataFrame]:
        tables = {}
        q = ["query_id"] if self.by_query else []
        for name, (keys, values) in TABLES.items():
            parts = [p for p in self.parts[name] if len(p)]
            if not parts:
                tables[name] = self.parts[name][0] if self.parts[name] else \
                    pd.DataFrame(columns=q + keys + values)
                continue
            tables[name] = (pd.concat(parts, ignore_index=True)
                            .groupby(q + keys, dropna=False, observed=True)[values].sum()
                            .reset_index())
        return tables

    def result(self, sessions: bool = True) -> ClickStats:
        """The summed tables (``sessions``: the number of sessions, else -1); the cursor
        is closed."""
        self.con.close()
        return ClickStats(**self._summed(), off_page_clicks=int(self.off_page),
                          sessions=int(self.sessions) if sessions else -1)


def statistics_duckdb(source, *, has_sessions: bool = True, by_query: bool = False,
                      memory_limit: str = DUCKDB_MEMORY, threads: int | None = None,
                      temp_directory: str | None = None) -> ClickStats:
    """Sufficient statistics computed by DuckDB (see :mod:`bayeschain.io.clickstats`)."""
    from .event_window import session_chunks

    with duckdb_events(source, memory_limit=memory_limit, threads=threads,
                       temp_directory=temp_directory) as (con, src):
        stats = ChunkStatistics(con, has_sessions=has_sessions, by_query=by_query)
        frame = isinstance(source, pd.DataFrame)
        on_tie = None if frame else (lambda session, seq: tie_error(con, source, session, seq))
        for chunk in session_chunks(con, src, on_tie=on_tie, frame=frame, query_ids=by_query):
            stats.add(chunk)
        return stats.result()
