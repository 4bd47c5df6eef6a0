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
    from bayeschain.inference.walk.data import page_data
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


# --- issue 16: the readers' defects -------------------------------------------------------

def session_xml(results: str, clicks: str = "", start: str = "1") -> str:
    """A one-session TREC Session XML; every element on its own line (line numbers)."""
    return ("<sessiontrack2013>\n"
            '<session num="1" starttime="0">\n'
            f'<interaction num="1" starttime="{start}">\n'
            "<query>q</query>\n"
            f"<results>\n{results}</results>\n"
            f"<clicked>\n{clicks}</clicked>\n"
            "</interaction>\n"
            "</session>\n"
            "</sessiontrack2013>\n")


def result(rank, doc):
    attr = "" if rank is None else f' rank="{rank}"'
    return f"<result{attr}><clueweb12id>{doc}</clueweb12id></result>\n"


def click(start, rank, end=None):
    end = "" if end is None else f' endtime="{end}"'
    return f'<click num="1" starttime="{start}"{end}><rank>{rank}</rank></click>\n'


def test_trec_session_ranks_are_bounded(tmp_path):
    """``<result rank="300000000">`` padded a tiny page with empty documents (1.3 GB at
    rank 10^7): ranks above 10,000, or more than twice the page's results, are refused
    naming the <result>'s line."""
    for rank, message in [(300_000_000, "from 1 to 10,000"), (10_001, "from 1 to 10,000"),
                          (25, "not more gaps than results")]:
        p = write(tmp_path, "s.xml", session_xml(result(1, "a") + result(rank, "b")))
        with pytest.raises(FormatError, match=message) as info:
            read_trec_session(p)
        assert (info.value.file, info.value.line) == (str(p), 7)
    p = write(tmp_path, "dup.xml", session_xml(result(1, "a") + result(1, "b")))
    with pytest.raises(FormatError, match="listed twice") as info:
        read_trec_session(p)
    assert info.value.line == 7
    # a small gap is padded; ranks given out of order land at their rank (they were
    # appended in file order)
    log = read_trec_session(write(tmp_path, "ok.xml",
                                  session_xml(result(3, "c") + result(1, "a"))))
    assert log.results["doc_id"].tolist() == ["a", "", "c"]
    skipped = read_trec_session(p, errors="skip")
    assert skipped.report["skipped_lines"] == 1 and skipped.summary()["pages"] == 0


@pytest.mark.parametrize(("results", "clicks", "line", "message"), [
    (result("x", "a"), "", 6, "rank must be an integer"),
    (result("2.5", "a"), "", 6, "rank must be an integer"),
    (result(None, "a"), "", 6, "rank is missing"),
    (result(1, "a"), click(2, "one"), 9, "click rank must be an integer"),
    (result(1, "a"), '<click num="1" starttime="2"></click>\n', 9, "click rank is missing"),
    (result(1, "a"), click(2, 0), 9, "click rank must be an integer from 1"),
])
def test_trec_session_malformed_ranks(tmp_path, results, clicks, line, message):
    """A non-numeric rank or a <result> without one raised ValueError / TypeError."""
    p = write(tmp_path, "s.xml", session_xml(results, clicks))
    with pytest.raises(FormatError, match=message) as info:
        read_trec_session(p)
    assert (info.value.file, info.value.line) == (str(p), line)


@pytest.mark.parametrize(("clicks", "start", "message"), [
    (click("nan", 1), "1", "click starttime must be finite"),
    (click("inf", 1), "1", "click starttime must be finite"),
    (click(2, 1, end="nan"), "1", "click endtime must be finite"),
    (click(5, 1, end=4), "1", "endtime 4 is before its starttime 5"),
    (click("0.5", 1), "1", "time goes backwards"),                 # before its query
    (click(5, 1) + click(3, 1), "1", "time goes backwards"),       # clicks out of order
    (click(2, 1), "nan", "interaction starttime must be finite"),
    (click(2, 1), "1_000", "interaction starttime must be a number"),
])
def test_trec_session_times_are_checked(tmp_path, clicks, start, message):
    """Out-of-order times, nan, inf and end < start were accepted silently."""
    p = write(tmp_path, "s.xml", session_xml(result(1, "a"), clicks, start=start))
    with pytest.raises(FormatError, match=message) as info:
        read_trec_session(p)
    assert info.value.file == str(p) and info.value.line in (3, 9, 10)
    assert read_trec_session(p, errors="skip").report["skipped_lines"] >= 1


