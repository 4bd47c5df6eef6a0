"""Safe output: write to a temporary file in the target folder, then link it into place.

A crash, an error or an interrupt never leaves a partial output file or a hidden temporary
one, inputs are never overwritten, and an existing output is replaced only with
``force=True``.  Every check that can refuse an output (an existing file, a missing or
unwritable folder, an input named as output) runs before a command's work
(:func:`check_output_path`), so that a refusal never comes after a long computation.

* :func:`atomic_output`: one file.
* :func:`atomic_outputs`: several files of one command, committed together at the end
  (all or none).
* :func:`staging_folder` and :func:`publish_folder`: a whole output folder (the demo),
  written as a hidden sibling and renamed into place when complete.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import BayeschainError
from ..interrupts import raise_if_received


def check_writable_folder(folder) -> Path:
    """Refuse a folder in which this process cannot create files: its permissions
    (``os.access``), then a probe file created and removed at once (a read-only file
    system, ACLs, or root, whom ``os.access`` always allows)."""
    folder = Path(folder)
    if not folder.exists():
        raise BayeschainError("output folder does not exist", file=folder)
    if not folder.is_dir():
        raise BayeschainError("output folder is not a folder", file=folder)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise BayeschainError("output folder is not writable (permission denied)", file=folder)
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".bayeschain-probe.")
    except OSError as exc:
        raise BayeschainError(f"cannot create files in the output folder "
                              f"({exc.strerror or exc})", file=folder) from None
    try:
        os.close(fd)
    finally:
        os.unlink(name)
    return folder


def check_output_path(path, *, force: bool = False, protected: Iterable = ()) -> Path:
    """Refuse to write over an input file, over an existing file without ``force``, over
    a folder, or into a folder that is missing or where files cannot be created."""
    target = Path(path)
    for p in protected:
        if Path(p).exists() and target.exists() and os.path.samefile(p, target):
            raise BayeschainError("refusing to overwrite an input file", file=target)
    if target.is_dir():
        raise BayeschainError("output is a folder, expected a file name", file=target)
    if target.exists() and not target.is_file():     # a device, a FIFO, a socket
        raise BayeschainError(f"output is not a regular file ({_kind(target)}); bayeschain "
                              "writes regular files only, even with --force", file=target)
    if target.exists() and not force:
        raise BayeschainError("output file exists; use --force to replace it", file=target)
    check_writable_folder(target.parent)
    return target


def _kind(path: Path) -> str:
    import stat

    mode = path.stat().st_mode
    for test, name in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


def prepare_figure_folder(folder, names: Iterable[str], *, force: bool = False,
                          protected: Iterable = ()) -> Path:
    """Check, before a command's work, that the figures ``names`` can be written to
    ``folder``: none would be overwritten without ``force``, and the folder (or, when it
    does not exist yet, its nearest existing parent) is writable.  The folder itself is
    made when the first figure is reserved (:meth:`OutputSet.reserve`), and removed again
    if the command fails."""
    target = Path(folder)
    if target.exists() and not target.is_dir():
        raise BayeschainError("figures folder is a file", file=target)
    if target.is_dir():
        for name in names:
            check_output_path(target / name, force=force, protected=protected)
        return target
    parent = target.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise BayeschainError("figures folder cannot be made: a parent is a file", file=parent)
    check_writable_folder(parent)
    return target


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


class OutputSet:
    """Outputs of one command, committed together (see :func:`atomic_outputs`)."""

    def __init__(self, *, force: bool = False, protected: Iterable = ()):
        self.force = force
        self.protected = list(protected)
        self._pending: list[tuple[Path, Path]] = []      # (temporary file, target)
        self._made: list[Path] = []                      # folders made for the outputs
        self.committed = False

    @property
    def targets(self) -> list[Path]:
        """The outputs reserved so far, in order."""
        return [target for _, target in self._pending]

    @contextmanager
    def writing(self, path) -> Iterator[Path]:
        """``with out.writing(path) as tmp:`` :meth:`reserve`, and an ``OSError`` of the
        writes that names no file (a full disk, a file-size limit) names ``path``."""
        tmp = self.reserve(path)
        with naming_os_errors(path):
            yield tmp

    def reserve(self, path) -> Path:
        """A fresh temporary file (hidden, in ``path``'s folder, same suffix) to write
        ``path``'s content to; it becomes ``path`` at the commit."""
        target = Path(path)
        missing = [p for p in reversed(target.parents) if not p.exists()]
        for folder in missing:          # a figures folder: made now, removed on failure
            folder.mkdir()
            self._made.append(folder)
        target = check_output_path(target, force=self.force, protected=self.protected)
        if any(t == target for _, t in self._pending):
            raise BayeschainError("the same output is named twice", file=target)
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.",
                                    suffix=target.suffix or ".tmp")
        os.close(fd)
        self._pending.append((Path(name), target))
        return Path(name)

    def commit(self) -> list[Path]:
        """Link every temporary file into place with the umask's permissions (a hard
        link: never over a file that appeared meanwhile, unless ``force``).  If one fails
        (or an interrupt comes), the outputs already linked by this set are removed."""
        mode = 0o666 & ~_umask()
        done: list[Path] = []
        try:
            for tmp, target in self._pending:
                raise_if_received()               # a signal whose exception was swallowed
                os.chmod(tmp, mode)
                fd = os.open(tmp, os.O_RDONLY)
                try:
                    os.fsync(fd)                  # the data is on disk before the name
                finally:
                    os.close(fd)
                if self.force:
                    os.replace(tmp, target)
                    continue
                try:
                    os.link(tmp, target)
                except FileExistsError:
                    raise BayeschainError("output file appeared while writing (another "
                                          "run?); use --force to replace it",
                                          file=target) from None
                done.append(target)
        except BaseException:
            for target in done:
                target.unlink(missing_ok=True)
            raise
        self.committed = True
        return [target for _, target in self._pending]

    def discard(self) -> None:
        """Remove the temporary files (after a commit they are extra links) and, without a
        commit, the folders made for the outputs."""
        for tmp, _ in self._pending:
            tmp.unlink(missing_ok=True)
        if not self.committed:
            for folder in reversed(self._made):
                try:
                    folder.rmdir()
                except OSError:
                    pass


