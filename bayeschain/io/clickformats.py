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

Checks shared by the readers:

* **Text**: UTF-8 (the Yandex and WSCD formats are ASCII ids; a Latin-1 or UTF-16 file is a
  FormatError naming the line, never decoded by guess), no NUL bytes; ``.gz`` files are
  gunzipped, a truncated or corrupt one is a FormatError (see :mod:`bayeschain.io.arrow`).
* **Sessions** are contiguous (a Yandex session whose lines resume after another session)
  and unique (a TREC ``<session num>`` given twice) or the line is refused.
* **Times** are decimal numbers (``nan``, ``inf``, ``1_000`` are refused) and never go
  backwards within a session: a time before the previous event of its session is an error
  naming the line (or, with ``errors="skip"``, the event is skipped and counted).  Equal
  times are legitimate (CLARA2 has 13 pairs of events in the same millisecond): they are
  counted under ``tied_times`` and ordered by ``seq``.  A TREC Session click whose end
  time is before its start time is an error.
* **Ranks** are integers from 1 to :data:`~bayeschain.io.clicklog.MAX_RANK` (10,000); a
  page may not list more results than that.  In TREC Session XML a page's ranks must be
  distinct; gaps are padded with empty documents, but a rank more than twice the number of
  results the page lists (``<result rank="300000000">`` on a page of 10) is refused.
"""

from __future__ import annotations

import contextlib
import math
import re
from pathlib import Path

import pandas as pd

from ..errors import FormatError
from .arrow import iter_chunks, iter_lines, parse_decimal
from .clicklog import MAX_RANK, RESULT_COLUMNS, ClickLog, make_events

_RANK = re.compile(r"[0-9]+\Z")


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
                       "queries_without_page": 0, "tied_times": 0}
        self.serp = -1
        self.texts: dict[str, str] = {}      # doc -> title and snippet, when the log has them
        self.page: dict[str, int] = {}      # doc -> rank on the current page
        self.clicked: set[int] = set()
        self._clock: tuple[object, float] = (None, -math.inf)   # (session, latest time)

    def problem(self, message: str, line: int | None) -> None:
        if self.errors == "raise":
            raise FormatError(message, file=self.path, line=line)
        self.report["skipped_lines"] += 1

    def number(self, text, what: str, line: int | None) -> float | None:
        """A finite decimal number, or None after reporting the problem."""
        if text is None:
            self.problem(f"{what} is missing", line)
            return None
        value, problem = parse_decimal(str(text), what)
        if problem is not None:
            self.problem(problem, line)
        return value

    def rank(self, text, what: str, line: int | None) -> int | None:
        """A rank from 1 to MAX_RANK, or None after reporting the problem."""
        if text is None:
            self.problem(f"{what} is missing", line)
            return None
        token = str(text).strip()
        if not _RANK.match(token) or not 1 <= int(token) <= MAX_RANK:
            self.problem(f"{what} must be an integer from 1 to {MAX_RANK:,}, found {token!r}",
                         line)
            return None
        return int(token)

    def clock(self, session, t: float, line: int | None, what: str = "time") -> bool:
        """Whether an event at time ``t`` keeps its session's clock going forward (ties are
        counted); a time going backwards is reported as a problem."""
        last_session, last = self._clock
        if session == last_session:
            if t < last:
                self.problem(f"{what} {t:g} is before the previous event of session "
                             f"{session!r} ({last:g}): time goes backwards within the "
                             "session", line)
                return False
            if t == last:
                self.report["tied_times"] += 1
        self._clock = (session, t)
        return True

    def page_length(self, n: int, line: int | None) -> bool:
        if n > MAX_RANK:
            self.problem(f"a page of {n:,} results; at most {MAX_RANK:,} are supported", line)
            return False
        return True

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
    finished: set[str] = set()      # sessions whose lines are over
    for lineno, raw in iter_lines(path):
        fields = raw.rstrip("\r\n").split("\t")
        while fields and fields[-1] == "":
            fields.pop()
        if not fields:
            continue
        if len(fields) < 4:
            b.problem(f"expected at least 4 tab-separated fields, found {len(fields)}", lineno)
            continue
        sid, tval, kind = fields[0], fields[1], fields[2]
        t = b.number(tval, "time", lineno)
        if t is None:
            continue
        t *= time_unit
        if kind not in ("Q", "C"):
            b.problem(f"unknown record type {kind!r}; expected Q or C", lineno)
            continue
        if kind == "Q" and len(fields) < 6:
            b.problem("query line needs SessionID TimePassed Q QueryID RegionID URL1..URLn",
                      lineno)
            continue
        if kind == "C" and len(fields) != 4:
            b.problem(f"click line needs 4 fields, found {len(fields)}", lineno)
            continue
        if kind == "Q" and not b.page_length(len(fields) - 5, lineno):
            continue
        if sid != session:
            if sid in finished:
                b.problem(f"session {sid!r} resumes after other sessions; a Yandex log keeps "
                          "the lines of a session together", lineno)
                continue
            if session is not None:
                finished.add(session)
            session, query = sid, None
            b.page, b.clicked = {}, set()
        if not b.clock(sid, t, lineno):
            continue
        if kind == "Q":
            query = fields[3]
            b.query(sid, query, t, fields[5:])
        elif query is None:
            b.report["clicks_before_query"] += 1
        else:
            b.click(sid, query, fields[3], t)
    return b.build(has_sessions=True, has_time=True)


def read_wscd(path, *, errors: str = "raise") -> ClickLog:
    """Read PyClick's preprocessed WSCD sample (pages with ordered clicks, no clock)."""
    path = Path(path)
    b = _Builder(path, errors)
    for lineno, raw in iter_lines(path):
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
            if not b.page_length(len(docs), lineno):
                continue
            session = f"{b.serp + 1}"   # no sessions: one per page
            b.query(session, key.strip(), math.nan, docs)
            for doc in (c.strip() for c in clicks.split(",")):
                if doc:
                    b.click(session, key.strip(), doc, math.nan)
    return b.build(has_sessions=False, has_time=False)


