"""TREC qrels and run files, read the way trec_eval reads them.

* qrels: ``query_id iteration doc_id relevance`` (4 whitespace-separated fields; relevance
  an integer, negative grades allowed and treated as judged non-relevant).
* runs: ``query_id Q0 doc_id rank score run_id`` (6 fields).  Extra tokens after the run
  id are ignored, as trec_eval does; the rank column is ignored too: documents are ranked
  by score descending, ties broken by doc_id descending (trec_eval's order).

Both readers accept tabs or runs of spaces, leading spaces, a missing final newline,
``#`` inside document ids, and whole-line ``#`` comments (trec_eval >= 10 skips them).
Malformed lines raise :class:`~bayeschain.errors.FormatError` with file and line number;
with ``errors="skip"`` they are skipped and counted in ``frame.attrs["skipped"]``.

The fast path hands well-formed files to pandas' C parser; any irregular file is re-read
line by line so that the error can name the exact line.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import FormatError

QRELS_COLUMNS = ["query_id", "iteration", "doc_id", "relevance"]
RUN_COLUMNS = ["query_id", "q0", "doc_id", "rank", "score", "run_id"]


def read_qrels(path, *, errors: str = "raise") -> pd.DataFrame:
    """Read a TREC qrels file into columns ``query_id, doc_id, relevance`` (int).

    A document judged twice for the same topic keeps its last judgement (trec_eval's
    behaviour) and is counted in ``attrs["duplicates"]``.
    """
    frame = _read_table(path, QRELS_COLUMNS, numeric={"relevance": "int"}, errors=errors)
    frame = frame[["query_id", "doc_id", "relevance"]]
    dup = frame.duplicated(["query_id", "doc_id"], keep="last")
    out = frame[~dup].reset_index(drop=True)
    out.attrs = dict(frame.attrs, duplicates=int(dup.sum()))
    return out


def read_run(path, *, errors: str = "raise") -> pd.DataFrame:
    """Read a TREC run file into columns ``query_id, doc_id, score, run_id``.

    A document listed twice for the same topic is an error (trec_eval aborts on it), or is
    skipped (first occurrence kept) with ``errors="skip"``.
    """
    frame = _read_table(path, RUN_COLUMNS, numeric={"score": "float", "rank": "skip"},
                        errors=errors, extra_ok=True)
    frame = frame[["query_id", "doc_id", "score", "run_id"]]
    dup = frame.duplicated(["query_id", "doc_id"], keep="first")
    if dup.any():
        if errors == "raise":
            first = int(np.flatnonzero(dup.to_numpy())[0])
            line = int(frame.attrs["lines"][first])
            raise FormatError(
                f"document {frame['doc_id'].iloc[first]!r} appears twice in the ranking of "
                f"topic {frame['query_id'].iloc[first]!r}", file=path, line=line)
        frame = frame[~dup].reset_index(drop=True)
    attrs = dict(frame.attrs)
    attrs["skipped"] = attrs.get("skipped", 0) + int(dup.sum())
    attrs.pop("lines", None)
    frame.attrs = attrs
    return frame


def _check_errors_arg(errors: str) -> None:
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")


def _read_table(path, columns, *, numeric, errors, extra_ok=False) -> pd.DataFrame:
    _check_errors_arg(errors)
    path = Path(path)
    if path.is_dir():
        raise FormatError("is a directory, expected a TREC file", file=path)
    frame = _fast_parse(path, columns, numeric)
    if frame is None:
        frame = _careful_parse(path, columns, numeric, errors, extra_ok)
    else:
        frame.attrs = {"skipped": 0, "lines": np.arange(1, len(frame) + 1)}
    frame.attrs["source"] = str(path)
    return frame


def _fast_parse(path: Path, columns, numeric) -> pd.DataFrame | None:
    """pandas' C parser on a regular file; None when the file needs the careful path."""
    dtypes = {c: str for c in columns}
    for col, kind in numeric.items():
        dtypes[col] = {"int": "int64", "float": "float64", "skip": str}[kind]
    try:
        frame = pd.read_csv(path, sep=r"\s+", header=None, names=columns, dtype=dtypes,
                            engine="c", keep_default_na=False, na_filter=False,
                            skip_blank_lines=True, quoting=3)
    except (ValueError, pd.errors.ParserError, OverflowError):
        return None
    if frame.empty:
        return frame
    first = frame[columns[0]]
    last = frame[columns[-1]]
    # Comment lines and short lines leave empty trailing fields; send them to the careful path
    if (last == "").any() or first.str.startswith("#").any():
        return None
    return frame


def _careful_parse(path: Path, columns, numeric, errors, extra_ok) -> pd.DataFrame:
    n = len(columns)
    rows: list[list] = []
    lines: list[int] = []
    skipped = 0
    with open(path, encoding="utf-8", errors="strict", newline=None) as fh:
        try:
            text = fh.read()
        except UnicodeDecodeError as exc:
            raise FormatError(f"file is not UTF-8 text ({exc.reason})", file=path) from None
    for lineno, raw in enumerate(io.StringIO(text), start=1):
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        problem = None
        if len(fields) < n or (len(fields) > n and not extra_ok):
            problem = f"expected {n} fields ({' '.join(columns)}), found {len(fields)}"
        else:
            fields = fields[:n]
            for i, col in enumerate(columns):
                kind = numeric.get(col)
                if kind == "int":
                    try:
                        fields[i] = int(fields[i])
                    except ValueError:
                        problem = f"{col} must be an integer, found {fields[i]!r}"
                elif kind == "float":
                    try:
                        fields[i] = float(fields[i])
                    except ValueError:
                        problem = f"{col} must be a number, found {fields[i]!r}"
                    else:
                        if not np.isfinite(fields[i]):
                            problem = f"{col} must be finite, found {fields[i]!r}"
        if problem is not None:
            if errors == "raise":
                raise FormatError(problem, file=path, line=lineno)
            skipped += 1
            continue
        rows.append(fields)
        lines.append(lineno)
    frame = pd.DataFrame(rows, columns=columns)
    for col, kind in numeric.items():
        if kind == "int":
            frame[col] = frame[col].astype("int64")
        elif kind == "float":
            frame[col] = frame[col].astype("float64")
    frame.attrs = {"skipped": skipped, "lines": np.asarray(lines)}
    return frame