def netcdf_bytes(data) -> bytes:
    """A Dataset or a named DataArray as netCDF bytes (HDF5 by h5netcdf, written in memory
    so that a full disk fails in a plain write, not inside HDF5), float variables
    gzip-compressed."""
    ds = data.to_dataset() if hasattr(data, "to_dataset") and not hasattr(data, "data_vars") \
        else data
    encoding = {name: {"compression": "gzip", "compression_opts": 4}
                for name, var in ds.data_vars.items() if var.dtype.kind == "f" and var.ndim}
    return bytes(ds.to_netcdf(engine="h5netcdf", encoding=encoding))


@contextmanager
def atomic_outputs(*, force: bool = False, protected: Iterable = ()) -> Iterator[OutputSet]:
    """Several outputs of one command, all or none: ``with atomic_outputs() as out:`` and
    ``tmp = out.reserve(path)`` for each output, written to ``tmp``; when the block ends
    without an exception every output is linked into place, otherwise none is and no
    temporary file is left."""
    outputs = OutputSet(force=force, protected=protected)
    try:
        yield outputs
        outputs.commit()
    finally:
        outputs.discard()


@contextmanager
def atomic_output(path, *, force: bool = False, protected: Iterable = ()) -> Iterator[Path]:
    """The one way bayeschain writes a file: ``with atomic_output(path) as tmp:`` write to
    ``tmp`` (a fresh file in the target's folder, same suffix); on success it becomes
    ``path`` with the permissions the umask gives a new file, otherwise it is removed.

    Without ``force`` an existing ``path`` is refused before the work and again at the
    rename, which is a hard link that fails if another process created ``path`` meanwhile
    (two concurrent runs cannot overwrite each other).
    """
    with atomic_outputs(force=force, protected=protected) as outputs:
        with outputs.writing(path) as tmp:
            yield tmp


@contextmanager
def naming_os_errors(path) -> Iterator[None]:
    """Give a file name to an ``OSError`` raised without one (``write`` on a full disk,
    beyond a file-size limit), so that the command's one-line error says which output."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc


def atomic_write_text(path, text: str, *, force: bool = False, protected: Iterable = ()) -> Path:
    """Write ``text`` to ``path`` atomically (:func:`atomic_output`)."""
    with atomic_output(path, force=force, protected=protected) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def save_figure(fig, path, *, dpi: int = 100) -> Path:
    """Save a matplotlib figure to ``path`` (a temporary file of :class:`OutputSet`), then
    close it."""
    import matplotlib.pyplot as plt

    try:
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)
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


@contextmanager
def staging_folder(target) -> Iterator[Path]:
    """A hidden temporary sibling of the folder ``target`` (``.name.XXXX``, same file
    system), removed with everything in it when the block ends, unless
    :func:`publish_folder` moved it into place."""
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise BayeschainError("output folder is a file", file=target)
    check_writable_folder(target.parent)
    stage = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        yield stage
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)


def publish_folder(stage, target, *, force: bool = False) -> Path:
    """Move the complete folder ``stage`` into place as ``target`` (with the umask's
    permissions): a rename when ``target`` does not exist (reserved first with ``mkdir``,
    so a folder made meanwhile is never replaced); with ``force`` and an existing
    ``target``, each file replaces its namesake atomically.  Returns ``target``."""
    stage, target = Path(stage), Path(target)
    raise_if_received()                           # a signal whose exception was swallowed
    os.chmod(stage, 0o777 & ~_umask())
    if force and target.is_dir():
        for item in sorted(stage.iterdir()):
            if (target / item.name).is_dir():
                raise BayeschainError("an output is a folder in the output folder",
                                      file=target / item.name)
        for item in sorted(stage.iterdir()):
            os.replace(item, target / item.name)
        stage.rmdir()
        return target
    try:
        os.mkdir(target)
    except FileExistsError:
        raise BayeschainError("output folder appeared while writing (another run?)",
                              file=target) from None
    try:
        os.rename(stage, target)            # replaces the empty folder just made
    except BaseException:
        try:
            target.rmdir()
        except OSError:
            pass
        raise
    return target
