"""Numba compilation with an on-disk cache that never fails a command.

``numba.njit(cache=True)`` writes each compiled overload to a cache folder (``__pycache__``
next to the module, or ``NUMBA_CACHE_DIR``).  On a full disk or a read-only installation
that write raises ``OSError`` from inside the first call of the function (Numba guards it
only on Windows), so a fit would fail with "File too large" for a file the user never
asked for.  :func:`jit` compiles the same way and lets a failed cache write pass: the
function runs, uncompiled-from-cache next time.  A cache entry another Numba wrote (two
environments of one Python sharing an editable source tree: Numba 0.60's LLVM 14 cannot
read LLVM 20's bitcode, "LLVM bitcode parsing error") is read as a miss.  Numba removes
its own temporary file when a write fails, and a cache index that names a missing data
file is read as a miss.
"""

from __future__ import annotations

import os
from collections.abc import Callable


def numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def disk_cache_enabled() -> bool:
    """Whether compiled functions go to Numba's on-disk cache: not when
    :mod:`bayeschain.caches` found no writable folder for it (``BAYESCHAIN_NUMBA_NO_CACHE``)."""
    return os.environ.get("BAYESCHAIN_NUMBA_NO_CACHE") != "1"


def jit(func: Callable, **options) -> Callable:
    """``func`` compiled by ``numba.njit(cache=True, **options)``, or ``func`` itself when
    Numba is not installed.  A cache that cannot be written is skipped (see the module)."""
    try:
        import numba
    except ImportError:
        return func
    if not disk_cache_enabled():                               # no writable folder at all
        return numba.njit(cache=False, **options)(func)
    dispatcher = numba.njit(cache=True, **options)(func)
    cache = getattr(dispatcher, "_cache", None)
    load = getattr(cache, "load_overload", None)
    if load is not None:
        def load_or_miss(sig, target_context, _load=load):
            try:
                return _load(sig, target_context)
            except Exception:   # written by another Numba / LLVM (a shared source tree)
                return None     # a miss: compiled afresh, and the entry rewritten

        cache.load_overload = load_or_miss
    save = getattr(cache, "save_overload", None)
    if save is not None:
        def save_or_skip(sig, data, _save=save):
            try:
                _save(sig, data)
            except OSError:        # full disk, read-only folder: run without the cache
                pass

        cache.save_overload = save_or_skip
    return dispatcher
