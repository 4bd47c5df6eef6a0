"""Where the walk loses held-out clicks to PBM: perplexity rank by rank, and the click
rates the fitted walk gives its own training pages.

    python3 benchmarks/bench_click_calibration.py [--logs wscd] [--specs walk walk-reclick]
                                                   [--clicks document] [--documents-by-rank]
                                                   [--all-test-pages]

The split, the held-out pages and the metrics are those of ``bench_click_models.py``
(``log.split(0.25, seed=0)``, pages of 10 results whose query occurs in training, PyClick's
definitions through ``bayeschain.inference.click_metrics``). For each walk spec (fitted
with its defaults) and the peers PBM and UBM (``click_model_peers.py``) it prints

* the held-out perplexity at each rank 1..10 (the table's perplexity is their mean);
* the click rate per rank the walk gives the pages it was fitted to (posterior predictive
  over 100 draws) beside the rate observed on them.  PBM's EM matches the latter by
  construction (its likelihood is the product of the per-rank Bernoulli laws the
  perplexity scores); the walk's likelihood is that of the ordered clicks, and a gap
  here is misfit of the walk itself, not of the split;
* where the clicks go: per training page, clicks, distinct results clicked, re-clicks (a
  click on a result already clicked on the page: right after it, or with other clicks
  between) and rank 1's clicks (all, and the pages with at least one), observed and in
  the fitted walk replayed on the same pages under 10 posterior draws (the replay of the
  predictive checks, ``predictive_walk_checks``);
* how the same (query, document) pair is clicked at rank 1 and at rank 2 (position bias
  that a click chance per document, shared by every rank, must absorb through the walk's
  examinations).

``--documents-by-rank`` fits the walk with every document renamed by the rank of each
impression: one click chance per (query, document, rank), the most that an offset by rank
on a document's logit could give (the peers keep the documents).

CLARA2 and WSCD are not part of the project (``../shared/data``); without them the script
says so and runs on TREC Session alone.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402
from click_model_peers import LOGS, MODELS, heldout_serps, load_log, present_logs, split_pages  # noqa: E402

import bayeschain as bc  # noqa: E402
from bayeschain.inference import heldout_click_metrics, predict_clicks  # noqa: E402
from bayeschain.inference.walk.prediction import click_metrics  # noqa: E402

RANKS = 10


def spec_of(name: str, clicks: str, rank_offsets: bool = False, damped: bool = False):
    """The spec ``name`` with its clicks set (where it leaves them to the log, ``auto``),
    and rank offsets or damped re-clicks turned on when asked (whatever the spec says of
    them)."""
    spec = bc.load_spec(name)
    free = spec.section("examination")["clicks"] == "auto"
    return spec.with_keys("examination", clicks=clicks if free and clicks != "auto" else None,
                          rank_offsets=True if rank_offsets else None,
                          reclicks="damped" if damped else None)


def documents_by_rank(log):
    """The log with every document renamed by the rank of each impression
    (``doc@rank``): fitted per document, the walk then has one click chance per (query,
    document, rank), the most a rank offset on a document's logit could give."""
    import dataclasses

    def renamed(table):
        out = table.copy()
        has = out["doc_id"].notna() & out["rank"].notna()
        out["doc_id"] = out["doc_id"].astype(object)
        out.loc[has, "doc_id"] = (out.loc[has, "doc_id"].astype(str) + "@"
                                  + out.loc[has, "rank"].astype("int64").astype(str))
        return out

    return dataclasses.replace(log, events=renamed(log.events), results=renamed(log.results))


def without_later_reclicks(log):
    """The log without the clicks on a result already clicked on the page with other
    clicks between (immediate repeats kept): what the walk would see of users who do not
    come back to click a result again.  The click vectors (was rank r clicked?) that
    held-out perplexity scores are unchanged."""
    import dataclasses

    from bayeschain.inference.walk.checks import reclicks

    ev = log.events
    clicks = ev[(ev["event"] == "click") & ev["rank"].notna() & ev["serp_id"].notna()] \
        .sort_values(["serp_id", "seq"], kind="stable")      # clicks on a page's ranks
    again, right_after = reclicks(clicks["serp_id"].to_numpy(dtype=np.int64),
                                  clicks["rank"].to_numpy(dtype=np.int64))
    drop = clicks.index[again & ~right_after]
    return dataclasses.replace(log, events=ev.drop(index=drop).reset_index(drop=True))


