"""``bayeschain choose LOG [--spec walk --spec walk-click ...]``: which walk the log supports.

Fits every spec to the same pages (the sessions outside ``--heldout``, 25% by default) and
prints, per walk: PSIS-LOO on the training pages (``elpd_loo`` with its standard error,
the difference to the best paired page by page, pages whose Pareto k exceeds 0.7:
:mod:`bayeschain.inference.walk.choice`), the held-out click metrics of the click-model
field on the other sessions (log-likelihood per rank, perplexity, conditional perplexity;
pages whose query occurs in training), each walk's perplexity minus the lowest's with the
90% interval of a paired bootstrap over the held-out pages (an interval that holds 0 is a
difference those pages cannot resolve), and ``E[H]`` on a 10-result page.  Choose the walk
with the best LOO unless its difference is within two standard errors, then the simpler
one; the held-out metrics say the same thing on pages the fit never saw.
"""

from __future__ import annotations

import argparse

#: the walks compared without --spec
DEFAULT_SPECS = ("walk", "walk-click", "walk-reclick")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .arguments import positive_int, seed

    p.add_argument("log", help="click log (any format `bayeschain stats` reads)")
    p.add_argument("--spec", action="append", default=None,
                   help="a walk spec to compare (repeat; default: walk, walk-click and "
                        "walk-reclick)")
    p.add_argument("--format", dest="log_format", default=None,
                   choices=["yandex", "wscd", "trec-session", "canonical"])
    p.add_argument("--results", default=None, metavar="PAGES",
                   help="for a canonical log: the result pages (serp_id, rank, doc_id)")
    p.add_argument("--heldout", type=float, default=0.25, metavar="FRACTION",
                   help="share of the sessions held out for click prediction (default 0.25)")
    p.add_argument("--heldout-seed", type=seed, default=0,
                   help="seed of the held-out split by session (default 0)")
    p.add_argument("--all-queries", action="store_true",
                   help="score every held-out page, not only those whose query occurs in "
                        "training (logs whose queries rarely repeat, e.g. TREC Session)")
    p.add_argument("--draws", type=positive_int, default=None,
                   help="draws per chain (default: each spec's)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..errors import ParameterError
    from ..inference import load_spec
    from ..inference.choose import choose_walks
    from ..io.clickformats import read_clicks

    if not 0 < args.heldout < 1:
        raise ParameterError("--heldout must be a fraction between 0 and 1")
    specs = [load_spec(name) for name in (args.spec or DEFAULT_SPECS)]
    log = read_clicks(args.log, format=args.log_format, results=args.results)
    table = choose_walks(log, specs, heldout=args.heldout, seed=args.heldout_seed,
                         draws=args.draws, known_queries=not args.all_queries,
                         progress=not args.quiet,
                         say=lambda text: print(text, flush=True))
    table["vs_lowest [90%]"] = [
        "lowest" if lowest else f"{g:+.4f} [{lo:+.4f}, {hi:+.4f}]"
        for lowest, g, lo, hi in zip(table["lowest_perplexity"], table["perplexity_gap"],
                                     table["perplexity_gap_low"],
                                     table["perplexity_gap_high"], strict=True)]
    cols = ["elpd_loo", "se", "elpd_diff", "se_diff", "p_loo", "pareto_k_high",
            "heldout_ll", "perplexity", "vs_lowest [90%]", "cond_perplexity", "E[H]",
            "max_rhat", "min_ess", "documents"]
    print(f"\nPSIS-LOO on {table['pages'].iloc[0]:,} training pages "
          f"({table['patterns'].max():,} patterns at most); held-out click prediction on "
          f"ranks 1-{table['heldout_ranks'].iloc[0]} of {table['heldout_pages'].iloc[0]:,} "
          f"pages of the other sessions"
          + ("" if args.all_queries else " whose query occurs in training")
          + "; vs_lowest: the perplexity minus the lowest's, with the 90% interval of a "
            "paired bootstrap over those pages (holding 0: a difference they cannot "
            "resolve):")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table[cols].to_string(float_format=lambda v: f"{v:.4f}"))
    best, runner = table.index[0], table.index[1] if len(table) > 1 else None
    if runner is not None and table.loc[runner, "elpd_diff"] <= 2 * table.loc[runner,
                                                                               "se_diff"]:
        print(f"\n{best} and {runner} are within two standard errors of each other by LOO: "
              f"prefer the simpler walk")
    else:
        print(f"\nLOO prefers {best}")
    return 0
