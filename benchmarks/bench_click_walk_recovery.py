"""Recovery of the click-dependent walk (spec ``walk-click``) from 30,000 pages of an
independent simulator, with the default settings.

    python3 benchmarks/bench_click_walk_recovery.py [--pages 30000] [--seed 7]

Users walk 10-result pages one step at a time (``tests/reference/walk_clicks.py``, no code
shared with bayeschain): at every arrival they click with the rank's probability (and
click the same result again with the repeat probability), then move with the moves after
a click or after a skipped snippet.  ``bayeschain.fit(log, "walk-click")`` with its
defaults; reported: how many of the true per-rank moves (forward, backward, next query,
end; after a click and after a skip, the structural zeros left out) fall outside their
99% intervals against the expected number, whether ``E[H]`` and P@H (order 2, ``@10``)
of two runs are inside their 95% intervals (the truths from 400,000 users of the true model
simulated with their clicks), the posterior probability of the runs' true
order, the sampler's diagnostics and the fit's seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import bayeschain as bc  # noqa: E402
from bayeschain.posterior.vocabulary import MOVES  # noqa: E402
from bayeschain.posterior.walk import expected_visits  # noqa: E402
from tests.reference.walk_clicks import pages_to_log, simulate_pages, walk_paths  # noqa: E402

N = 10
SKIP_F = np.r_[0.85, np.linspace(0.75, 0.6, N - 1)]
SKIP_B = np.r_[0.0, np.linspace(0.12, 0.2, N - 1)]
SKIP_R = 0.35 * (1 - SKIP_F - SKIP_B)
AFTER_F = np.r_[0.55, np.linspace(0.5, 0.35, N - 1)]
AFTER_B = np.r_[0.0, np.full(N - 1, 0.05)]
AFTER_R = 0.3 * (1 - AFTER_F - AFTER_B)
CLICK = np.linspace(0.5, 0.15, N)
REPEAT = np.full(N, 0.08)
#: simulated users giving the true E[H] and P@H (standard errors about 0.1% of them)
TRUTH_USERS = 400_000


def rows(f, b, r):
    return np.stack([f, b, r, 1 - f - b - r], axis=1)


def path_scores(walk_rows, gains):
    """P@H order 2 at depth 10 (E[sum of gains over visits] / E[H]) of each gains vector
    under per-rank moves ``walk_rows (N, 4)``: the definition, with the walk's visits."""
    p, q = walk_rows[:, 0].copy(), walk_rows[:, 1].copy()
    p[-1] = 0.0
    P = np.diag(p[:-1], 1) + np.diag(q[1:], -1)
    visits = np.linalg.solve((np.eye(N) - P).T, np.eye(N)[0])
    return np.array([visits @ g / visits.sum() for g in gains])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=30_000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    print(f"machine: {machine()}")
    skip, after = rows(SKIP_F, SKIP_B, SKIP_R), rows(AFTER_F, AFTER_B, AFTER_R)
    pages = simulate_pages(np.random.default_rng(args.seed), args.pages, SKIP_F, SKIP_B,
                           SKIP_R, 1 - SKIP_F - SKIP_B - SKIP_R, CLICK, REPEAT,
                           after_click=(AFTER_F, AFTER_B, AFTER_R,
                                        1 - AFTER_F - AFTER_B - AFTER_R))
    log = pages_to_log(pages, N, queries=[f"q{k % 50}" for k in range(len(pages))])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        start = time.perf_counter()
        post = bc.fit(log, "walk-click")
        seconds = time.perf_counter() - start
    p = post.posterior
    outside, total = 0, 0
    for name, truth in (("walk_skip", skip), ("walk_click", after)):
        draws = p[name].stack(sample=("chain", "draw")).transpose("sample", ...).values
        lo, hi = np.quantile(draws, [0.005, 0.995], axis=0)
        free = np.ones_like(truth, dtype=bool)
        free[0, 1] = False                                  # rank 1 has no backward move
        free[-1, 0] = False                                 # the last rank's forward leaves
        miss = ((truth < lo) | (truth > hi)) & free
        outside += int(miss.sum())
        total += int(free.sum())
        for i, k in zip(*np.nonzero(miss), strict=True):
            print(f"  {name} rank {i + 1} {MOVES[k]}: true {truth[i, k]:.3f}, 99% "
                  f"[{lo[i, k]:.3f}, {hi[i, k]:.3f}]")
    # the truths from users of the true model walking a 10-result list with their clicks
    # (the reference simulator), not from the scored walk's formula
    paths = walk_paths(np.random.default_rng(args.seed + 1), TRUTH_USERS, skip, after, CLICK)
    length = np.array([len(path) for path in paths], dtype=float)
    true_h = length.mean()
    h = expected_visits(post, N).sum(axis=1)
    gains = [np.r_[1, 0, 1, 0, 0, 1, 0, 0, 0, 0], np.r_[0, 1, 0, 1, 1, 0, 0, 0, 1, 0]]
    truth_scores = np.array([np.mean([g[path].sum() for path in paths]) / true_h
                             for g in gains])
    fitted = p["walk"].stack(sample=("chain", "draw")).transpose("sample", ...).values
    scores = np.array([path_scores(w, gains) for w in fitted])
    diag = post.diagnostics()
    print(f"{args.pages:,} pages; fit {seconds:.1f} s; R-hat <= {diag['max_rhat'].max():.3f}, "
          f"bulk ESS >= {diag['min_ess'].min():.0f}, {post.divergences()} divergences; "
          f"{len(seen)} warnings{': ' + str(seen[0].message) if seen else ''}")
    print(f"true per-rank moves outside their 99% intervals: {outside} of {total} "
          f"(expected {0.01 * total:.1f})")
    lo, hi = np.quantile(h, [0.025, 0.975])
    print(f"E[H]: true {true_h:.3f} (simulated), posterior {h.mean():.3f} [{lo:.3f}, {hi:.3f}]")
    for k in range(2):
        lo, hi = np.quantile(scores[:, k], [0.025, 0.975])
        print(f"P@H run {'AB'[k]}: true {truth_scores[k]:.4f}, posterior "
              f"{scores[:, k].mean():.4f} [{lo:.4f}, {hi:.4f}]")
    order = truth_scores[0] > truth_scores[1]
    print(f"P(true order of the two runs) = {np.mean((scores[:, 0] > scores[:, 1]) == order):.3f}")


if __name__ == "__main__":
    main()
