"""What the Python-callback fallback costs: the walk's fit on the bundled TREC Session 2013
log through nutpie's C callback (the default on the nutpie releases the bridge was tested
with) and through ``from_pyfunc`` (the fallback), as fresh ``bayeschain fit`` processes,
plus the cost of one gradient on each path (nutpie's ``benchmark_logp``).

    python3 benchmarks/bench_nutpie_paths.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "data" / "trec_session_2013" / "sessiontrack2013.xml.gz"


def fit_seconds(path: str, folder: Path) -> tuple[float, str]:
    """Wall time of ``bayeschain fit LOG -o post.nc`` with the path forced, and its
    standard error's first line (the fallback's notice, if any)."""
    out = folder / f"post-{path}-{time.monotonic_ns()}.nc"
    env = {**os.environ, "BAYESCHAIN_NUTPIE_PATH": path}
    t = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "bayeschain", "fit", str(LOG), "-o",
                             str(out), "--quiet"], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if result.returncode != 0:
        raise SystemExit(result.stderr)
    return seconds, (result.stderr.splitlines() or [""])[0]


def gradient_microseconds() -> dict[str, float]:
    """Microseconds per gradient of the walk's density on each path, while nutpie samples
    one chain (300 tuning steps and 1,000 draws, warm-up kept): wall time over the
    leapfrog steps taken."""

    import numpy as np
    import nutpie
    import pyarrow as pa

    from bayeschain.inference.walk.data import page_data
    from bayeschain.inference.walk.model import WalkModel
    from bayeschain.inference.walk.sampler import _mass_matrix, compiled_model
    from bayeschain.io.clickformats import read_clicks

    model = WalkModel(page_data(read_clicks(LOG), clicks="rank", default_length=10))

    def init(seed):
        return model.initial_point(np.random.default_rng(seed))

    out = {}
    for path in ("c", "python"):
        compiled, _ = compiled_model(model, init, path=path)
        t = time.perf_counter()
        trace = nutpie.sample(compiled, draws=1000, tune=300, chains=1, cores=1, seed=1,
                              progress_bar=False, save_warmup=True, return_raw_trace=True,
                              **_mass_matrix(nutpie.sample, True))
        seconds = time.perf_counter() - t
        _, stats = trace.get_arrow_trace()
        steps = sum(int(pa.array(b.column("n_steps")).to_numpy(zero_copy_only=False).sum())
                    for b in stats)
        out[path] = seconds / steps * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import nutpie

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        times: dict[str, list[float]] = {"c": [], "python": []}
        notes = {}
        for _ in range(args.repeat):
            for path in ("c", "python"):          # alternating: the machine's drift shared
                seconds, note = fit_seconds(path, Path(tmp))
                times[path].append(seconds)
                notes[path] = note
    grad = gradient_microseconds()
    for path, label in (("c", "C callback (default)"), ("python", "Python callback (fallback)")):
        t = sorted(times[path])
        rows.append((label, f"{t[0]:.1f} / {t[len(t) // 2]:.1f} / {t[-1]:.1f}",
                     f"{grad[path]:.0f}", notes[path][:60] or "-"))
    print(f"# nutpie {nutpie.__version__}; {machine()}")
    print(f"`bayeschain fit` of the TREC Session 2013 walk as a fresh process, {args.repeat} "
          "runs each (min / median / max seconds), and the wall time per leapfrog step "
          "of one chain (us)\n")
    print(table(rows, ("path", "fit (s)", "us per step", "standard error")))
    c, py = sorted(times["c"]), sorted(times["python"])
    print(f"\nfallback / C: fit {py[len(py) // 2] / c[len(c) // 2]:.2f}x, "
          f"gradient {grad['python'] / grad['c']:.2f}x")


if __name__ == "__main__":
    main()
