"""The per-document walk's cost against the number of (query, document) pairs.

    python3 benchmarks/bench_document_gradient.py [--pairs 1000 10000 100000]
                                                  [--sessions-per-pair 10]

For each size, a log simulated in memory (``simulate_click_log``: the default walk, a
population of ``pairs / 30`` topics of 3 query formulations showing 10 documents each,
attractiveness spread ``attractiveness_sd = 1``), ``sessions-per-pair x pairs`` sessions;
then, in this process: the pages per document (``page_data(clicks="document")``), the
model (``WalkModel(clicks="document")``, the default spec's settings) and its log density
with gradient (the compiled kernel NUTS calls: ``model.logp``), timed as the median of
50 calls at the sampler's initial point after one warm-up call; the process's resident
memory after each size (psutil; the simulated log in memory included).  The slope is that
of log(gradient time) against log(pairs) between the sizes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402

#: query formulations per topic (simulate_click_log's max_queries) and results per page
FORMULATIONS, RANKS = 3, 10


def measure(pairs: int, sessions_per_pair: int, seed: int = 0) -> dict:
    import psutil

    import bayeschain as bc
    from bayeschain.inference.walk.data import page_data
    from bayeschain.inference.walk.model import WalkModel

    topics = max(1, pairs // (FORMULATIONS * RANKS))
    sessions = sessions_per_pair * topics * FORMULATIONS * RANKS
    log = bc.simulate_click_log(sessions, topics=topics, attractiveness_sd=1.0,
                                max_queries=FORMULATIONS, seed=seed)
    exam = bc.load_spec("walk").section("examination")
    t = time.perf_counter()
    data = page_data(log, clicks="document", default_length=RANKS)
    pages_s = time.perf_counter() - t
    model = WalkModel(data, moves=exam["moves"], clicks="document",
                      backward=exam["backward"], click_moves=exam["click_moves"],
                      boundary=exam["boundary"], prior_sd=exam["prior_sd"],
                      deviation_sd=exam["deviation_sd"])
    theta = model.initial_point(np.random.default_rng(seed))
    model.logp(theta)                                   # compile or load, warm
    times = []
    for _ in range(50):
        t = time.perf_counter()
        model.logp(theta)
        times.append(time.perf_counter() - t)
    return {"pairs": len(data.documents), "sessions": sessions,
            "pages": data.report["pages"], "configurations": data.n_configs,
            "dimension": model.ndim, "pages_s": pages_s,
            "gradient_ms": 1e3 * float(np.median(times)),
            "peak_mb": psutil.Process().memory_info().rss / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--sessions-per-pair", type=int, default=10)
    a = ap.parse_args()
    rows, results = [], []
    for n in a.pairs:
        r = measure(n, a.sessions_per_pair)
        results.append(r)
        rows.append((f"{r['pairs']:,}", f"{r['sessions']:,}", f"{r['pages']:,}",
                     f"{r['configurations']:,}", f"{r['dimension']:,}", f"{r['pages_s']:.1f}",
                     f"{r['gradient_ms']:.2f}", f"{r['peak_mb']:,.0f}"))
        print(rows[-1], flush=True)
    print(f"\n{machine()}\n")
    print(table(rows, ("pairs", "sessions", "pages", "configurations", "dimension",
                       "pages s", "gradient ms", "RSS after, MB")))
    x = np.log([r["pairs"] for r in results])
    y = np.log([r["gradient_ms"] for r in results])
    for i in range(1, len(results)):
        print(f"slope {results[i - 1]['pairs']:,} -> {results[i]['pairs']:,} pairs: "
              f"{(y[i] - y[i - 1]) / (x[i] - x[i - 1]):.2f}")
    if len(results) > 2:
        print(f"slope over all sizes (least squares): {np.polyfit(x, y, 1)[0]:.2f}")


if __name__ == "__main__":
    main()
