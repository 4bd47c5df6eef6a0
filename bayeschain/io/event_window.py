"""The window pass over a click log's sessions, streamed: DuckDB sorts the events by
``(session_id, seq)`` (spilling to disk beyond its memory limit) and hands them over in
chunks of whole sessions, on which Numba computes what each event's session says of it.

For every event, within its session in ``seq`` order (the definitions of
:func:`bayeschain.io.clickstats_pandas.observations`, as the DuckDB statistics read them):

* ``on_page``: a click with a rank on a result page (``serp_id`` given);
* ``next_click_serp``, ``next_click_rank``: the page and rank of the next on-page click
  after it (null when none follows); ``prev_click_serp``: the page of the previous one;
* ``next_query``: a query event follows it in the session (its ``outcome`` is
  ``next_query``, else ``end``, or ``unknown`` in logs without sessions);
* ``dwell``: ``end_time - time`` where the log gives ``end_time``, else the time to the
  session's next event (NaN when none follows or the clock is missing);
* ``has_clock``: the event has a time.

One sort and two linear passes (Numba) over each chunk, where SQL's ``LEAD ... IGNORE
NULLS`` windows partitioned by session cost several sorts' worth on every column.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

#: events per chunk handed over by DuckDB (a chunk ends at a session's end)
CHUNK_ROWS = 1_000_000
#: the column a registered frame of events gets with its row number: events that share a
#: ``seq`` in one session keep the frame's order (as the pandas backend's stable sort does)
FRAME_ROW = "_frame_row"

#: typed here: a column of nulls only (a shard without clicks) has Arrow's null type
_COLUMNS = ("session_id, serp_id::BIGINT AS serp_id, event = 'query' AS is_query, "
            "event = 'click' AS is_click, rank::BIGINT AS rank, seq::BIGINT AS seq, "
            "time::DOUBLE AS time, end_time::DOUBLE AS end_time")


@dataclass
class SessionChunk:
    """Events of whole sessions in ``(session_id, seq)`` order, with their window columns
    (see the module docstring); integer columns hold -1 where the log has no value."""

    table: object                 # the events (pyarrow Table)
    start: np.ndarray             # (n,) bool: the first event of a session
    serp: np.ndarray              # (n,) int64
    is_query: np.ndarray          # (n,) bool
    is_click: np.ndarray          # (n,) bool
    rank: np.ndarray              # (n,) int64
    seq: np.ndarray               # (n,) int64
    on_page: np.ndarray           # (n,) bool
    next_click_serp: np.ndarray   # (n,) int64
    next_click_rank: np.ndarray   # (n,) int64
    prev_click_serp: np.ndarray   # (n,) int64
    next_query: np.ndarray        # (n,) bool
    dwell: np.ndarray             # (n,) float
    has_clock: np.ndarray         # (n,) bool
    first_tie: int = -1           # the first event with its session's previous one's seq

    @property
    def sessions(self) -> int:
        return int(self.start.sum())

    def obs(self, end_label: str, query_ids: bool = False):
        """The events as the statistics' SQL reads them (a pyarrow Table, nulls where
        this chunk has -1): ``[query_id,] serp_id, event, rank, on_page, has_clock, dwell,
        next_click_serp, next_click_rank, prev_click_serp, outcome``."""
        import pyarrow as pa

        def nullable(values):
            return pa.array(values, mask=values < 0)

        outcome = pa.DictionaryArray.from_arrays(
            pa.array(np.where(self.next_query, 0, 1).astype(np.int8)),
            pa.array(["next_query", end_label]))
        event = pa.DictionaryArray.from_arrays(
            pa.array(np.where(self.is_query, 0, 1).astype(np.int8),
                     mask=~(self.is_query | self.is_click)), pa.array(["query", "click"]))
        columns = {"query_id": self.table.column("query_id")} if query_ids else {}
        columns.update({
            "serp_id": nullable(self.serp), "event": event,
            "rank": nullable(self.rank), "on_page": pa.array(self.on_page),
            "has_clock": pa.array(self.has_clock), "dwell": pa.array(self.dwell),
            "next_click_serp": nullable(self.next_click_serp),
            "next_click_rank": nullable(self.next_click_rank),
            "prev_click_serp": nullable(self.prev_click_serp), "outcome": outcome})
        return pa.table(columns)


def _ints(column) -> np.ndarray:
    import pyarrow.compute as pc

    return np.asarray(pc.fill_null(column, -1).to_numpy(zero_copy_only=False),
                      dtype=np.int64)


def _floats(column) -> np.ndarray:
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)


def _window_pass(start, serp, is_query, on_page, rank, time, end, next_serp, next_rank,
                 prev_serp, next_query, dwell):
    """The window columns in place (see the module docstring): one backward pass (what
    follows each event in its session) and one forward pass (the previous on-page click)."""
    n = serp.size
    after_serp, after_rank, after_query, after_time = -1, -1, False, np.nan
    for i in range(n - 1, -1, -1):
        next_serp[i] = after_serp
        next_rank[i] = after_rank
        next_query[i] = after_query
        dwell[i] = end[i] - time[i] if not np.isnan(end[i]) else after_time - time[i]
        if start[i]:                         # the event before belongs to another session
            after_serp, after_rank, after_query, after_time = -1, -1, False, np.nan
        else:
            if on_page[i]:
                after_serp, after_rank = serp[i], rank[i]
            if is_query[i]:
                after_query = True
            after_time = time[i]
    before = -1
    for i in range(n):
        if start[i]:
            before = -1
        prev_serp[i] = before
        if on_page[i]:
            before = serp[i]


_COMPILED = []


def _compiled():
    if not _COMPILED:
        from ..chains.jit import jit

        _COMPILED.append(jit(_window_pass, nogil=True))
    return _COMPILED[0]


def window(table) -> SessionChunk:
    """The window columns of ``table``: events of whole sessions sorted by
    ``(session_id, seq)`` (see the module docstring)."""
    import pyarrow.compute as pc

    n = table.num_rows
    ids = table.column("session_id").combine_chunks()
    start = np.ones(n, dtype=bool)
    if n > 1:
        start[1:] = pc.not_equal(ids.slice(1), ids.slice(0, n - 1)).to_numpy(
            zero_copy_only=False)
    is_query, is_click = (np.asarray(table.column(name).to_numpy(zero_copy_only=False),
                                     dtype=bool) for name in ("is_query", "is_click"))
    serp, rank = _ints(table.column("serp_id")), _ints(table.column("rank"))
    time = _floats(table.column("time"))
    on_page = is_click & (rank >= 0) & (serp >= 0)
    next_serp, next_rank, prev_serp = (np.empty(n, dtype=np.int64) for _ in range(3))
    next_query, dwell = np.empty(n, dtype=bool), np.empty(n)
    _compiled()(start, serp, is_query, on_page, rank, time, _floats(table.column("end_time")),
                next_serp, next_rank, prev_serp, next_query, dwell)
    seq = _ints(table.column("seq"))
    tied = np.flatnonzero(~start[1:] & (seq[1:] == seq[:-1]))
    return SessionChunk(table, start, serp, is_query, is_click, rank, seq, on_page,
                        next_serp, next_rank, prev_serp, next_query, dwell, ~np.isnan(time),
                        int(tied[0]) + 1 if tied.size else -1)


def _batches(reader):
    """The reader's batches; a failure of DuckDB's while streaming (reported through
    Arrow as an OSError) becomes DuckDB's error again, which the connection reports as
    the click log's (:func:`~bayeschain.io.clickstats_sql.duckdb_connection`)."""
    import duckdb

    batches = iter(reader)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except OSError as exc:
            raise duckdb.Error(str(exc)) from None
        yield batch


