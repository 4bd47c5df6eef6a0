"""Scoring many runs streamed: ``bayeschain score --stream`` over R runs x T topics x D draws.

    python3 benchmarks/bench_scale_scoring.py [--runs 100 1000 10000] [--topics 1000]
                                              [--draws 1000] [--write-up-to 1000]

Writes a qrels of ``topics`` topics (10 judged documents each, grades 0-2) and ``runs``
TREC run files (10 documents per topic, a random ranking of 20 candidates), fits no
posterior but builds one with ``posterior_from_parameters`` (one chain of ``draws`` draws
of a walk with p ~ U(0.5, 0.7), q ~ U(0.1, 0.2) per draw), then runs
``bayeschain score QRELS RUN... --posterior post.nc --stream [-o scores.nc]`` as a fresh
process: wall time, peak resident memory (psutil, every 0.1 s), scores per second.  The
scores are written to netCDF up to ``--write-up-to`` runs (10^4 runs x 10^3 topics x 10^3
draws would be 80 GB of float64 on disk); beyond, the command prints its lines only.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402
from bench_scale import run  # noqa: E402


def write_inputs(folder: Path, n_runs: int, topics: int, draws: int, seed: int = 0):
    import bayeschain as bc

    rng = np.random.default_rng(seed)
    qrels = folder / "qrels.txt"
    with qrels.open("w") as f:
        for t in range(topics):
            for d in range(10):
                f.write(f"{t} 0 d{t}-{d} {rng.integers(0, 3)}\n")
    paths = []
    for r in range(n_runs):
        path = folder / f"run{r}.txt"
        lines = []
        for t in range(topics):
            docs = rng.permutation(20)[:10]
            lines.extend(f"{t} Q0 d{t}-{d} {i + 1} {10 - i} run{r}\n"
                         for i, d in enumerate(docs))
        path.write_text("".join(lines))
        paths.append(str(path))
    walk = np.zeros((draws, 10, 4))
    walk[:, :, 0] = rng.uniform(0.5, 0.7, (draws, 1))
    walk[:, 1:, 1] = rng.uniform(0.1, 0.2, (draws, 1))
    walk[:, :, 3] = 1 - walk[:, :, :3].sum(axis=2)
    post = bc.posterior_from_parameters({"walk": walk})
    post_path = post.save(folder / "post.nc")
    return qrels, paths, post_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--write-up-to", type=int, default=1000)
    a = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-scoring-"))
    rows = []
    try:
        qrels, paths, post = write_inputs(folder, max(a.runs), a.topics, a.draws)
        for n in a.runs:
            out = folder / f"scores_{n}.nc"
            args = ["score", str(qrels), *paths[:n], "--posterior", str(post), "--stream"]
            if n <= a.write_up_to:
                args += ["-o", str(out)]
            wall, peak, _ = run(args, folder)
            written = f"{out.stat().st_size / 2**30:.2f} GB" if out.exists() else "not written"
            scores = n * a.topics * a.draws
            rows.append((f"{n:,}", f"{a.topics:,}", f"{a.draws:,}", f"{scores:.1e}",
                         f"{wall:.1f}", f"{peak:,.0f}", f"{scores / wall:.2e}", written))
            print(rows[-1], flush=True)
            out.unlink(missing_ok=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\n{machine()}\n")
    print(table(rows, ("runs", "topics", "draws", "scores", "wall s", "peak MB",
                       "scores / s", "netCDF")))


if __name__ == "__main__":
    main()