def fitted_rates(post, train) -> tuple[np.ndarray, np.ndarray]:
    """Observed and fitted click rate per rank on the training pages of 10 results."""
    pred = predict_clicks(post, train, ranks=RANKS, max_draws=100, seed=0)
    pred = pred[pred["rank"] <= RANKS]
    pred = pred[pred.groupby("serp_id")["rank"].transform("size") == RANKS]
    g = pred.groupby("rank")[["clicked", "p_click"]].mean()
    return g["clicked"].to_numpy(), g["p_click"].to_numpy()


def where_clicks_go(n_pages: int, page: np.ndarray, rank: np.ndarray) -> dict:
    """Per page: clicks, distinct results clicked, re-clicks right after the same result's
    click and with other clicks between, rank 1's clicks and pages clicking it (clicks in
    page order, ``rank`` 1-based)."""
    from bayeschain.inference.walk.checks import reclicks

    page, rank = np.asarray(page, dtype=np.int64), np.asarray(rank, dtype=np.int64)
    again, right_after = reclicks(page, rank)
    on_1 = rank == 1
    return {"clicks": rank.size / n_pages, "distinct results": (~again).sum() / n_pages,
            "re-clicks right after": right_after.sum() / n_pages,
            "re-clicks after others": (again & ~right_after).sum() / n_pages,
            "rank-1 clicks": on_1.sum() / n_pages,
            "pages clicking rank 1": np.unique(page[on_1]).size / n_pages}


def same_document_by_rank(train_pages, least: int = 50) -> tuple[int, float, float, float]:
    """The (query, document) pairs shown at least ``least`` times at rank 1 and at rank 2
    of the training pages (``split_pages``): their number, the share of all impressions
    that are of pairs shown at more than one rank, and their click rates at rank 1 and at
    rank 2 (each pair weighted by its rank-2 impressions)."""
    import pandas as pd

    queries, docs, clicks = train_pages
    n = len(queries)
    df = pd.DataFrame({"q": np.repeat(np.asarray(queries, dtype=object), RANKS),
                       "d": np.asarray(docs, dtype=object)[:, :RANKS].ravel(),
                       "r": np.tile(np.arange(1, RANKS + 1), n),
                       "c": np.asarray(clicks)[:, :RANKS].ravel().astype(float)})
    ranks_shown = df.groupby(["q", "d"])["r"].transform("nunique")
    by = df[df["r"] <= 2].groupby(["q", "d", "r"])["c"].agg(["mean", "size"]).unstack("r")
    both = by[(by[("size", 1)] >= least) & (by[("size", 2)] >= least)]
    w = both[("size", 2)].to_numpy()
    if not w.size:
        return 0, float((ranks_shown > 1).mean()), float("nan"), float("nan")
    return (len(both), float((ranks_shown > 1).mean()),
            float(np.average(both[("mean", 1)], weights=w)),
            float(np.average(both[("mean", 2)], weights=w)))


