"""Safe storage of a posterior: its content digest, the domain check of its variables and
the reading of its file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from ..errors import BayeschainError
from .vocabulary import POSITIVE, PROBABILITIES, SIMPLEX


def read_tree(path: Path) -> xr.DataTree:
    """The file's tree, fully loaded.  HDF5 parses a damaged file with errors of every
    kind (OSError, ValueError, OverflowError, KeyError...): all of them mean the same to
    the user, a file that is not a readable posterior.  The half-opened file objects a
    failure leaves are collected at once, quietly (h5netcdf's destructor would print an
    "Exception ignored" traceback at exit)."""
    import gc
    import sys
    import warnings

    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None
    try:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with xr.open_datatree(path, engine="h5netcdf") as tree:
                    return tree.load()
        except PermissionError:
            raise
        except Exception as exc:    # noqa: BLE001 - any parser failure: a damaged file
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        gc.collect()
    finally:
        sys.unraisablehook = hook
    raise BayeschainError(f"not a readable bayeschain posterior file ({detail})", file=path)


#: the root attribute holding a posterior file's content digest
DIGEST_ATTR = "content_digest"


#: how far a row of a simplex may sum from 1
SIMPLEX_TOL = 1e-9


def _canonical(value):
    """Attribute values as JSON-able Python (what a netCDF round trip preserves: NumPy
    scalars and arrays become numbers and lists, booleans 0 / 1)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray):
        return [_canonical(v) for v in value.tolist()]
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return int(value)
    return value


def _attrs_text(attrs, skip=()) -> str:
    import json

    return json.dumps({str(k): _canonical(v) for k, v in attrs.items() if k not in skip},
                      sort_keys=True, default=str)


def _array_bytes(values: np.ndarray) -> bytes:
    """A variable's values in a canonical byte form: little-endian 64-bit numbers,
    booleans as bytes, strings as length-prefixed UTF-8."""
    values = np.asarray(values)
    kind = values.dtype.kind
    shape = ",".join(map(str, values.shape)).encode()
    if kind in "OUS":
        parts = [(v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v))
                 .encode() for v in values.ravel().tolist()]
        body = b"".join(len(p).to_bytes(8, "little") + p for p in parts)
        return b"str:" + shape + b":" + body
    if kind == "b":
        return b"bool:" + shape + b":" + np.ascontiguousarray(values, np.uint8).tobytes()
    if kind in "iu":
        return b"int:" + shape + b":" + np.ascontiguousarray(values, "<i8").tobytes()
    if kind == "f":
        return b"float:" + shape + b":" + np.ascontiguousarray(values, "<f8").tobytes()
    if kind == "c":
        return b"complex:" + shape + b":" + np.ascontiguousarray(values, "<c16").tobytes()
    return f"{values.dtype.str}:".encode() + shape + b":" + values.tobytes()


def content_digest(tree: xr.DataTree) -> str:
    """``sha256:<hex>`` over every group's variables and coordinates (name, dims, attrs,
    values) and the attrs of every group, except the digest itself.  Stored in the root
    attrs at save; :meth:`Posterior.load` recomputes it, so that a file modified after it
    was written (a probability halved, a draw dropped, an attribute edited) is refused."""
    import hashlib

    h = hashlib.sha256()

    def feed(part: bytes | str) -> None:
        b = part.encode() if isinstance(part, str) else part
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)

    for node in sorted(tree.subtree, key=lambda n: n.path):
        feed("group " + node.path)
        feed(_attrs_text(node.attrs, skip=(DIGEST_ATTR,) if node.is_root else ()))
        ds = node.to_dataset(inherit=False)
        for name in sorted(map(str, ds.variables)):
            var = ds.variables[name]
            feed("variable " + name)
            feed(",".join(map(str, var.dims)))
            feed(_attrs_text(var.attrs))
            feed(_array_bytes(var.values))
    return "sha256:" + h.hexdigest()


def check_domain(tree: xr.DataTree, *, file=None) -> None:
    """The draws lie in their domain: every value finite; probabilities in [0, 1]; each
    row of the walk's moves, of the click-to-click transitions and of the jump matrix
    sums to 1 (within ``SIMPLEX_TOL``); rates and scales positive.  A
    :class:`~bayeschain.errors.BayeschainError` names the variable (and ``file``)."""
    if "posterior" not in tree.children:
        return
    ds = tree["posterior"].to_dataset()
    for name, da in ds.data_vars.items():
        values = np.asarray(da.values)
        if values.dtype.kind not in "biuf":
            raise BayeschainError(f"posterior variable {name!r} is not numeric "
                                  f"({values.dtype})", file=file)
        values = values.astype(float)
        if values.size and not np.isfinite(values).all():
            raise BayeschainError(f"posterior variable {name!r} has "
                                  f"{int((~np.isfinite(values)).sum())} non-finite values "
                                  f"(NaN or infinite)", file=file)
        if name in PROBABILITIES and values.size and (values.min() < 0 or values.max() > 1):
            raise BayeschainError(f"posterior variable {name!r} holds probabilities but has "
                                  f"values from {values.min():.6g} to {values.max():.6g}",
                                  file=file)
        if name in POSITIVE and values.size and values.min() <= 0:
            raise BayeschainError(f"posterior variable {name!r} must be positive but has "
                                  f"values down to {values.min():.6g}", file=file)
        dim = SIMPLEX.get(name)
        if dim is not None and dim in da.dims and values.size:
            sums = da.sum(dim).values.ravel()
            worst = sums[np.argmax(np.abs(sums - 1.0))]
            if abs(worst - 1.0) > SIMPLEX_TOL:
                raise BayeschainError(f"posterior variable {name!r}: each row over {dim!r} "
                                      f"must sum to 1, but one sums to {worst:.12g}",
                                      file=file)
