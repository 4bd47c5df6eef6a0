"""Input checks shared by the solvers and the layers above them (browsing models, measures).

* :func:`float_array`: a finite float array of an expected shape, or an error saying what
  was expected (never a raw NumPy ``ValueError``, a silent NaN or a broadcasting error);
* :func:`plain`: numbers in error messages (``1.5``, ``[0.5, 0.6]``, never ``array(1.5)``);
* resource bounds: :func:`check_memory` refuses one array larger than a quarter of this
  machine's memory, :data:`MAX_STEPS` bounds the steps of a forward recursion, a
  stopping-time pmf or a simulation and :data:`MAX_WORK` the state-steps of a recursion;
  each error states the limit.

The error class is the caller's: :class:`~bayeschain.errors.ChainError` in the solvers,
:class:`~bayeschain.errors.ParameterError` for measures and browsing models.
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

from ..errors import BayeschainError, ChainError

#: Most steps a forward recursion, a stopping-time pmf or a simulation runs for.
MAX_STEPS = 1_000_000
#: Most state-steps (steps x states x batch elements) a forward recursion may take: about a
#: minute of work on one core; beyond it the recursion fails with the numbers instead of running on.
MAX_WORK = 3_000_000_000


def plain(value) -> str:
    """``value`` for an error message: ``1.5``, ``[0.5, 0.6]``, ``'0.8'``; never
    ``array(1.5)`` or a page of digits (long arrays are summarised by their range)."""
    if isinstance(value, str | bytes | dict | set | type(None)):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    try:
        arr = np.asarray(value)
    except Exception:                                       # noqa: BLE001 (anything at all)
        arr = None
    if arr is None or arr.dtype.kind not in "biuf":
        if isinstance(value, np.ndarray | np.generic):
            value = value.tolist() if value.size <= 6 else \
                f"<an array of shape {value.shape} and type {value.dtype}>"
            if isinstance(value, str):
                return value
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."

    def one(x) -> str:
        if arr.dtype.kind == "b":
            return str(bool(x))
        if arr.dtype.kind in "iu":
            return str(int(x))
        return f"{float(x):.6g}"

    if arr.ndim == 0:
        return one(arr)
    if arr.size <= 6:
        return "[" + ", ".join(one(x) for x in arr.ravel()) + "]"
    flat = arr.ravel()
    if arr.dtype.kind == "f":
        finite = flat[np.isfinite(flat)]
        span = (f"values from {one(finite.min())} to {one(finite.max())}" if finite.size
                else "no finite value")
        if finite.size < flat.size:
            span += f", {flat.size - finite.size} not finite"
    else:
        span = f"values from {one(flat.min())} to {one(flat.max())}"
    return f"an array of shape {arr.shape} ({span})"


@lru_cache(maxsize=1)
def memory_budget() -> int:
    """Bytes one array may take: a quarter of this machine's physical memory, or of the
    process's address-space limit (``ulimit -v``) when that is lower (at least 256 MiB;
    4 GiB where the operating system does not say).  ``BAYESCHAIN_MEMORY_BUDGET`` (bytes)
    sets it lower or higher, e.g. on a shared machine."""
    chosen = os.environ.get("BAYESCHAIN_MEMORY_BUDGET", "").strip()
    if chosen.isdigit() and int(chosen) > 0:
        return int(chosen)
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        total = 16 << 30
    limit = address_space_limit()
    if limit is not None:
        total = min(total, limit)
    return max(int(total) // 4, 256 << 20)


def address_space_limit() -> int | None:
    """The process's address-space limit in bytes (``ulimit -v``), or None when unlimited."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    return None if soft == resource.RLIM_INFINITY else int(soft)


def budget_origin() -> str:
    """Where :func:`memory_budget` comes from, in words, for error messages."""
    if os.environ.get("BAYESCHAIN_MEMORY_BUDGET", "").strip().isdigit():
        return "BAYESCHAIN_MEMORY_BUDGET"
    limit = address_space_limit()
    try:
        if limit is not None and limit < os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"):
            return "a quarter of the address space ulimit -v allows"
    except (ValueError, OSError, AttributeError):
        pass
    return "a quarter of this machine's memory"


def size_text(n: float) -> str:
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


def check_memory(shape, what: str, *, itemsize: int = 8,
                 error: type[BayeschainError] = ChainError) -> None:
    """Refuse an array of ``shape`` (or that many elements) larger than
    :func:`memory_budget`, with an error that states the size and the limit."""
    count = 1.0
    for dim in (shape if isinstance(shape, tuple | list) else (shape,)):
        count *= float(dim)
    need = count * itemsize
    if need > memory_budget():
        dims = " x ".join(str(int(d)) for d in shape) if isinstance(shape, tuple | list) \
            else f"{int(count)} values"
        raise error(f"{what} needs an array of {dims} ({size_text(need)}); the limit is "
                    f"{size_text(memory_budget())} ({budget_origin()})")


def float_array(value, name: str, *, last: int | None = None, batch: tuple | None = None,
                ndim: int | tuple[int, ...] | None = None, finite: bool = True,
                low: float | None = None, high: float | None = None,
                error: type[BayeschainError] = ChainError) -> np.ndarray:
    """``value`` as a float array, or ``error`` saying what was expected.

    Parameters
    ----------
    value
        Numbers: a scalar, a (nested) list or an array of booleans, integers or floats.
        Strings, mappings, ragged lists and complex numbers are refused.
    name
        What the value is, for the message (``"rewards"``, ``"relevance"``).
    last
        Required length of the last axis (the states or ranks).
    batch
        Leading axes the array's leading axes must broadcast against (its own last axis
        excluded; needs ``last``).
    ndim
        Allowed numbers of dimensions.
    finite, low, high
        Refuse NaN and infinities; values below ``low`` or above ``high``.
    """
    if isinstance(value, str | bytes | dict | set | type(None)) or callable(value):
        raise error(f"{name} must be numbers (an array of floats); got {plain(value)}")
    try:
        arr = np.asarray(value)
        if arr.dtype.kind == "O":
            arr = arr.astype(float)
    except (ValueError, TypeError):
        raise error(f"{name} must be numbers in a regular (not ragged) array; got "
                    f"{plain(value)}") from None
    if arr.dtype.kind not in "biuf":
        kind = {"U": "strings", "S": "bytes", "c": "complex numbers", "M": "dates",
                "m": "time spans", "V": "records"}.get(arr.dtype.kind, str(arr.dtype))
        raise error(f"{name} must be real numbers; got {kind} ({plain(value)})")
    arr = arr.astype(float, copy=False)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise error(f"{name} must have {' or '.join(map(str, allowed))} dimension(s); got "
                        f"shape {arr.shape}")
    if last is not None:
        if arr.ndim == 0 or arr.shape[-1] != last:
            raise error(f"{name} must have {last} entries on its last axis (one per state); "
                        f"got shape {arr.shape}")
        if batch is not None:
            try:
                np.broadcast_shapes(arr.shape[:-1], tuple(batch))
            except ValueError:
                raise error(f"{name} has leading axes {arr.shape[:-1]}, which do not "
                            f"broadcast against the batch axes {tuple(batch)}") from None
    if finite and not np.all(np.isfinite(arr)):
        raise error(f"{name} contains NaN or infinite values")
    if low is not None and arr.size and np.nanmin(arr) < low:
        raise error(f"{name} must be >= {plain(low)}; got {plain(np.nanmin(arr))}")
    if high is not None and arr.size and np.nanmax(arr) > high:
        raise error(f"{name} must be <= {plain(high)}; got {plain(np.nanmax(arr))}")
    return arr