def test_yandex_times_are_checked(tmp_path):
    """A ``nan`` time switched the time check off for the rest of its session: every
    comparison with NaN is false.  Non-finite times are refused; ties are counted."""
    for token, message in [("nan", "finite"), ("inf", "finite"), ("1e400", "finite"),
                           ("1_000", "a number")]:
        p = write(tmp_path, "log", f"0\t0\tQ\t7\t0\tu1\tu2\n0\t{token}\tC\tu1\n"
                                   "0\t5000\tC\tu2\n0\t3000\tC\tu1\n")
        with pytest.raises(FormatError, match=f"time must be {message}") as info:
            read_yandex(p)
        assert (info.value.file, info.value.line) == (str(p), 2)
        # skipping the bad time no longer hides the backward step on line 4
        assert read_yandex(p, errors="skip").report["skipped_lines"] == 2
    log = read_yandex(write(tmp_path, "ties", "0\t0\tQ\t7\t0\tu1\tu2\n0\t5\tC\tu1\n"
                                              "0\t5\tC\tu2\n"))
    assert log.report["tied_times"] == 1 and log.summary()["clicks"] == 2


@needs_shared
def test_clara2_has_ties_but_no_backward_times():
    """The decision's data: CLARA2 has 13 events in the same millisecond as the previous
    one of their session (legitimate: counted) and none going backwards (an error)."""
    log = read_clicks(SHARED / "clara2" / "CLARA2SearchLog_beta")
    assert log.summary()["tied_times"] == 13


CANONICAL_HEADER = "session_id,query_id,serp_id,event,rank,doc_id,time,end_time,seq\n"


@pytest.mark.parametrize(("rows", "line", "message"), [
    ("s,q,0,query,,,0,,0\ns,q,0,click,1,d,inf,,1\n", 3, "non-numeric value 'inf'"),
    ("s,q,0,query,,,0,,0\ns,q,0,click,1,d,1e400,,1\n", 3, "time must be finite"),
    ("s,q,0,query,,,0,,0\ns,q,0,click,1,d,2,1,1\n", 3, "end_time 1 is before time 2"),
    ("s,q,0,query,,,5,,0\ns,q,0,click,1,d,,,1\ns,q,0,click,1,d,3,,2\n", 4, "backwards"),
    ("s,q,0,query,,,0,,0\n,q,0,click,1,d,1,,1\n", 3, "session_id is empty"),
])
def test_canonical_times_are_checked(tmp_path, rows, line, message):
    """inf and end < start were accepted; an empty time switched the order check off for
    the next event."""
    p = write(tmp_path, "e.csv", CANONICAL_HEADER + rows)
    with pytest.raises(FormatError, match=message) as info:
        read_canonical(p)
    assert (info.value.file, info.value.line) == (str(p), line)


@pytest.mark.parametrize(("text", "line", "message"), [
    ("", 1, "empty file"),
    ("\n\n", 1, "empty file"),
    (CANONICAL_HEADER + "s,q,0,query,,,0,,0\ns,q,0,click,1,d,1,,1,extra\n", 3,
     "expected 9 fields"),
    (CANONICAL_HEADER + "s,q,0,query,,,0,,0,x\ns,q,0,click,1,d,1,,1,y\n", 2,
     "expected 9 fields"),                      # pandas made the first column the index
    (CANONICAL_HEADER + "s,q,0,query,,,0,,0\ns,q,0,click,1,d\n", 3, "expected 9 fields"),
    (CANONICAL_HEADER + "s,q,0,query,,,0,,0\ns,q,0,click,2.5,d,1,,1\n", 3,
     "rank must be an integer from 1 to 10,000, found '2.5'"),
    (CANONICAL_HEADER + "s,q,0,query,,,0,,0\ns,q,0,click,1e30,d,1,,1\n", 3,
     "rank must be an integer from 1 to 10,000"),
    (CANONICAL_HEADER + "s,q,0,query,,,0,,0\ns,q,0,click,1,d,1,,\n", 3, "seq must not be"),
    (CANONICAL_HEADER + "s,q,0,query,,,0,,0\n\ns,\"q\",0,click,1,d,1,,1.5\n", 4,
     "seq must be an integer"),                 # quotes and a blank line: exact line
    (CANONICAL_HEADER + 's,"q,0,query,,,0,,0\n', 2, "expected 9 fields|malformed CSV"),
])
def test_canonical_csv_errors(tmp_path, text, line, message):
    """An empty file, an extra field and a rank of 2.5 or 1e30 raised tracebacks (pandas'
    EmptyDataError / ParserError, a failed Int64 cast)."""
    p = write(tmp_path, "e.csv", text)
    with pytest.raises(FormatError, match=message) as info:
        read_canonical(p)
    assert (info.value.file, info.value.line) == (str(p), line)


