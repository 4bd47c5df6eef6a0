"""Arrow helpers: id columns as Arrow string arrays, without Python objects per row."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


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
