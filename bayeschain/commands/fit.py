"""``bayeschain fit LOG --spec SPEC -o posterior.nc``: calibrate a user model from clicks.

Prints the posterior summary (means and 95% intervals), posterior predictive checks
against the log (share of backward moves, deepest clicked rank, dwell-time distribution)
and NUTS diagnostics when NUTS ran; writes the posterior (netCDF, atomically, right after
the fit, never over an existing file without ``--force``).  Outputs are checked before the
fit starts.  Specs with transitions by relevance (``rwbm-relevance``) need ``--qrels``.
"""

from __future__ import annotations

import argparse

FIGURES = ("ppc_backward.png", "ppc_click_depth.png", "ppc_dwell.png")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("log", help="click log (any format `bayeschain stats` reads)")
    p.add_argument("--spec", default="rwbm-conjugate",
                   help="model spec: a TOML file or a built-in name (default rwbm-conjugate)")
    p.add_argument("-o", "--output", default=None, help="write the posterior to this .nc file")
    p.add_argument("--method", choices=["conjugate", "nuts"], default=None,
                   help="override the spec's sampler")
    p.add_argument("--draws", type=int, default=None, help="draws per chain")
    p.add_argument("--chains", type=int, default=None, help="chains")
    p.add_argument("--seed", type=int, default=None, help="random seed")
    p.add_argument("--format", dest="log_format", default=None,
                   choices=["yandex", "wscd", "trec-session", "canonical"])
    p.add_argument("--figures", default=None, metavar="DIR",
                   help="write the posterior predictive checks (backward moves, click "
                        "depth, dwell times: " + ", ".join(FIGURES) + ") to DIR")
    p.add_argument("--qrels", default=None,
                   help="TREC qrels for specs with transitions by relevance (rwbm-relevance)")
    p.add_argument("--level", type=int, default=1,
                   help="lowest relevant grade for --qrels (default 1)")
    p.add_argument("--force", action="store_true", help="overwrite an existing output")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from ..inference import (
        fit,
        load_spec,
        model_data,
        predictive_backward_share,
        predictive_click_depth,
        predictive_dwell_distribution,
    )
    from ..io.clickformats import read_clicks
    from ..io.clickstats import click_statistics
    from ..io.write import check_output_path, prepare_figure_folder

    if args.output:
        check_output_path(args.output, force=args.force, protected=[args.log])
    if args.figures:      # checked before the (possibly long) fit, not after it
        prepare_figure_folder(args.figures, FIGURES, force=args.force, protected=[args.log])
    spec = load_spec(args.spec)
    trans = spec.section("transitions")
    by_relevance = trans is not None and trans["by_relevance"]
    qrels = None
    if args.qrels:
        from ..io import read_qrels

        qrels = read_qrels(args.qrels)
    elif by_relevance:
        from ..errors import ParameterError

        raise ParameterError(f"spec {spec.name!r} fits transitions by relevance: give --qrels")
    log = read_clicks(args.log, format=args.log_format)
    stats = click_statistics(log)
    print(f"fitting {spec.name} to {log!r}")
    post = fit(log if by_relevance else stats, spec, method=args.method, draws=args.draws,
               chains=args.chains, seed=args.seed, progress=not args.quiet, qrels=qrels,
               level=args.level)
    if args.output:       # saved first: nothing after the fit can lose it
        path = post.save(args.output, force=args.force)
        print(f"wrote {path}")
    summary = post.summary()
    with_ci = summary.round(4).to_string(index=False)
    print(with_ci)
    if "transition" in post.posterior:
        data = model_data(stats, spec.ranks, spec.section("transitions")["categories"])
        check = predictive_backward_share(post, data, seed=0)
        lo, hi = check.interval()
        print(f"backward share of click-to-click moves: observed {check.observed:.3f}, "
              f"posterior predictive 95% [{lo:.3f}, {hi:.3f}] (p = {check.p_value:.2f})")
        if args.figures:
            _ppc_figure(check, args.figures, args.force)
    if "transition" in post.posterior or {"walk", "click"} <= set(post.posterior.data_vars):
        depth = predictive_click_depth(post, log, seed=0)
        # the transition model's backward share is checked above, without replay
        _print_check(depth, skip=("backward share",) if "transition" in post.posterior
                     else ())
        if args.figures:
            _distribution_figure(depth, args.figures, "ppc_click_depth.png", args.force)
    if {"holding_rate", "log_dwell_mean"} & set(post.posterior.data_vars):
        dwell = predictive_dwell_distribution(post, log, seed=0)
        _print_check(dwell)
        if args.figures:
            _distribution_figure(dwell, args.figures, "ppc_dwell.png", args.force)
    if post.attrs.get("method") == "nuts":
        diag = post.diagnostics()
        print(f"NUTS: max R-hat {diag['max_rhat'].max():.3f}, min bulk ESS "
              f"{diag['min_ess'].min():.0f}, {post.divergences()} divergences")
    return 0


def _print_check(check, skip=()) -> None:
    """One line per summary of a distribution check, and where the law leaves its band."""
    for name, c in check.summaries.items():
        if name in skip:
            continue
        lo, hi = c.interval()
        print(f"{check.label}, {name}: observed {c.observed:.3f}, posterior predictive 95% "
              f"[{lo:.3f}, {hi:.3f}] (p = {c.p_value:.2f})")
    out = check.outside()
    if out.size:
        print(f"  observed {check.label} distribution outside its 95% predictive band at "
              f"{out.size} of {check.support.size} points")


def _distribution_figure(check, folder, name: str, force: bool) -> None:
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io.write import atomic_save_figure
    from ..plots import plot_distribution_check

    fig, ax = plt.subplots(figsize=(5, 3.5))
    plot_distribution_check(ax, check)
    fig.tight_layout()
    print(f"wrote {atomic_save_figure(fig, Path(folder) / name, force=force)}")
    plt.close(fig)


def _ppc_figure(check, folder, force: bool) -> None:
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io.write import atomic_save_figure
    from ..plots import plot_predictive_check

    fig, ax = plt.subplots(figsize=(5, 3.5))
    plot_predictive_check(ax, check, label="share of backward moves")
    fig.tight_layout()
    print(f"wrote {atomic_save_figure(fig, Path(folder) / 'ppc_backward.png', force=force)}")
