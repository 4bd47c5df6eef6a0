"""The walk fitted to a log read out of core: DuckDB's counts of the pages equal the
in-memory ones, and `bayeschain fit --out-of-core` recovers the walk that simulated the log
(moves and clicks inside their intervals), its checks replaying a sample of sessions."""

import numpy as np
import pandas as pd
import pytest

from bayeschain.cli import main
from bayeschain.inference.walk.data import page_data
from bayeschain.inference.walk.files import ClickLogFiles
from bayeschain.io.clicklog import read_canonical
from bayeschain.posterior import Posterior
from bayeschain.simulate.clicklog import write_click_log


@pytest.mark.parametrize("with_results,reclicks,chunk_rows,one_session", [
    (False, False, None, False), (True, False, None, False), (True, True, None, False),
    (True, True, 60, False), (True, True, None, True)])
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_pages_counted_out_of_core_equal_the_pages_counted_in_memory(
        tmp_path, monkeypatch, suffix, with_results, reclicks, chunk_rows, one_session):
    """With ``reclicks`` every state after a click is also keyed by the positions clicked
    so far on the page (damped re-clicks); ``chunk_rows``: the sorted events handed over in
    chunks of about 60 rows (pages and their term sets met again chunk after chunk);
    ``one_session``: every event in one session (a bot, a user id as session id: thousands
    of pages in one session)."""
    if chunk_rows:
        monkeypatch.setattr("bayeschain.io.event_window.CHUNK_ROWS", chunk_rows)
    path, pages = tmp_path / f"log{suffix}", tmp_path / f"pages{suffix}"
    write_click_log(path, 3000, results=pages, seed=3, n_ranks=7, backward=0.2,
                    repeat=0.1)
    if one_session:
        events = read_canonical(path).events.sort_values("seq")
        later = pd.factorize(events["session_id"])[0] * 1e5      # time runs on across them
        events = events.assign(session_id="one", time=events["time"] + later,
                               end_time=events["end_time"] + later)
        (events.to_parquet(path, index=False) if suffix == ".parquet" else
         events.to_csv(path, index=False))
    results = str(pages) if with_results else None
    want = page_data(read_canonical(path, results=results), default_length=10,
                     reclicks=reclicks)
    got = ClickLogFiles(str(path), results=results).page_data(10, reclicks=reclicks)
    assert got.digest == want.digest and got.report == want.report
    assert got.reclicks == want.reclicks == reclicks
    assert want.counts.clicked.any() == reclicks
    for name in ("lengths", "click_index", "move_index", "pages", "page_ids", "page_config"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), name)
    for name in ("state_ptr", "states", "clicked", "term_ptr", "targets", "counts"):
        np.testing.assert_array_equal(getattr(got.counts, name), getattr(want.counts, name))
    # the same pages grouped into patterns of the same terms
    a, b = want.patterns, got.patterns
    pairs = pd.DataFrame({"a": a.page_pattern, "b": b.page_pattern}).drop_duplicates()
    assert pairs["a"].is_unique and pairs["b"].is_unique and a.size == b.size
    np.testing.assert_array_equal(a.terms[pairs["a"].to_numpy()].toarray(),
                                  b.terms[pairs["b"].to_numpy()].toarray())
    np.testing.assert_array_equal(a.pages[pairs["a"].to_numpy()], b.pages[pairs["b"].to_numpy()])


