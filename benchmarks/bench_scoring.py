"""Posterior scoring at scale, static and dynamic browsing models.

    python3 benchmarks/bench_scoring.py [--lists 5000 --ranks 1000 --draws 1000
                                         --dynamic-lists 500]

* Static SFBM (order 2): 5,000 run-topics of 1,000 ranks under 1,000 posterior draws:
  ``bayeschain.scoring.score``'s computation (one batched tridiagonal solve for the visit
  vectors of all draws, then ``relevance @ visits.T``) against the bare matrix product of
  the same shape, in the same run.
* Dynamic, relevance-dependent RWBM (``drwbm``, order 2): every (list, draw) pair is its
  own chain.  List-draw solves per second of the compiled kernel and of the general
  batched Thomas solver (``chains.expected_visits`` on the ``drwbm`` chains: the peer, and
  what ``score`` runs without Numba), in the same run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, machine, table  # noqa: E402

from bayeschain.scoring.score import _static_scores  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lists", type=int, default=5000)
    ap.add_argument("--ranks", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--dynamic-lists", type=int, default=500)
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
          f"{t_score / t_bare:.2f}x the bare product (target <= 2x)\n")
    dynamic(rng, gains[: args.dynamic_lists], args.ranks, args.draws)


def dynamic(rng, gains: np.ndarray, ranks: int, draws: int) -> None:
    """List-draw solves per second of the relevance-dependent walk."""
    from bayeschain import chains
    from bayeschain.browsing import build_chain
    from bayeschain.scoring.relevance_walk import relevance_walk_scores

    lists = gains.shape[0]
    lengths = np.full(lists, ranks)
    p = rng.beta(30, 10, draws) * 0.9
    q = rng.uniform(0.0, 0.1, draws)
    p_rel = rng.uniform(0.3, 0.6, draws)
    q_rel = rng.uniform(0.1, 0.3, draws)
    args = (gains, gains, lengths, p, q, p_rel, q_rel)
    relevance_walk_scores(*(a[:2] if i < 3 else a for i, a in enumerate(args)))  # compile
    t_kernel = best_of(lambda: relevance_walk_scores(*args), repeat=3)
    few = max(1, lists // 10)
    small = tuple(a[:few] if i < 3 else a for i, a in enumerate(args))

    def thomas():
        chain = build_chain("drwbm", ranks, gains[:few, None, :], p=p[None, :, None],
                            q=q[None, :, None], p_rel=p_rel[None, :, None],
                            q_rel=q_rel[None, :, None])
        visits = chains.expected_visits(chain, check=False)
        return (visits * gains[:few, None, :]).sum(-1) / visits.sum(-1)

    t_thomas = best_of(thomas, repeat=1)
    np.testing.assert_allclose(relevance_walk_scores(*small).T, thomas(), rtol=1e-10)
    rate = lambda n, t: n * draws / t  # noqa: E731
    rows = [("compiled kernel (Numba, 2 threads)", f"{lists:,}", f"{t_kernel:.3f}",
             f"{rate(lists, t_kernel):,.0f}"),
            ("peer / no Numba: batched Thomas (chains.expected_visits)", f"{few:,}",
             f"{t_thomas:.3f}", f"{rate(few, t_thomas):,.0f}")]
    print(table(rows, ("dynamic drwbm, order 2", "lists", "seconds", "list-draw solves/s")))
    print(f"\n{ranks:,} ranks x {draws:,} draws: {rate(lists, t_kernel):,.0f} list-draw "
          f"solves per second (target >= 100,000); {t_thomas / few / (t_kernel / lists):.0f}x "
          f"the batched Thomas solver")


if __name__ == "__main__":
    main()
