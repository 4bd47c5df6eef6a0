"""``bayeschain stats`` on the bundled log, its figures, and its errors.

The numbers it prints are checked against counts made here from the inputs themselves
(the TREC Session XML read with ElementTree, the simulated log read with pandas)."""

import gzip
import math
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeschain.cli import main

LOG = Path(__file__).resolve().parents[2] / "data" / "trec_session_2013" / \
    "sessiontrack2013.xml.gz"


def xml_counts():
    """Sessions, result pages, clicks, clicks per rank (>10 pooled), empty pages and
    click-to-click moves (with how many go up the page), counted from the XML."""
    root = ET.parse(gzip.open(LOG)).getroot()
    pages = list(root.iter("interaction"))
    per_rank, moves, backward = Counter(), 0, 0
    for page in pages:
        ranks = [int(c.findtext("rank")) for c in page.findall("clicked/click")]
        per_rank.update(">10" if r > 10 else str(r) for r in ranks)
        moves += max(len(ranks) - 1, 0)
        backward += sum(b < a for a, b in zip(ranks, ranks[1:], strict=False))
    return {"sessions": len(root.findall("session")), "pages": len(pages),
            "clicks": sum(per_rank.values()), "per_rank": per_rank,
            "empty": sum(not page.findall("results/result") for page in pages),
            "moves": moves, "backward": backward}


def clicks_per_rank_line(out: str) -> dict[str, int]:
    line = next(x for x in out.splitlines() if x.strip().startswith("clicks per rank:"))
    items = (item.split(":") for item in line.split(":", 1)[1].split())
    return {k: int(v.replace(",", "")) for k, v in items}


