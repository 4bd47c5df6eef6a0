"""Sufficient statistics: hand-checked semantics, and pandas = DuckDB = Dask."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeschain.io.clickformats import read_trec_session
from bayeschain.io.clicklog import ClickLog, make_events, write_canonical
from bayeschain.io.clickstats import click_statistics
from bayeschain.io.clickstats_tables import TABLES
from bayeschain.simulate.clicklog import simulate_click_log

TREC = Path(__file__).resolve().parents[2] / "data" / "trec_session_2013" / \
    "sessiontrack2013.xml.gz"


def tiny_log():
    """Session A: page 0 clicks 1, 3, 2 (forward, backward), then a new query (page 1)
    with one click ending the session; session B: page 2 without clicks; a click on a
    document not on the page."""
    rows = {
        "session_id": ["A", "A", "A", "A", "A", "A", "A", "B", "B"],
        "query_id": ["q1"] * 4 + ["q2"] * 3 + ["q3"] * 2,
        "serp_id": [0, 0, 0, 0, 1, 1, 1, 2, 2],
        "event": ["query", "click", "click", "click", "query", "click", "click", "query",
                  "click"],
        "rank": [None, 1, 3, 2, None, 4, None, None, None],
        "doc_id": [None, "a", "c", "b", None, "x", "zz", None, "q"],
        "time": [0.0, 5.0, 15.0, 20.0, 50.0, 52.0, 60.0, 0.0, 3.0],
        "end_time": [np.nan] * 9,
        "seq": list(range(9)),
    }
    return ClickLog(make_events(rows), has_sessions=True, has_time=True)


def test_hand_checked_statistics():
    s = click_statistics(tiny_log(), backend="pandas")
    assert s.transitions[["from_rank", "to_rank", "count"]].values.tolist() == [[1, 3, 1],
                                                                                  [3, 2, 1]]
    assert s.backward_share() == 0.5
    last = s.last_clicks.set_index(["rank", "outcome"])["count"].to_dict()
    assert last == {(2, "next_query"): 1, (4, "end"): 1}
    assert s.first_clicks.set_index("rank")["count"].to_dict() == {1: 1, 4: 1}
    dwell = s.dwell.set_index("rank")
    assert dwell.loc[1, "sum"] == 10.0 and dwell.loc[3, "sum"] == 5.0
    assert dwell.loc[2, "sum"] == 30.0            # next event: the query at t = 50
    assert dwell.loc[4, "sum"] == 8.0             # next event: the off-page click at 60
    assert dwell.loc[4, "n"] == 1 and dwell["censored"].sum() == 0
    assert s.off_page_clicks == 2
    pages = s.pages.set_index(["outcome", "clicked"])["count"].to_dict()
    assert pages == {("end", False): 1, ("end", True): 1, ("next_query", True): 1}


def test_last_click_of_session_is_censored():
    log = tiny_log()
    log.events = log.events[log.events["seq"] != 6].reset_index(drop=True)
    s = click_statistics(log, backend="pandas")
    assert s.dwell.set_index("rank").loc[4, "censored"] == 1
    assert s.dwell.set_index("rank").loc[4, "n"] == 0


def assert_same(a, b):
    for name in TABLES:
        pd.testing.assert_frame_equal(a.table(name), b.table(name), check_exact=False,
                                      rtol=1e-12)
    assert a.off_page_clicks == b.off_page_clicks
    assert a.sessions == b.sessions > 0


@pytest.mark.parametrize("by_query", [False, True])
def test_duckdb_equals_pandas_on_bundled_and_synthetic_logs(tmp_path, by_query):
    for log in (read_trec_session(TREC), simulate_click_log(3000, seed=2), tiny_log()):
        ref = click_statistics(log, backend="pandas", by_query=by_query)
        assert_same(ref, click_statistics(log, backend="duckdb", by_query=by_query))
    synthetic = simulate_click_log(2000, seed=3)
    parquet = write_canonical(synthetic, tmp_path / "log.parquet")
    csv = write_canonical(synthetic, tmp_path / "log.csv")
    ref = click_statistics(synthetic, backend="pandas", by_query=by_query)
    assert_same(ref, click_statistics(str(parquet), backend="duckdb", by_query=by_query))
    assert_same(ref, click_statistics(str(csv), backend="duckdb", by_query=by_query))


@pytest.mark.parametrize("by_query", [False, True])
def test_duckdb_sums_the_tables_of_chunks_of_whole_sessions(monkeypatch, by_query):
    """DuckDB hands the sorted events over in chunks of about 5 rows, each ending at a
    session's end (sessions longer than a chunk included); the tables summed over chunks
    equal pandas' on the whole log."""
    monkeypatch.setattr("bayeschain.io.event_window.CHUNK_ROWS", 5)
    for log in (simulate_click_log(150, seed=2), tiny_log()):
        assert_same(click_statistics(log, backend="pandas", by_query=by_query),
                    click_statistics(log, backend="duckdb", by_query=by_query))


