"""Where the walk loses held-out clicks to PBM: perplexity rank by rank, and the click
rates the fitted walk gives its own training pages.

    python3 benchmarks/bench_click_calibration.py [--logs wscd] [--specs walk walk-click]
                                                   [--clicks document] [--all-test-pages]

The split, the held-out pages and the metrics are those of ``bench_click_models.py``
(``log.split(0.25, seed=0)``, pages of 10 results whose query occurs in training, PyClick's
definitions through ``bayeschain.inference.click_metrics``). For each walk spec (fitted
with its defaults) and the peers PBM and UBM (``click_model_peers.py``) it prints

* the held-out perplexity at each rank 1..10 (the table's perplexity is their mean);
* the click rate per rank the walk gives the pages it was fitted to (posterior predictive
  over 100 draws) beside the rate observed on them.  PBM's EM matches the latter by
  construction (its likelihood is the product of the per-rank Bernoulli laws the
  perplexity scores); the walk's likelihood is that of the ordered clicks, and a gap
  here is misfit of the walk itself, not of the split.

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


def spec_of(name: str, clicks: str):
    spec = bc.load_spec(name)
    if clicks == "auto":
        return spec
    return bc.inference.parse_spec(spec.text.replace('clicks = "auto"',
                                                     f'clicks = "{clicks}"'))


def fitted_rates(post, train) -> tuple[np.ndarray, np.ndarray]:
    """Observed and fitted click rate per rank on the training pages of 10 results."""
    pred = predict_clicks(post, train, ranks=RANKS, max_draws=100, seed=0)
    pred = pred[pred["rank"] <= RANKS]
    pred = pred[pred.groupby("serp_id")["rank"].transform("size") == RANKS]
    g = pred.groupby("rank")[["clicked", "p_click"]].mean()
    return g["clicked"].to_numpy(), g["p_click"].to_numpy()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", nargs="+", default=["wscd"], choices=list(LOGS))
    ap.add_argument("--specs", nargs="+", default=["walk"], choices=["walk", "walk-click"])
    ap.add_argument("--clicks", default="auto", choices=["auto", "pooled", "document"])
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
        train, test = log.split(0.25, seed=0)
        rows = []
        for spec_name in args.specs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                post = bc.fit(train, spec_of(spec_name, args.clicks))
                seconds = time.perf_counter() - t
            m = heldout_click_metrics(post, test, pages=heldout_serps(log, known=known),
                                      seed=0)
            label = f"{spec_name} ({post.attrs['click_level']}, {seconds:.0f} s)"
            rows.append((name, label, "held-out perplexity",
                         *(f"{x:.4f}" for x in m.perplexity_at_rank), f"{m.perplexity:.4f}"))
            observed, fitted = fitted_rates(post, train)
            rows.append((name, label, "training click rate, fitted",
                         *(f"{x:.3f}" for x in fitted), ""))
        rows.append((name, "log", "training click rate, observed",
                     *(f"{x:.3f}" for x in observed), ""))
        tr, te = split_pages(log, known=known)
        for peer in ("PBM", "UBM"):
            with np.errstate(all="ignore"):
                model = MODELS[peer]().fit(*tr)
                p_click, p_cond = model.predict(*te)
            m = click_metrics(te[2], p_click, p_cond)
            rows.append((name, peer, "held-out perplexity",
                         *(f"{x:.4f}" for x in m.perplexity_at_rank), f"{m.perplexity:.4f}"))
        print(table(rows, head))


if __name__ == "__main__":
    main()
