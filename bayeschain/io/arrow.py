"""Low-level input shared by the readers, and Arrow helpers.

* :func:`read_bytes`, :func:`iter_lines`, :func:`iter_chunks`: a file's content, gunzipped
  when it is gzip data (the gzip magic bytes, whatever the name; a ``.gz`` name that does not
  hold gzip data is refused).  A truncated or corrupt gzip stream, text that is not UTF-8
  (Latin-1, UTF-16...) and NUL bytes are :class:`~bayeschain.errors.FormatError` naming the
  file and, for text, the line; a UTF-8 byte-order mark at the start is dropped.
* :func:`split_lines`, :func:`iter_lines`, :func:`line_number`: the one rule for lines of
  every text format: ``\\n``, ``\\r\\n`` and a lone ``\\r`` (old Mac OS) each end a line
  (Python's universal newlines, without the Unicode line separators).
* Bounded reads: the content of a file (after decompression) may take at most
  :func:`~bayeschain.chains.checks.memory_budget` bytes (a quarter of the machine's
  memory: a gzip bomb or ``/dev/zero`` is refused, not read until MemoryError), and a NUL
  byte in text is refused in the first chunk that holds it.
* :func:`as_string_array`: id columns as Arrow string arrays, without Python objects per row.
* :func:`to_numpy`, :func:`from_numpy`: numbers between Arrow and NumPy by their buffers.
  pyarrow's own conversions (``to_numpy``, ``pa.array``, a Python scalar given to a compute
  function) import pandas to check whether the value is a pandas object, which costs more
  than reading a million run lines; ``bayeschain eval`` does without pandas.
"""

from __future__ import annotations

import gzip
import importlib
import math
import mmap
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

try:                               # Arrow's compute functions without pyarrow.compute
    from pyarrow._compute import ArraySortOptions as _ArraySortOptions
    from pyarrow._compute import CastOptions as _CastOptions
    from pyarrow._compute import MatchSubstringOptions as _MatchSubstringOptions
    from pyarrow._compute import SetLookupOptions as _SetLookupOptions
    from pyarrow._compute import TrimOptions as _TrimOptions
    from pyarrow._compute import call_function as _call
except ImportError:                # pragma: no cover (a pyarrow that moved them)
    from pyarrow.compute import ArraySortOptions as _ArraySortOptions
    from pyarrow.compute import CastOptions as _CastOptions
    from pyarrow.compute import MatchSubstringOptions as _MatchSubstringOptions
    from pyarrow.compute import SetLookupOptions as _SetLookupOptions
    from pyarrow.compute import TrimOptions as _TrimOptions
    from pyarrow.compute import call_function as _call

from ..errors import FormatError


class _Compute:
    """``pyarrow.compute`` for the readers: the functions the common path of reading and
    ranking runs uses go straight to Arrow's ``call_function`` (with the options and
    defaults of their ``pyarrow.compute`` wrappers); any other name imports
    ``pyarrow.compute`` on first use.  Building its Python wrappers takes 20 ms, more than
    reading a dozen run files, so ``bayeschain eval`` does without them."""

    @staticmethod
    def unique(values):
        return _call("unique", [values])

    @staticmethod
    def index_in(values, value_set):
        return _call("index_in", [values], _SetLookupOptions(value_set))

    @staticmethod
    def fill_null(values, fill_value):          # fill_value: an Arrow scalar
        return _call("coalesce", [values, fill_value])

    @staticmethod
    def take(values, indices):
        return _call("take", [values, indices])

    @staticmethod
    def not_equal(left, right):
        return _call("not_equal", [left, right])

    @staticmethod
    def equal(left, right):
        return _call("equal", [left, right])

    @staticmethod
    def indices_nonzero(values):
        return _call("indices_nonzero", [values])

    @staticmethod
    def is_finite(values):
        return _call("is_finite", [values])

    @staticmethod
    def all(values):                            # skip nulls, at least one value (pc.all)
        return _call("all", [values])

    @staticmethod
    def match_substring_regex(values, pattern):
        return _call("match_substring_regex", [values], _MatchSubstringOptions(pattern))

    @staticmethod
    def utf8_ltrim(values, characters):
        return _call("utf8_ltrim", [values], _TrimOptions(characters))

    @staticmethod
    def cast(values, target_type):              # a safe cast, as pc.cast's default
        return _call("cast", [values], _CastOptions.safe(target_type))

    @staticmethod
    def array_sort_indices(values):             # ascending, nulls at the end
        return _call("array_sort_indices", [values], _ArraySortOptions())

    def __getattr__(self, name):
        return getattr(importlib.import_module("pyarrow.compute"), name)


pc = _Compute()

GZIP_MAGIC = b"\x1f\x8b"
#: A decimal number as C's ``strtod`` reads one, without ``inf``/``nan``/hex forms.
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_NON_FINITE = {"inf", "infinity", "nan"}
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20


