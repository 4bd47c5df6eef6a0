"""Click logs in one canonical schema, whatever format they came in.

Canonical events (one row per event):

=========== ======== =====================================================================
column      type     meaning
=========== ======== =====================================================================
session_id  string   search session (for logs without sessions: one per result page)
query_id    string   the query (anonymised id or text)
serp_id     Int64    result page shown (one per query event; null for a query whose page
                     the log does not show); clicks point to their page
event       string   ``"query"`` or ``"click"``
rank        Int64    1-based rank of the clicked document (null for queries and for clicks
                     on documents that are not on the page)
doc_id      string   clicked document (null for queries)
time        float64  seconds; NaN when the log has no clock
end_time    float64  end of a click when the log records it (TREC Session), else NaN
seq         int64    order of the event in the log (ties in ``time``, logs without clocks)
=========== ======== =====================================================================

Result pages are a second table, ``results``: ``serp_id, rank, doc_id``.

Every reader returns a :class:`ClickLog` whose ``report`` counts what was read, repaired
and skipped (sessions, pages, clicks, clicks on documents not on the page, clicks before
any query, repeated clicks, missing end times, events at the same time as the previous
one of their session, skipped lines).  Nothing is dropped silently: a record that is not
used is counted under a named key.

Canonical files (CSV, TSV, either gzipped, or Parquet) are checked field by field, errors
naming the file and line (for Parquet: the 1-based row): every row has as many fields as
the header; ``serp_id`` is an integer >= 0 (or empty), ``rank`` an integer from 1 to
:data:`MAX_RANK` (or empty), ``seq`` an integer, ``time`` and ``end_time`` finite decimal
numbers (or empty: no clock); ``end_time`` is not before ``time``; within a session
``time`` never goes backwards (an empty time does not reset that check); a
``session_id`` is never empty.  An empty file, a ragged row, a truncated gzip file and
text that is not UTF-8 are FormatErrors too.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import FormatError

#: Highest rank a click log may use (pages of results, clicks, canonical ``rank``).  Real
#: logs stay far below it (Yandex: 10 results, TREC Session: up to 49); the bound keeps a
#: typo such as ``rank="300000000"`` from padding a page with millions of empty documents.
MAX_RANK = 10_000
#: Largest ``serp_id`` / ``seq`` magnitude (integers exact in float64).
_MAX_ID = 2 ** 53
_DECIMAL_RE2 = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"

EVENT_COLUMNS = ["session_id", "query_id", "serp_id", "event", "rank", "doc_id", "time",
                 "end_time", "seq"]
RESULT_COLUMNS = ["serp_id", "rank", "doc_id"]
EVENT_TYPES = ("query", "click")


@dataclass
class ClickLog:
    """A click log in the canonical schema.

    Attributes
    ----------
    events : DataFrame
        Canonical events (see the module docstring), ordered by ``seq``.
    results : DataFrame
        ``serp_id, rank, doc_id`` of the pages shown (may be empty when unknown).
    report : dict
        Counts of what the reader found, repaired or skipped.
    has_sessions : bool
        Whether ``session_id`` groups several pages of one user (False for logs that only
        list result pages; what follows a page's last click is then unknown).
    has_time : bool
        Whether ``time`` holds a clock (dwell times can be derived).
    source : str
    meta : dict
        Format-specific extras (e.g. ``session_topic`` for TREC Session logs).
    """

    events: pd.DataFrame
    results: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=RESULT_COLUMNS))
    report: dict = field(default_factory=dict)
    has_sessions: bool = True
    has_time: bool = True
    source: str = ""
    meta: dict = field(default_factory=dict)

    def observations(self) -> tuple[pd.DataFrame, pd.DataFrame, int]:
        """The log's click tables (:func:`~bayeschain.io.clickstats_pandas.observations`:
        on-page clicks with their order, next rank, page outcome and dwell; the pages; the
        number of off-page clicks), built once per log and shared by every reader: a fit,
        its checks and its statistics read the log in one pass.  Read-only (a log is not
        edited after it is read)."""
        cached = self.__dict__.get("_observations")
        if cached is None:
            from .clickstats_pandas import observations

            cached = observations(self.events, has_sessions=self.has_sessions)
            self.__dict__["_observations"] = cached
        return cached

    def derived(self, key: tuple, build):
        """A table derived from the log, built once per ``key`` (``build()`` the first
        time): e.g. the walk's pages, shared by a fit and its checks."""
        cache = self.__dict__.setdefault("_derived", {})
        if key not in cache:
            cache[key] = build()
        return cache[key]

    def built(self, key: tuple):
        """The table :meth:`derived` built for ``key``, or None if none was built."""
        return self.__dict__.get("_derived", {}).get(key)

    def summary(self) -> dict:
        """Headline counts: sessions, pages, clicks and the report's anomaly counters."""
        ev = self.events
        queries = int((ev["event"] == "query").sum())
        out = {
            "sessions": int(ev["session_id"].nunique()),
            "queries": queries,
            "pages": queries - int(self.report.get("queries_without_page", 0)),
            "clicks": int((ev["event"] == "click").sum()),
        }
        out.update({k: v for k, v in self.report.items() if k not in out})
        return out

    def split(self, fraction: float = 0.25, *, seed=0) -> tuple[ClickLog, ClickLog]:
        """``(train, test)``: a share ``fraction`` of the sessions, drawn at random with
        ``seed``, goes to ``test`` (every page of a session stays on one side)."""
        if not 0 < fraction < 1:
            raise ValueError(f"fraction must lie in (0, 1), got {fraction}")
        sessions = pd.unique(self.events["session_id"])
        rng = np.random.default_rng(seed)
        chosen = rng.permutation(sessions.size)[:int(round(fraction * sessions.size))]
        in_test = self.events["session_id"].isin(sessions[chosen]).to_numpy()
        return self._subset(~in_test, "train"), self._subset(in_test, "test")

    def _subset(self, rows: np.ndarray, label: str) -> ClickLog:
        events = self.events[rows].reset_index(drop=True)
        serps = events["serp_id"].dropna().astype("int64").unique()
        results = self.results[self.results["serp_id"].isin(serps)].reset_index(drop=True)
        meta = dict(self.meta)
        if "session_topic" in meta:
            keep = set(events["session_id"].astype(str))
            meta["session_topic"] = {k: v for k, v in meta["session_topic"].items()
                                     if str(k) in keep}
        return ClickLog(events, results, {"split": label}, has_sessions=self.has_sessions,
                        has_time=self.has_time, source=f"{self.source} ({label})", meta=meta)

    def __repr__(self) -> str:
        s = self.summary()
        return (f"ClickLog({self.source or 'in memory'}: {s['sessions']:,} sessions, "
                f"{s['pages']:,} pages, {s['clicks']:,} clicks)")


