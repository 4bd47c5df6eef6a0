"""The child process of the fault-injection tests: ``python child.py COMMAND ARGS...``
sets up the faults its environment asks for, then runs ``bayeschain.cli.main``.

Read only here (never by bayeschain):

* ``FAULT_FSIZE=N``: a file-size limit of N bytes (``RLIMIT_FSIZE``) with SIGXFSZ ignored,
  so that a write beyond it fails with EFBIG, as on a full disk;
* ``FAULT_PAUSE=NAME``: a write of a file whose name contains NAME (``Path.write_bytes`` /
  ``write_text``, ``DataFrame.to_csv``, ``Figure.savefig``) writes half of its bytes (or all
  of them, for the library writers), prints ``PAUSED <file name>`` and waits until the
  file ``FAULT_GATE`` exists (at most 120 s): a signal can be delivered mid-write;
* ``FAULT_SAMPLING=1``: prints ``SAMPLING`` when NUTS starts;
* ``FAULT_FAKE_DEMO=1``: the demo's analysis (three NUTS fits) is replaced by a small one,
  so that its writes come within seconds.
"""

import os
import signal
import sys
import time
from pathlib import Path

ENV = os.environ


def _pause(path) -> None:
    name = Path(path).name
    if ENV.get("FAULT_PAUSE", "\0") not in name:
        return
    print(f"PAUSED {name}", flush=True)
    gate = Path(ENV.get("FAULT_GATE", "/nonexistent/gate"))
    deadline = time.monotonic() + 120
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def _install_pauses() -> None:
    import pathlib

    import pandas as pd

    write_bytes, write_text, to_csv = (pathlib.Path.write_bytes, pathlib.Path.write_text,
                                       pd.DataFrame.to_csv)

    def slow_bytes(self, data):
        if ENV["FAULT_PAUSE"] not in self.name:
            return write_bytes(self, data)
        data = bytes(data)
        with open(self, "wb") as f:
            f.write(data[:len(data) // 2])
            f.flush()
            _pause(self)
            f.write(data[len(data) // 2:])
        return len(data)

    def slow_text(self, text, *args, **kwargs):
        if ENV["FAULT_PAUSE"] not in self.name:
            return write_text(self, text, *args, **kwargs)
        return slow_bytes(self, text.encode(kwargs.get("encoding") or "utf-8"))

    def slow_csv(self, path_or_buf=None, *args, **kwargs):
        out = to_csv(self, path_or_buf, *args, **kwargs)
        if isinstance(path_or_buf, str | os.PathLike):
            _pause(path_or_buf)
        return out

    pathlib.Path.write_bytes = slow_bytes
    pathlib.Path.write_text = slow_text
    pd.DataFrame.to_csv = slow_csv
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return
    savefig = Figure.savefig

    def slow_savefig(self, fname, *args, **kwargs):
        out = savefig(self, fname, *args, **kwargs)
        if isinstance(fname, str | os.PathLike):
            _pause(fname)
        return out

    Figure.savefig = slow_savefig


def _announce_sampling() -> None:
    from bayeschain.inference.walk import sampler as walk_sampler

    sample = walk_sampler.sample

    def announced(*args, **kwargs):
        print("SAMPLING", flush=True)
        return sample(*args, **kwargs)

    walk_sampler.sample = announced


def _fake_demo() -> None:
    """A small stand-in for the demo's analysis: a posterior of 20 draws, scores of two
    runs on three topics, a comparison table and a replay check of a simulated log."""
    import numpy as np
    import pandas as pd
    import xarray as xr

    from bayeschain.cli import demo
    from bayeschain.inference import posterior_from_parameters, predictive_walk_checks
    from bayeschain.simulate import simulate_click_log

    def analyse(args, t0, **_):
        rng = np.random.default_rng(0)
        walk = rng.dirichlet([5, 1, 1, 2], size=(20, 10))
        walk[:, 0, 1] = 0
        walk /= walk.sum(-1, keepdims=True)
        post = posterior_from_parameters({"walk": walk,
                                          "click": rng.uniform(0.2, 0.4, (20, 10))})
        check = predictive_walk_checks(post, simulate_click_log(50, seed=1),
                                       seed=0).deepest_clicked_rank
        scores = xr.DataArray(rng.random((1, 20, 2, 3)),
                              dims=("chain", "draw", "run", "topic"),
                              coords={"chain": [0], "draw": np.arange(20), "run": ["a", "b"],
                                      "topic": ["1", "2", "3"]}, name="score")
        table = pd.DataFrame({"A": ["a"], "B": ["b"], "mean_diff": [0.1]})
        demo._step(t0, "fake analysis: two runs on three topics")
        print("ANALYSED", flush=True)
        return demo.Results(post=post, scores=scores, rel_scores=scores, table=table,
                            check=check)

    demo.analyse = analyse


def main() -> int:
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # a suite started as a background job (``cmd &``, nohup) hands SIGINT ignored to
        # its children, and bayeschain rightly leaves an ignored SIGINT ignored: give the
        # command Python's own handler, as a terminal's user has it
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if "FAULT_FSIZE" in ENV:
        import resource

        # CPython writes a .pyc with one unchecked write(): under the limit it would leave
        # truncated bytecode in the checkout for every later test to trip on
        sys.dont_write_bytecode = True

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        limit = int(ENV["FAULT_FSIZE"])
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    if "FAULT_PAUSE" in ENV:
        _install_pauses()
    if ENV.get("FAULT_SAMPLING"):
        _announce_sampling()
    if ENV.get("FAULT_FAKE_DEMO"):
        _fake_demo()
    from bayeschain.cli import main as cli

    return cli(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
