"""Batched chain solves against a plain loop of ``np.linalg.solve`` on the same inputs.

    python3 benchmarks/bench_solvers.py [--batch 10000] [--loop-sample 200]

* tridiagonal: N = 1000 ranks, a batch of 10^4 random walks, one right-hand side each,
  solved by ``bayeschain.chains`` (batched Thomas algorithm) and, as peers, by a loop of
  ``np.linalg.solve`` on the dense matrices and a loop of ``scipy.linalg.solve_banded``.
* dense: N = 100, a batch of 10^4 general substochastic blocks, batched LAPACK
  (``expected_reward``) against the loop.

A loop over 10^4 dense 1000 x 1000 solves takes minutes, so the loop peers are timed on the
first ``--loop-sample`` inputs and their per-solve time is scaled to the batch (stated in
the table).  Agreement with the dense solve is checked on those inputs too.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, machine, table  # noqa: E402

from bayeschain import chains  # noqa: E402
from bayeschain.chains import Tridiagonal  # noqa: E402


def random_walks(rng, batch, n):
    w = rng.random((batch, n, 3))
    w[:, 0, 0] = 0
    w[:, -1, 2] = 0
    w[..., 1] += 0.05
    w /= w.sum(-1, keepdims=True)
    return Tridiagonal(w[..., 0], np.zeros((batch, n)), w[..., 2])


def bench_tridiagonal(batch, n, sample, rng):
    walk = random_walks(rng, batch, n)
    rhs = rng.random((batch, n))
    t_batch = best_of(lambda: chains.expected_reward(walk, rhs, start=None, check=False))
    t_checked = best_of(lambda: chains.expected_reward(walk, rhs, start=None))
    x = chains.expected_reward(walk, rhs, start=None, check=False)
    dense = Tridiagonal(walk.lower[:sample], walk.diag[:sample], walk.upper[:sample]).to_dense()
    eye = np.eye(n)

    def loop_dense():
        return [np.linalg.solve(eye - dense[i], rhs[i]) for i in range(sample)]

    def loop_banded():
        out = []
        for i in range(sample):
            ab = np.zeros((3, n))
            ab[0, 1:] = -walk.upper[i, :-1]
            ab[1] = 1 - walk.diag[i]
            ab[2, :-1] = -walk.lower[i, 1:]
            out.append(scipy.linalg.solve_banded((1, 1), ab, rhs[i]))
        return out

    t0 = time.perf_counter()
    ref = loop_dense()
    t_dense = (time.perf_counter() - t0) / sample * batch
    t_banded = best_of(loop_banded, 1) / sample * batch
    err = max(np.max(np.abs(x[i] - ref[i]) / np.maximum(1, np.abs(ref[i])))
              for i in range(sample))
    return t_batch, t_checked, t_dense, t_banded, err


def bench_dense(batch, n, sample, rng):
    q = rng.random((batch, n, n))
    q *= (0.95 / q.sum(-1))[..., None]
    rhs = rng.random((batch, n))
    t_batch = best_of(lambda: chains.expected_reward(q, rhs, start=None, check=False))
    eye = np.eye(n)
    m = min(batch, sample * 10)
    t0 = time.perf_counter()
    ref = [np.linalg.solve(eye - q[i], rhs[i]) for i in range(m)]
    t_loop = (time.perf_counter() - t0) / m * batch
    x = chains.expected_reward(q[:m], rhs[:m], start=None, check=False)
    err = max(np.max(np.abs(x[i] - ref[i])) for i in range(m))
    return t_batch, t_loop, err, m


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=10_000)
    ap.add_argument("--loop-sample", type=int, default=200)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"machine: {machine()}\n")
    tb, tc, td, tband, err = bench_tridiagonal(args.batch, 1000, args.loop_sample, rng)
    db, dl, derr, m = bench_dense(args.batch, 100, args.loop_sample, rng)
    rows = [
        ("tridiagonal N=1000", f"{args.batch:,}", "bayeschain batched Thomas", f"{tb:.3f}", "1.0"),
        ("", "", "  + input validation", f"{tc:.3f}", f"{tc / tb:.2f}"),
        ("", "", f"np.linalg.solve loop (x{args.batch // args.loop_sample} of "
         f"{args.loop_sample})", f"{td:.1f}", f"{td / tb:.0f}"),
        ("", "", f"scipy solve_banded loop (x{args.batch // args.loop_sample})",
         f"{tband:.2f}", f"{tband / tb:.1f}"),
        ("dense N=100", f"{args.batch:,}", "bayeschain batched LAPACK", f"{db:.3f}", "1.0"),
        ("", "", f"np.linalg.solve loop (x{args.batch / m:.0f} of {m})", f"{dl:.2f}",
         f"{dl / db:.1f}"),
    ]
    print(table(rows, ("case", "batch", "method", "seconds", "x bayeschain")))
    print(f"\nmax relative difference, tridiagonal vs dense solve: {err:.2e}")
    print(f"max absolute difference, batched dense vs loop:      {derr:.2e}")
    print(f"speed-up of the tridiagonal path over the np.linalg.solve loop: {td / tb:.0f}x")


if __name__ == "__main__":
    main()