def as_string_array(column) -> pa.ChunkedArray:
    """A column of ids (pandas Series, Arrow or NumPy array) as an Arrow ``string`` array.

    Zero-copy for ``string[pyarrow]`` columns; other string types (``large_string``,
    Python objects, integers) are converted.
    """
    arr = column if isinstance(column, pa.Array | pa.ChunkedArray) else pa.array(column)
    if isinstance(arr, pa.Array):
        arr = pa.chunked_array([arr])
    if arr.type != pa.string():
        arr = pc.cast(arr, pa.string())
    return arr


def _numpy_dtype(kind: pa.DataType) -> np.dtype:
    if pa.types.is_integer(kind):
        return np.dtype(f"{'i' if pa.types.is_signed_integer(kind) else 'u'}"
                        f"{kind.bit_width // 8}")
    if pa.types.is_floating(kind):
        return np.dtype(f"f{kind.bit_width // 8}")
    raise TypeError(f"not a numeric Arrow type: {kind}")


def _bits(buffer, offset: int, n: int) -> np.ndarray:
    bits = np.unpackbits(np.frombuffer(buffer, dtype=np.uint8), bitorder="little")
    return bits[offset:offset + n].astype(bool)


def to_numpy(values, fill=None) -> np.ndarray:
    """An Arrow array or chunked array of numbers or booleans as a NumPy array (a copy),
    nulls replaced by ``fill`` (which must then be given), without importing pandas."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    kind = values.type
    out = []
    for chunk in chunks:
        n, offset = len(chunk), chunk.offset
        validity, data = chunk.buffers()[:2]
        if pa.types.is_boolean(kind):
            part = _bits(data, offset, n) if n else np.zeros(0, dtype=bool)
        else:
            dtype = _numpy_dtype(kind)
            part = (np.frombuffer(data, dtype=dtype, count=offset + n)[offset:] if n
                    else np.zeros(0, dtype=dtype))
        if chunk.null_count:
            if fill is None:
                raise ValueError("the array has nulls and no fill value is given")
            part = np.where(_bits(validity, offset, n), part, fill)
        out.append(part)
    if not out:
        return np.zeros(0, dtype=bool if pa.types.is_boolean(kind) else _numpy_dtype(kind))
    return np.concatenate(out) if len(out) > 1 else out[0].copy()


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-D NumPy array of numbers as an Arrow array sharing its memory (no pandas
    import, unlike ``pa.array``)."""
    arr = np.ascontiguousarray(values)
    kind = pa.from_numpy_dtype(arr.dtype)
    return pa.Array.from_buffers(kind, arr.size, [None, pa.py_buffer(arr)])


def parse_decimal(token: str, what: str) -> tuple[float | None, str | None]:
    """``(value, None)`` for a finite decimal number, else ``(None, problem)`` where the
    problem says "<what> must be a number" or, for ``nan``/``inf``/overflow, "<what> must be
    finite" (Python's ``float`` alone would accept ``1_000``, ``nan``, ``infinity`` and
    non-ASCII digits)."""
    token = token.strip(" \t\r\n\x0b\x0c")
    if DECIMAL.match(token):
        value = float(token)
        if math.isfinite(value):
            return value, None
    elif token.lstrip("+-").lower() not in _NON_FINITE:
        return None, f"{what} must be a number, found {token!r}"
    return None, f"{what} must be finite, found {token!r}"


def _gzip_error(exc: BaseException, path: Path) -> FormatError:
    if isinstance(exc, EOFError):
        return FormatError("truncated gzip file (the compressed stream ends early)", file=path)
    return FormatError(f"corrupt gzip file ({exc})", file=path)


def _is_gzip(path: Path, head: bytes) -> bool:
    """Whether ``head`` (the first bytes) starts gzip data; a ``.gz`` name must."""
    if head.startswith(GZIP_MAGIC):
        return True
    if path.suffix.lower() == ".gz":
        if GZIP_MAGIC.startswith(head):   # empty or one byte: cut inside the header
            raise FormatError("truncated gzip file (no complete gzip header)", file=path)
        raise FormatError("not a gzip file, although its name ends in .gz", file=path)
    return False


def _open(path: Path):
    """``(file object, is_gzip)`` reading the decompressed bytes."""
    path = Path(path)
    if path.is_dir():
        raise FormatError("is a directory, expected a file", file=path)
    with open(path, "rb") as fh:
        head = fh.read(2)
    if _is_gzip(path, head):
        return gzip.open(path, "rb"), True
    return open(path, "rb"), False