def concat_logs(logs, *, source: str = "") -> ClickLog:
    """One log from several (e.g. the train and test samples of a collection): sessions
    and result pages are renumbered so that they stay apart, ``seq`` keeps each log's
    order after the previous ones, and the reports' counts add up."""
    logs = list(logs)
    if not logs:
        raise ValueError("concat_logs needs at least one log")
    events, results, report = [], [], {}
    serp_offset, seq_offset = 0, 0
    for k, log in enumerate(logs):
        ev = log.events.copy()
        ev["session_id"] = f"{k}:" + ev["session_id"].astype(str)
        ev["serp_id"] = ev["serp_id"] + serp_offset
        ev["seq"] = ev["seq"] + seq_offset
        res = log.results.copy()
        res["serp_id"] = res["serp_id"].astype("int64") + serp_offset
        events.append(ev)
        results.append(res)
        top = ev["serp_id"].max()
        serp_offset = int(top) + 1 if pd.notna(top) else serp_offset
        seq_offset = int(ev["seq"].max()) + 1 if len(ev) else seq_offset
        for key, value in log.report.items():
            if isinstance(value, int | np.integer):
                report[key] = report.get(key, 0) + int(value)
    meta = {}
    topics = {f"{k}:{s}": t for k, log in enumerate(logs)
              for s, t in log.meta.get("session_topic", {}).items()}
    if topics:
        meta["session_topic"] = topics
    return ClickLog(canonical_types(pd.concat(events, ignore_index=True)),
                    pd.concat(results, ignore_index=True)[RESULT_COLUMNS], report,
                    has_sessions=all(log.has_sessions for log in logs),
                    has_time=all(log.has_time for log in logs),
                    source=source or " + ".join(log.source for log in logs), meta=meta)


def make_events(rows: dict[str, list]) -> pd.DataFrame:
    """Canonical events frame from column lists (types enforced)."""
    frame = pd.DataFrame({c: rows.get(c, [None] * len(rows["event"])) for c in EVENT_COLUMNS})
    return canonical_types(frame)


