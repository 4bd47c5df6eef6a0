"""Fuzzing the readers: a mutated valid input is either read into a valid result or refused
with a bayeschain error (a ``BayeschainError``) whose message names the file -- never
another exception.

Seeds are real files: trec_eval's qrels and runs (data/trec_eval), three sessions of the
TREC Session 2013 XML (data/trec_session_2013), the canonical CSV of that log and its
result pages, and Yandex (CLARA2) and WSCD samples from ../shared/data when present (else
small samples in the same formats).  Mutations: tokens replaced by null spellings (``NA``,
``#N/A``, ``null``...), ``nan``/``inf``, huge and negative numbers, ``1_000``, hex,
non-ASCII digits, control characters or random text; tokens and lines swapped, deleted,
duplicated; separators changed; comment and blank lines; then CRLF line ends, re-encoding
(Latin-1, cp1252, UTF-16, UTF-8 with a byte-order mark), gzip compression and truncation
(of the plain or the compressed bytes), ``.gz`` names on plain files.  Every reader runs
with ``errors="raise"`` and ``errors="skip"``.

A valid result: TREC frames without nulls, integer grades, finite scores, no (topic, doc)
twice, runs in trec_eval's order and, with ``errors="raise"``, the same rows as the careful
line-by-line parser (the fast Arrow and pandas paths may never read a file differently);
click logs with ranks from 1 to ``MAX_RANK``, unique ranks per page, clicks on the rank of
their page, no infinite time, finite times where the format has a clock, times that never
go backwards within a session, end times not before start times, non-negative counts.

Profiles
--------
* default (plain ``python3 -m pytest``, CI): 50 examples per test, derandomized, as every
  fuzz module (tests/fuzz/profile.py; these had drawn new examples at every run, so a test
  took 2 s in one run of the suite and 22 s in the run before); the fuzz tests are never
  deselected.
* long: ``python3 -m pytest tests/fuzz -m fuzz --hypothesis-profile=fuzz`` (the ``fuzz``
  profile of tests/fuzz/conftest.py: 2,000 examples per test, 8 tests, 16,000 inputs);
  ``BAYESCHAIN_FUZZ=long`` does the same from any command line (as in
  tests/fuzz/test_measures.py), and ``BAYESCHAIN_FUZZ_EXAMPLES=N`` runs N per test.  Add
  ``--hypothesis-show-statistics`` to see how many examples each test ran.
"""

from __future__ import annotations

import functools
import gzip
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from bayeschain.errors import BayeschainError
from bayeschain.io import trec
from bayeschain.io.clickformats import read_clicks, read_trec_session
from bayeschain.io.clicklog import EVENT_COLUMNS, MAX_RANK, read_canonical
from tests.fuzz.profile import fuzz_settings

pytestmark = pytest.mark.fuzz

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
SHARED = ROOT.parent / "shared" / "data"

FUZZ = fuzz_settings()


# --- seeds ------------------------------------------------------------------------------

def head(path: Path, n: int) -> str:
    return "".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:n])


QRELS_SEEDS = [head(DATA / "trec_eval" / "qrels.test", 40),
               head(DATA / "trec_eval" / "qrels.rel_level", 30),
               head(DATA / "trec_eval" / "qrels.comment.test", 20)]
RUN_SEEDS = [head(DATA / "trec_eval" / "results.test", 40),
             head(DATA / "trec_eval" / "results.comment.test", 30),
             head(DATA / "ir_measures" / "cwl.run", 20)]


def _yandex_seed() -> str:
    clara = SHARED / "clara2" / "CLARA2SearchLog_beta"
    if clara.exists():
        return head(clara, 40)
    return ("0\t0\tQ\t7\t0.0\tu1\tu2\tu3\n0\t1000\tC\tu2\t\t\t\n0\t3000\tC\tu9\n"
            "0\t4000\tC\tu2\n1\t5000\tC\tu1\n1\t6000\tQ\t8\t0.0\tu4\tu5\n1\t9000\tC\tu5\n")


def _wscd_seed() -> str:
    wscd = SHARED / "pyclick_yandex_wscd" / "oneQueryTrain"
    if wscd.exists():
        return ";".join(wscd.read_text(encoding="utf-8").split(";")[:12]) + "\n"
    return "5_1\ta,b,c : b , a; 5_1\ta,b,c :;  5_1\ta,b,c : z ;\n6_2\tx,y : y\n"