def read_trec_session(path, *, errors: str = "raise") -> ClickLog:
    """Read TREC Session track XML (2011-2014 layout) with a hardened XML parser.

    Errors name the line of the offending element (``<interaction>``, ``<result>``,
    ``<click>``...); with ``errors="skip"`` an interaction with a malformed page or start
    time is skipped whole (its clicks with it), a malformed click alone."""
    path = Path(path)
    b = _Builder(path, errors)
    root, line_of = _parse_xml(path)
    topics: dict[str, str] = {}
    seen: dict[str, int | None] = {}
    for session in root.iter("session"):
        sid = session.get("num")
        if sid is None:
            b.problem("<session> without num attribute", line_of(session))
            continue
        if sid in seen:
            b.problem(f"<session num={sid!r}> appears twice (first on line {seen[sid]})",
                      line_of(session))
            continue
        seen[sid] = line_of(session)
        topic = session.find("topic")
        if topic is not None and topic.get("num") is not None:
            topics[sid] = topic.get("num")
        for node in session:
            if node.tag == "interaction":
                _trec_interaction(b, sid, node, line_of)
            elif node.tag == "currentquery":
                line = line_of(node)
                t = b.number(node.get("starttime"), "currentquery starttime", line)
                if t is not None and b.clock(sid, t, line, "currentquery starttime"):
                    b.query(sid, _text(node.find("query")), t, [], has_page=False)
    log = b.build(has_sessions=True, has_time=True,
                  meta={"session_topic": topics, "doc_text": b.texts})
    return log