def canonical_types(frame: pd.DataFrame) -> pd.DataFrame:
    """Cast a frame with the canonical columns to the canonical types."""
    out = frame[EVENT_COLUMNS].copy()
    for col in ("session_id", "query_id", "event", "doc_id"):
        out[col] = out[col].astype("string")
    out["serp_id"] = pd.to_numeric(out["serp_id"]).astype("Int64")
    out["rank"] = pd.to_numeric(out["rank"]).astype("Int64")
    for col in ("time", "end_time"):
        out[col] = pd.to_numeric(out[col]).astype("float64")
    out["seq"] = pd.to_numeric(out["seq"]).astype("int64")
    return out


def validate_events(frame: pd.DataFrame, source: str = "") -> int:
    """Check a canonical frame: known event types, ranks from 1 to :data:`MAX_RANK`,
    sessions named, finite times, ``end_time`` not before ``time``, times not going
    backwards within a session (compared with the latest known time of the session, so an
    empty time does not switch the check off).  Raises :class:`FormatError` naming the row
    (file line); a result page (``serp_id``) announced by two query events is refused too.
    Returns the number of events at the same time as the previous one of
    their session (``tied_times``)."""
    where = source or None
    missing = [c for c in ("session_id", "serp_id", "event") if c not in frame]
    if missing:
        raise FormatError(f"click log lacks column(s) {missing}; expected "
                          f"{', '.join(EVENT_COLUMNS)}", file=where)

    def first(mask, message):
        mask = np.asarray(mask, dtype=bool)
        if mask.any():
            i = int(np.flatnonzero(mask)[0])
            raise FormatError(message(i), file=where, line=_line(frame, i))

    first(~frame["event"].isin(EVENT_TYPES).to_numpy(dtype=bool),
          lambda i: f"unknown event type {frame['event'].iloc[i]!r}; expected 'query' or "
                    "'click'")
    first(frame["session_id"].isna().to_numpy(), lambda i: "session_id is empty")
    rank = frame["rank"]
    first((rank.notna() & ((rank < 1) | (rank > MAX_RANK))).to_numpy(dtype=bool),
          lambda i: f"rank must be from 1 to {MAX_RANK:,} (1-based), found {rank.iloc[i]}")
    t = frame["time"].to_numpy(dtype=float, na_value=np.nan)
    end = frame["end_time"].to_numpy(dtype=float, na_value=np.nan) if "end_time" in frame else None
    for col, values in (("time", t), ("end_time", end)):
        if values is not None:
            first(np.isinf(values), lambda i, c=col, v=values: f"{c} must be finite, "
                                                              f"found {v[i]}")
    if end is not None:
        first(end < t, lambda i: f"end_time {end[i]:g} is before time {t[i]:g}")
    query = (frame["event"] == "query").to_numpy(dtype=bool) & frame["serp_id"].notna() \
        .to_numpy(dtype=bool)
    again = np.zeros(len(frame), dtype=bool)
    again[query] = frame.loc[query, "serp_id"].duplicated().to_numpy()
    first(again, lambda i: f"result page {frame['serp_id'].iloc[i]} is announced by a "
                           f"second query event; each serp_id belongs to one query event")
    if not np.isfinite(t).any():
        return 0
    codes, _ = pd.factorize(frame["session_id"], use_na_sentinel=False)
    latest = pd.Series(t).groupby(codes).cummax().groupby(codes).ffill()
    previous = latest.groupby(codes).shift().to_numpy(dtype=float, na_value=np.nan)
    first(t < previous, lambda i: f"time {t[i]:g} is before the previous event of session "
                                  f"{frame['session_id'].iloc[i]!r} ({previous[i]:g}): "
                                  "time goes backwards within a session")
    return int((t == previous).sum())


