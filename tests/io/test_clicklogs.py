"""Click-log readers on the real samples, their quirks, and the canonical schema."""

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayeschain as bc
from bayeschain.errors import FormatError
from bayeschain.io.clickformats import read_clicks, read_trec_session, read_wscd, read_yandex
from bayeschain.io.clicklog import ClickLog, read_canonical, write_canonical
from bayeschain.io.clickstats import click_statistics

ROOT = Path(__file__).resolve().parents[2]
TREC = ROOT / "data" / "trec_session_2013" / "sessiontrack2013.xml.gz"
SHARED = ROOT.parent / "shared" / "data"
needs_shared = pytest.mark.skipif(not (SHARED / "clara2").exists(),
                                  reason="../shared/data (CLARA2, WSCD samples) not present")


def test_trec_session_counts_match_provenance():
    log = read_trec_session(TREC)
    s = log.summary()
    assert (s["sessions"], s["pages"], s["clicks"]) == (133, 401, 586)
    assert s["missing_end_times"] == 14 and s["empty_pages"] == 2
    assert s["queries_without_page"] == 87           # the final <currentquery> elements
    clicks = log.events[log.events["event"] == "click"]
    assert clicks["rank"].max() == 47                 # pages of up to 49 results
    pages = click_statistics(log, backend="pandas").pages
    assert pages.loc[~pages["clicked"], "count"].sum() == 152   # interactions with no click
    # PROVENANCE counts 27 repeated clicks; we count 28 clicks on an already clicked rank
    # (25 (page, rank) pairs, three ranks clicked three times)
    assert s["repeated_clicks"] == 28
    assert log.meta["session_topic"]["3"] == "6"


@needs_shared
def test_clara2_counts_match_provenance():
    log = read_clicks(SHARED / "clara2" / "CLARA2SearchLog_beta")
    s = log.summary()
    assert (s["sessions"], s["pages"]) == (18_522, 31_564)
    assert s["clicks"] + s["clicks_before_query"] == 11_613
    assert s["off_page_clicks"] == 722 and s["clicks_before_query"] == 2


@needs_shared
@pytest.mark.parametrize(("name", "pages", "off_page"), [
    ("trainSample", 35_064, 417), ("testSample", 21_413, 276),
    ("oneQueryTrain", 244, None), ("oneQueryTest", 269, None)])
def test_wscd_counts_match_provenance(name, pages, off_page):
    log = read_clicks(SHARED / "pyclick_yandex_wscd" / name)
    assert not log.has_sessions and not log.has_time
    assert log.summary()["pages"] == pages
    if off_page is not None:
        assert log.report["off_page_clicks"] == off_page
    assert log.results.groupby("serp_id").size().eq(10).all()


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


YANDEX = ("0\t0\tQ\t7\t0.0\tu1\tu2\tu3\n"
          "0\t1000\tC\tu2" + "\t" * 3 + "\n"
          "0\t3000\tC\tu9\n"            # not on the page
          "0\t4000\tC\tu2\n"            # repeated click
          "1\t5000\tC\tu1\n"            # click before any query of session 1
          "1\t6000\tQ\t8\t0.0\tu4\tu5\n"
          "1\t9000\tC\tu5\n")


def test_yandex_quirks_are_counted(tmp_path):
    p = write(tmp_path, "log", YANDEX)
    digest = hashlib.sha256(p.read_bytes()).hexdigest()
    log = read_yandex(p)
    assert hashlib.sha256(p.read_bytes()).hexdigest() == digest   # input untouched
    assert log.report["off_page_clicks"] == 1
    assert log.report["clicks_before_query"] == 1
    assert log.report["repeated_clicks"] == 1
    clicks = log.events[log.events["event"] == "click"]
    assert [None if pd.isna(x) else int(x) for x in clicks["rank"]] == [2, None, 2, 2]
    assert clicks["time"].tolist() == [1.0, 3.0, 4.0, 9.0]


@pytest.mark.parametrize(("text", "line", "message"), [
    ("0\t0\tQ\t7\t0.0\tu1\n0\tx\tC\tu1\n", 2, "time must be a number"),
    ("0\t5\tQ\t7\t0.0\tu1\n0\t3\tC\tu1\n", 2, "backwards"),
    ("0\t0\tX\t7\t0.0\tu1\n", 1, "unknown record type"),
    ("0\t0\tQ\n", 1, "at least 4"),
    ("0\t0\tC\tu1\textra\n", 1, "click line needs 4 fields"),
])
def test_yandex_malformed_lines(tmp_path, text, line, message):
    p = write(tmp_path, "log", text)
    with pytest.raises(FormatError, match=message) as info:
        read_yandex(p)
    assert info.value.line == line and str(p) in str(info.value)
    assert read_yandex(p, errors="skip").report["skipped_lines"] == 1


