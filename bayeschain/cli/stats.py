"""``bayeschain stats LOG``: what a researcher wants to know first about a click log.

Sessions, pages, clicks; the anomalies the reader counted; the share of backward
transitions between consecutive clicks; clicks per rank; dwell-time quantiles; and,
with ``--figures DIR``, PNGs of clicks per rank, the transition heat map and the dwell
histogram.
"""

from __future__ import annotations

import argparse
from pathlib import Path

FIGURES = ("clicks_per_rank.png", "transitions.png", "dwell.png")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("log", help="click log (Yandex / WSCD / TREC Session XML / canonical "
                               "CSV, TSV or Parquet; .gz accepted)")
    p.add_argument("--format", dest="log_format", default=None,
                   choices=["yandex", "wscd", "trec-session", "canonical"],
                   help="log format (default: guessed from the file)")
    p.add_argument("--errors", choices=["raise", "skip"], default="raise",
                   help="malformed lines: stop with an error (default) or skip and count")
    p.add_argument("--backend", choices=["duckdb", "pandas", "dask"], default="duckdb",
                   help="engine for the statistics (default duckdb)")
    p.add_argument("--max-rank", type=int, default=10,
                   help="ranks listed one by one (default 10; deeper ones are summed)")
    p.add_argument("--figures", default=None, metavar="DIR",
                   help="write clicks_per_rank.png, transitions.png, dwell.png to DIR")
    p.add_argument("--force", action="store_true", help="overwrite existing figures")


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..io.clickformats import read_clicks
    from ..io.clickstats import click_statistics

    if args.max_rank < 1:
        from ..errors import ParameterError

        raise ParameterError(f"--max-rank must be a positive integer, got {args.max_rank}")
    if args.figures:      # checked before reading a possibly large log
        from ..io.write import prepare_figure_folder

        prepare_figure_folder(args.figures, FIGURES, force=args.force, protected=[args.log])
    log = read_clicks(args.log, format=args.log_format, errors=args.errors)
    stats = click_statistics(log, backend=args.backend)
    summary = log.summary()
    print(f"click log {args.log}")
    print(f"  sessions {summary['sessions']:,}   pages {summary['pages']:,}   clicks "
          f"{summary['clicks']:,}" + ("" if log.has_sessions else "   (no session ids)"))
    anomalies = {k: v for k, v in summary.items()
                 if k not in ("sessions", "pages", "clicks", "queries") and v}
    if anomalies:
        print("  counted anomalies: " + ", ".join(f"{k.replace('_', ' ')} {v:,}"
                                                   for k, v in anomalies.items()))
    n_trans = int(stats.transitions["count"].sum())
    if n_trans:
        print(f"  backward transitions: {stats.backward_share():.1%} of {n_trans:,} "
              f"click-to-click moves (the MP paper reports 21% on Yandex)")
    else:                    # no share of nothing (it printed "nan%")
        print("  backward transitions: no click-to-click moves in the log")
    per_rank = stats.clicks_per_rank()
    shown = per_rank[per_rank.index <= args.max_rank]
    deeper = int(per_rank[per_rank.index > args.max_rank].sum())
    if len(per_rank):
        print("  clicks per rank: " + "  ".join(f"{r}:{c:,}" for r, c in shown.items())
              + (f"  >{args.max_rank}:{deeper:,}" if deeper else ""))
    else:
        print("  clicks per rank: no clicks in the log")
    clicks, _, _ = log.observations()
    dwell = clicks["dwell"].to_numpy(dtype=float, na_value=np.nan)
    dwell = dwell[np.isfinite(dwell) & (dwell > 0)]
    if dwell.size:
        qs = np.quantile(dwell, [0.1, 0.25, 0.5, 0.75, 0.9])
        print("  dwell seconds (10/25/50/75/90%): " + " / ".join(f"{x:.1f}" for x in qs)
              + f"   ({int(stats.dwell['censored'].sum()):,} right-censored last clicks)")
    else:
        print("  dwell: the log has no clock")
    if args.figures:
        _figures(Path(args.figures), stats, per_rank, dwell, args.force, [args.log])
    return 0


def _figures(folder: Path, stats, per_rank, dwell, force: bool, protected) -> None:
    """The three figures, committed together (all or none)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io.write import atomic_outputs, save_figure
    from ..plots import plot_clicks_per_rank, plot_dwell_histogram, plot_transition_matrix

    n = int(min(per_rank.index.max(), 20)) if len(per_rank) else 1
    drawings = dict(zip(FIGURES, (lambda ax: plot_clicks_per_rank(ax, per_rank),
                                  lambda ax: plot_transition_matrix(
                                      ax, stats.transition_matrix(n)),
                                  lambda ax: plot_dwell_histogram(ax, dwell)), strict=True))
    with atomic_outputs(force=force, protected=protected) as out:
        for name, draw in drawings.items():
            fig, ax = plt.subplots(figsize=(5, 4))
            draw(ax)
            fig.tight_layout()
            with out.writing(folder / name) as tmp:
                save_figure(fig, tmp)
    for path in out.targets:
        print(f"  wrote {path}")
