"""Compile the demo's kernels in a second process while the demo reads and imports.

On an empty Numba cache the demo spends about ten seconds compiling: the walk's
likelihood (its first need) and then the replay, scoring, exact-law and relevance-walk
kernels, while it has little else to do.  :class:`Prewarm` starts two children, one per
core:

- ``walk`` (``python -m bayeschain.cli.prewarm``, at the demo's start) compiles the
  walk's density and its C callback, its likelihood's table driver first, and then says
  ``walk``;
- ``rehearse`` (:mod:`bayeschain.cli.rehearsal`, once the log has been read) first
  compiles the density's other callees
  (:func:`~bayeschain.inference.walk.model.compile_callees`, which ``walk`` then loads
  from the cache: the cold demo's longest wait shortened by a second) and the
  likelihood's block kernel of the bundled log's width (the drivers call it by its
  address, so it is compiled once, beside the density rather than inside it), and says
  ``kernel``; then, on a machine with more cores than the demo keeps busy
  (:func:`~bayeschain.cli.rehearsal.spare_cores`), it rehearses at a lower priority the
  demo's own analysis on the bundled log with a stand-in sampler that returns a few draws
  at the prior's centre, which compiles every other kernel with the argument types the
  demo will use (on 2 cores the demo compiles them itself: the rehearsal only took its
  CPU).

Numba writes each kernel to its on-disk cache (atomically); the demo waits for ``walk``
and ``kernel`` and loads them, and finds the rest cached when it gets there (or compiles
it itself, with the same result, if it is first).  On a warm cache the children load
everything and end in a few seconds.

Each child writes nothing but Numba's cache, prints nothing to the terminal (its output
goes to the demo through a pipe, its errors are discarded: a failed child only means
that the demo compiles for itself), and is ended with the demo.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: the children's modules
TASKS = {"walk": "bayeschain.cli.prewarm", "rehearse": "bayeschain.cli.rehearsal"}


class Prewarm:
    """The child process (see the module); :meth:`wait_for` a line it prints, :meth:`stop`
    it.  Nothing is started when Numba is absent."""

    def __init__(self, task: str, data_folder: Path):
        from importlib.util import find_spec

        self.proc = None
        self.seen: set[str] = set()
        if find_spec("numba") is None:      # (not imported here: the child starts sooner)
            return
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", TASKS[task], str(data_folder)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True)
        except OSError:
            self.proc = None

    def wait_for(self, what: str) -> None:
        """Until the child has printed ``what`` (or ended)."""
        if self.proc is None or what in self.seen:
            return
        for line in self.proc.stdout:
            self.seen.add(line.strip())
            if what in self.seen:
                return

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.proc = None


def main() -> None:
    """The ``walk`` task: compile (or load) the walk's density, then say so."""
    import warnings

    warnings.simplefilter("ignore")
    import contextlib

    from ..inference.walk import likelihood

    # the table driver first: the density's other callees meanwhile compile in the
    # ``rehearse`` child and are loaded from the cache (should this step fail, the import
    # below compiles everything in order); the block kernel, which the drivers call by
    # its address, is the ``rehearse`` child's alone (asked for here too, it was compiled
    # twice whenever this child got there first: a cold demo 38 s instead of 29 s)
    with contextlib.suppress(Exception):
        likelihood.compile_table_driver()
    from ..inference.walk import bridge  # noqa: F401 - compiles or loads

    print("walk", flush=True)


if __name__ == "__main__":
    main()
