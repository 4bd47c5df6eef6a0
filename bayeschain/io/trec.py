"""TREC qrels and run files, read the way trec_eval reads them.

* qrels: ``query_id iteration doc_id relevance`` (4 whitespace-separated fields; relevance
  an integer, negative grades allowed and treated as judged non-relevant).  A document
  judged twice for the same topic is an error naming both lines: trec_eval 9 and 10 abort
  on it (``form_res_rels.c``: "duplicate docs"), whichever grades the two lines give.
* runs: ``query_id Q0 doc_id rank score run_id`` (6 fields).  Extra tokens after the run
  id are ignored, as trec_eval does; the rank column is ignored too: documents are ranked
  by score descending, ties broken by doc_id descending (trec_eval's order).  A document
  listed twice for the same topic is an error (trec_eval aborts on it too).

Both readers accept tabs or runs of spaces, leading spaces, a missing final newline,
``#`` inside document ids, whole-line ``#`` comments (trec_eval >= 10 skips them), ``\\r\\n``
and old-Mac ``\\r`` line ends (one rule for every text format:
:func:`~bayeschain.io.arrow.split_lines`), a UTF-8 byte-order mark and gzip-compressed
files (read whole, by every parser).  Within a line, fields are separated by the bytes C's
``isspace`` knows (space, tab, vertical tab, form feed), as in trec_eval; other Unicode
spaces belong to the field.

Numbers are read strictly, never by prefix: a grade must be ``[+-]?[0-9]+`` (fitting in 64
bits) and a score a finite decimal number ``[+-]?digits[.digits][(e|E)[+-]digits]``.
trec_eval's ``atol``/``atof`` would read ``1_000`` as 1, ``1e5`` as a grade of 1 and
``high`` as 0; such fields are refused instead of being read as a number they do not
spell.  ``nan``, ``inf`` and the null spellings of CSV readers (``NA``, ``N/A``, ``null``,
``NULL``, ``#N/A``...) are refused as a score or a grade on every parser, whatever the
separators.

Malformed lines raise :class:`~bayeschain.errors.FormatError` with file and line number;
with ``errors="skip"`` they are skipped and counted in ``frame.attrs["skipped"]``.  A
truncated or corrupt gzip file, text that is not UTF-8 and NUL bytes are FormatErrors too
(see :mod:`bayeschain.io.arrow`).

Three parsers, tried in order: Arrow's multi-threaded CSV reader for regular files (one
delimiter, no comments), pandas' C parser for whitespace-aligned files, and a line-by-line
parser that can name the exact offending line.  The fast parsers read numbers with the
same rules (Arrow's number parser behind the same checks) and hand any file they cannot
read exactly to the careful parser.  The result is the same DataFrame: string columns
backed by Arrow (``string[pyarrow]``), so that millions of doc ids never become Python
objects.
"""

from __future__ import annotations

import io
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from ..errors import FormatError, ParameterError
from .arrow import (
    as_string_array,
    decode_text,
    map_bytes,
    parse_decimal,
    pc,
    read_bytes,
    split_lines,
    to_numpy,
)

if TYPE_CHECKING:  # pandas is imported by the DataFrame readers only: not for eval's tables
    import pandas as pd

QRELS_COLUMNS = ["query_id", "iteration", "doc_id", "relevance"]
RUN_COLUMNS = ["query_id", "q0", "doc_id", "rank", "score", "run_id"]
_QRELS_KEEP = ["query_id", "doc_id", "relevance"]
_RUN_KEEP = ["query_id", "doc_id", "score", "run_id"]
_QRELS_NUMERIC = {"relevance": "int"}
_RUN_NUMERIC = {"score": "float"}
_SNIFF_BYTES = 1 << 16
_INT = re.compile(r"[+-]?[0-9]+\Z")
_INT_RE2 = r"^[+-]?[0-9]+$"
_WHITESPACE = re.compile(r"[ \t\r\x0b\x0c]+")