def _parse_xml(path: Path):
    """``(root element, line_of)``: the tree, and the line where each element starts."""
    import xml.etree.ElementTree as ET

    import defusedxml.ElementTree as safe_et
    from defusedxml import DefusedXmlException

    lines: dict[int, int] = {}

    class LineBuilder(ET.TreeBuilder):
        def start(self, tag, attrs):
            elem = super().start(tag, attrs)
            lines[id(elem)] = parser.parser.CurrentLineNumber
            return elem

    parser = safe_et.DefusedXMLParser(target=LineBuilder())
    try:
        for chunk in iter_chunks(path):
            parser.feed(chunk)
        root = parser.close()
    except FormatError:
        raise
    except DefusedXmlException as exc:
        raise FormatError(f"refused unsafe XML ({type(exc).__name__})", file=path) from None
    except safe_et.ParseError as exc:
        line = getattr(exc, "position", (None,))[0]
        raise FormatError(f"malformed XML: {exc}", file=path, line=line) from None
    except (ValueError, LookupError) as exc:     # e.g. an unknown declared encoding
        raise FormatError(f"malformed XML: {exc}", file=path) from None
    return root, lambda elem: lines.get(id(elem))


def _trec_interaction(b: _Builder, sid: str, node, line_of) -> None:
    line = line_of(node)
    t = b.number(node.get("starttime"), "interaction starttime", line)
    if t is None:
        return
    query = _text(node.find("query"))
    page: dict[int, str] = {}
    where: dict[int, int | None] = {}       # rank -> line of its <result>
    texts: dict[str, str] = {}
    results = node.find("results")
    for res in ([] if results is None else results.findall("result")):
        rline = line_of(res)
        rank = b.rank(res.get("rank"), "<result> rank", rline)
        if rank is None:
            return
        if rank in page:
            b.problem(f"<result> rank {rank} is listed twice on the page", rline)
            return
        doc = _text(res.find("clueweb12id"))
        page[rank], where[rank] = doc, rline
        texts.setdefault(doc, f"{_text(res.find('title'))} {_text(res.find('snippet'))}")
    if page and max(page) > 2 * len(page):
        b.problem(f"<result> rank {max(page):,} on a page that lists {len(page)} results: "
                  "ranks may leave gaps, but not more gaps than results", where[max(page)])
        return
    if not b.clock(sid, t, line, "interaction starttime"):
        return
    docs = [page.get(r, "") for r in range(1, max(page, default=0) + 1)]
    for doc, text in texts.items():
        b.texts.setdefault(doc, text)
    b.query(sid, query, t, docs)
    clicked = node.find("clicked")
    for click in ([] if clicked is None else clicked.findall("click")):
        cline = line_of(click)
        start = b.number(click.get("starttime"), "click starttime", cline)
        if start is None:
            continue
        end_text = click.get("endtime")
        if end_text is None or end_text.strip() in ("NA", ""):
            end = math.nan
        else:
            end = b.number(end_text, "click endtime", cline)
            if end is None:
                continue
            if end < start:
                b.problem(f"click endtime {end:g} is before its starttime {start:g}", cline)
                continue
        rank_node = click.find("rank")
        rank = b.rank(None if rank_node is None else _text(rank_node), "click rank",
                      cline if rank_node is None else line_of(rank_node))
        if rank is None or not b.clock(sid, start, cline, "click starttime"):
            continue
        if math.isnan(end):
            b.report["missing_end_times"] += 1
        on_page = rank <= len(docs) and docs[rank - 1]
        b.click(sid, query, docs[rank - 1] if on_page else None, start,
                rank=rank if on_page else None, end_time=end)
        if not on_page:
            b.rows["doc_id"][-1] = None


def _text(node) -> str:
    return "" if node is None or node.text is None else " ".join(node.text.split())


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
    name = path.name.lower()
    if path.suffix.lower() in (".csv", ".tsv", ".parquet") or name.endswith((".csv.gz",
                                                                              ".tsv.gz")):
        return "canonical"
    with contextlib.closing(iter_chunks(path, 4096)) as chunks:
        head = next(chunks, b"")
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
