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

Three parsers, tried in order: Arrow's multi-threaded CSV reader for regular files (one
delimiter, no comments), pandas' C parser for whitespace-aligned files, and a line-by-line
parser that can name the exact offending line.  The result is the same DataFrame: string
columns backed by Arrow (``string[pyarrow]``), so that millions of doc ids never become
Python objects.
"""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ..errors import FormatError
from .arrow import as_string_array

QRELS_COLUMNS = ["query_id", "iteration", "doc_id", "relevance"]
RUN_COLUMNS = ["query_id", "q0", "doc_id", "rank", "score", "run_id"]
_QRELS_KEEP = ["query_id", "doc_id", "relevance"]
_RUN_KEEP = ["query_id", "doc_id", "score", "run_id"]
_SNIFF_BYTES = 1 << 16


def read_qrels(path, *, errors: str = "raise") -> pd.DataFrame:
    """Read a TREC qrels file into columns ``query_id, doc_id, relevance`` (int).

    A document judged twice for the same topic keeps its last judgement (trec_eval's
    behaviour) and is counted in ``attrs["duplicates"]``.
    """
    frame = _read_table(path, QRELS_COLUMNS, _QRELS_KEEP, {"relevance": "int"}, errors)
    dup = frame.duplicated(["query_id", "doc_id"], keep="last")
    out = frame[~dup].reset_index(drop=True)
    out.attrs = dict(frame.attrs, duplicates=int(dup.sum()))
    return out


def read_run(path, *, errors: str = "raise") -> pd.DataFrame:
    """Read a TREC run file into columns ``query_id, doc_id, score, run_id``.

    Rows come back in trec_eval's ranking order: topic id ascending, then score
    descending, then doc id descending (the file's rank column is ignored).  A document
    listed twice for the same topic is an error naming its line (trec_eval aborts on it
    too), or with ``errors="skip"`` its later occurrences are dropped and counted in
    ``attrs["skipped"]``.
    """
    frame = _read_table(path, RUN_COLUMNS, _RUN_KEEP, {"score": "float"}, errors, extra_ok=True)
    if not _has_duplicate_docs(frame):
        return _trec_sorted(frame)
    return _trec_sorted(_without_duplicates(path, frame, errors))


def _trec_sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by topic id, score descending, doc id descending (Arrow's sort)."""
    bare = frame.copy(deep=False)
    bare.attrs = {}
    table = pa.Table.from_pandas(bare, preserve_index=False)
    order = pc.sort_indices(table, sort_keys=[("query_id", "ascending"),
                                              ("score", "descending"),
                                              ("doc_id", "descending")])
    out = _to_pandas(table.take(order))
    out.attrs = {k: v for k, v in frame.attrs.items() if k != "lines"}
    return out


def _without_duplicates(path, frame: pd.DataFrame, errors: str) -> pd.DataFrame:
    """Raise on the first repeated (topic, doc) naming its line, or drop repeats."""
    if "lines" not in frame.attrs:  # fast paths do not track lines: re-read to name them
        frame = _careful_parse(Path(path), RUN_COLUMNS, _RUN_KEEP, {"score": "float"}, errors,
                               extra_ok=True)
    dup = frame.duplicated(["query_id", "doc_id"], keep="first").to_numpy()
    if errors == "raise":
        first = int(np.flatnonzero(dup)[0])
        raise FormatError(
            f"document {frame['doc_id'].iloc[first]!r} appears twice in the ranking of "
            f"topic {frame['query_id'].iloc[first]!r}", file=path,
            line=int(frame.attrs["lines"][first]))
    out = frame[~dup].reset_index(drop=True)
    out.attrs = {"skipped": frame.attrs["skipped"] + int(dup.sum()), "source": str(path)}
    return out


def read_runs(paths, *, errors: str = "raise") -> list[pd.DataFrame]:
    """Read several run files in parallel (Arrow releases the GIL while parsing)."""
    paths = list(paths)
    with ThreadPoolExecutor(max_workers=min(4, max(1, len(paths)))) as pool:
        return list(pool.map(lambda p: read_run(p, errors=errors), paths))


def _has_duplicate_docs(frame: pd.DataFrame) -> bool:
    if len(frame) < 2:
        return False
    keys = pc.binary_join_element_wise(as_string_array(frame["query_id"]),
                                        as_string_array(frame["doc_id"]), "\t")
    return pc.count_distinct(keys).as_py() != len(frame)


def _check_errors_arg(errors: str) -> None:
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")


def _read_table(path, columns, keep, numeric, errors, extra_ok=False) -> pd.DataFrame:
    _check_errors_arg(errors)
    path = Path(path)
    if path.is_dir():
        raise FormatError("is a directory, expected a TREC file", file=path)
    frame = _arrow_parse(path, columns, keep, numeric)
    if frame is None:
        frame = _pandas_parse(path, columns, keep, numeric)
    if frame is None:
        frame = _careful_parse(path, columns, keep, numeric, errors, extra_ok)
    frame.attrs.setdefault("skipped", 0)
    frame.attrs["source"] = str(path)
    return frame


def _arrow_types(columns, numeric):
    kinds = {"int": pa.int64(), "float": pa.float64()}
    return {c: kinds.get(numeric.get(c), pa.string()) for c in columns}


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    table = table.cast(pa.schema([(f.name, pa.string() if pa.types.is_large_string(f.type)
                                   else f.type) for f in table.schema]))
    return table.to_pandas(types_mapper=lambda t: pd.ArrowDtype(t) if pa.types.is_string(t)
                           else None)


def _sniff_delimiter(path: Path) -> str | None:
    """The single delimiter of a regular file, or None when the file needs another parser."""
    with open(path, "rb") as fh:
        head = fh.read(_SNIFF_BYTES)
    if not head:
        return None
    text = head.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if len(head) == _SNIFF_BYTES:
        lines = lines[:-1]  # the last line may be cut
    delim = "\t" if "\t" in lines[0] else " "
    other = " " if delim == "\t" else "\t"
    for line in lines:
        if not line:
            continue
        if (line[0] in " \t#" or line[-1] in " \t\r" or other in line
                or delim + delim in line):
            return None
    return delim


def _arrow_parse(path: Path, columns, keep, numeric) -> pd.DataFrame | None:
    delim = _sniff_delimiter(path)
    if delim is None:
        return None
    try:
        table = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(column_names=columns),
            parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False,
                                            double_quote=False, escape_char=False),
            convert_options=pcsv.ConvertOptions(column_types=_arrow_types(columns, numeric),
                                                include_columns=keep,
                                                strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return None
    for col, kind in numeric.items():
        if kind == "float" and col in keep and not pc.all(pc.is_finite(table[col])).as_py():
            return None  # let the careful parser name the line
    return _to_pandas(table)


def _pandas_parse(path: Path, columns, keep, numeric) -> pd.DataFrame | None:
    """pandas' C parser for whitespace-aligned files; None when the file is irregular."""
    dtypes = {c: str for c in columns}
    for col, kind in numeric.items():
        dtypes[col] = {"int": "int64", "float": "float64"}[kind]
    try:
        frame = pd.read_csv(path, sep=r"\s+", header=None, names=columns, dtype=dtypes,
                            engine="c", keep_default_na=False, na_filter=False,
                            skip_blank_lines=True, quoting=3, encoding="utf-8")
    except (ValueError, pd.errors.ParserError, OverflowError, UnicodeDecodeError):
        return None
    if len(frame) and ((frame[columns[-1]] == "").any()
                       or frame[columns[0]].str.startswith("#").any()):
        return None  # comment or short lines: the careful parser handles them
    for col, kind in numeric.items():
        if kind == "float" and not np.all(np.isfinite(frame[col].to_numpy())):
            return None
    return _to_pandas(pa.Table.from_pandas(frame[keep], preserve_index=False))


def _careful_parse(path: Path, columns, keep, numeric, errors, extra_ok) -> pd.DataFrame:
    n = len(columns)
    rows: list[list] = []
    lines: list[int] = []
    skipped = 0
    try:
        text = path.read_text(encoding="utf-8")
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
    frame = pd.DataFrame(rows, columns=columns)[keep]
    table = pa.Table.from_pandas(frame, schema=pa.schema(
        [(c, _arrow_types(columns, numeric)[c]) for c in keep]), preserve_index=False)
    out = _to_pandas(table)
    out.attrs = {"skipped": skipped, "lines": np.asarray(lines, dtype=np.int64)}
    return out


def run_names(paths: list[str], frames: list[pd.DataFrame]) -> list[str]:
    """Run ids from the files, made unique with the file name when needed."""
    names = []
    for path, frame in zip(paths, frames, strict=True):
        name = str(frame["run_id"].iloc[0]) if len(frame) else Path(path).name
        names.append(name)
    if len(set(names)) < len(names):
        names = [f"{n}:{Path(p).name}" for n, p in zip(names, paths, strict=True)]
    if len(set(names)) < len(names):
        names = list(paths)
    return names
