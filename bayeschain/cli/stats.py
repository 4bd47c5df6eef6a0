"""``bayeschain stats LOG``: what a researcher wants to know first about a click log.

Sessions, pages, clicks; the anomalies the reader counted; the share of backward
transitions between consecutive clicks; clicks per rank; dwell-time quantiles; and,
with ``--figures DIR``, PNGs of clicks per rank, the transition heat map and the dwell
histogram.

Canonical Parquet / CSV / TSV files larger than
:data:`~bayeschain.cli.arguments.OUT_OF_CORE_BYTES` on disk, globs of them, or any with
``--out-of-core``, ``--scheduler`` or ``--workers``, with ``--backend duckdb`` (the
default) or ``dask``, are never loaded into memory: DuckDB streams them under
``--memory-limit`` (spilling to a temporary folder), Dask reads them on a cluster
(``--scheduler ADDRESS`` or ``--workers N`` local worker processes), both after DuckDB has
checked the files (the first row breaking a rule the statistics rely on is named by file
and row); dwell times are summarised by their mean and geometric mean (their quantiles and
histogram need ``--backend pandas``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

FIGURES = ("clicks_per_rank.png", "transitions.png", "dwell.png")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .arguments import memory_size

    p.add_argument("log", help="click log (Yandex / WSCD / TREC Session XML / canonical "
                               "CSV, TSV or Parquet; .gz accepted)")
    p.add_argument("--format", dest="log_format", default=None,
                   choices=["yandex", "wscd", "trec-session", "canonical"],
                   help="log format (default: guessed from the file)")
    p.add_argument("--errors", choices=["raise", "skip"], default="raise",
                   help="malformed lines: stop with an error (default) or skip and count")
    p.add_argument("--backend", choices=["duckdb", "pandas", "dask"], default="duckdb",
                   help="engine for the statistics (default duckdb)")
    p.add_argument("--out-of-core", action="store_true",
                   help="canonical files: statistics by the engine straight from the files "
                        "(the default for globs and files over 32 MB)")
    p.add_argument("--memory-limit", default=None, metavar="SIZE", type=memory_size,
                   help="DuckDB's memory limit for canonical files, e.g. 4GB (default 1.5GB)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Dask: the scheduler of a running cluster (tcp://host:8786)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="Dask: a local cluster of N worker processes for this command")
    p.add_argument("--max-rank", type=int, default=10,
                   help="ranks listed one by one (default 10; deeper ones are summed)")
    p.add_argument("--figures", default=None, metavar="DIR",
                   help="write clicks_per_rank.png, transitions.png, dwell.png to DIR")
    p.add_argument("--force", action="store_true", help="overwrite existing figures")


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..io.clickformats import read_clicks
    from ..io.clickstats import click_statistics
    from .arguments import out_of_core_files

    if args.max_rank < 1:
        from ..errors import ParameterError

        raise ParameterError(f"--max-rank must be a positive integer, got {args.max_rank}")
    _check_engine_options(args)
    out_of_core = args.backend != "pandas" and out_of_core_files(
        args.log, args.log_format, args.out_of_core or args.memory_limit or args.scheduler
        or args.workers is not None)
    if args.figures:      # checked before reading a possibly large log
        from ..io.write import prepare_figure_folder

        prepare_figure_folder(args.figures, FIGURES[:2] if out_of_core else FIGURES,
                              force=args.force, protected=[args.log])
    if out_of_core:
        return _run_out_of_core(args)
    if args.out_of_core or args.memory_limit or args.scheduler or args.workers is not None:
        from ..errors import ParameterError

        raise ParameterError("--out-of-core, --memory-limit, --scheduler and --workers read "
                             "canonical Parquet, CSV or TSV files")
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
    per_rank = _print_clicks(stats, args.max_rank)
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


def _check_engine_options(args) -> None:
    from ..errors import ParameterError

    if (args.scheduler or args.workers is not None) and args.backend != "dask":
        raise ParameterError("--scheduler and --workers choose a Dask cluster: add "
                             "--backend dask")
    if args.scheduler and args.workers is not None:
        raise ParameterError("give --scheduler (a running cluster) or --workers (a local "
                             "one), not both")
    if args.out_of_core and args.backend == "pandas":
        raise ParameterError("--out-of-core needs --backend duckdb or dask")
    if args.memory_limit is not None and args.backend != "duckdb":
        raise ParameterError("--memory-limit is DuckDB's: use it with --backend duckdb")


def _run_out_of_core(args) -> int:
    """The statistics of canonical files by DuckDB or on a Dask cluster, out of core."""
    import contextlib

    import numpy as np

    from ..io.clickstats import click_statistics
    from ..io.clickstats_sql import DUCKDB_MEMORY

    if args.backend == "dask" and (args.scheduler or args.workers is not None):
        from ..io.clickstats_dask import dask_client

        engine = dask_client(args.scheduler, args.workers)
    else:
        engine = contextlib.nullcontext()
    with engine as client:
        stats = click_statistics(args.log, backend=args.backend, client=client,
                                 memory_limit=args.memory_limit)
    counts = stats.counts()
    where = (f"a Dask cluster at {args.scheduler}" if args.scheduler else
             f"a local Dask cluster of {args.workers} workers" if args.workers else
             "Dask" if args.backend == "dask" else
             f"DuckDB, memory limit {args.memory_limit or DUCKDB_MEMORY}")
    print(f"click log {args.log}  (out of core: {where})")
    print(f"  sessions {counts['sessions']:,}   pages {counts['pages']:,}   clicks "
          f"{counts['clicks']:,}")
    if stats.off_page_clicks:
        print(f"  counted anomalies: off page clicks {stats.off_page_clicks:,}")
    per_rank = _print_clicks(stats, args.max_rank)
    d = stats.dwell
    n = int(d["n"].sum())
    if n:
        mean, geometric = d["sum"].sum() / n, np.exp(d["sum_log"].sum() / n)
        print(f"  dwell seconds: mean {mean:.1f}, geometric mean {geometric:.1f} over {n:,} "
              f"dwell times   ({int(d['censored'].sum()):,} right-censored last clicks; "
              f"quantiles: --backend pandas)")
    elif int(d["censored"].sum()):
        print("  dwell: every click is its session's last (right-censored)")
    else:
        print("  dwell: the log has no clock")
    if args.figures:
        _figures(Path(args.figures), stats, per_rank, None, args.force, [args.log])
        print("  (no dwell histogram out of core: --backend pandas draws it)")
    return 0


def _print_clicks(stats, max_rank: int):
    """The backward share and clicks per rank lines; returns the clicks per rank."""
    n_trans = int(stats.transitions["count"].sum())
    if n_trans:
        print(f"  backward transitions: {stats.backward_share():.1%} of {n_trans:,} "
              f"click-to-click moves (the MP paper reports 21% on Yandex)")
    else:                    # no share of nothing (it printed "nan%")
        print("  backward transitions: no click-to-click moves in the log")
    per_rank = stats.clicks_per_rank()
    shown = per_rank[per_rank.index <= max_rank]
    deeper = int(per_rank[per_rank.index > max_rank].sum())
    if len(per_rank):
        print("  clicks per rank: " + "  ".join(f"{r}:{c:,}" for r, c in shown.items())
              + (f"  >{max_rank}:{deeper:,}" if deeper else ""))
    else:
        print("  clicks per rank: no clicks in the log")
    return per_rank


def _figures(folder: Path, stats, per_rank, dwell, force: bool, protected) -> None:
    """The figures (the dwell histogram when ``dwell`` is given), committed together
    (all or none)."""
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
    if dwell is None:
        del drawings[FIGURES[2]]
    with atomic_outputs(force=force, protected=protected) as out:
        for name, draw in drawings.items():
            fig, ax = plt.subplots(figsize=(5, 4))
            draw(ax)
            fig.tight_layout()
            with out.writing(folder / name) as tmp:
                save_figure(fig, tmp)
    for path in out.targets:
        print(f"  wrote {path}")
