"""Posterior scoring at scale: the visit-vector path against the bare matrix product.

    python3 benchmarks/bench_scoring.py [--lists 5000 --ranks 1000 --draws 1000]

5,000 run-topics of 1,000 ranks under 1,000 posterior draws of a static SFBM (order 2):
``bayeschain.compare.score``'s computation (one batched tridiagonal solve for the visit
vectors of all draws, then ``relevance @ visits.T``) against the bare matrix product of
the same shape, in the same run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, machine, table  # noqa: E402

from bayeschain.compare.score import _static_scores  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lists", type=int, default=5000)
    ap.add_argument("--ranks", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    gains = (rng.random((args.lists, args.ranks)) < 0.2).astype(float)
    lengths = np.full(args.lists, args.ranks)
    p = rng.beta(30, 10, size=(args.draws, 1)) * np.ones((1, args.ranks))
    visits = rng.random((args.draws, args.ranks))
    print(f"machine: {machine()}\n")
    t_score = best_of(lambda: _static_scores(gains, lengths, "sfbm", p, p * 0, 2))
    t_bare = best_of(lambda: visits @ gains.T)
    rows = [("bayeschain score (solve + product)", f"{t_score:.3f}", f"{t_score / t_bare:.2f}"),
            ("bare matrix product (draws x ranks) @ (ranks x lists)", f"{t_bare:.3f}", "1.00")]
    print(table(rows, ("task", "seconds", "x bare")))
    print(f"\n{args.lists:,} run-topics x {args.draws:,} draws at {args.ranks:,} ranks: "
          f"{t_score / t_bare:.2f}x the bare product (target <= 2x)")


if __name__ == "__main__":
    main()