def clicks_before_query(events: pd.DataFrame) -> np.ndarray:
    """Which click events come before the query event of their result page (by time, ties
    by ``seq``; by ``seq`` alone where a time is missing): a click cannot precede the page
    it is on, so such clicks cannot be attributed.  The readers drop and count them
    (``clicks_before_query``), as the Yandex reader does for clicks before any query."""
    query = (events["event"] == "query").to_numpy(dtype=bool)
    click = ~query & events["serp_id"].notna().to_numpy(dtype=bool)
    if not click.any() or not query.any():
        return np.zeros(len(events), dtype=bool)
    t = events["time"].to_numpy(dtype=float, na_value=np.nan)
    seq = events["seq"].to_numpy(dtype=float, na_value=np.nan)
    shown = pd.DataFrame({"t": t[query], "seq": seq[query]},
                         index=events["serp_id"].to_numpy()[query])
    shown = shown[~shown.index.duplicated()]
    serp = events["serp_id"].to_numpy()[click]
    known = pd.Index(shown.index).get_indexer(serp)
    qt = np.where(known >= 0, shown["t"].to_numpy()[known], np.nan)
    qs = np.where(known >= 0, shown["seq"].to_numpy()[known], np.nan)
    ct, cs = t[click], seq[click]
    timed = np.isfinite(ct) & np.isfinite(qt)
    early = np.where(timed, (ct < qt) | ((ct == qt) & (cs < qs)), cs < qs)
    out = np.zeros(len(events), dtype=bool)
    out[np.flatnonzero(click)] = early & (known >= 0)
    return out


def _line(frame: pd.DataFrame, i: int) -> int:
    return int(frame["line"].iloc[i]) if "line" in frame else i + 2  # +1 header, +1 base


def _text_table(path: Path) -> tuple[pd.DataFrame, np.ndarray]:
    """A CSV / TSV file (possibly gzipped) as text columns (empty fields -> None) and the
    line of each row.  Arrow reads simple files (no quotes, no ``\\r``, no blank lines);
    the others, and any file Arrow refuses, go through Python's csv module, which names
    the exact line of a ragged row."""
    from .arrow import decode_text, read_bytes

    name = path.name.lower().removesuffix(".gz")
    sep = "\t" if name.endswith(".tsv") else ","
    data = read_bytes(path)
    text = decode_text(data, path)
    if not text.strip():
        raise FormatError(f"empty file; expected a header line ({sep.join(EVENT_COLUMNS)} or "
                          f"{sep.join(RESULT_COLUMNS)}) and rows", file=path, line=1)
    simple = not any(c in text for c in ('"', "\r")) and "\n\n" not in text.strip("\n")
    if simple and not text.startswith("\n"):
        frame = _arrow_csv(data, sep, path)
        if frame is not None:
            return frame, np.arange(2, len(frame) + 2)
    return _python_csv(text, sep, path)


def _header(names: list[str], path: Path) -> None:
    seen = set()
    for name in names:
        if name in seen:
            raise FormatError(f"column {name!r} appears twice in the header", file=path, line=1)
        seen.add(name)


def _arrow_csv(data: bytes, sep: str, path: Path) -> pd.DataFrame | None:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    try:
        names = next(csv.reader([data.split(b"\n", 1)[0].decode("utf-8")], delimiter=sep))
    except csv.Error:         # a header field beyond the csv module's limit: it names the line
        return None
    _header(names, path)
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),
            parse_options=pcsv.ParseOptions(delimiter=sep),
            convert_options=pcsv.ConvertOptions(
                column_types={n: pa.string() for n in names}, null_values=[""],
                strings_can_be_null=True, quoted_strings_can_be_null=True))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None          # the csv module names the line
    return table.to_pandas()


def _python_csv(text: str, sep: str, path: Path) -> tuple[pd.DataFrame, np.ndarray]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    header: list[str] | None = None
    rows, lines = [], []
    try:
        for row in reader:
            if not row:
                continue
            if header is None:
                header = row
                _header(header, path)
                continue
            if len(row) != len(header):
                raise FormatError(f"expected {len(header)} fields ({sep.join(header)}), "
                                  f"found {len(row)}", file=path, line=reader.line_num)
            rows.append([None if v == "" else v for v in row])
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise FormatError(f"malformed CSV ({exc})", file=path, line=reader.line_num) from None
    if header is None:
        raise FormatError("empty file; expected a header line and rows", file=path, line=1)
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    return frame, np.asarray(lines, dtype=np.int64)


def _read_table(path: Path) -> tuple[pd.DataFrame, np.ndarray]:
    """A CSV / TSV (optionally ``.gz``) file as text, or a Parquet file as stored, and the
    line (Parquet: 1-based row) of each row."""
    name = path.name.lower()
    if name.endswith(".parquet"):
        import pyarrow as pa

        if path.is_dir():
            raise FormatError("is a directory, expected a Parquet file", file=path)
        try:
            frame = pd.read_parquet(path)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise FormatError(f"not a readable Parquet file ({exc})", file=path) from None
        return frame, np.arange(1, len(frame) + 1)
    if name.removesuffix(".gz").endswith((".csv", ".tsv", ".txt")):
        return _text_table(path)
    raise FormatError("unknown click-log extension; expected .csv, .tsv (optionally .gz) or "
                      ".parquet", file=path)