def test_duckdb_reads_columns_of_nulls_only(tmp_path):
    """A shard without clicks, written by pandas: its rank and doc_id columns hold nulls
    only, which Parquet types as null; DuckDB's statistics equal pandas'."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    events = simulate_click_log(200, seed=8).events
    queries = events[events["event"] == "query"].reset_index(drop=True)
    table = pa.Table.from_pandas(queries, preserve_index=False)
    for name in ("rank", "doc_id"):
        table = table.set_column(table.schema.get_field_index(name), name,
                                 pa.nulls(len(queries)))
    path = tmp_path / "queries.parquet"
    pq.write_table(table, path)
    assert pq.read_schema(path).field("rank").type == pa.null()
    assert_same(click_statistics(ClickLog(queries), backend="pandas"),
                click_statistics(str(path), backend="duckdb"))


def test_duckdb_reads_globs(tmp_path):
    log = simulate_click_log(2000, seed=4)
    ev = log.events
    cut = ev["session_id"].astype(int) < 1000
    for i, part in enumerate((ev[cut], ev[~cut])):
        part.to_parquet(tmp_path / f"part{i}.parquet", index=False)
    assert_same(click_statistics(log, backend="pandas"),
                click_statistics(str(tmp_path / "part*.parquet"), backend="duckdb"))


def test_dask_on_a_local_cluster_equals_duckdb(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    log = simulate_click_log(3000, seed=5)
    path = write_canonical(log, tmp_path / "log.parquet")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        from_frame = click_statistics(log, backend="dask", client=client, npartitions=6)
        from_file = click_statistics(str(path), backend="dask", client=client)
        trec = click_statistics(read_trec_session(TREC), backend="dask", client=client,
                                npartitions=3)
    ref = click_statistics(log, backend="duckdb")
    assert_same(ref, from_frame)
    assert_same(ref, from_file)
    assert_same(click_statistics(read_trec_session(TREC), backend="duckdb"), trec)


def test_events_tied_in_seq_keep_the_frames_order_in_every_backend():
    """Every event of a session given the session's first seq (rows in their true
    order): pandas' stable sort, DuckDB and Dask keep the frame's order, so the statistics
    are those of the untied log; the same rows reversed within sessions give others (the
    order is what is tested)."""
    pytest.importorskip("dask.dataframe")
    events = simulate_click_log(300, seed=7).events.sort_values("seq").reset_index(drop=True)
    ref = click_statistics(events, backend="pandas")
    tied = events.assign(seq=events.groupby("session_id")["seq"].transform("min"))
    for backend, options in (("pandas", {}), ("duckdb", {}), ("dask", {"npartitions": 4})):
        assert_same(ref, click_statistics(tied, backend=backend, **options))
    backwards = tied.iloc[::-1].reset_index(drop=True)
    with pytest.raises(AssertionError):
        assert_same(ref, click_statistics(backwards, backend="pandas"))


def test_a_frames_row_number_orders_its_tied_events_in_duckdbs_pass():
    """DuckDB's pass over a registered frame orders events tied in seq by the frame's row
    number (here opposite to the rows' insertion order, which DuckDB would keep by
    itself): the events come out as pandas sorts them by session, seq and row number."""
    import duckdb

    from bayeschain.io.event_window import FRAME_ROW, session_chunks

    events = simulate_click_log(80, seed=9).events.sort_values("seq").reset_index(drop=True)
    tied = events.assign(seq=events.groupby("session_id")["seq"].transform("min"),
                         **{FRAME_ROW: np.arange(len(events))[::-1]})
    want = tied.sort_values(["session_id", "seq", FRAME_ROW])
    with duckdb.connect() as con:
        con.register("events_frame", tied)
        chunks = list(session_chunks(con, "events_frame", frame=True, rows=7))
    assert len(chunks) > 3
    for column in ("serp_id", "time"):
        got = np.concatenate([c.table.column(column).to_numpy(zero_copy_only=False)
                              for c in chunks]).astype(float)
        np.testing.assert_array_equal(got, want[column].to_numpy(dtype=float))


def test_simulated_log_follows_its_parameters():
    """The rank of the first click has the law given by the chain engine: the hidden walk
    with clicking as absorption, ``P(first click at j) = v_j c_j`` with ``v`` the expected
    visits of the transient block ``diag(1 - c) P``.  20,000 sessions, 5 standard errors."""
    from bayeschain import chains

    n, p, q, c = 10, 0.6, 0.15, 0.3
    log = simulate_click_log(20_000, n_ranks=n, forward=p, backward=q, click=c,
                             reformulate=0.0, max_queries=1, seed=6)
    s = click_statistics(log, backend="duckdb")
    pages = int(s.pages["count"].sum())
    walk = chains.Tridiagonal(np.r_[0.0, np.full(n - 1, q)], np.zeros(n),
                              np.r_[np.full(n - 1, p), 0.0]).to_dense()
    law = chains.expected_visits((1 - c) * walk) * c
    got = s.first_clicks.set_index("rank")["count"].reindex(range(1, n + 1), fill_value=0)
    freq = got.to_numpy() / pages
    assert np.all(np.abs(freq - law) < 5 * np.sqrt(law * (1 - law) / pages) + 1e-9)
    again = simulate_click_log(500, seed=7)
    pd.testing.assert_frame_equal(again.events, simulate_click_log(500, seed=7).events)