def test_fit_out_of_core_recovers_the_walk_that_made_the_log(tmp_path, capsys):
    log, post = tmp_path / "log.parquet", tmp_path / "post.nc"
    write_click_log(log, 60_000, seed=7)            # p 0.6, q 0.15, r 0.05, click 0.3
    assert main(["fit", str(log), "--out-of-core", "-o", str(post), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "out of core" in out and "random sample of 20,000 sessions of the log" in out
    p = Posterior.load(post)

    def within(draws, value):
        """The truth inside the posterior's 99.9% interval, as mean +- 3.29 sd: the
        0.05% and 99.95% quantiles of some 2,000 correlated draws move by more than the
        margin between the truth and a bound (rank 5's click: 0.2952 and 0.3003 in two
        runs of the same density, with blocks of 32 and of 8 lanes)."""
        mean, sd = draws.mean(("chain", "draw")), draws.std(("chain", "draw"))
        return abs(mean - value) <= 3.29 * sd

    walk = p.posterior["walk"]
    truth = {"forward": 0.6, "backward": 0.15}
    for move, value in truth.items():
        ranks = slice(2, 8) if move == "backward" else slice(1, 8)
        inside = within(walk.sel(move=move).isel(rank=ranks), value)
        assert bool(inside.all()), (move, walk.sel(move=move).mean(("chain", "draw")).values)
    click = p.posterior["click"].isel(rank=slice(0, 8))
    assert bool(within(click, 0.3).all()), click.mean(("chain", "draw")).values
    events = pd.read_parquet(log)
    assert p.attrs["pages"] == int((events["event"] == "query").sum())
    assert p.attrs["clicks"] == int((events["event"] == "click").sum())


def test_out_of_core_refuses_what_it_cannot_do(tmp_path, capsys):
    log = tmp_path / "log.parquet"
    write_click_log(log, 200, seed=1)
    for args, message in ((["--heldout", "0.2"], "--heldout splits a log in memory"),
                          (["--spec", "clicks-conjugate"], "only the walk's specs"),
                          (["--spec", "walk-once"], "decides once reads its pages"),
                          (["--memory-limit", "a lot"], "must be a size")):
        assert main(["fit", str(log), "--out-of-core", *args]) == 2
        assert message in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")     # 100 draws: the point is the route
def test_a_large_file_is_read_into_memory_for_what_cannot_run_out_of_core(tmp_path, capsys,
                                                                         monkeypatch):
    """Over the size threshold, a single file goes out of core only where the fit can run
    there: a spec fitted in memory (the click-to-click sections, the walk that decides
    once) and --heldout read it into memory, as any log."""
    from bayeschain.cli import arguments

    log = tmp_path / "log.parquet"
    write_click_log(log, 300, seed=2)
    monkeypatch.setattr(arguments, "OUT_OF_CORE_BYTES", 0)     # every file is "large"
    assert main(["fit", str(log), "--spec", "clicks-conjugate", "--quiet", "-o",
                 str(tmp_path / "conjugate.nc")]) == 0
    assert main(["fit", str(log), "--heldout", "0.2", "--draws", "100", "--tune", "100",
                 "--quiet"]) == 0
    assert main(["fit", str(log), "--spec", "walk-once", "--draws", "100", "--tune", "100",
                 "--quiet", "-o", str(tmp_path / "once.nc")]) == 0
    assert "out of core" not in capsys.readouterr().out


def test_the_result_pages_are_checked_out_of_core(tmp_path):
    from bayeschain.errors import FormatError

    log, pages = tmp_path / "log.parquet", tmp_path / "pages.parquet"
    write_click_log(log, 100, results=pages, seed=4)
    table = pd.read_parquet(pages)
    for name, change, message in (
            ("zero", lambda t: t.assign(rank=t["rank"].where(t.index != 5, 0)),
             "rank must be an integer from 1 to 10,000, got 0"),
            ("twice", lambda t: pd.concat([t, t.iloc[[7]]]),
             f"page {table.loc[7, 'serp_id']} lists rank {table.loc[7, 'rank']} twice")):
        bad = tmp_path / f"{name}.parquet"
        change(table).to_parquet(bad, index=False)
        with pytest.raises(FormatError, match=message) as info:
            ClickLogFiles(str(log), results=str(bad)).page_data(10)
        assert f"{name}.parquet" in str(info.value)
    # a field DuckDB cannot read: the results file named, not the log
    unreadable = tmp_path / "unreadable.csv"
    table.astype({"rank": str}).assign(rank=lambda t: t["rank"].where(t.index != 3, "x")) \
        .to_csv(unreadable, index=False)
    for call in (lambda f: f.page_data(10), lambda f: f.recurring_share(20)):
        with pytest.raises(FormatError, match="could not read the result pages") as info:
            call(ClickLogFiles(str(log), results=str(unreadable)))
        assert "unreadable.csv" in str(info.value) and "log.parquet" not in str(info.value)


def test_the_sessions_checked_are_the_same_for_the_same_seed(tmp_path):
    log = tmp_path / "log.parquet"
    write_click_log(log, 2_000, seed=5, batch_sessions=100)      # 20 row groups, 2 threads
    files = ClickLogFiles(str(log))
    sessions = [set(files.sample(300, seed=s).events["session_id"]) for s in (1, 1, 2)]
    assert len(sessions[0]) == 300 and sessions[0] == sessions[1] != sessions[2]
    # the definition: the 300 sessions of smallest hash(session_id, seed), ties by id
    import duckdb

    smallest = duckdb.sql(f"SELECT DISTINCT session_id, hash(session_id, 1) AS h FROM "
                          f"read_parquet('{log}') ORDER BY h, session_id LIMIT 300").df()
    assert sessions[0] == set(smallest["session_id"])
    files.page_data(10)         # the pass counts the sessions: the sample's threshold uses it
    assert files._sessions == 2_000
    sample = files.sample(300, seed=1).events
    assert set(sample["session_id"]) == sessions[0]
    whole = pd.read_parquet(log)
    chosen = whole[whole["session_id"].isin(sessions[0])].sort_values("seq")
    np.testing.assert_array_equal(sample["seq"].to_numpy(), chosen["seq"].to_numpy())


def test_the_pages_read_out_of_core_follow_the_readers_rules(tmp_path, capsys):
    """A page announced twice, a click before its page's query in seq order, a page whose
    click lies in another session than its query: the fit names the file and the row (or
    the page), and writes nothing."""
    from bayeschain.simulate import simulate_click_log

    from ...io.malformed_logs import malformed_page_logs

    events = simulate_click_log(300, seed=5).events.sort_values("seq").reset_index(drop=True)
    for name, (frame, expected) in malformed_page_logs(events).items():
        path, post = tmp_path / f"{name}.parquet", tmp_path / f"{name}.nc"
        frame.to_parquet(path, index=False)
        assert main(["fit", str(path), "--out-of-core", "-o", str(post), "--quiet"]) == 2
        err = capsys.readouterr().err.strip()
        assert f"{name}.parquet: {expected}" in err, err
        assert not post.exists()


def test_pages_share_a_term_set_exactly_when_their_terms_are_equal():
    """The term sets are found by hash and confirmed term by term: with every hash equal
    (all collide), pages of different terms still get different sets, within a chunk and
    across chunks."""
    from bayeschain.inference.walk.page_terms import PageTerms, _kernels

    terms = [[3, 5], [3, 6], [3, 5], [4], [3, 5, 7], [4]]
    offsets = np.cumsum([0] + [len(t) for t in terms]).astype(np.int64)
    codes = np.concatenate([np.array(t, dtype=np.int64) for t in terms])
    set_of, first = _kernels()["sets"](offsets, codes, np.zeros(len(terms), dtype=np.uint64))
    assert list(set_of) == [0, 1, 0, 2, 3, 2] and list(first) == [0, 1, 3, 4]
    known = PageTerms(base=20003)
    ids = [known._set_id(0, np.array(t, dtype=np.int64)) for t in terms + terms[::-1]]
    assert ids == [0, 1, 0, 2, 3, 2, 2, 3, 2, 0, 1, 0]
