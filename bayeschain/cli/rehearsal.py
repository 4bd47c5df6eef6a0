"""The demo's rehearsal (the ``rehearse`` child of :mod:`bayeschain.cli.prewarm`): first
the walk density's callees that the ``walk`` child then loads from the cache
(:func:`~bayeschain.inference.walk.model.compile_callees`) and the likelihood's block
kernel of the bundled log's width; then, on a machine with cores to spare
(:func:`spare_cores`), the demo's analysis on the bundled log with a stand-in sampler,
which compiles every kernel the demo uses after the walk's fit with the argument types it
will use.

    python -m bayeschain.cli.rehearsal DATA_FOLDER [--analysis]

``--analysis`` rehearses the analysis whatever the cores.  Prints ``kernel`` once the
block kernel is compiled (or could not be) and ``done`` at the end; writes nothing but
Numba's cache.
"""

from __future__ import annotations

import sys

#: draws per chain of the stand-in sampler
REHEARSAL_DRAWS = 4
#: the cores the demo keeps busy by itself: the ``walk`` child and this one while the walk's
#: density compiles, then the demo's thread beside two chains of NUTS
DEMO_CORES = 2


def spare_cores(cores: int) -> bool:
    """Whether the analysis is rehearsed on a machine of ``cores`` CPUs: only beyond the
    :data:`DEMO_CORES` the demo keeps busy.  On 2 cores the rehearsal, run at a lower
    priority, reached each kernel after the demo had compiled it, and cost the demo its
    CPU: from a fresh clone, 30.3 / 30.6 s cold and 21.4 / 22.4 s warm with it, 28.0 /
    28.8 s and 20.0 / 20.6 s without (alternated, 2026-12-01, ``benchmarks/RESULTS.md``)."""
    return cores > DEMO_CORES


def _stand_in_sample(model, *, chains: int = 2, seed: int = 0, **_):
    """What :func:`~bayeschain.inference.walk.sampler.sample` returns, for a few draws near
    the prior's centre (no sampling: the rehearsal only needs the types), but the draws of
    the unconstrained vector ``theta``: without them the fit skips the pointwise
    log-likelihood, whose kernel is the walk's density the ``walk`` child compiles (both
    children compiled it at once: 13 CPU-seconds of a cold demo spent twice)."""
    import numpy as np
    import xarray as xr

    from ..inference.walk.sampler import Expansions

    rng = np.random.default_rng(seed)
    theta = np.array([[model.initial_point(rng) for _ in range(REHEARSAL_DRAWS)]
                      for _ in range(chains)])
    stats = xr.Dataset({k: (("chain", "draw"), np.zeros((chains, REHEARSAL_DRAWS), dtype))
                        for k, dtype in (("diverging", bool), ("n_steps", np.int64))})
    return Expansions(model).of(theta), stats


def main(folder: str, analysis: bool | None = None) -> None:
    """Compile the walk density's callees and block kernel, then rehearse the demo's
    analysis when ``analysis`` says so (by default: :func:`spare_cores`)."""
    import argparse
    import contextlib
    import io
    import os
    import time
    import warnings

    warnings.simplefilter("ignore")
    from ..chains.jit import disk_cache_enabled, numba_available, usable_cores

    # first, at full priority: the walk's density needs them soon (cli.prewarm); a failure
    # only means that the ``walk`` child compiles them itself
    if numba_available() and disk_cache_enabled():
        with contextlib.suppress(Exception):
            from ..inference.walk.likelihood import NARROW_LANES, compile_block_kernel
            from ..inference.walk.model import compile_callees

            compile_callees()                      # first: ``walk`` needs them after 2-3 s
            compile_block_kernel(NARROW_LANES)     # the width of TREC Session's pages
    print("kernel", flush=True)                    # the demo waits for it (cli.prewarm)
    if not (spare_cores(usable_cores()) if analysis is None else analysis):
        print("done", flush=True)
        return
    if hasattr(os, "nice"):        # below the demo and the walk's compilation: spare cycles
        os.nice(10)
    from . import demo

    args = argparse.Namespace(data=folder, seed=1, rope=0.01)
    with contextlib.redirect_stdout(io.StringIO()):
        demo.analyse(args, time.perf_counter(), sampler=_stand_in_sample)
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], analysis=True if "--analysis" in sys.argv[2:] else None)
