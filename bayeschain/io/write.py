"""Safe output: write to a temporary file in the target folder, then rename.

A crash or an error never leaves a partial output file, inputs are never overwritten, and
an existing output is replaced only with ``force=True``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..errors import BayeschainError


def check_output_path(path, *, force: bool = False, protected: Iterable = ()) -> Path:
    """Refuse to write over an input file, or over an existing file without ``force``."""
    target = Path(path)
    for p in protected:
        if Path(p).exists() and target.exists() and os.path.samefile(p, target):
            raise BayeschainError("refusing to overwrite an input file", file=target)
    if target.exists() and not force:
        raise BayeschainError("output file exists; use --force to replace it", file=target)
    if not target.parent.exists():
        raise BayeschainError("output folder does not exist", file=target.parent)
    return target


def prepare_figure_folder(folder, names: Iterable[str], *, force: bool = False,
                          protected: Iterable = ()) -> Path:
    """Make ``folder`` and check that none of the figures ``names`` would be overwritten
    without ``force``: called before a command's work, so that a refusal never comes after
    a long computation."""
    target = Path(folder)
    if target.exists() and not target.is_dir():
        raise BayeschainError("figures folder is a file", file=target)
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        check_output_path(target / name, force=force, protected=protected)
    return target


def atomic_write_text(path, text: str, *, force: bool = False, protected: Iterable = ()) -> Path:
    """Write ``text`` to ``path`` atomically (temporary file + rename)."""
    target = check_output_path(path, force=force, protected=protected)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def atomic_save_figure(fig, path, *, force: bool = False, dpi: int = 100) -> Path:
    """Save a matplotlib figure atomically (temporary file + rename), then close it."""
    import matplotlib.pyplot as plt

    target = check_output_path(path, force=force)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.",
                               suffix=target.suffix)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=dpi)
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)
        plt.close(fig)
    return target