def read_qrels(path, *, errors: str = "raise") -> pd.DataFrame:
    """Read a TREC qrels file into columns ``query_id, doc_id, relevance`` (int).

    A document judged twice for the same topic is a :class:`FormatError` naming both lines
    (trec_eval aborts on duplicate judgements); with ``errors="skip"`` the first judgement
    is kept and the later ones are counted in ``attrs["skipped"]`` and
    ``attrs["duplicates"]``.
    """
    table, attrs = _qrels(path, errors)
    frame = _to_pandas(table)
    frame.attrs = attrs
    return frame


def read_qrels_table(path, *, errors: str = "raise") -> pa.Table:
    """:func:`read_qrels` as an Arrow table (the same columns, checks and errors), without
    pandas."""
    return _qrels(path, errors)[0]


def _qrels(path, errors: str) -> tuple[pa.Table, dict]:
    table, attrs = _read_table(path, QRELS_COLUMNS, _QRELS_KEEP, _QRELS_NUMERIC, errors)
    if table.num_rows == 0:       # every measure would be undefined: refused, as an empty run
        skipped = attrs.get("skipped", 0)
        raise FormatError("the qrels have no judgement (" + (
            f"all {skipped} lines skipped" if skipped else "an empty file") + "); expected "
            "lines 'query_id iteration doc_id relevance'", file=path)
    duplicates = 0
    if _has_duplicate_docs(table):
        before = table.num_rows
        table, attrs = _without_duplicates(path, table, attrs, errors, qrels=True)
        duplicates = before - table.num_rows
    attrs = {k: v for k, v in attrs.items() if k != "lines"}
    attrs["duplicates"] = duplicates
    return table, attrs


def read_run(path, *, errors: str = "raise") -> pd.DataFrame:
    """Read a TREC run file into columns ``query_id, doc_id, score, run_id``.

    Rows come back in trec_eval's ranking order: topic id ascending, then score
    descending, then doc id descending (the file's rank column is ignored).  A document
    listed twice for the same topic is an error naming its line (trec_eval aborts on it
    too), or with ``errors="skip"`` its later occurrences are dropped and counted in
    ``attrs["skipped"]``.
    """
    table, attrs = _run(path, errors)
    frame = _trec_sorted(table)
    frame.attrs = attrs
    return frame


def _trec_sorted(table: pa.Table) -> pd.DataFrame:
    """Rows sorted by topic id, score descending, doc id descending (Arrow's sort)."""
    order = pc.sort_indices(table, sort_keys=[("query_id", "ascending"),
                                              ("score", "descending"),
                                              ("doc_id", "descending")])
    return _to_pandas(table.take(order))


def read_run_table(path, *, errors: str = "raise", threads: bool = True) -> pa.Table:
    """A TREC run file as an Arrow table ``query_id, doc_id, score, run_id`` in the file's
    own line order, with every check of :func:`read_run` (numbers, fields, a document
    listed twice for a topic) and its errors naming file and line, without pandas.

    :func:`~bayeschain.io.lists.ranked_lists` puts the rows in trec_eval's order.  With
    ``threads=False`` Arrow parses on the calling thread only (for callers that read
    several files at once)."""
    return _run(path, errors, threads)[0]


def read_run_tables(paths, *, errors: str = "raise", threads: bool = False) -> list[pa.Table]:
    """:func:`read_run_table` of several files: Arrow's CSV reader runs on every file
    first (it needs only ``pyarrow.csv``, so a caller still importing its other modules has
    the files parsed meanwhile), then the checks, file by file (errors as
    :func:`read_run_table` raises them, the first bad file first)."""
    _check_errors_arg(errors)
    first = [_first_pass(p, RUN_COLUMNS, _RUN_KEEP, _RUN_NUMERIC, threads) for p in paths]
    return [_run_checked(_finish_table(*f, RUN_COLUMNS, _RUN_KEEP, _RUN_NUMERIC, errors,
                                       True), f[0], errors)[0] for f in first]


def _run(path, errors: str, threads: bool = True) -> tuple[pa.Table, dict]:
    table, attrs = _read_table(path, RUN_COLUMNS, _RUN_KEEP, _RUN_NUMERIC, errors,
                               extra_ok=True, threads=threads)
    return _run_checked((table, attrs), path, errors)