def _session_seed() -> str:
    """Three sessions of the TREC 2013 log, at most 5 results per page, no long texts."""
    text = gzip.open(DATA / "trec_session_2013" / "sessiontrack2013.xml.gz").read().decode()
    end = 0
    for _ in range(3):
        end = text.index("</session>", end) + len("</session>")
    text = text[:end] + "\n</sessiontrack2013>\n"
    text = re.sub(r"<(snippet|url|desc)>.*?</\1>", "", text, flags=re.S)
    text = re.sub(r'<result rank="([6-9]|\d\d+)">.*?</result>', "", text, flags=re.S)
    return "\n".join(line for line in text.splitlines() if line.strip()) + "\n"


YANDEX_SEED, WSCD_SEED, SESSION_SEED = _yandex_seed(), _wscd_seed(), _session_seed()


@functools.cache
def canonical_seeds() -> tuple[str, str]:
    """The canonical events and result pages of the session seed, as CSV text."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "seed.xml"
        path.write_text(SESSION_SEED, encoding="utf-8")
        log = read_trec_session(path)
    return log.events.to_csv(index=False), log.results.to_csv(index=False)


# --- mutations --------------------------------------------------------------------------

NASTY = ["nan", "NaN", "-nan", "NA", "N/A", "null", "NULL", "#N/A", "None", "inf", "-inf",
         "Infinity", "1e400", "-1e400", "1e308", "1_000", "0x10", "0x1p3", "1e5", "2.5", "-1",
         "0", "+1", "-0", "1.", ".5", "99999999999999999999", "300000000", "10001", "10000",
         "9223372036854775808", "", " ", "#", "\u00e9", "\x00", "\ufeff", "\r", "\x0b",
         "\x0c", "\u00a0", "\uff11", "\u0663", "Q", "C", "query", "click", '"', "'", ",",
         ";", ":", "\t", "<", "&amp;", "&bogus;", "NA", "<result>", 'rank="1"', "\n"]
TOKEN = (st.sampled_from(NASTY) | st.text(max_size=8) | st.integers().map(str)
         | st.floats().map(repr))
SPLIT = re.compile(r'(\s+|[,;:<>="/])')     # separators kept at the odd positions
NUMBER = re.compile(r"[0-9.eE+-]+")


@st.composite
def mutated(draw, seeds: list[str]) -> tuple[bytes, str]:
    """``(bytes, name suffix)``: a seed mutated token- and line-wise, then encoded."""
    lines = draw(st.sampled_from(seeds)).split("\n")
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "comment", "blank",
                                   "huge"]))
        i = draw(st.integers(0, len(lines) - 1)) if lines else 0
        j = draw(st.integers(0, len(lines) - 1)) if lines else 0
        if not lines:
            break
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(j, lines[i])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "comment":
            lines.insert(i, "# " + draw(st.text(max_size=10)))
        elif op == "huge":          # longer than the fast parsers' sniffed head (64 KiB)
            lines.insert(i, draw(st.sampled_from(["x", "1 ", "\t"])) * 70_000)
        else:
            lines.insert(i, draw(st.sampled_from(["", " ", "\t", "\r"])))
    parts = SPLIT.split("\n".join(lines))
    n_tokens = (len(parts) + 1) // 2
    for _ in range(draw(st.integers(0, 5))):
        op = draw(st.sampled_from(["number", "number", "replace", "swap", "delete", "insert",
                                   "separator"]))
        k = 2 * draw(st.integers(0, n_tokens - 1))
        if op == "number":
            numbers = [i for i in range(0, len(parts), 2) if NUMBER.fullmatch(parts[i])]
            if numbers:
                parts[draw(st.sampled_from(numbers))] = draw(TOKEN)
        elif op == "replace":
            parts[k] = draw(TOKEN)
        elif op == "swap":
            other = 2 * draw(st.integers(0, n_tokens - 1))
            parts[k], parts[other] = parts[other], parts[k]
        elif op == "delete":
            parts[k] = ""
        elif op == "insert":
            parts[k] = draw(TOKEN) + draw(st.sampled_from([" ", "\t", ","])) + parts[k]
        elif len(parts) > 1:
            sep = 2 * draw(st.integers(0, len(parts) // 2 - 1)) + 1
            parts[sep] = draw(st.sampled_from([" ", "\t", "  ", " \t", "\n", ",", ";", ""]))
    text = "".join(parts)
    text = text.replace("\n", draw(st.sampled_from(["\n", "\n", "\n", "\r\n", "\r"])))
    encoding = draw(st.sampled_from(["utf-8"] * 5 + ["latin-1", "cp1252", "utf-16",
                                                     "utf-16-le", "utf-8-sig"]))
    data = text.encode(encoding, errors="replace")
    packing = draw(st.sampled_from(["plain"] * 5 + ["gzip", "gzip", "gzip-cut", "cut",
                                                    "gz-name"]))
    suffix = ""
    if packing.startswith("gzip"):
        data = gzip.compress(data, mtime=0)
        suffix = draw(st.sampled_from([".gz", ".gz", ""]))    # gzip found by its magic
    if packing.endswith("cut"):
        data = data[:draw(st.integers(0, max(len(data) - 1, 0)))]
    if packing == "gz-name":
        suffix = ".gz"
    return data, suffix


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def write(folder: Path, stem: str, case: tuple[bytes, str]) -> Path:
    data, suffix = case
    path = folder / (stem + suffix)
    path.write_bytes(data)
    return path


def attempt(read, path: Path, *args, **kwargs):
    """The reader's result, or None when it refused the input with a bayeschain error that
    names the file; any other exception fails the test."""
    try:
        result = read(path, *args, **kwargs)
    except BayeschainError as exc:
        assert str(path) in str(exc), f"the error does not name the file: {exc}"
        event("refused: " + re.sub(r"[0-9'\"].*", "", exc.message)[:40])
        return None
    event("read")
    return result


ERRORS = st.sampled_from(["raise", "skip"])


# --- TREC files -------------------------------------------------------------------------

def check_ids(frame) -> None:
    for col in ("query_id", "doc_id"):
        ids = frame[col].tolist()
        assert all(isinstance(v, str) and v and not re.search(r"[ \t\r\n\x0b\x0c]", v)
                   for v in ids), col


def rows(frame) -> list[tuple]:
    return [tuple(r) for r in frame.astype(object).itertuples(index=False)]


@FUZZ
@given(case=mutated(QRELS_SEEDS), errors=ERRORS)
def test_fuzz_qrels(workdir, case, errors):
    path = write(workdir, "qrels", case)
    frame = attempt(trec.read_qrels, path, errors=errors)
    if frame is None:
        return
    assert list(frame.columns) == ["query_id", "doc_id", "relevance"]
    assert not frame.isna().any().any()
    assert frame["relevance"].dtype == np.int64
    check_ids(frame)
    assert not frame.duplicated(["query_id", "doc_id"]).any()
    if errors == "raise":       # every parser reads a file as the careful one does
        careful, _ = trec._careful_parse(path, trec.QRELS_COLUMNS, trec._QRELS_KEEP,
                                         trec._QRELS_NUMERIC, "raise", False)
        assert rows(frame) == rows(trec._to_pandas(careful))


@FUZZ
@given(case=mutated(RUN_SEEDS), errors=ERRORS)
def test_fuzz_runs(workdir, case, errors):
    path = write(workdir, "run", case)
    frame = attempt(trec.read_run, path, errors=errors)
    if frame is None:
        return
    assert list(frame.columns) == ["query_id", "doc_id", "score", "run_id"]
    assert not frame.isna().any().any()
    assert frame["score"].dtype == np.float64 and np.isfinite(frame["score"]).all()
    check_ids(frame)
    assert not frame.duplicated(["query_id", "doc_id"]).any()
    got = rows(frame)
    assert got == sorted(got, key=lambda r: (r[0].encode(), -r[2], _desc(r[1])))
    if errors == "raise":
        careful, _ = trec._careful_parse(path, trec.RUN_COLUMNS, trec._RUN_KEEP,
                                         trec._RUN_NUMERIC, "raise", True)
        assert got == rows(trec._trec_sorted(careful))


def _desc(text: str) -> tuple:
    """A key ordering strings descending by their UTF-8 bytes (Arrow's order)."""
    return tuple(-b for b in text.encode()) + (1,)


# --- click logs -------------------------------------------------------------------------

def check_log(log, *, clock: bool, pages: bool = True) -> None:
    """The invariants of a valid log; ``pages``: clicks with a rank are on their page (the
    readers of formats that list pages; a canonical log's result table may be partial)."""
    ev, res = log.events, log.results
    assert list(ev.columns) == EVENT_COLUMNS
    assert ev["event"].isin(["query", "click"]).all()
    assert ev["session_id"].notna().all()
    rank = ev["rank"].dropna().astype("int64")
    assert ((rank >= 1) & (rank <= MAX_RANK)).all()
    t = ev["time"].to_numpy(dtype=float)
    end = ev["end_time"].to_numpy(dtype=float)
    assert not np.isinf(t).any() and not np.isinf(end).any()
    if clock:
        assert np.isfinite(t).all()
    with np.errstate(invalid="ignore"):
        assert not (end < t).any()
    for _, times in ev.groupby("session_id", sort=False)["time"]:
        known = times.dropna().to_numpy()
        assert (np.diff(known) >= 0).all(), "time goes backwards within a session"
    res_rank = res["rank"].astype("int64")
    assert ((res_rank >= 1) & (res_rank <= MAX_RANK)).all()
    assert not res.duplicated(["serp_id", "rank"]).any()
    if pages and len(res):
        shown = set(zip(res["serp_id"].astype("int64"), res_rank, strict=True))
        clicks = ev[(ev["event"] == "click") & ev["rank"].notna()]
        assert all((int(s), int(r)) in shown
                   for s, r in zip(clicks["serp_id"], clicks["rank"], strict=True))
    summary = log.summary()
    assert all(int(v) == v and v >= 0 for v in summary.values()), summary


@FUZZ
@given(case=mutated([YANDEX_SEED]), errors=ERRORS)
def test_fuzz_yandex(workdir, case, errors):
    log = attempt(read_clicks, write(workdir, "yandex", case), format="yandex",
                  errors=errors)
    if log is not None:
        check_log(log, clock=True)


@FUZZ
@given(case=mutated([WSCD_SEED]), errors=ERRORS)
def test_fuzz_wscd(workdir, case, errors):
    log = attempt(read_clicks, write(workdir, "wscd", case), format="wscd", errors=errors)
    if log is not None:
        check_log(log, clock=False)


@FUZZ
@given(case=mutated([SESSION_SEED]), errors=ERRORS)
def test_fuzz_trec_session(workdir, case, errors):
    log = attempt(read_clicks, write(workdir, "session.xml", case), format="trec-session",
                  errors=errors)
    if log is not None:
        check_log(log, clock=True)


@FUZZ
@given(data=st.data(), errors=ERRORS, kind=st.sampled_from([".csv", ".tsv"]))
def test_fuzz_canonical_events(workdir, data, errors, kind):
    events, _ = canonical_seeds()
    if kind == ".tsv":
        events = events.replace(",", "\t")
    data_, suffix = data.draw(mutated([events]))
    log = attempt(read_canonical, write(workdir, "events" + kind, (data_, suffix)),
                  errors=errors)
    if log is not None:
        check_log(log, clock=False, pages=False)


@FUZZ
@given(data=st.data())
def test_fuzz_canonical_results(workdir, data):
    events, pages = canonical_seeds()
    events_path = workdir / "seed-events.csv"
    if not events_path.exists():
        events_path.write_text(events, encoding="utf-8")
    pages_path = write(workdir, "pages.csv", data.draw(mutated([pages])))
    log = attempt(lambda p: read_canonical(events_path, results=p), pages_path)
    if log is None:
        return
    check_log(log, clock=True, pages=False)


@FUZZ
@given(case=mutated([YANDEX_SEED, WSCD_SEED, SESSION_SEED]), errors=ERRORS)
def test_fuzz_guessed_format(workdir, case, errors):
    """``read_clicks`` without a format: the guess, then the reader it picks."""
    log = attempt(read_clicks, write(workdir, "log", case), errors=errors)
    if log is not None:
        check_log(log, clock=log.has_time)
