"""Click-log statistics in DuckDB: out of core, on CSV / Parquet files, globs or frames.

The SQL mirrors :func:`bayeschain.io.clickstats.statistics_pandas` step by step (window
functions over ``session_id`` ordered by ``seq`` and over ``serp_id``); see that module for
the definitions.  DuckDB streams files and spills to disk, so logs larger than memory work;
``memory_limit`` caps its memory.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import FormatError
from .clickstats import ClickStats

_EVENTS_SQL = """
CREATE OR REPLACE TEMP VIEW ev AS
SELECT *,
  LEAD(time) OVER w AS next_time,
  COALESCE(SUM(CASE WHEN event = 'query' THEN 1 ELSE 0 END) OVER (
      PARTITION BY session_id ORDER BY seq
      ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0) AS later_queries
FROM {source}
WINDOW w AS (PARTITION BY session_id ORDER BY seq);

CREATE OR REPLACE TEMP VIEW pages AS
SELECT serp_id, query_id,
       CASE WHEN later_queries > 0 THEN 'next_query' ELSE '{end_label}' END AS outcome
FROM ev WHERE event = 'query' AND serp_id IS NOT NULL;

CREATE OR REPLACE TEMP VIEW clicks AS
SELECT c.query_id, c.serp_id, c.rank, c.seq, p.outcome,
       ROW_NUMBER() OVER s AS k,
       LEAD(c.rank) OVER s AS next_rank,
       CASE WHEN c.end_time IS NOT NULL AND NOT isnan(c.end_time) THEN c.end_time - c.time
            ELSE c.next_time - c.time END AS dwell,
       (c.time IS NOT NULL AND NOT isnan(c.time)) AS has_clock
FROM ev c JOIN pages p ON c.serp_id = p.serp_id
WHERE c.event = 'click' AND c.rank IS NOT NULL
WINDOW s AS (PARTITION BY c.serp_id ORDER BY c.seq);
"""

_TABLE_SQL = {
    "transitions": """SELECT {q} rank AS from_rank, next_rank AS to_rank, COUNT(*) AS count
                      FROM clicks WHERE next_rank IS NOT NULL GROUP BY ALL""",
    "last_clicks": """SELECT {q} rank, outcome, COUNT(*) AS count
                      FROM clicks WHERE next_rank IS NULL GROUP BY ALL""",
    "first_clicks": """SELECT {q} rank, COUNT(*) AS count FROM clicks WHERE k = 1 GROUP BY ALL""",
    "dwell": """SELECT {q} rank,
                  SUM(CASE WHEN dwell > 0 AND NOT isnan(dwell) THEN 1 ELSE 0 END) AS n,
                  SUM(CASE WHEN dwell > 0 AND NOT isnan(dwell) THEN dwell ELSE 0 END) AS sum,
                  SUM(CASE WHEN dwell > 0 AND NOT isnan(dwell) THEN ln(dwell) ELSE 0 END)
                      AS sum_log,
                  SUM(CASE WHEN has_clock AND (dwell IS NULL OR isnan(dwell)) THEN 1 ELSE 0
                      END) AS censored,
                  SUM(CASE WHEN dwell <= 0 THEN 1 ELSE 0 END) AS nonpositive
                FROM clicks GROUP BY ALL""",
    "pages": """SELECT {q} p.outcome, c.serp_id IS NOT NULL AS clicked, COUNT(*) AS count
                FROM pages p LEFT JOIN (SELECT DISTINCT serp_id FROM clicks) c
                  ON p.serp_id = c.serp_id
                GROUP BY ALL""",
}


def _source_sql(con, source) -> str:
    """A FROM clause for a frame (registered), a Parquet/CSV/TSV file or glob."""
    if isinstance(source, pd.DataFrame):
        con.register("events_frame", source)
        return "events_frame"
    text = str(source)
    suffix = Path(text.replace("*", "x")).suffix.lower()
    quoted = text.replace("'", "''")
    if suffix == ".parquet":
        return f"read_parquet('{quoted}')"
    if suffix in (".csv", ".tsv"):
        sep = "\\t" if suffix == ".tsv" else ","
        return (f"read_csv('{quoted}', delim='{sep}', header=true, "
                "types={'session_id': 'VARCHAR', 'query_id': 'VARCHAR', 'doc_id': 'VARCHAR', "
                "'serp_id': 'BIGINT', 'rank': 'BIGINT', 'time': 'DOUBLE', "
                "'end_time': 'DOUBLE', 'seq': 'BIGINT', 'event': 'VARCHAR'})")
    raise FormatError("DuckDB reads canonical click logs as .parquet, .csv or .tsv "
                      "(files or globs)", file=text)


def statistics_duckdb(source, *, has_sessions: bool = True, by_query: bool = False,
                      memory_limit: str = "1GB", threads: int | None = None,
                      temp_directory: str | None = None) -> ClickStats:
    """Sufficient statistics computed by DuckDB (see :mod:`bayeschain.io.clickstats`)."""
    import duckdb

    con = duckdb.connect()
    try:
        con.execute(f"SET memory_limit = '{memory_limit}'")
        con.execute("SET preserve_insertion_order = false")
        if threads:
            con.execute(f"SET threads = {int(threads)}")
        if temp_directory:
            con.execute(f"SET temp_directory = '{temp_directory}'")
        src = _source_sql(con, source)
        con.execute(_EVENTS_SQL.format(source=src,
                                       end_label="end" if has_sessions else "unknown"))
        q = "query_id," if by_query else ""
        tables = {}
        for name, sql in _TABLE_SQL.items():
            qq = "p.query_id," if (by_query and name == "pages") else q
            tables[name] = con.execute(sql.format(q=qq)).df()
        off_page = con.execute(
            f"SELECT COUNT(*) FROM {src} WHERE event = 'click' AND rank IS NULL").fetchone()[0]
    except duckdb.Error as exc:
        raise FormatError(f"DuckDB could not read the click log: {exc}".splitlines()[0],
                          file=str(source) if not isinstance(source, pd.DataFrame) else None) \
            from None
    finally:
        con.close()
    return ClickStats(**tables, off_page_clicks=int(off_page))