def test_summary_and_figures(tmp_path, capsys):
    assert main(["stats", str(LOG), "--figures", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    want = xml_counts()
    assert (want["sessions"], want["pages"], want["clicks"]) == (133, 401, 586)
    assert f"sessions {want['sessions']}   pages {want['pages']}   clicks {want['clicks']}" \
        in out
    assert f"empty pages {want['empty']}" in out
    assert clicks_per_rank_line(out) == dict(want["per_rank"])
    share = 100 * want["backward"] / want["moves"]
    assert f"backward transitions: {share:.1f}% of {want['moves']} click-to-click moves" in out
    assert "dwell seconds" in out
    for name in ("clicks_per_rank.png", "transitions.png", "dwell.png"):
        assert (tmp_path / name).stat().st_size > 5_000
    assert main(["stats", str(LOG), "--figures", str(tmp_path)]) == 2   # no overwrite
    assert "exists" in capsys.readouterr().err


def test_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.log"
    bad.write_text("0\t0\tQ\t7\t0.0\tu1\n0\tnoon\tC\tu1\n")
    for args, message in (([str(tmp_path / "missing")], "No such file"),
                          ([str(bad)], "bad.log:2: time must be a number"),
                          ([str(bad), "--format", "canonical"], "extension")):
        proc = subprocess.run([sys.executable, "-m", "bayeschain", "stats", *args],
                              capture_output=True, text=True)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert proc.stderr.strip().count("\n") == 0


def test_simulate_then_stats(tmp_path, capsys):
    out = tmp_path / "log.parquet"
    assert main(["simulate", "-o", str(out), "--sessions", "500", "--seed", "1"]) == 0
    printed = capsys.readouterr().out
    assert "500 sessions" in printed
    # the log written, read back: 500 sessions, pages that start with their query, clicks
    # on ranks 1..10 (--ranks default) at finite, non-negative times
    log = pd.read_parquet(out).sort_values("seq")
    assert set(log["event"]) == {"query", "click"}
    assert log["session_id"].nunique() == 500
    assert (log.groupby("session_id")["event"].first() == "query").all()
    assert (log.groupby("serp_id")["event"].first() == "query").all()
    assert (log.groupby("serp_id")["query_id"].nunique() == 1).all()
    clicks = log[log["event"] == "click"]
    assert len(clicks) > 0 and clicks["rank"].between(1, 10).all()
    assert clicks["doc_id"].notna().all()
    assert log["time"].map(math.isfinite).all() and (log["time"] >= 0).all()
    assert (log.groupby("session_id")["time"].apply(lambda t: t.is_monotonic_increasing)).all()
    pages = log["serp_id"].nunique()
    assert f"500 sessions, {pages} pages, {len(clicks)} clicks" in printed
    # stats on it reports what pandas counts in the file
    assert main(["stats", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"sessions 500   pages {pages}   clicks {len(clicks)}" in text
    assert clicks_per_rank_line(text) == {str(r): int(n) for r, n in
                                          clicks["rank"].value_counts().sort_index().items()}
    ranks = [g.tolist() for _, g in clicks.groupby("serp_id")["rank"]]
    moves = sum(len(r) - 1 for r in ranks)
    backward = sum(b < a for r in ranks for a, b in zip(r, r[1:], strict=False))
    assert f"backward transitions: {100 * backward / moves:.1f}% of {moves} click-to-click" \
        in text
    assert main(["simulate", "-o", str(out)]) == 2               # never overwrites
    assert "exists" in capsys.readouterr().err


def _counted_in_pandas(path):
    """Sessions, pages, clicks, clicks per rank and click-to-click moves of a canonical
    Parquet file, counted here with pandas."""
    log = pd.read_parquet(path).sort_values("seq")
    clicks = log[log["event"] == "click"]
    ranks = [g.tolist() for _, g in clicks.groupby("serp_id")["rank"]]
    moves = sum(len(r) - 1 for r in ranks)
    backward = sum(b < a for r in ranks for a, b in zip(r, r[1:], strict=False))
    return (f"sessions {log['session_id'].nunique():,}   pages {log['serp_id'].nunique():,}"
            f"   clicks {len(clicks):,}",
            {str(r): int(n) for r, n in clicks["rank"].value_counts().sort_index().items()},
            f"backward transitions: {100 * backward / moves:.1f}% of {moves:,} click-to-click")


def test_out_of_core_statistics_by_duckdb_and_a_local_dask_cluster(tmp_path, capsys,
                                                                   monkeypatch):
    import tempfile

    out = tmp_path / "log.parquet"
    assert main(["simulate", "-o", str(out), "--sessions", "3000", "--seed", "4",
                 "--attractiveness-sd", "1"]) == 0
    capsys.readouterr()
    counts, per_rank, moves = _counted_in_pandas(out)
    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))     # DuckDB's spill folder's home
    printed = {}
    for name, extra in (("duckdb", ["--out-of-core", "--memory-limit", "64MB"]),
                        ("dask", ["--backend", "dask", "--workers", "2"])):
        assert main(["stats", str(out), *extra]) == 0, name
        text = capsys.readouterr().out
        assert "out of core" in text.splitlines()[0], text
        assert counts in text and moves in text, text
        assert clicks_per_rank_line(text) == per_rank
        printed[name] = text.splitlines()[1:]
    assert printed["duckdb"] == printed["dask"]
    assert not list(spill.iterdir())                           # nothing left behind


def test_out_of_core_statistics_name_the_first_bad_row(tmp_path, capsys):
    from bayeschain.simulate import simulate_click_log

    events = simulate_click_log(50, seed=2).events
    events.loc[7, "rank"] = 0
    events.to_parquet(tmp_path / "bad.parquet", index=False)
    events.to_csv(tmp_path / "bad.csv", index=False)
    assert main(["stats", str(tmp_path / "bad.parquet"), "--out-of-core"]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.parquet: row 8: rank 0 (expected 1 to 10,000)" in err and "\n" not in err
    assert main(["stats", str(tmp_path / "bad.csv"), "--out-of-core"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"bad.csv: the row with seq {events.loc[7, 'seq']}: rank 0" in err
    for args, message in ((["--memory-limit", "lots"], "must be a size such as 4GB"),
                          (["--workers", "2"], "add --backend dask"),
                          (["--backend", "pandas", "--out-of-core"], "needs --backend")):
        assert main(["stats", str(tmp_path / "bad.parquet"), *args]) == 2
        assert message in capsys.readouterr().err
    assert main(["stats", str(tmp_path / "none*.parquet")]) == 2
    assert "no file matches" in capsys.readouterr().err
    session_track = Path(__file__).parents[2] / "data" / "trec_session_2013" / \
        "sessiontrack2013.xml.gz"
    for args in (["--memory-limit", "1GB"], ["--backend", "dask", "--workers", "2"]):
        assert main(["stats", str(session_track), *args]) == 2
        assert "read canonical Parquet, CSV or TSV files" in capsys.readouterr().err


@pytest.mark.parametrize("backend", [["--out-of-core"], ["--backend", "dask", "--out-of-core"]])
def test_out_of_core_statistics_refuse_what_the_in_memory_reader_refuses(tmp_path, capsys,
                                                                        backend):
    """A page announced twice (its clicks would count twice), a click before its page's
    query, a page whose events lie in two sessions, two events of a session with one seq,
    an infinite time: named by file and row, by DuckDB and before Dask reads the files."""
    from bayeschain.simulate import simulate_click_log

    from ..io.malformed_logs import malformed_page_logs

    events = simulate_click_log(60, seed=5).events.sort_values("seq").reset_index(drop=True)
    infinite = events.copy()
    infinite.loc[9, "time"] = np.inf
    logs = malformed_page_logs(events)
    logs["infinite"] = (infinite, "row 10: time inf (expected a finite time)")
    for name, (frame, expected) in logs.items():
        path = tmp_path / f"{name}.parquet"
        frame.to_parquet(path, index=False)
        assert main(["stats", str(path), *backend]) == 2, name
        err = capsys.readouterr().err.strip()
        assert f"{name}.parquet: {expected}" in err and "\n" not in err, err


def test_out_of_core_reads_integer_session_ids(tmp_path, capsys):
    """Parquet files whose session_id is an integer column (the in-memory reader takes
    them): the same statistics out of core."""
    from bayeschain.simulate import simulate_click_log

    events = simulate_click_log(200, seed=6).events
    events["session_id"] = events["session_id"].astype("category").cat.codes.astype("int64")
    path = tmp_path / "ints.parquet"
    events.to_parquet(path, index=False)
    assert main(["stats", str(path)]) == 0
    in_memory = capsys.readouterr().out.splitlines()[1]
    assert main(["stats", str(path), "--out-of-core"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == in_memory
