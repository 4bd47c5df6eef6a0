"""Readers for real click-log formats, producing :class:`~bayeschain.io.clicklog.ClickLog`.

* :func:`read_yandex` — the Yandex relevance-prediction format with timestamps (as in
  CLARA2): tab-separated query lines ``SessionID TimePassed Q QueryID RegionID URL1..URLn``
  and click lines ``SessionID TimePassed C URLID`` (trailing empty fields allowed).
  ``TimePassed`` is a global clock in milliseconds (``time_unit=0.001`` turns it into
  seconds).  A click is attributed to the latest page of its session; a clicked URL not on
  that page is kept with a null rank and counted (``off_page_clicks``); a click before any
  query of its session cannot be attributed and is counted (``clicks_before_query``).
* :func:`read_wscd` — PyClick's preprocessed WSCD 2012 sample: records separated by ``;``
  and newlines, ``<query>_<region>\\t<url>,...,<url> : <click> , <click> ...``, clicks in
  order, no clock, no sessions (each page is its own session).
* :func:`read_trec_session` — TREC Session track XML, parsed with defusedxml (no entity
  expansion, no external entities).  Click start and end times, ``NA`` end times
  (counted, ``missing_end_times``), pages of any length, repeated clicks, and the final
  ``currentquery`` (a query event without a page: it tells that the user reformulated).

All readers count repeated clicks (same rank clicked again on a page, ``repeated_clicks``)
and, with ``errors="skip"``, malformed lines (``skipped_lines``); with
``errors="raise"`` (default) a malformed line is a :class:`FormatError` naming file and
line.  No input file is modified.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..errors import FormatError
from .clicklog import RESULT_COLUMNS, ClickLog, make_events


def open_text(path: Path):
    """Open a text file, transparently gunzipping ``.gz`` files."""
    import gzip

    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


class _Builder:
    """Accumulates canonical events and page contents while a reader walks a file."""

    def __init__(self, path: Path, errors: str):
        if errors not in ("raise", "skip"):
            raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")
        self.path, self.errors = path, errors
        self.rows: dict[str, list] = {c: [] for c in
                                      ("session_id", "query_id", "serp_id", "event", "rank",
                                       "doc_id", "time", "end_time", "seq")}
        self.results: dict[str, list] = {c: [] for c in RESULT_COLUMNS}
        self.report = {"off_page_clicks": 0, "clicks_before_query": 0, "repeated_clicks": 0,
                       "missing_end_times": 0, "skipped_lines": 0, "empty_pages": 0,
                       "queries_without_page": 0}
        self.serp = -1
        self.texts: dict[str, str] = {}      # doc -> title and snippet, when the log has them
        self.page: dict[str, int] = {}      # doc -> rank on the current page
        self.clicked: set[int] = set()

    def problem(self, message: str, line: int) -> None:
        if self.errors == "raise":
            raise FormatError(message, file=self.path, line=line)
        self.report["skipped_lines"] += 1

    def query(self, session, query, time, docs, *, has_page: bool = True) -> None:
        """A query event; with ``has_page=False`` (a final query whose page the log does not
        show) it gets a null ``serp_id`` and no page."""
        self.page = {}
        self.clicked = set()
        if not has_page:
            self.report["queries_without_page"] += 1
            self._event(session, query, None, "query", None, None, time, math.nan)
            return
        self.serp += 1
        for rank, doc in enumerate(docs, start=1):
            self.page.setdefault(doc, rank)
            self.results["serp_id"].append(self.serp)
            self.results["rank"].append(rank)
            self.results["doc_id"].append(doc)
        if not docs:
            self.report["empty_pages"] += 1
        self._event(session, query, self.serp, "query", None, None, time, math.nan)

    def click(self, session, query, doc, time, *, rank=None, end_time=math.nan) -> None:
        if rank is None:
            rank = self.page.get(doc)
        elif doc is None:
            doc = next((d for d, r in self.page.items() if r == rank), None)
            if doc is None:
                rank = None
        if rank is None:
            self.report["off_page_clicks"] += 1
        elif rank in self.clicked:
            self.report["repeated_clicks"] += 1
        if rank is not None:
            self.clicked.add(rank)
        self._event(session, query, self.serp, "click", rank, doc, time, end_time)

    def _event(self, session, query, serp, event, rank, doc, time, end_time) -> None:
        r = self.rows
        r["session_id"].append(session)
        r["query_id"].append(query)
        r["serp_id"].append(serp)
        r["event"].append(event)
        r["rank"].append(rank)
        r["doc_id"].append(doc)
        r["time"].append(time)
        r["end_time"].append(end_time)
        r["seq"].append(len(r["seq"]))

    def build(self, *, has_sessions: bool, has_time: bool, meta=None) -> ClickLog:
        events = make_events(self.rows)
        results = pd.DataFrame(self.results).astype({"serp_id": "int64", "rank": "int64",
                                                     "doc_id": "string"})
        return ClickLog(events, results, self.report, has_sessions=has_sessions,
                        has_time=has_time, source=str(self.path), meta=dict(meta or {}))


def read_yandex(path, *, errors: str = "raise", time_unit: float = 0.001) -> ClickLog:
    """Read a Yandex relevance-prediction log with timestamps (CLARA2 format)."""
    path = Path(path)
    b = _Builder(path, errors)
    session = None
    query = None
    last_time = -math.inf
    with open_text(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            fields = raw.rstrip("\r\n").split("\t")
            while fields and fields[-1] == "":
                fields.pop()
            if not fields:
                continue
            if len(fields) < 4:
                b.problem(f"expected at least 4 tab-separated fields, found {len(fields)}",
                          lineno)
                continue
            sid, tval, kind = fields[0], fields[1], fields[2]
            try:
                t = float(tval) * time_unit
            except ValueError:
                b.problem(f"time must be a number, found {tval!r}", lineno)
                continue
            if sid != session:
                session, query, last_time = sid, None, -math.inf
                b.page, b.clicked = {}, set()
            if t < last_time:
                b.problem("time goes backwards within the session", lineno)
                continue
            if kind == "Q":
                if len(fields) < 6:
                    b.problem("query line needs SessionID TimePassed Q QueryID RegionID "
                              "URL1..URLn", lineno)
                    continue
                query = fields[3]
                b.query(sid, query, t, fields[5:])
            elif kind == "C":
                if len(fields) != 4:
                    b.problem(f"click line needs 4 fields, found {len(fields)}", lineno)
                    continue
                if query is None:
                    b.report["clicks_before_query"] += 1
                    last_time = t
                    continue
                b.click(sid, query, fields[3], t)
            else:
                b.problem(f"unknown record type {kind!r}; expected Q or C", lineno)
                continue
            last_time = t
    return b.build(has_sessions=True, has_time=True)


def read_wscd(path, *, errors: str = "raise") -> ClickLog:
    """Read PyClick's preprocessed WSCD sample (pages with ordered clicks, no clock)."""
    path = Path(path)
    b = _Builder(path, errors)
    with open_text(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            for record in raw.split(";"):
                record = record.strip()
                if not record:
                    continue
                key, tab, rest = record.partition("\t")
                urls, colon, clicks = rest.partition(":")
                docs = [u.strip() for u in urls.split(",") if u.strip()]
                if not tab or not colon or not docs:
                    b.problem("expected '<query>_<region>\\t<url>,...,<url> : <click> , ...'",
                              lineno)
                    continue
                session = f"{b.serp + 1}"   # no sessions: one per page
                b.query(session, key.strip(), math.nan, docs)
                for doc in (c.strip() for c in clicks.split(",")):
                    if doc:
                        b.click(session, key.strip(), doc, math.nan)
    return b.build(has_sessions=False, has_time=False)


def read_trec_session(path, *, errors: str = "raise") -> ClickLog:
    """Read TREC Session track XML (2011-2014 layout) with a hardened XML parser."""
    import defusedxml.ElementTree as safe_et
    from defusedxml import DefusedXmlException

    path = Path(path)
    b = _Builder(path, errors)
    try:
        with (open_text(path) if path.suffix == ".gz" else open(path, "rb")) as fh:
            root = safe_et.parse(fh).getroot()
    except DefusedXmlException as exc:
        raise FormatError(f"refused unsafe XML ({type(exc).__name__})", file=path) from None
    except safe_et.ParseError as exc:
        line = getattr(exc, "position", (None,))[0]
        raise FormatError(f"malformed XML: {exc}", file=path, line=line) from None
    topics: dict[str, str] = {}
    for session in root.iter("session"):
        sid = session.get("num")
        if sid is None:
            b.problem("<session> without num attribute", None)
            continue
        topic = session.find("topic")
        if topic is not None and topic.get("num") is not None:
            topics[sid] = topic.get("num")
        for node in session:
            if node.tag == "interaction":
                _trec_interaction(b, sid, node)
            elif node.tag == "currentquery":
                t = _float(b, node.get("starttime"), "currentquery starttime")
                b.query(sid, _text(node.find("query")), t, [], has_page=False)
    log = b.build(has_sessions=True, has_time=True,
                  meta={"session_topic": topics, "doc_text": b.texts})
    return log


def _trec_interaction(b: _Builder, sid: str, node) -> None:
    t = _float(b, node.get("starttime"), "interaction starttime")
    query = _text(node.find("query"))
    docs = []
    results = node.find("results")
    for res in ([] if results is None else results.findall("result")):
        rank = int(res.get("rank"))
        doc = _text(res.find("clueweb12id"))
        b.texts.setdefault(doc, f"{_text(res.find('title'))} {_text(res.find('snippet'))}")
        while len(docs) < rank - 1:
            docs.append(None)
        docs.append(doc)
    b.query(sid, query, t, [d if d is not None else "" for d in docs])
    clicked = node.find("clicked")
    for click in ([] if clicked is None else clicked.findall("click")):
        start = _float(b, click.get("starttime"), "click starttime")
        end_text = click.get("endtime")
        if end_text in (None, "NA", ""):
            b.report["missing_end_times"] += 1
            end = math.nan
        else:
            end = _float(b, end_text, "click endtime")
        rank = int(_text(click.find("rank")))
        on_page = 1 <= rank <= len(docs) and docs[rank - 1]
        b.click(sid, query, docs[rank - 1] if on_page else None, start,
                rank=rank if on_page else None, end_time=end)
        if not on_page:
            b.rows["doc_id"][-1] = None


def _text(node) -> str:
    return "" if node is None or node.text is None else " ".join(node.text.split())


def _float(b: _Builder, text, what: str) -> float:
    try:
        return float(text)
    except (TypeError, ValueError):
        if b.errors == "raise":
            raise FormatError(f"{what} must be a number, found {text!r}", file=b.path) from None
        b.report["skipped_lines"] += 1
        return math.nan


def read_clicks(path, *, format: str | None = None, errors: str = "raise",  # noqa: A002
                **options) -> ClickLog:
    """Read a click log, guessing the format from the file when ``format`` is None.

    Formats: ``"yandex"`` (query/click lines with timestamps), ``"wscd"`` (PyClick's
    preprocessed sample), ``"trec-session"`` (XML), ``"canonical"`` (CSV/TSV/Parquet in the
    canonical schema, or a DataFrame of canonical events).  Canonical logs take their
    result pages with ``results=`` (a file or DataFrame of ``serp_id, rank, doc_id``); the
    other formats list their pages themselves.
    """
    from .clicklog import read_canonical

    if isinstance(path, pd.DataFrame):
        return read_canonical(path, errors=errors, **options)
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    fmt = format or _guess_format(path)
    readers = {"yandex": read_yandex, "wscd": read_wscd, "trec-session": read_trec_session,
               "canonical": read_canonical}
    if fmt not in readers:
        raise FormatError(f"unknown click-log format {fmt!r}; valid: {', '.join(readers)}",
                          file=path)
    if fmt != "canonical" and options.pop("results", None) is not None:
        raise FormatError("results= gives the pages of a canonical log; this format lists "
                          "its pages itself", file=path)
    return readers[fmt](path, errors=errors, **options)


def _guess_format(path: Path) -> str:
    if path.suffix.lower() in (".csv", ".tsv", ".parquet") or path.name.endswith(".csv.gz"):
        return "canonical"
    import gzip

    with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as fh:
        head = fh.read(4096)
    text = head.decode("utf-8", errors="replace").lstrip()
    if text.startswith("<"):
        return "trec-session"
    first = text.split("\n", 1)[0]
    fields = first.split("\t")
    if len(fields) >= 3 and fields[2] in ("Q", "C"):
        return "yandex"
    if "\t" in first and ":" in first:
        return "wscd"
    raise FormatError("cannot tell the click-log format; pass format='yandex', 'wscd', "
                      "'trec-session' or 'canonical'", file=path, line=1)


__all__ = ["read_clicks", "read_trec_session", "read_wscd", "read_yandex"]
