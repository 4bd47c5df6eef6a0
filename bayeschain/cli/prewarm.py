"""Compile the demo's kernels in a second process while the demo reads and imports.

On an empty Numba cache the demo spends about ten seconds compiling: the walk's
likelihood (its first need) and then the replay, scoring, exact-law and relevance-walk
kernels, while it has little else to do.  :class:`Prewarm` starts
``python -m bayeschain.cli.prewarm TASK DATA`` at the demo's start, twice, one child per
core: ``walk`` compiles the walk's density (and then says ``walk``); ``rehearse`` (at a
lower priority: the walk's density is the first thing the demo needs)
rehearses the demo's own analysis (:func:`bayeschain.cli.demo.analyse`) on the bundled log
with a stand-in sampler that returns a few draws at the prior's centre, which compiles
every other kernel with the argument types the demo will use.  Numba writes each to its
on-disk cache (atomically); the demo waits for ``walk`` and loads it, and finds the rest
cached when it gets there (or compiles it itself, with the same result, if it is first).
On a warm cache the children load everything and end in a few seconds.

The child writes nothing but Numba's cache, prints nothing to the terminal (its output
goes to the demo through a pipe, its errors are discarded: a failed rehearsal only
means the demo compiles for itself), and is ended with the demo.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: chains x draws of the stand-in sampler
REHEARSAL_DRAWS = 4


class Prewarm:
    """The child process (see the module); :meth:`wait_for` a line it prints, :meth:`stop`
    it.  Nothing is started when Numba is absent."""

    def __init__(self, task: str, data_folder: Path, *, nice: int = 0):
        from ..chains.jit import numba_available

        self.proc = None
        self.seen: set[str] = set()
        if not numba_available():
            return
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "bayeschain.cli.prewarm", task, str(data_folder)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True,
                preexec_fn=(lambda: os.nice(nice)) if nice and os.name == "posix" else None)
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


def _stand_in_sample(model, *, chains: int = 2, seed: int = 0, **_):
    """What :func:`~bayeschain.inference.examination.sample` returns, for a few draws near
    the prior's centre (no sampling: the rehearsal only needs the types)."""
    import numpy as np
    import xarray as xr

    from ..inference.examination import _Expansions

    rng = np.random.default_rng(seed)
    theta = np.array([[model.initial_point(rng) for _ in range(REHEARSAL_DRAWS)]
                      for _ in range(chains)])
    stats = xr.Dataset({k: (("chain", "draw"), np.zeros((chains, REHEARSAL_DRAWS), dtype))
                        for k, dtype in (("diverging", bool), ("n_steps", np.int64))})
    return _Expansions(model).of(theta), stats


def main(task: str, folder: str) -> None:
    import argparse
    import contextlib
    import io
    import time
    import warnings

    warnings.simplefilter("ignore")
    if task == "walk":
        from ..inference import nuts_c_kernels  # noqa: F401 - compiles or loads
        print("walk", flush=True)
        return
    from ..inference import examination
    from . import demo

    examination.sample = _stand_in_sample
    args = argparse.Namespace(data=folder, seed=1, rope=0.01)
    with contextlib.redirect_stdout(io.StringIO()):
        demo.analyse(args, time.perf_counter())
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
