"""``bayeschain simulate -o log.parquet``: write a synthetic click log (canonical schema).

Users walk the ranks (forward / backward / reformulate / stop), click examined ranks and
read for exponential times (:func:`bayeschain.simulate.simulate_click_log`); the log is
written as CSV, TSV or Parquet, atomically, never over an existing file without --force.
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
    p.add_argument("--seed", type=int, default=2026, help="random seed")
    p.add_argument("--force", action="store_true", help="overwrite an existing output")


def run(args: argparse.Namespace) -> int:
    from ..errors import ParameterError
    from ..io.clicklog import write_canonical
    from ..io.write import check_output_path
    from ..simulate import simulate_click_log

    if args.sessions < 1 or args.ranks < 1:
        raise ParameterError("--sessions and --ranks must be positive")
    check_output_path(args.output, force=args.force)
    log = simulate_click_log(args.sessions, n_ranks=args.ranks, forward=args.forward,
                             backward=args.backward, reformulate=args.reformulate,
                             click=args.click, holding_rates=args.dwell_rate, seed=args.seed)
    path = write_canonical(log, args.output, force=args.force)
    s = log.summary()
    print(f"wrote {path}: {s['sessions']:,} sessions, {s['pages']:,} pages, "
          f"{s['clicks']:,} clicks")
    return 0
