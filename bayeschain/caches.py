"""Compile caches that never fail a command: Numba's and PyTensor's.

Numba writes compiled kernels next to their module (``__pycache__``) or, where that folder
is read-only, under the user's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``);
PyTensor compiles under ``~/.pytensor``.  A user whose ``HOME`` does not exist, or whose
folders are read-only, met a Numba "no locator available" traceback and PyTensor's
"Permission denied: /nonexistent".  :func:`prepare_caches` looks at these places before
either library is imported (from the environment only: nothing is imported, nothing is
created) and, when one cannot be written, points the library at a folder of the system's
temporary directory for this user (``bayeschain-<uid>/numba``, ``.../pytensor``) with one
line saying so; when no folder can be written at all, Numba runs without its cache.  A
location the user chose (``NUMBA_CACHE_DIR``; ``base_compiledir`` or ``compiledir`` in
``PYTENSOR_FLAGS``) is checked the same way.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def writable(path: Path) -> bool:
    """Whether ``path`` is a folder this process can write, or could be created: its
    nearest existing ancestor is a folder it can write and enter."""
    path = Path(path)
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate.is_dir() and os.access(candidate, os.W_OK | os.X_OK)
    return False


def _home() -> Path | None:
    home = os.environ.get("HOME")
    if home:
        return Path(home)
    try:
        return Path.home()
    except (RuntimeError, KeyError):
        return None


def _fallback(name: str) -> Path | None:
    """``<tmp>/bayeschain-<uid>/<name>`` when it can be written, else None."""
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    try:
        folder = Path(tempfile.gettempdir()) / f"bayeschain-{uid}" / name
    except (OSError, FileNotFoundError):      # no usable temporary directory at all
        return None
    return folder if writable(folder) else None


def _numba(say: Callable[[str], None]) -> None:
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    if chosen:
        if writable(Path(chosen)):
            return
        reason = f"NUMBA_CACHE_DIR={chosen} cannot be written"
    else:
        in_tree = writable(_PACKAGE / "chains" / "__pycache__")
        home = _home()
        user = os.environ.get("XDG_CACHE_HOME") or (str(home / ".cache") if home else "")
        if in_tree or (user and writable(Path(user))):
            return
        reason = (f"neither the package's folder nor {user or 'a home folder'} can be "
                  "written")
    fallback = _fallback("numba")
    if fallback is None:
        os.environ["BAYESCHAIN_NUMBA_NO_CACHE"] = "1"          # read by chains.jit
        say(f"Numba's compile cache: {reason}, nor the temporary folder; kernels are "
            "compiled afresh in every process")
        return
    os.environ["NUMBA_CACHE_DIR"] = str(fallback)
    say(f"Numba's compile cache: {reason}; using {fallback}")


def _pytensor_flags() -> tuple[list[str], str | None]:
    flags = [f for f in os.environ.get("PYTENSOR_FLAGS", "").split(",") if f.strip()]
    chosen = None
    for flag in flags:
        key, _, value = flag.partition("=")
        if key.strip() in ("base_compiledir", "compiledir"):
            chosen = value.strip()
    return flags, chosen


def _pytensor(say: Callable[[str], None]) -> None:
    flags, chosen = _pytensor_flags()
    if chosen:
        folder = Path(os.path.expanduser(chosen))
        reason = f"{chosen} (PYTENSOR_FLAGS) cannot be written"
    else:
        home = _home()
        folder = home / ".pytensor" if home else None
        reason = (f"{folder} cannot be written" if folder
                  else "there is no home folder")
    if folder is not None and writable(folder):
        return
    fallback = _fallback("pytensor")
    if fallback is None:
        say(f"PyTensor's compile folder: {reason}, nor the temporary folder")
        return
    kept = [f for f in flags
            if f.partition("=")[0].strip() not in ("base_compiledir", "compiledir")]
    os.environ["PYTENSOR_FLAGS"] = ",".join([*kept, f"base_compiledir={fallback}"])
    say(f"PyTensor's compile folder: {reason}; using {fallback}")


def prepare_caches(say: Callable[[str], None]) -> None:
    """Point Numba and PyTensor at writable cache folders (see the module); ``say``
    receives one line per change.  Without effect once the library is imported."""
    import sys

    if "numba" not in sys.modules:
        _numba(say)
    if "pytensor" not in sys.modules:
        _pytensor(say)