LINE_END = re.compile(r"\r\n|\r|\n")
_LINE_END_BYTES = re.compile(rb"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of a text, each end (``\\n``, ``\\r\\n``, ``\\r``) removed; the last item
    is what follows the last line end (``""`` when the text ends with one)."""
    return LINE_END.split(text)


def line_number(data: bytes | str, offset: int) -> int:
    """The 1-based line holding ``data[offset]`` under :func:`split_lines`' rule."""
    ends = _LINE_END_BYTES if isinstance(data, bytes | bytearray) else LINE_END
    return 1 + sum(1 for _ in ends.finditer(data, 0, offset))


def _too_large(path, limit: int) -> FormatError:
    from ..chains.checks import budget_origin, size_text

    return FormatError(f"the content (after decompression) is larger than {size_text(limit)} "
                       f"({budget_origin()}); split the file or give a smaller one",
                       file=path)


def read_bytes(path, *, text: bool = True) -> bytes:
    """The whole (decompressed) content of a file, without a leading UTF-8 byte-order mark,
    read in chunks: more than :func:`~bayeschain.chains.checks.memory_budget` bytes is a
    :class:`FormatError`, and so is a NUL byte when ``text`` (in the first chunk that
    holds it: ``/dev/zero`` is refused at once)."""
    from ..chains.checks import memory_budget

    limit = memory_budget()
    parts: list[bytes] = []
    size = 0
    for chunk in iter_chunks(path):
        if text and b"\x00" in chunk:
            data = b"".join([*parts, chunk])
            raise _nul(path, line_number(data, data.index(b"\x00")))
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            raise _too_large(path, limit)
    data = b"".join(parts)
    return data[len(_BOM):] if data.startswith(_BOM) else data


def map_bytes(path):
    """:func:`read_bytes` without the copy for a plain file: a file that is not gzip data
    and has no byte-order mark is memory-mapped (read-only: slicing, ``find``, ``len`` and
    the buffer protocol; ``bytes(...)`` where more is needed)."""
    path = Path(path)
    if path.suffix.lower() == ".gz" or not path.is_file():
        return read_bytes(path)
    from ..chains.checks import memory_budget

    if path.stat().st_size > memory_budget():
        raise _too_large(path, memory_budget())
    with open(path, "rb") as fh:
        head = fh.read(3)
        if len(head) < 3 or head.startswith(GZIP_MAGIC) or head == _BOM:
            return read_bytes(path)
        try:
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return read_bytes(path)


def iter_chunks(path, size: int = _CHUNK) -> Iterator[bytes]:
    """The (decompressed) content of a file in chunks of ``size`` bytes."""
    path = Path(path)
    fh, _ = _open(path)
    with fh:
        while True:
            try:
                chunk = fh.read(size)
            except (EOFError, OSError, zlib.error) as exc:
                raise _gzip_error(exc, path) from None
            if not chunk:
                return
            yield chunk


def _not_utf8(byte: int, column: int, path, line: int) -> FormatError:
    return FormatError(f"not UTF-8 text (byte 0x{byte:02x} at column {column}); expected "
                       "UTF-8 (re-encode a Latin-1 or UTF-16 file, e.g. with iconv)",
                       file=path, line=line)


def _nul(path, line: int) -> FormatError:
    return FormatError("NUL byte in text (a binary or UTF-16 file?); expected UTF-8 text",
                       file=path, line=line)


def decode_line(raw: bytes, path, line: int) -> str:
    """One line of a text file as ``str``: strict UTF-8, no NUL bytes."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(raw[exc.start], exc.start + 1, path, line) from None
    if "\x00" in text:
        raise _nul(path, line)
    return text


def decode_text(data: bytes, path) -> str:
    """A whole text file as ``str`` (see :func:`decode_line`), errors naming the line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = max(data.rfind(b"\n", 0, exc.start), data.rfind(b"\r", 0, exc.start)) + 1
        raise _not_utf8(data[exc.start], exc.start - start + 1, path,
                        line_number(data, exc.start)) from None
    nul = text.find("\x00")
    if nul >= 0:
        raise _nul(path, line_number(text, nul))
    return text


def iter_lines(path, *, max_line: int = 1 << 28) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` for each line of a text file, its end removed (``\\n``,
    ``\\r\\n`` and a lone ``\\r`` each end a line: :func:`split_lines`), read in chunks;
    a line longer than ``max_line`` bytes (256 MiB) is a :class:`FormatError`."""
    lineno = 0
    pending = b""
    chunks = iter_chunks(path)
    while True:
        try:
            chunk = next(chunks, None)
        except FormatError as exc:            # a damaged gzip stream: say where it broke
            raise FormatError(exc.message, file=path, line=lineno + 1) from None
        if chunk is None:
            break
        if lineno == 0 and not pending and chunk.startswith(_BOM):
            chunk = chunk[len(_BOM):]
        data = pending + chunk
        # a chunk that ends in "\r" may be the first half of a "\r\n": that "\r" waits
        stop = len(data) - 1 if data.endswith(b"\r") else len(data)
        last = max(data.rfind(b"\n", 0, stop), data.rfind(b"\r", 0, stop))
        if last < 0:
            pending = data
            if b"\x00" in pending:
                raise _nul(path, lineno + 1)
            if len(pending) > max_line:
                raise FormatError(f"a line longer than {max_line >> 20} MiB; expected a text "
                                  "file of lines", file=path, line=lineno + 1)
            continue
        lines = _LINE_END_BYTES.split(data[:last + 1])
        pending = data[last + 1:]
        for raw in lines[:-1]:
            lineno += 1
            yield lineno, decode_line(raw, path, lineno)
    if pending:                                   # the last line, with or without its end
        lineno += 1
        yield lineno, decode_line(pending.removesuffix(b"\r"), path, lineno)