def _run_checked(read: tuple[pa.Table, dict], path, errors: str) -> tuple[pa.Table, dict]:
    table, attrs = read
    if _has_duplicate_docs(table):
        table, attrs = _without_duplicates(path, table, attrs, errors, qrels=False)
    return table, {k: v for k, v in attrs.items() if k != "lines"}


def _without_duplicates(path, table: pa.Table, attrs: dict, errors: str, *,
                        qrels: bool) -> tuple[pa.Table, dict]:
    """Raise on the first repeated (topic, doc) naming both lines, or drop repeats."""
    if "lines" not in attrs:  # fast paths do not track lines: re-read to name them
        columns, keep, numeric = ((QRELS_COLUMNS, _QRELS_KEEP, _QRELS_NUMERIC) if qrels
                                  else (RUN_COLUMNS, _RUN_KEEP, _RUN_NUMERIC))
        table, attrs = _careful_parse(Path(path), columns, keep, numeric, errors,
                                      extra_ok=not qrels)
    dup = _repeated(table)
    if errors == "raise":
        second = int(np.flatnonzero(dup)[0])
        topic = table["query_id"][second].as_py()
        doc = table["doc_id"][second].as_py()
        same = np.asarray(pc.and_(pc.equal(table["query_id"], topic),
                                  pc.equal(table["doc_id"], doc)))
        lines = attrs["lines"]
        first_line, line = int(lines[np.flatnonzero(same)[0]]), int(lines[second])
        if qrels:
            message = (f"document {doc!r} is judged twice for topic {topic!r} (lines "
                       f"{first_line} and {line}); trec_eval refuses duplicate judgements")
        else:
            message = (f"document {doc!r} appears twice in the ranking of topic {topic!r} "
                       f"(lines {first_line} and {line})")
        raise FormatError(message, file=path, line=line)
    out = table.filter(pa.array(~dup))
    return out, {"skipped": attrs["skipped"] + int(dup.sum()), "source": str(path)}


def read_runs(paths, *, errors: str = "raise") -> list[pd.DataFrame]:
    """Read several run files in parallel (Arrow releases the GIL while parsing).

    The same file given twice (under any spelling of its path) is a
    :class:`~bayeschain.errors.ParameterError`: its rankings would be evaluated twice under
    two names, or merged into one."""
    paths = list(paths)
    check_distinct_files(paths)
    with ThreadPoolExecutor(max_workers=min(4, max(1, len(paths)))) as pool:
        return list(pool.map(lambda p: read_run(p, errors=errors), paths))


def check_distinct_files(paths) -> None:
    """A :class:`~bayeschain.errors.ParameterError` when a file is given twice (under any
    spelling of its path)."""
    seen: dict = {}
    for path in paths:
        try:
            st = os.stat(path)
            key = (st.st_dev, st.st_ino)
        except OSError:
            key = str(Path(path).resolve())
        if key in seen:
            raise ParameterError(f"the same run file is given twice (also as {seen[key]}); "
                                 "give each run once", file=path)
        seen[key] = str(path)


def _has_duplicate_docs(table) -> bool:
    """Whether a (topic, doc) pair occurs twice (a table or a DataFrame).

    One hash pass over the doc ids: when no doc id repeats (at all), no pair does; else the
    pairs are compared as integer codes."""
    n = len(table)
    if n < 2:
        return False
    if len(pc.unique(as_string_array(table["doc_id"]))) == n:
        return False
    return bool(_repeated(table).any())


def _repeated(table) -> np.ndarray:
    """Whether each row repeats the (topic, doc) pair of an earlier row."""
    n = len(table)
    codes = []
    for col in ("query_id", "doc_id"):
        enc = pc.dictionary_encode(as_string_array(table[col]).combine_chunks())
        codes.append((to_numpy(enc.indices).astype(np.int64), len(enc.dictionary)))
    (topic, _), (doc, n_docs) = codes
    key = topic * n_docs + doc
    order = np.argsort(key, kind="stable")
    ks = key[order]
    repeat = np.zeros(n, dtype=bool)
    repeat[order[1:][ks[1:] == ks[:-1]]] = True
    return repeat