def test_canonical_results_bounds(tmp_path):
    events = write(tmp_path, "e.csv", CANONICAL_HEADER + "s,q,0,query,,,0,,0\n")
    for rank in ("2.5", "1e30", "inf"):
        pages = write(tmp_path, "p.csv", f"serp_id,rank,doc_id\n0,1,a\n0,{rank},b\n")
        with pytest.raises(FormatError, match="rank must be an integer from 1") as info:
            read_canonical(events, results=pages)
        assert info.value.line == 3


def test_latin1_yandex_with_format(tmp_path):
    """The Yandex format is ASCII ids: a Latin-1 file is a FormatError about the encoding
    (it was a UnicodeDecodeError traceback with --format yandex)."""
    p = tmp_path / "log"
    p.write_bytes("0\t0\tQ\t7\t0\tu1\n0\t1\tC\tcaf\u00e9\n".encode("latin-1"))
    for fmt in ("yandex", None):
        with pytest.raises(FormatError, match="not UTF-8") as info:
            read_clicks(p, format=fmt)
        assert (info.value.file, info.value.line) == (str(p), 2)
    p.write_bytes("0\t0\tQ\t7\t0\tu1\n".encode("utf-16"))
    with pytest.raises(FormatError, match="UTF-8"):
        read_clicks(p, format="wscd")


def test_truncated_gzip_click_logs(tmp_path):
    """Truncated .gz logs raised EOFError; canonical .csv.gz was recognised but refused."""
    import gzip

    data = TREC.read_bytes()
    for cut in (1, 100, len(data) // 2):
        p = tmp_path / f"s{cut}.xml.gz"
        p.write_bytes(data[:cut])
        with pytest.raises(FormatError, match="truncated gzip file") as info:
            read_clicks(p)
        assert info.value.file == str(p)
    packed = gzip.compress("".join(f"{k}\t0\tQ\t7\t0.0\tu1\tu2\n{k}\t9\tC\tu2\n"
                                   for k in range(500)).encode())
    p = tmp_path / "log.gz"
    p.write_bytes(packed[: len(packed) - 10])
    with pytest.raises(FormatError, match="truncated gzip file"):
        read_clicks(p, format="yandex")
    log = read_trec_session(TREC)
    csv = tmp_path / "events.csv"
    write_canonical(log, csv)
    (tmp_path / "events.csv.gz").write_bytes(gzip.compress(csv.read_bytes()))
    back = read_clicks(tmp_path / "events.csv.gz")
    pd.testing.assert_frame_equal(back.events, log.events, check_dtype=False)
    cut = gzip.compress(csv.read_bytes())
    (tmp_path / "cut.csv.gz").write_bytes(cut[: len(cut) // 2])
    with pytest.raises(FormatError, match="truncated gzip file"):
        read_clicks(tmp_path / "cut.csv.gz")


def test_issue16_sessions_are_contiguous_and_unique(tmp_path):
    """Found by fuzzing: a Yandex session whose lines resumed after another session kept
    its id with a clock restarted, so its times went backwards within the session (and the
    log could not be read back as canonical); a TREC <session num> given twice likewise."""
    p = write(tmp_path, "log", "0\t0\tQ\t7\t0\tu1\n1\t5\tQ\t8\t0\tu2\n0\t1\tC\tu1\n")
    with pytest.raises(FormatError, match="session '0' resumes") as info:
        read_yandex(p)
    assert info.value.line == 3
    assert read_yandex(p, errors="skip").report["skipped_lines"] == 1
    twice = session_xml(result(1, "a")).replace(
        "</session>\n", "</session>\n" + '<session num="1" starttime="0">\n</session>\n')
    with pytest.raises(FormatError, match="appears twice") as info:
        read_trec_session(write(tmp_path, "s.xml", twice))
    assert info.value.line == 12