def test_wscd_separators_and_no_final_newline(tmp_path):
    p = write(tmp_path, "s", "5_1\ta,b,c : b , a; 5_1\ta,b,c :;  5_1\ta,b,c : z ;\n6_2\tx,y : y")
    log = read_wscd(p)
    assert log.summary()["pages"] == 4
    assert log.report["off_page_clicks"] == 1
    with pytest.raises(FormatError, match="expected"):
        read_wscd(write(tmp_path, "bad", "5_1 a,b,c b , a\n"))


def test_trec_xml_is_parsed_safely(tmp_path):
    bomb = ('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">'
            '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><sessiontrack2013>&b;</sessiontrack2013>')
    with pytest.raises(FormatError, match="unsafe XML"):
        read_trec_session(write(tmp_path, "bomb.xml", bomb))
    with pytest.raises(FormatError, match="malformed XML"):
        read_trec_session(write(tmp_path, "bad.xml", "<sessiontrack2013><session>"))


def test_canonical_round_trip_and_errors(tmp_path):
    log = read_trec_session(TREC)
    for name in ("events.csv", "events.tsv", "events.parquet"):
        path = write_canonical(log, tmp_path / name)
        back = read_canonical(path)
        pd.testing.assert_frame_equal(back.events, log.events, check_dtype=False)
        with pytest.raises(Exception, match="exists"):
            write_canonical(log, path)
    bad = tmp_path / "bad.csv"
    frame = log.events.head(5).copy()
    frame.to_csv(bad, index=False)
    text = bad.read_text().splitlines()
    text[3] = text[3].replace("click", "hover").replace("query", "hover")
    bad.write_text("\n".join(text))
    with pytest.raises(FormatError, match="unknown event type") as info:
        read_canonical(bad)
    assert info.value.line == 4
    t = tmp_path / "t.csv"
    frame.assign(time=frame["time"].astype(object).where(frame.index != 2, "soon")).to_csv(
        t, index=False)
    with pytest.raises(FormatError, match="non-numeric") as info:
        read_canonical(t)
    assert info.value.line == 4
    assert read_canonical(t, errors="skip").report["skipped_lines"] == 1


def test_unknown_format_and_missing_file(tmp_path):
    with pytest.raises(FormatError, match="cannot tell"):
        read_clicks(write(tmp_path, "x.log", "hello world\n"))
    with pytest.raises(FileNotFoundError):
        read_clicks(tmp_path / "nope")
    assert isinstance(read_clicks(TREC), ClickLog)
    assert np.isfinite(read_clicks(TREC).events["time"]).all()


def test_canonical_log_with_its_result_pages(tmp_path):
    """read_clicks(events, results=pages): page lengths and documents reach the walk."""
    from bayeschain.inference.pages import page_data
    from bayeschain.io.clicklog import concat_logs

    log = bc.simulate_click_log(40, n_ranks=6, seed=3)
    events, pages = tmp_path / "events.csv", tmp_path / "pages.tsv"
    log.events.to_csv(events, index=False)
    log.results.iloc[:-2].to_csv(pages, sep="\t", index=False)    # the last page lists 4
    back = bc.read_clicks(events, results=pages)
    assert back.results["doc_id"].tolist() == log.results["doc_id"].iloc[:-2].tolist()
    lengths = page_data(back).lengths
    assert set(lengths) <= {4, 6} and 4 in lengths
    # the same from DataFrames, and errors that name file and line
    frames = bc.read_clicks(log.events, results=log.results)
    assert frames.results["doc_id"].tolist() == log.results["doc_id"].tolist()
    bad = tmp_path / "bad.csv"
    bad.write_text("serp_id,rank,doc_id\n0,1,a\n0,one,b\n")
    with pytest.raises(FormatError, match=r"bad.csv:3: rank must be an integer"):
        bc.read_clicks(events, results=bad)
    bad.write_text("serp_id,rank,doc_id\n0,1,a\n0,1,b\n")
    with pytest.raises(FormatError, match="lists rank 1 twice"):
        bc.read_clicks(events, results=bad)
    bad.write_text("serp_id,rank,doc_id\n999,1,a\n")
    with pytest.raises(FormatError, match="not a page of the click log"):
        bc.read_clicks(events, results=bad)
    trec = Path(__file__).resolve().parents[2] / "data" / "trec_session_2013" / \
        "sessiontrack2013.xml.gz"
    with pytest.raises(FormatError, match="lists its pages itself"):
        bc.read_clicks(trec, results=pages)
    both = concat_logs([log, log])
    assert len(both.results) == 2 * len(log.results)
    assert both.events["serp_id"].nunique() == 2 * log.events["serp_id"].nunique()
    assert both.summary()["sessions"] == 2 * log.summary()["sessions"]