def _numbers(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(values, bad)``: a column as float64 (NaN where empty) and where a value is not a
    decimal number (``[+-]digits[.digits][e[+-]digits]``: no ``nan``, ``inf``, ``1_000``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pd.api.types.is_bool_dtype(column):
        return np.full(len(column), np.nan), column.notna().to_numpy()
    if pd.api.types.is_numeric_dtype(column):
        return column.to_numpy(dtype=float, na_value=np.nan), np.zeros(len(column), bool)
    objects = column.astype(object).to_numpy()
    try:                                   # text read from a file: str or None
        arr = pa.array(objects, type=pa.string(), from_pandas=True)
    except (pa.ArrowTypeError, pa.ArrowInvalid):   # a DataFrame mixing types
        arr = pa.array([v if isinstance(v, str) else None if _missing(v) else str(v)
                        for v in objects], type=pa.string())
    ok = pc.match_substring_regex(arr, _DECIMAL_RE2)
    bad = pc.fill_null(pc.invert(ok), False).to_numpy(zero_copy_only=False)
    clean = pc.if_else(pc.fill_null(ok, False), arr, pa.scalar(None, pa.string()))
    values = pc.cast(clean, pa.float64()).to_numpy(zero_copy_only=False)
    return values.astype(float), bad


def _missing(value) -> bool:
    return value is None or (np.ndim(value) == 0 and bool(pd.isna(value)))


#: column -> (may be empty, integer, lowest, highest) for the numeric canonical columns
_NUMERIC_RULES = {
    "serp_id": (True, True, 0, _MAX_ID),
    "rank": (True, True, 1, MAX_RANK),
    "time": (True, False, -np.inf, np.inf),
    "end_time": (True, False, -np.inf, np.inf),
    "seq": (False, True, -_MAX_ID, _MAX_ID),
}


def _check_numbers(frame: pd.DataFrame, columns, path, lines, errors: str):
    """Numeric columns parsed and checked against :data:`_NUMERIC_RULES`: returns the
    frame with float columns and the mask of rows to drop (``errors="skip"``)."""
    drop = np.zeros(len(frame), dtype=bool)
    for col in columns:
        nullable, integer, low, high = _NUMERIC_RULES[col]
        values, bad = _numbers(frame[col])
        problems = [(bad, "non-numeric value {!r} in column " + col)]
        if not nullable:
            problems.append((np.isnan(values) & ~bad, col + " must not be empty"))
        with np.errstate(invalid="ignore"):
            if integer:
                wrong = ~np.isnan(values) & ((values != np.round(values)) | (values < low)
                                             | (values > high))
                bounds = {"rank": f"from 1 to {MAX_RANK:,}", "serp_id": ">= 0",
                          "seq": f"of magnitude at most {_MAX_ID:,}"}[col]
                problems.append((wrong, f"{col} must be an integer {bounds}, found {{!r}}"))
            else:
                problems.append((np.isinf(values), col + " must be finite, found {!r}"))
        for mask, message in problems:
            if mask.any():
                if errors == "raise":
                    i = int(np.flatnonzero(mask)[0])
                    raise FormatError(message.format(frame[col].iloc[i]), file=path,
                                      line=int(lines[i]))
                drop |= mask
        frame[col] = values
    return frame, drop


def read_results(source, *, events: pd.DataFrame | None = None) -> pd.DataFrame:
    """The result pages of a log (``serp_id, rank, doc_id``: the documents each page
    showed) from a CSV / TSV / Parquet file or a DataFrame.  Ranks must be integers from 1
    to :data:`MAX_RANK`, unique within a page; with ``events``, every page must be one of
    the log's."""
    where = None if isinstance(source, pd.DataFrame) else Path(source)
    if where is None:
        frame = source.copy()
        lines = np.arange(2, len(frame) + 2)
    else:
        frame, lines = _read_table(where)
    missing = [c for c in RESULT_COLUMNS if c not in frame]
    if missing:
        raise FormatError(f"result pages lack column(s) {missing}; expected "
                          f"{', '.join(RESULT_COLUMNS)}", file=where, line=1)
    frame = frame[RESULT_COLUMNS].reset_index(drop=True)
    for col in ("serp_id", "rank"):
        values, bad = _numbers(frame[col])
        low, high = (1, MAX_RANK) if col == "rank" else (0, _MAX_ID)
        with np.errstate(invalid="ignore"):
            wrong = bad | np.isnan(values) | (values != np.round(values)) | (values < low) \
                | (values > high)
        if wrong.any():
            i = int(np.flatnonzero(wrong)[0])
            bound = f" from 1 to {MAX_RANK:,}" if col == "rank" else " >= 0"
            raise FormatError(f"{col} must be an integer{bound}, got {frame[col].iloc[i]!r}",
                              file=where, line=int(lines[i]))
        frame[col] = values.astype("int64")
    dup = frame.duplicated(["serp_id", "rank"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise FormatError(f"page {frame['serp_id'].iloc[i]} lists rank "
                          f"{frame['rank'].iloc[i]} twice", file=where, line=int(lines[i]))
    if events is not None:
        known = set(events["serp_id"].dropna().astype("int64"))
        unknown = ~frame["serp_id"].isin(known)
        if unknown.any():
            i = int(np.flatnonzero(unknown.to_numpy())[0])
            raise FormatError(f"page {frame['serp_id'].iloc[i]} is not a page of the click "
                              f"log", file=where, line=int(lines[i]))
    frame["doc_id"] = frame["doc_id"].astype("string")
    return frame


def read_canonical(path, *, errors: str = "raise", results=None) -> ClickLog:
    """Read a CSV / TSV / Parquet file already in the canonical schema.

    ``seq`` and ``end_time`` may be missing (file order / NaN are used).  Rows whose
    fields cannot be parsed (see the module docstring) raise a :class:`FormatError` naming
    the line, or are skipped and counted with ``errors="skip"``.  ``results`` (a file or a
    DataFrame of ``serp_id, rank, doc_id``) gives the pages' contents: their lengths and
    documents reach the models (without it a page's length is unknown, see
    :func:`~bayeschain.inference.walk.data.page_lengths`).
    """
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")
    if isinstance(path, pd.DataFrame):
        frame, path = path.copy(), Path("<events>")
        lines = np.arange(2, len(frame) + 2)
    else:
        path = Path(path)
        frame, lines = _read_table(path)
    frame = frame.reset_index(drop=True)
    if "seq" not in frame:
        frame["seq"] = np.arange(len(frame))
    if "end_time" not in frame:
        frame["end_time"] = np.nan
    missing = [c for c in EVENT_COLUMNS if c not in frame]
    if missing:
        raise FormatError(f"missing column(s) {missing}; the canonical schema is "
                          f"{', '.join(EVENT_COLUMNS)}", file=path, line=1)
    frame = frame[EVENT_COLUMNS].copy()
    frame["line"] = lines
    frame, drop = _check_numbers(frame, ("serp_id", "rank", "time", "end_time", "seq"), path,
                                 lines, errors)
    skipped = int(drop.sum())
    frame = frame[~drop]
    unknown = ~frame["event"].isin(EVENT_TYPES)
    if unknown.any() and errors == "skip":
        skipped += int(unknown.sum())
        frame = frame[~unknown]
    lines = frame["line"].to_numpy()
    events = canonical_types(frame)
    events["line"] = lines
    tied = validate_events(events, str(path))
    early = clicks_before_query(events)
    events = events[~early].drop(columns="line").reset_index(drop=True)
    has_time = bool(events["time"].notna().any())
    report = {"skipped_lines": skipped, "tied_times": tied,
              "clicks_before_query": int(early.sum())}
    pages = pd.DataFrame(columns=RESULT_COLUMNS) if results is None else \
        read_results(results, events=events)
    return ClickLog(events, pages, report, has_sessions=True, has_time=has_time,
                    source=str(path))


def write_canonical(log: ClickLog, path, *, force: bool = False) -> Path:
    """Write the events of a log as CSV, TSV or Parquet (atomically; see io.write)."""
    from .write import atomic_output

    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".parquet", ".csv", ".tsv"):
        raise FormatError("unknown extension; use .csv, .tsv or .parquet", file=target)
    with atomic_output(target, force=force) as tmp:
        if suffix == ".parquet":
            log.events.to_parquet(tmp, index=False)
        else:
            log.events.to_csv(tmp, sep="\t" if suffix == ".tsv" else ",", index=False)
    return target
