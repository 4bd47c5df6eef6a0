"""Click logs in one canonical schema, whatever format they came in.

Canonical events (one row per event, DESIGN.md section 5):

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
any query, repeated clicks, missing end times, skipped lines).  Nothing is dropped
silently: a record that is not used is counted under a named key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import FormatError

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


def validate_events(frame: pd.DataFrame, source: str = "") -> None:
    """Check a canonical frame: known event types, ranks >= 1, times not going backwards
    within a session.  Raises :class:`FormatError` naming the row (file line)."""
    missing = [c for c in ("session_id", "serp_id", "event") if c not in frame]
    if missing:
        raise FormatError(f"click log lacks column(s) {missing}; expected "
                          f"{', '.join(EVENT_COLUMNS)}", file=source or None)
    bad = ~frame["event"].isin(EVENT_TYPES)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise FormatError(f"unknown event type {frame['event'].iloc[i]!r}; expected 'query' or "
                          f"'click'", file=source or None, line=_line(frame, i))
    rank = frame["rank"]
    low = rank.notna() & (rank < 1)
    if low.any():
        i = int(np.flatnonzero(low.to_numpy())[0])
        raise FormatError("rank must be >= 1 (1-based)", file=source or None,
                          line=_line(frame, i))
    if frame["time"].notna().any():
        t = frame["time"].to_numpy()
        same = frame["session_id"].to_numpy()[1:] == frame["session_id"].to_numpy()[:-1]
        back = np.flatnonzero(same & (t[1:] < t[:-1]))
        if back.size:
            i = int(back[0]) + 1
            raise FormatError("time goes backwards within a session", file=source or None,
                              line=_line(frame, i))


def _line(frame: pd.DataFrame, i: int) -> int:
    return int(frame["line"].iloc[i]) if "line" in frame else i + 2  # +1 header, +1 base


def _read_table(path: Path) -> pd.DataFrame:
    """A CSV / TSV / Parquet file as strings (Parquet as stored)."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return pd.read_parquet(path)
    if suffix in (".csv", ".tsv", ".txt"):
        return pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str,
                           keep_default_na=False, na_values=[""])
    raise FormatError("unknown click-log extension; expected .csv, .tsv or .parquet",
                      file=path)


def read_results(source, *, events: pd.DataFrame | None = None) -> pd.DataFrame:
    """The result pages of a log (``serp_id, rank, doc_id``: the documents each page
    showed) from a CSV / TSV / Parquet file or a DataFrame.  Ranks must be integers >= 1,
    unique within a page; with ``events``, every page must be one of the log's."""
    where = None if isinstance(source, pd.DataFrame) else Path(source)
    frame = source.copy() if where is None else _read_table(where)
    missing = [c for c in RESULT_COLUMNS if c not in frame]
    if missing:
        raise FormatError(f"result pages lack column(s) {missing}; expected "
                          f"{', '.join(RESULT_COLUMNS)}", file=where, line=1)
    frame = frame[RESULT_COLUMNS].reset_index(drop=True)
    for col in ("serp_id", "rank"):
        num = pd.to_numeric(frame[col], errors="coerce")
        bad = num.isna() | (num != np.round(num)) | (num < (1 if col == "rank" else 0))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise FormatError(f"{col} must be an integer{' >= 1' if col == 'rank' else ''}, "
                              f"got {frame[col].iloc[i]!r}", file=where, line=i + 2)
        frame[col] = num.astype("int64")
    dup = frame.duplicated(["serp_id", "rank"])
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise FormatError(f"page {frame['serp_id'].iloc[i]} lists rank "
                          f"{frame['rank'].iloc[i]} twice", file=where, line=i + 2)
    if events is not None:
        known = set(events["serp_id"].dropna().astype("int64"))
        unknown = ~frame["serp_id"].isin(known)
        if unknown.any():
            i = int(np.flatnonzero(unknown.to_numpy())[0])
            raise FormatError(f"page {frame['serp_id'].iloc[i]} is not a page of the click "
                              f"log", file=where, line=i + 2)
    frame["doc_id"] = frame["doc_id"].astype("string")
    return frame


def read_canonical(path, *, errors: str = "raise", results=None) -> ClickLog:
    """Read a CSV / TSV / Parquet file already in the canonical schema.

    ``seq`` and ``end_time`` may be missing (file order / NaN are used).  Rows whose type
    cannot be parsed raise a :class:`FormatError` naming the line, or are skipped and
    counted with ``errors="skip"``.  ``results`` (a file or a DataFrame of
    ``serp_id, rank, doc_id``) gives the pages' contents: their lengths and documents
    reach the models (without it a page's length is unknown, see
    :func:`~bayeschain.inference.pages.page_lengths`).
    """
    if isinstance(path, pd.DataFrame):
        frame, path = path.copy(), Path("<events>")
    else:
        path = Path(path)
        frame = _read_table(path)
    frame = frame.reset_index(drop=True)
    if "seq" not in frame:
        frame["seq"] = np.arange(len(frame))
    if "end_time" not in frame:
        frame["end_time"] = np.nan
    missing = [c for c in EVENT_COLUMNS if c not in frame]
    if missing:
        raise FormatError(f"missing column(s) {missing}; the canonical schema is "
                          f"{', '.join(EVENT_COLUMNS)}", file=path, line=1)
    frame["line"] = np.arange(2, len(frame) + 2)
    skipped = 0
    bad = np.zeros(len(frame), dtype=bool)
    for col in ("serp_id", "rank", "time", "end_time", "seq"):
        num = pd.to_numeric(frame[col], errors="coerce")
        wrong = num.isna() & frame[col].notna()
        bad |= wrong.to_numpy()
    if bad.any():
        if errors == "raise":
            i = int(np.flatnonzero(bad)[0])
            raise FormatError("non-numeric value in serp_id, rank, time, end_time or seq",
                              file=path, line=int(frame["line"].iloc[i]))
        skipped = int(bad.sum())
        frame = frame[~bad]
    unknown = ~frame["event"].isin(EVENT_TYPES)
    if unknown.any() and errors == "skip":
        skipped += int(unknown.sum())
        frame = frame[~unknown]
    lines = frame["line"].to_numpy()
    events = canonical_types(frame)
    events["line"] = lines
    validate_events(events, str(path))
    events = events.drop(columns="line").reset_index(drop=True)
    has_time = bool(events["time"].notna().any())
    report = {"skipped_lines": skipped}
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
