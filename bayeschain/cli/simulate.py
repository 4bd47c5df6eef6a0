"""``bayeschain simulate -o log.parquet``: write a synthetic click log (canonical schema).

Users walk the ranks (forward / backward / reformulate / stop), click examined ranks and
read for exponential times (:func:`bayeschain.simulate.simulate_click_log`); with
``--attractiveness-sd`` every query shows the same documents, each with its own
attractiveness.  The log is streamed to CSV, TSV or Parquet 100,000 sessions at a time
(bounded memory: 10^7 sessions are fine), atomically, never over an existing file without
--force; ``--results`` also writes the pages' documents.
"""

from __future__ import annotations

import argparse


def _probability(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a probability in [0, 1]")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", required=True, help="log file: .csv, .tsv or .parquet")
    p.add_argument("--sessions", type=int, default=10_000, help="sessions (default 10000)")
    p.add_argument("--ranks", type=int, default=10, help="results per page (default 10)")
    p.add_argument("--forward", type=_probability, default=0.6, help="p (default 0.6)")
    p.add_argument("--backward", type=_probability, default=0.15, help="q (default 0.15)")
    p.add_argument("--reformulate", type=_probability, default=0.05, help="r (default 0.05)")
    p.add_argument("--click", type=_probability, default=0.3,
                   help="click probability of an examined rank (default 0.3)")
    p.add_argument("--dwell-rate", type=float, default=0.05,
                   help="exponential reading rate mu, 1/s (default 0.05)")
    p.add_argument("--topics", type=int, default=1000,
                   help="topics the sessions draw from (default 1000; a session's k-th "
                        "query is its topic's k-th formulation)")
    p.add_argument("--attractiveness-sd", type=float, default=0.0, metavar="SD",
                   help="documents per query, each with attractiveness logit(click) + SD z "
                        "(default 0: every page has documents of its own, clicks per rank)")
    p.add_argument("--results", default=None, metavar="PAGES",
                   help="also write the pages' documents (serp_id, rank, doc_id) here, "
                        "for `bayeschain fit --results`")
    p.add_argument("--seed", type=int, default=2026, help="random seed")
    p.add_argument("--force", action="store_true", help="overwrite an existing output")


def run(args: argparse.Namespace) -> int:
    from ..errors import ParameterError
    from ..simulate.clicklog import write_click_log
    from .progress import stage

    if args.sessions < 1 or args.ranks < 1:
        raise ParameterError("--sessions and --ranks must be positive")
    with stage("simulating users") as st:
        done = write_click_log(args.output, args.sessions, results=args.results,
                               force=args.force, seed=args.seed,
                               report=lambda k, n: st.update(k, n, "sessions"),
                               n_ranks=args.ranks, forward=args.forward,
                               backward=args.backward, reformulate=args.reformulate,
                               click=args.click, holding_rates=args.dwell_rate,
                               topics=args.topics, attractiveness_sd=args.attractiveness_sd)
    also = f" and their documents to {args.results}" if args.results else ""
    print(f"wrote {args.output}: {done['sessions']:,} sessions, {done['pages']:,} pages, "
          f"{done['clicks']:,} clicks{also}")
    return 0
