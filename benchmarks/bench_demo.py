"""``bayeschain demo`` as a new user runs it: a fresh clone, empty compile caches.

    python3 benchmarks/bench_demo.py [--repeat 5] [--lock /tmp/cpu.lock]

Each repetition clones this repository's HEAD into a new temporary folder (so no Python
bytecode and no Numba cache exists: Numba caches next to the sources), points PyTensor's
compile folder and Numba's cache there, and runs ``python -m bayeschain demo`` as a fresh
process with the clone first on ``PYTHONPATH`` (the same code ``pip install -e`` would
run), timing it from the outside.  It reports wall and CPU time, peak memory, and every
line the demo wrote to standard error (the acceptance: none that is not bayeschain's own).
The same clone is then run once more with its caches warm: the cost of the cold caches.
``--lock FILE`` holds an flock on FILE during each timed run (other benchmarks on a
shared machine wait).  ``--law-tol-check`` instead compares the demo's dominance
probabilities with the exact laws run to a mass of 1e-6 and of 1e-4 (the demo's) on one
posterior of the bundled log.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def _locked(path: str | None):
    if not path:
        yield
        return
    import fcntl

    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _run(clone: Path, out: Path, lock: str | None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(clone), PYTENSOR_FLAGS=f"compiledir={clone}/.pt")
    env.pop("NUMBA_CACHE_DIR", None)                 # Numba caches in the clone's __pycache__
    with _locked(lock):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "bayeschain", "demo", "--out", str(out)],
                              cwd=clone, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"demo failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return {"wall": wall, "cpu": (after.ru_utime - before.ru_utime)
            + (after.ru_stime - before.ru_stime),
            "peak_mb": after.ru_maxrss / 1024, "stderr": done.stderr.splitlines()}


def law_tol_check() -> None:
    import warnings

    from bayeschain.comparison import dominance_probability
    from bayeschain.inference import fit
    from bayeschain.io import read_clicks, read_qrels
    from bayeschain.recipes import session_qrels, systems_from_log

    warnings.simplefilter("ignore")
    folder = ROOT / "data" / "trec_session_2013"
    log = read_clicks(folder / "sessiontrack2013.xml.gz")
    qrels = session_qrels(log, read_qrels(folder / "qrels.txt"), folder / "qrels.txt")
    runs = systems_from_log(log)
    post = fit(log, "walk", seed=2026, tune=250, min_ess=400, target_accept=0.9)
    for a, b in (("first query", "last query"), ("baseline", "engine")):
        for law_tol in (1e-6, 1e-4):
            d = dominance_probability(runs, qrels, "PatH(model='rwbm', order=2)@10", post, a,
                                      b, max_draws=20, seed=2026, tol=10 * law_tol,
                                      law_tol=law_tol)
            shown = {k: v for k, v in vars(d.system).items() if k != "standard_errors"}
            print(f"{a} vs {b}, mass {law_tol:g}:", shown)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--lock", default=None)
    ap.add_argument("--law-tol-check", action="store_true")
    args = ap.parse_args()
    if args.law_tol_check:
        law_tol_check()
        return
    cold, warm = [], []
    for k in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="bayeschain-demo-bench-") as tmp:
            clone = Path(tmp) / "clone"
            subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
            cold.append(_run(clone, Path(tmp) / "out-cold", args.lock))
            warm.append(_run(clone, Path(tmp) / "out-warm", args.lock))
        print(f"run {k + 1}: cold {cold[-1]['wall']:.1f} s (CPU {cold[-1]['cpu']:.1f} s, "
              f"stderr lines {len(cold[-1]['stderr'])}), warm {warm[-1]['wall']:.1f} s",
              flush=True)
    for name, runs in (("cold caches (fresh clone)", cold), ("warm caches (same clone)", warm)):
        walls = sorted(r["wall"] for r in runs)
        cpus = sorted(r["cpu"] for r in runs)
        lines = sum(len(r["stderr"]) for r in runs)
        print(f"{name}: wall min {walls[0]:.1f} / median {walls[len(walls) // 2]:.1f} / max "
              f"{walls[-1]:.1f} s; CPU median {cpus[len(cpus) // 2]:.1f} s; peak memory "
              f"(largest process) {max(r['peak_mb'] for r in runs):.0f} MB; stderr lines: "
              f"{lines}")
        for r in runs:
            for line in r["stderr"]:
                print("   stderr:", line)


if __name__ == "__main__":
    main()
