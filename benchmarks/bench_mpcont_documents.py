"""Markov Precision under learned user models: per-document holding rates and jump kernels.

    python3 benchmarks/bench_mpcont_documents.py [--lists 5000 --ranks 100 --draws 1000]

* **MPcont, per-document rates**: ``bayeschain.score`` of ``MPcont(model='GL_AD_ID')``
  under a per-document dwell posterior (rank + query + (query, document) effects; 50
  queries x 200 documents known, a fifth of the retrieved relevant documents unseen and
  drawn from the population), 5,000 run-topics of 100 ranks (about 15% relevant), 1,000
  draws.  Peers in the same run: the same measure with per-rank rates (the path without
  documents) and a direct NumPy evaluation that builds the dense ``(draws, lists, ranks)``
  rate array and sums over it.
* **MP, learned ID exponent** (``jumps-id``) and **MP@10, free rows** (``jumps-free``):
  ``bayeschain.score`` with 1,000 draws of the kernel, same lists.

Ranked lists are built once (``ranked_lists(..., docs=True)``); times are best of three,
the scoring alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, machine, table  # noqa: E402


def _posterior(rng, draws: int, queries: int, docs: int, ranks: int):
    from bayeschain.inference import Posterior

    def da(values, dim=None, coords=None):
        dims = ("chain", "draw") + ((dim,) if dim else ())
        return xr.DataArray(values[None], dims=dims,
                            coords={dim: coords} if dim else None)

    q = [str(i) for i in range(queries)]
    d = [f"{i}\x1fd{j}" for i in range(queries) for j in range(docs)]
    ds = xr.Dataset({
        "holding_rate": da(np.exp(-(np.log(30) - 0.05 * np.arange(ranks)
                                    + rng.normal(0, 0.05, (draws, ranks)))), "rank",
                           np.arange(1, ranks + 1)),
        "dwell_query_effect": da(rng.normal(0, 0.3, (draws, len(q))), "dwell_query", q),
        "dwell_document_effect": da(rng.normal(0, 0.5, (draws, len(d))), "dwell_document",
                                    d),
        "dwell_query_sd": da(np.full(draws, 0.3)), "dwell_document_sd": da(np.full(draws,
                                                                                  0.5))})
    return Posterior(xr.DataTree.from_dict({"posterior": ds}))


def _lists(rng, n_lists: int, ranks: int, queries: int, docs: int):
    from bayeschain.io.lists import ranked_lists

    runs_per_topic = max(1, n_lists // queries)
    rows, qrels = [], []
    for t in range(queries):
        pool = [f"d{j}" for j in range(int(docs * 1.25))]       # a fifth never in the log
        rel = set(rng.choice(pool, size=len(pool) // 6, replace=False))
        qrels += [(str(t), d, int(d in rel)) for d in pool]
        for r in range(runs_per_topic):
            ranked = rng.choice(pool, size=ranks, replace=False)
            rows += [(f"run{r}", str(t), d, float(ranks - i)) for i, d in enumerate(ranked)]
    runs = pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    return ranked_lists({k: v for k, v in runs.groupby("run_id")}, qrels, docs=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lists", type=int, default=5000)
    ap.add_argument("--ranks", type=int, default=100)
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args()
    import bayeschain as bc
    from bayeschain.inference import posterior_from_parameters
    from bayeschain.measures.markov import invariant_weights
    from bayeschain.posterior.dwell import log_means

    rng = np.random.default_rng(0)
    queries, docs = 50, 200
    lists = _lists(rng, args.lists, args.ranks, queries, docs)
    post = _posterior(rng, args.draws, queries, docs, args.ranks)
    rank_only = posterior_from_parameters({"holding_rate": post.posterior[
        "holding_rate"].values[0]})
    measure = "MPcont(model='GL_AD_ID')"
    print(machine())
    print(f"{len(lists):,} lists x {args.ranks} ranks, {args.draws:,} draws, "
          f"{int(lists.binary.sum()):,} relevant retrieved")
    doc = best_of(lambda: bc.score(lists, None, measure, post))
    rank = best_of(lambda: bc.score(lists, None, measure, rank_only))

    def dense():
        pi = invariant_weights(lists.relevance, "GL_AD_ID", lengths=lists.lengths)
        prec = np.cumsum(lists.binary, axis=1) / np.arange(1, args.ranks + 1)
        out = []
        for lo in range(0, args.draws, 100):                     # 100 draws at a time
            ranks = np.broadcast_to(np.arange(1, args.ranks + 1), lists.relevance.shape)
            eta = log_means(bc_slice(post, lo, lo + 100), ranks.ravel(),
                            np.repeat(lists.query_ids, args.ranks),
                            lists.doc_ids.ravel(), seed=0)
            m = np.exp(eta).reshape(-1, *lists.relevance.shape)
            out.append((m * pi * prec).sum(-1) / (m * pi).sum(-1))
        return np.concatenate(out)

    direct = best_of(dense, repeat=1)
    g = rng.gamma(20, 1 / 20, args.draws)
    jid = posterior_from_parameters({"jump_exponent": g}, jump_family="ID")
    mp_id = best_of(lambda: bc.score(lists, None, "MP(model='GL_AD_ID')", jid))
    free = rng.dirichlet(np.ones(10), size=(args.draws, 10))
    free[:, np.arange(10), np.arange(10)] = 0
    free /= free.sum(-1, keepdims=True)
    jfree = posterior_from_parameters({"jump": free})
    mp_free = best_of(lambda: bc.score(lists, None, "MP(model='GL_AD_ID')@10", jfree))
    print(table([
        ("MPcont, per-document rates (score)", f"{doc:.2f}"),
        ("MPcont, per-rank rates (score; peer)", f"{rank:.2f}"),
        ("MPcont, per-document, dense NumPy (peer)", f"{direct:.2f}"),
        ("MP, learned ID exponent (score)", f"{mp_id:.2f}"),
        ("MP@10, free jump rows (score)", f"{mp_free:.2f}"),
    ], ("computation", "seconds")))


def bc_slice(post, lo, hi):
    from bayeschain.posterior.draws import draw_slice

    return draw_slice(post, lo, hi)


if __name__ == "__main__":
    main()
