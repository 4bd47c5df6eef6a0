"""bayeschain eval against ranx and pytrec_eval on 5 million run lines, in the same run.

    pip install ranx pytrec-eval-terrier        # peers, for this benchmark only
    python3 benchmarks/bench_trec_eval.py [--runs 100 --topics 50 --depth 1000]

Synthetic TREC files: 50 topics with 500 graded judgements each, 100 run files of
50 topics x 1000 documents (5,000,000 lines), written sorted by score as retrieval systems
write them.  Each tool evaluates what it supports of AP, P@10, RBP(p=0.8), nDCG@10 and
ERR@20 (ranx: no ERR; pytrec_eval: no RBP, no ERR); bayeschain computes all five.
Each tool runs ``--repeat`` times (default 3) and its best parse and compute times count.

Parse = reading the files into the tool's structures; compute = everything after
(ranking, joining with the qrels, the measures, the means).  ranx's numba kernels are
compiled on a tiny input before timing.  The per-topic values of the shared measures are
compared across tools.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402

MEASURES = ["AP", "P@10", "RBP(p=0.8)", "nDCG@10", "ERR@20"]
GRADED_RBP = "RBP(p=0.8, gains={1: 1, 2: 2, 3: 3})"


def make_data(folder: Path, n_runs: int, n_topics: int, depth: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    pool = 5 * depth
    lines = []
    for t in range(n_topics):
        docs = rng.choice(pool, size=500, replace=False)
        grades = rng.choice(4, size=500, p=[0.6, 0.25, 0.1, 0.05])
        lines += [f"{t + 1} 0 doc-{t + 1}-{d} {g}\n" for d, g in zip(docs, grades, strict=True)]
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(lines))
    runs = []
    topic_col = np.repeat(np.arange(1, n_topics + 1), depth)
    rank_col = np.tile(np.arange(1, depth + 1), n_topics)
    for r in range(n_runs):
        docs = np.concatenate([rng.choice(pool, size=depth, replace=False)
                               for _ in range(n_topics)])
        scores = np.concatenate([np.sort(rng.random(depth))[::-1] * 10 for _ in range(n_topics)])
        text = "\n".join(f"{t} Q0 doc-{t}-{d} {k} {s:.6f} run{r}" for t, d, k, s in
                         zip(topic_col.tolist(), docs.tolist(), rank_col.tolist(),
                             scores.tolist(), strict=True))
        path = folder / f"run{r}.txt"
        path.write_text(text + "\n")
        runs.append(path)
    return qrels, runs


def bench_bayeschain(qrels_path, run_paths):
    from bayeschain.evaluation import aggregate, evaluate_runs
    from bayeschain.io import read_qrels, read_runs

    t0 = time.perf_counter()
    qrels = read_qrels(qrels_path)
    runs = dict(zip([p.stem for p in run_paths], read_runs(run_paths), strict=True))
    t1 = time.perf_counter()
    table_ = evaluate_runs(qrels, runs, MEASURES)
    aggregate(table_)  # the means over topics, as `bayeschain eval` prints them
    t2 = time.perf_counter()
    graded = evaluate_runs(qrels, runs, [GRADED_RBP])
    return t1 - t0, t2 - t1, table_, graded


def bench_ranx(qrels_path, run_paths):
    from ranx import Qrels, Run, evaluate

    metrics = ["map", "precision@10", "rbp.8", "ndcg@10"]
    tiny_q = Qrels({"q": {"a": 1, "b": 0}})
    evaluate(tiny_q, Run({"q": {"a": 1.0, "b": 0.5}}), metrics)  # numba compilation
    t0 = time.perf_counter()
    qrels = Qrels.from_file(str(qrels_path), kind="trec")
    runs = [Run.from_file(str(p), kind="trec") for p in run_paths]
    t1 = time.perf_counter()
    scores = [evaluate(qrels, run, metrics, return_mean=False) for run in runs]
    t2 = time.perf_counter()
    results = [{m: dict(zip(run.get_query_ids(), s[m], strict=True)) for m in metrics}
               for run, s in zip(runs, scores, strict=True)]
    return t1 - t0, t2 - t1, results


def bench_pytrec_eval(qrels_path, run_paths):
    import pytrec_eval

    t0 = time.perf_counter()
    with open(qrels_path) as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    runs = []
    for p in run_paths:
        with open(p) as fh:
            runs.append(pytrec_eval.parse_run(fh))
    t1 = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_10", "ndcg_cut_10"})
    results = [evaluator.evaluate(run) for run in runs]
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, results


def best_of(fn, qrels, runs, repeat):
    """Best parse and best compute time over ``repeat`` runs (first runs pay page faults and
    allocator warm-up, for every tool alike)."""
    best = None
    for _ in range(repeat):
        p, c, res = fn(qrels, runs)[:3]
        best = (p, c, res) if best is None else (min(best[0], p), min(best[1], c), res)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--depth", type=int, default=1000)
    args = ap.parse_args()
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        qrels, runs = make_data(Path(tmp), args.runs, args.topics, args.depth)
        lines = args.runs * args.topics * args.depth
        print(f"wrote {lines:,} run lines in {len(runs)} files ({time.perf_counter() - t:.1f} s)\n")
        bp, bc, ours = best_of(bench_bayeschain, qrels, runs, args.repeat)
        graded = bench_bayeschain(qrels, runs)[3]
        rows = [("bayeschain", f"{bp:.2f}", f"{bc:.2f}", f"{bp + bc:.2f}", "5 (all)")]
        peers = {}
        for name, fn in (("ranx", bench_ranx), ("pytrec_eval", bench_pytrec_eval)):
            try:
                p, c, res = best_of(fn, qrels, runs, args.repeat)
            except ImportError:
                rows.append((name, "-", "-", "-", "not installed"))
                continue
            peers[name] = (p, c, res)
            n = "4 (no ERR)" if name == "ranx" else "3 (no RBP, ERR)"
            rows.append((name, f"{p:.2f}", f"{c:.2f}", f"{p + c:.2f}", n))
        print(table(rows, ("tool", "parse s", "compute s", "total s", "measures")))
        if peers:
            best_total = min(p + c for p, c, _ in peers.values())
            print(f"\nbayeschain total / fastest peer total: {(bp + bc) / best_total:.3f} "
                  f"(target <= 0.5)")
        if "ranx" in peers:
            print(f"bayeschain compute / ranx compute:     {bc / peers['ranx'][1]:.3f} "
                  f"(target <= 0.1)")
        check_agreement(ours, peers, graded)


def check_agreement(ours, peers, graded_rbp) -> None:
    """ranx's rbp uses the raw grades as gains (its docstring says binary), so its values
    are compared with ``RBP(p=0.8, gains={1: 1, 2: 2, 3: 3})``, computed untimed."""
    got = pd.concat([ours, graded_rbp]).set_index(["run", "topic", "measure"])["value"]
    pairs = {"ranx": {"AP": "map", "P@10": "precision@10", GRADED_RBP: "rbp.8",
                      "nDCG@10": "ndcg@10"},
             "pytrec_eval": {"AP": "map", "P@10": "P_10", "nDCG@10": "ndcg_cut_10"}}
    for name, (_, _, results) in peers.items():
        worst = {}
        for r, res in enumerate(results):
            for ours_name, their in pairs[name].items():
                if name == "ranx":
                    topics = sorted(res[their])
                    theirs = np.array([res[their][t] for t in topics])
                else:
                    topics = sorted(res)
                    theirs = np.array([res[t][their] for t in topics])
                mine = np.array([got[(f"run{r}", t, ours_name)] for t in topics])
                gap = float(np.max(np.abs(mine - theirs)))
                worst[ours_name] = max(worst.get(ours_name, 0.0), gap)
        print(f"largest per-topic difference from {name}: "
              + ", ".join(f"{k} {v:.1e}" for k, v in worst.items()))


if __name__ == "__main__":
    main()
