"""Markov Precision at scale: closed form against the censored-chain/eigenvector route.

    python3 benchmarks/bench_markov.py [--lists 5000 --ranks 1000 --draws 1000]

* MP (GL_AD_ID) of 5,000 ranked lists of 1,000 documents (about 30% relevant), closed form,
  and the same lists' MPcont batched over 1,000 posterior draws of the per-rank holding
  rates (one (1000 x 1000) @ (1000 x 5000) product for numerator and denominator);
* the reference route (dense transition matrix, Schur-complement censoring on the relevant
  ranks, GTH state reduction) on ``--chain-sample`` of those lists, per list, and the
  agreement of the two.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, machine, table  # noqa: E402

from bayeschain.measures import markov_precision  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lists", type=int, default=5000)
    ap.add_argument("--ranks", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--chain-sample", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    rel = (rng.random((args.lists, args.ranks)) < 0.3).astype(float)
    mu = rng.gamma(2.0, 0.5, size=(args.draws, 1, args.ranks))
    print(f"machine: {machine()}\n")
    t_mp = best_of(lambda: markov_precision(rel, "GL_AD_ID"))
    t_cont = best_of(lambda: markov_precision(rel, "GL_AD_ID", mu), repeat=2)
    sample = rel[: args.chain_sample]
    t0 = time.perf_counter()
    ref = markov_precision(sample, "GL_AD_ID", method="chain")
    t_chain = (time.perf_counter() - t0) / args.chain_sample
    err = float(np.max(np.abs(ref - markov_precision(sample, "GL_AD_ID"))))
    per_list = t_mp / args.lists
    rows = [
        (f"MP closed form, {args.lists:,} lists", f"{t_mp:.3f}", f"{per_list * 1e6:.1f} us"),
        (f"MPcont closed form, {args.lists:,} lists x {args.draws:,} draws", f"{t_cont:.2f}",
         f"{t_cont / (args.lists * args.draws) * 1e9:.0f} ns per list-draw"),
        (f"MP censored chain + GTH, {args.chain_sample} lists",
         f"{t_chain * args.chain_sample:.2f}", f"{t_chain * 1e3:.0f} ms"),
    ]
    print(table(rows, ("task", "seconds", "per list")))
    print(f"\nclosed form vs censored chain: {t_chain / per_list:,.0f}x faster per list "
          f"(target >= 50x); largest difference {err:.1e}")


if __name__ == "__main__":
    main()