def _check_errors_arg(errors: str) -> None:
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")


def _read_table(path, columns, keep, numeric, errors, extra_ok=False,
                threads: bool = True) -> tuple[pa.Table, dict]:
    """The file's kept columns as an Arrow table (``string`` ids, checked numbers) and its
    attrs: ``skipped``, ``source`` and, from the careful parser, each row's ``lines``."""
    _check_errors_arg(errors)
    return _finish_table(*_first_pass(path, columns, keep, numeric, threads), columns, keep,
                         numeric, errors, extra_ok)


def _first_pass(path, columns, keep, numeric, threads: bool):
    """``(path, data, regular, table)``: the file's bytes, whether the fast parsers may read
    them, and Arrow's CSV table of them (unchecked; None when Arrow cannot read it).  Needs
    ``pyarrow.csv`` only."""
    path = Path(path)
    data = map_bytes(path)
    _check_first_line(data, path)
    regular = _regular(data)
    return path, data, regular, _arrow_csv(data, columns, keep, numeric, threads) if regular \
        else None


#: the longest line a qrels or run file may have (a TREC line is a few dozen bytes; a
#: longer one is a file of another kind, read no further)
MAX_LINE = 1 << 24


def _check_first_line(data, path) -> None:
    """A first line longer than :data:`MAX_LINE` is a :class:`FormatError` before any
    parser meets it (a gzip bomb of one line, a binary file)."""
    if len(data) <= MAX_LINE:
        return
    if data.find(b"\n", 0, MAX_LINE + 1) < 0 and data.find(b"\r", 0, MAX_LINE + 1) < 0:
        raise FormatError(f"a line longer than {MAX_LINE >> 20} MiB; expected TREC lines of "
                          "whitespace-separated fields", file=path, line=1)


def _finish_table(path, data, regular, parsed, columns, keep, numeric, errors,
                  extra_ok) -> tuple[pa.Table, dict]:
    """:func:`_read_table` after :func:`_first_pass`: numbers checked, other parsers where
    Arrow's table is not exact."""
    table = None
    if regular:
        if parsed is not None:
            table = _checked_numbers(parsed, numeric)
            table = None if table is None else _plain_strings(table)
        if table is None:
            data = bytes(data)
            table = _pandas_parse(data, columns, keep, numeric, extra_ok)
    if table is None:
        table, attrs = _careful_parse(path, columns, keep, numeric, errors, extra_ok,
                                      data=bytes(data))
    else:
        attrs = {"skipped": 0}
    attrs["source"] = str(path)
    return table, attrs


def _regular(data: bytes) -> bool:
    """Whether the fast parsers may read ``data``: UTF-8 text without NUL, vertical tab or
    form feed, and every ``\\r`` ends a line (they split lines and fields differently from
    trec_eval's ``isspace`` on those bytes; the careful parser follows trec_eval, and names
    the line of a byte that is not UTF-8, even in a column the fast parsers skip)."""
    if data.find(b"\x00") >= 0 or data.find(b"\x0b") >= 0 or data.find(b"\x0c") >= 0:
        return False
    view = np.frombuffer(data, dtype=np.uint8)
    if view.size and view.max() >= 0x80:      # not ASCII: UTF-8 throughout?
        try:
            bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            return False
    if data.find(b"\r") < 0:
        return True
    data = bytes(data)                     # (a memory-mapped file has no count)
    return data.count(b"\r") == data.count(b"\r\n")


def _plain_strings(table: pa.Table) -> pa.Table:
    """``large_string`` columns as ``string`` (what the lookups and the frames expect)."""
    if not any(pa.types.is_large_string(f.type) for f in table.schema):
        return table
    return table.cast(pa.schema([(f.name, pa.string() if pa.types.is_large_string(f.type)
                                  else f.type) for f in table.schema]))


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    import pandas as pd

    table = _plain_strings(table)
    return table.to_pandas(types_mapper=lambda t: pd.ArrowDtype(t) if pa.types.is_string(t)
                           else None)