def session_chunks(con, src: str, *, on_tie=None, frame: bool = False,
                   query_ids: bool = False, rows: int | None = None) -> Iterator[SessionChunk]:
    """The events of ``src`` (a FROM clause on connection ``con``) sorted by
    ``(session_id, seq)``, in chunks of about ``rows`` (:data:`CHUNK_ROWS`) events that end
    at a session's end, with their window columns (:func:`window`).  Two events of a
    session with the same ``seq``: in files ``on_tie(session_id, seq)`` is called (it
    raises the error naming the file and row, since DuckDB's sort would order them
    arbitrarily, from run to run); a registered frame (``frame=True``) has its row number
    :data:`FRAME_ROW`, whose order tied events keep (as pandas' stable sort keeps it)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if frame == (on_tie is not None):
        raise ValueError("session_chunks takes on_tie for files or frame=True for a frame")
    columns = _COLUMNS + (", query_id" if query_ids else "")
    order = f"session_id, seq, {FRAME_ROW}" if frame else "session_id, seq"
    sorted_events = con.sql(f"SELECT {columns} FROM {src} ORDER BY {order}")
    # DuckDB >= 1.4 names it to_arrow_reader (fetch_arrow_reader: a deprecated alias)
    reader = getattr(sorted_events, "to_arrow_reader", None) or \
        sorted_events.fetch_arrow_reader
    reader = reader(rows or CHUNK_ROWS)

    def checked(chunk: SessionChunk) -> SessionChunk:
        if on_tie is not None and chunk.first_tie >= 0:
            i = chunk.first_tie
            on_tie(chunk.table.column("session_id")[i].as_py(), int(chunk.seq[i]))
        return chunk

    pending, held = [], 0
    for batch in _batches(reader):        # DuckDB's batches are smaller than asked: gather
        pending.append(batch)
        held += batch.num_rows
        if held < (rows or CHUNK_ROWS):
            continue
        table = pa.Table.from_batches(pending)
        ids = table.column("session_id")
        n = table.num_rows
        last = pc.equal(ids, ids[n - 1]).to_numpy(zero_copy_only=False)
        cut = int(np.argmax(last))            # the last session starts here (sorted ids)
        pending = table.slice(cut).to_batches()
        held = n - cut
        if cut > 0:
            yield checked(window(table.slice(0, cut).combine_chunks()))
    if held:
        yield checked(window(pa.Table.from_batches(pending).combine_chunks()))


__all__ = ["CHUNK_ROWS", "FRAME_ROW", "SessionChunk", "session_chunks", "window"]
