"""Safe output: write to a temporary file in the target folder, then rename.

A crash or an error never leaves a partial output file, inputs are never overwritten, and
an existing output is replaced only with ``force=True``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
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


@contextmanager
def atomic_output(path, *, force: bool = False, protected: Iterable = ()) -> Iterator[Path]:
    """The one way bayeschain writes a file: ``with atomic_output(path) as tmp:`` write to
    ``tmp`` (a fresh file in the target's folder, same suffix); on success it becomes
    ``path`` with the permissions the umask gives a new file, otherwise it is removed.

    Without ``force`` an existing ``path`` is refused before the work and again at the
    rename, which is a hard link that fails if another process created ``path`` meanwhile
    (two concurrent runs cannot overwrite each other).
    """
    target = check_output_path(path, force=force, protected=protected)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.",
                                suffix=target.suffix or ".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        if force:
            os.replace(tmp, target)
        else:
            try:
                os.link(tmp, target)
            except FileExistsError:
                raise BayeschainError("output file appeared while writing (another run?); "
                                      "use --force to replace it", file=target) from None
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_text(path, text: str, *, force: bool = False, protected: Iterable = ()) -> Path:
    """Write ``text`` to ``path`` atomically (:func:`atomic_output`)."""
    with atomic_output(path, force=force, protected=protected) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def atomic_save_figure(fig, path, *, force: bool = False, dpi: int = 100) -> Path:
    """Save a matplotlib figure atomically (:func:`atomic_output`), then close it."""
    import matplotlib.pyplot as plt

    try:
        with atomic_output(path, force=force) as tmp:
            fig.savefig(tmp, dpi=dpi)
    finally:
        plt.close(fig)
    return Path(path)