def _sniff_delimiter(data: bytes) -> str | None:
    """The single delimiter of a regular file, or None when the file needs another parser."""
    head = data[:_SNIFF_BYTES]
    if not head:
        return None
    text = head.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if len(data) > _SNIFF_BYTES:
        lines = lines[:-1]  # the last line may be cut
    if not lines:           # a first line longer than the sniffed bytes: another parser
        return None
    delim = "\t" if "\t" in lines[0] else " "
    other = " " if delim == "\t" else "\t"
    for line in lines:
        if not line:
            continue
        if (line[0] in " \t#" or line[-1] in " \t\r" or other in line
                or delim + delim in line):
            return None
    return delim


def _checked_numbers(table: pa.Table, numeric) -> pa.Table | None:
    """Numeric columns converted and checked, or None when a value is not a valid number
    (the careful parser then names its line).

    Integers must match ``[+-]?[0-9]+`` (Arrow alone would read ``0x10`` as 16, pandas
    ``1e5`` as 100000); floats are parsed by Arrow and must be finite (no null: the CSV
    reader is given no null spellings)."""
    for col, kind in numeric.items():
        if col not in table.column_names:
            continue
        values = table[col]
        i = table.column_names.index(col)
        try:
            text = pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
            if kind == "int":
                if text:
                    if len(values) and not pc.all(
                            pc.match_substring_regex(values, _INT_RE2)).as_py():
                        return None
                    values = pc.cast(pc.utf8_ltrim(values, "+"), pa.int64())
            elif text:
                values = pc.cast(values, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        if values.null_count:
            return None
        if kind == "float" and len(values) and not pc.all(pc.is_finite(values)).as_py():
            return None
        table = table.set_column(i, col, values)
    return table


def _arrow_csv(data: bytes, columns, keep, numeric, threads: bool = True) -> pa.Table | None:
    """Arrow's CSV reader on a file with one delimiter (numbers not yet checked), or None."""
    delim = _sniff_delimiter(data)
    if delim is None:
        return None
    types = {c: pa.float64() if numeric.get(c) == "float" else pa.string() for c in columns}
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),
            read_options=pcsv.ReadOptions(column_names=columns, use_threads=threads),
            parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False,
                                            double_quote=False, escape_char=False),
            convert_options=pcsv.ConvertOptions(column_types=types, include_columns=keep,
                                                null_values=[], strings_can_be_null=False,
                                                quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return None
    return table


def _pandas_parse(data: bytes, columns, keep, numeric, extra_ok) -> pa.Table | None:
    """pandas' C parser for whitespace-aligned files; None when the file is irregular.

    Every field is read as text (numbers are converted as on the Arrow path).  pandas takes
    the width from the first line: a file whose lines all have one field too many (a qrels
    file with 5 fields, a run with 7) is read and the field ignored, as trec_eval ignores
    it; a line longer than the first (pandas' ``ParserError``), a shorter line whose
    missing fields would be empty, comments and other widths go to the careful parser.
    No column names are passed: names of another length than the data make pandas warn,
    and a warning filter is no cure (files are parsed in threads, and changing the
    filters while another thread warns races)."""
    import pandas as pd

    try:
        frame = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, dtype=str,
                            engine="c", keep_default_na=False, na_filter=False,
                            skip_blank_lines=True, quoting=3, encoding="utf-8",
                            index_col=False)
    except (ValueError, pd.errors.ParserError, OverflowError, UnicodeDecodeError):
        return None
    if not len(frame):      # no line (pandas 2.2 returns untyped columns): careful parser
        return None
    width = frame.shape[1]
    if not (width == len(columns) or (extra_ok and width == len(columns) + 1)):
        return None
    frame = frame.iloc[:, :len(columns)].set_axis(list(columns), axis=1)
    if (frame[columns[-1]] == "").any() or frame[columns[0]].str.startswith("#").any():
        return None  # comment or short lines: the careful parser handles them
    table = pa.Table.from_pandas(frame[keep], preserve_index=False)
    table = _checked_numbers(table, numeric)
    return None if table is None else _plain_strings(table)