def replayed_clicks(post, train, draws: int = 10) -> tuple[dict, dict]:
    """:func:`where_clicks_go` of the training pages and of the fitted walk replayed on
    them (the machinery of ``predictive_walk_checks``), averaged over ``draws`` draws."""
    from bayeschain.browsing.page_walk import walk_pages
    from bayeschain.inference.walk.checks import observed_summary
    from bayeschain.inference.walk.prediction import pages_for
    from bayeschain.posterior.draws import draw_indices
    from bayeschain.posterior.walk import page_tables

    data = pages_for(post, train, None, 1)
    obs = observed_summary(train, data)
    observed = where_clicks_go(obs.clicks.size, np.repeat(np.arange(obs.clicks.size),
                                                          obs.clicks), obs.click_ranks)
    p = post.posterior
    rows = draw_indices(int(p.sizes["chain"] * p.sizes["draw"]), draws, 0)
    tables = page_tables(post, data, rows, seed=0)
    cfg = data.page_config
    got = []
    for d in range(rows.size):
        walked = walk_pages(data.lengths[cfg], data.move_index[cfg], tables.click_index[cfg],
                            tables.moves[d], tables.click[d], repeat=tables.repeat[d],
                            reclick=float(tables.reclick[d]),
                            moves_click=tables.moves_click[d],
                            boundary=post.metadata.boundary, seed=d)
        got.append(where_clicks_go(cfg.size, walked.click_page, walked.click_rank))
    return observed, {k: float(np.mean([g[k] for g in got])) for k in observed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", nargs="+", default=["wscd"], choices=list(LOGS))
    ap.add_argument("--specs", nargs="+", default=["walk"],
                    choices=["walk", "walk-click", "walk-reclick"])
    ap.add_argument("--clicks", default="auto", choices=["auto", "pooled", "document"])
    ap.add_argument("--documents-by-rank", action="store_true",
                    help="fit the walk with every document renamed by the rank of each "
                         "impression (one click chance per query, document and rank); the "
                         "peers keep the documents")
    ap.add_argument("--rank-offsets", action="store_true",
                    help="fit the walk with a click offset by rank on each document's logit "
                         "(the spec key rank_offsets)")
    ap.add_argument("--damped-reclicks", action="store_true",
                    help="fit the walk whose results clicked before click again with a "
                         "learned factor kappa (the spec key reclicks = \"damped\")")
    ap.add_argument("--drop-later-reclicks", action="store_true",
                    help="fit the walk to the training pages without their clicks on a "
                         "result clicked before with other clicks between (a study of the "
                         "walk's re-clicks; held-out click vectors are unchanged)")
    ap.add_argument("--all-test-pages", action="store_true",
                    help="score every held-out page of 10 results, not only those whose "
                         "query occurs in training (TREC Session keeps 2 pages otherwise)")
    args = ap.parse_args()
    known = not args.all_test_pages
    args.logs = present_logs(args.logs)
    print(f"machine: {machine()}\n")
    head = ("log", "model", "what", *(str(r) for r in range(1, RANKS + 1)), "mean")
    for name in args.logs:
        log = load_log(name)
        walk_log = documents_by_rank(log) if args.documents_by_rank else log
        train, test = walk_log.split(0.25, seed=0)
        if args.drop_later_reclicks:
            train = without_later_reclicks(train)
        rows, placed = [], []
        for spec_name in args.specs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                post = bc.fit(train, spec_of(spec_name, args.clicks, args.rank_offsets,
                                             args.damped_reclicks))
                seconds = time.perf_counter() - t
            m = heldout_click_metrics(post, test, pages=heldout_serps(log, known=known),
                                      seed=0)
            level = post.attrs["click_level"] + (" by rank" if args.documents_by_rank else "") \
                + (" + rank offsets" if "click_offset" in post.posterior else "") \
                + (f", kappa {float(post.posterior['reclick'].mean()):.3f}"
                   if "reclick" in post.posterior else "")
            label = f"{spec_name} ({level}, {seconds:.0f} s)"
            rows.append((name, label, "held-out perplexity",
                         *(f"{x:.4f}" for x in m.perplexity_at_rank), f"{m.perplexity:.4f}"))
            observed, fitted = fitted_rates(post, train)
            rows.append((name, label, "training click rate, fitted",
                         *(f"{x:.3f}" for x in fitted), ""))
            seen, replayed = replayed_clicks(post, train)
            placed.append((name, label, *(f"{x:.3f}" for x in replayed.values())))
        placed.append((name, "log", *(f"{x:.3f}" for x in seen.values())))
        rows.append((name, "log", "training click rate, observed",
                     *(f"{x:.3f}" for x in observed), ""))
        tr, te = split_pages(log, known=known)
        pairs, shared, at_1, at_2 = same_document_by_rank(tr)
        print(f"{name}: {shared:.0%} of the training impressions are of (query, document) "
              "pairs shown at more than one rank" + (
                  f"; the {pairs} pairs shown at least 50 times at rank 1 and at rank 2 are "
                  f"clicked at rank 1 with rate {at_1:.3f} and at rank 2 with rate {at_2:.3f} "
                  f"(ratio {at_2 / at_1:.2f}; pairs weighted by their rank-2 impressions)"
                  if pairs else "") + "\n")
        for peer in ("PBM", "UBM"):
            with np.errstate(all="ignore"):
                model = MODELS[peer]().fit(*tr)
                p_click, p_cond = model.predict(*te)
            m = click_metrics(te[2], p_click, p_cond)
            rows.append((name, peer, "held-out perplexity",
                         *(f"{x:.4f}" for x in m.perplexity_at_rank), f"{m.perplexity:.4f}"))
        print(table(rows, head))
        print("\nWhere the clicks go, per training page (the walk replayed on them):\n")
        print(table(placed, ("log", "model", *seen)))


if __name__ == "__main__":
    main()