def _number(token: str, col: str, kind: str):
    """``(value, problem)`` for one numeric field of the careful parser."""
    if kind == "int":
        if _INT.match(token):
            value = int(token)
            if -(1 << 63) <= value < (1 << 63):
                return value, None
            return None, f"{col} must be an integer that fits in 64 bits, found {token!r}"
        return None, f"{col} must be an integer, found {token!r}"
    return parse_decimal(token, col)


def _careful_parse(path: Path, columns, keep, numeric, errors, extra_ok, *,
                   data: bytes | None = None) -> tuple[pa.Table, dict]:
    """Line by line, naming the first bad line; ``(table, {"skipped", "lines"})``."""
    n = len(columns)
    rows: list[list] = []
    lines: list[int] = []
    skipped = 0
    text = decode_text(read_bytes(path) if data is None else data, path)
    for lineno, raw in enumerate(split_lines(text), start=1):
        if len(raw) > MAX_LINE:
            raise FormatError(f"a line longer than {MAX_LINE >> 20} MiB; expected TREC lines "
                              "of whitespace-separated fields", file=path, line=lineno)
        fields = [f for f in _WHITESPACE.split(raw) if f]
        if not fields or fields[0].startswith("#"):
            continue
        problem = None
        if len(fields) < n or (len(fields) > n and not extra_ok):
            problem = f"expected {n} fields ({' '.join(columns)}), found {len(fields)}"
        else:
            fields = fields[:n]
            for i, col in enumerate(columns):
                kind = numeric.get(col)
                if kind is not None and col in keep:
                    fields[i], problem = _number(fields[i], col, kind)
                    if problem is not None:
                        break
        if problem is not None:
            if errors == "raise":
                raise FormatError(problem, file=path, line=lineno)
            skipped += 1
            continue
        rows.append(fields)
        lines.append(lineno)
    types = {c: {"int": pa.int64(), "float": pa.float64()}.get(numeric.get(c), pa.string())
             for c in keep}
    at = {c: i for i, c in enumerate(columns)}
    table = pa.table({c: pa.array([r[at[c]] for r in rows], type=types[c]) for c in keep})
    return table, {"skipped": skipped, "lines": np.asarray(lines, dtype=np.int64)}


def run_names(paths: list[str], frames: list[pd.DataFrame]) -> list[str]:
    """Run ids from the files, made unique with the file name when needed.

    Two runs that cannot be told apart even by their paths (the same file given twice) are
    a :class:`~bayeschain.errors.ParameterError`, never merged."""
    ids = [str(frame["run_id"].iloc[0]) if len(frame) else None for frame in frames]
    return unique_run_names(paths, ids)


def unique_run_names(paths: list, ids: list[str | None]) -> list[str]:
    """:func:`run_names` from each file's run id (None for an empty file: its name)."""
    paths = list(paths)
    check_distinct_files(paths)
    names = [Path(path).name if rid is None else rid
             for path, rid in zip(paths, ids, strict=True)]
    if len(set(names)) < len(names):
        names = [f"{n}:{Path(p).name}" for n, p in zip(names, paths, strict=True)]
    if len(set(names)) < len(names):
        names = [str(p) for p in paths]
    if len(set(names)) < len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ParameterError("the same run file is given twice; give each run once",
                             file=twice)
    return names


def first_run_id(table: pa.Table) -> str | None:
    """The run id of the row that trec_eval's order puts first (smallest topic id, then
    highest score, then largest doc id): the first row of :func:`read_run`'s frame, whose
    run id names the run.  None for an empty table."""
    if table.num_rows == 0:
        return None
    rid = table["run_id"]
    if pc.all(pc.equal(rid, rid[0])).as_py():      # (an Arrow scalar: no pandas import)
        return rid[0].as_py()
    for col in ("query_id", "score", "doc_id"):
        best = pc.min(table[col]) if col == "query_id" else pc.max(table[col])
        table = table.filter(pc.equal(table[col], best))
    return table["run_id"][0].as_py()
