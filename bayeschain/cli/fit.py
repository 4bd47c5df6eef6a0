"""``bayeschain fit LOG [--spec SPEC] -o posterior.nc``: calibrate a user model from clicks.

Without ``--spec`` it fits the walk that P@H scores (spec ``walk``: the examinations are
hidden, the likelihood of every page is exact).  Prints what the posterior learned (per
rank: forward, backward and leave probabilities, click probabilities, expected
examinations of a 10-result page next to the log's clicks per rank), posterior predictive
checks that replay the fitted model on the log's pages, and the sampler's diagnostics;
writes the posterior (netCDF, ``-o`` must end in ``.nc``) and the figures when the command
succeeds: all outputs are committed together at the end, atomically, never over an existing
file without ``--force``; an error or an interrupt (exit status 130 / 143) leaves none.
``--heldout 0.25`` fits on 75% of the sessions and reports the click models' held-out
metrics (log-likelihood, perplexity) on the rest.  Outputs are checked
(name, existing file, writable folder) and the log validated before the fit starts.
"""

from __future__ import annotations

import argparse

WALK_FIGURES = ("ppc_clicks_per_page.png", "ppc_deepest_click.png", "ppc_click_rank.png",
                "ppc_first_click.png", "ppc_last_click.png", "ppc_click_distance.png")
CLICK_FIGURES = ("ppc_backward.png",)
DWELL_FIGURE = "ppc_dwell.png"
#: the figures of each predictive check (bayeschain.inference.sections.predictive_checks)
FIGURES = {"walk": WALK_FIGURES, "backward_share": CLICK_FIGURES, "dwell": (DWELL_FIGURE,)}


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .arguments import memory_size, positive_int, seed

    p.add_argument("log", help="click log (any format `bayeschain stats` reads)")
    p.add_argument("--spec", default="walk",
                   help="model spec: a TOML file or a built-in name (default walk: the walk "
                        "P@H scores; walk-relevance for drwbm, walk-session for MsM, "
                        "clicks-conjugate for click-to-click transitions)")
    p.add_argument("-o", "--output", default=None, help="write the posterior to this .nc file")
    p.add_argument("--method", choices=["conjugate", "nuts"], default=None,
                   help="override the spec's sampler")
    p.add_argument("--clicks", choices=["auto", "document", "pooled", "shared"], default=None,
                   help="the walk's click model, over the spec's [examination] clicks: "
                        "document (an attractiveness per (query, document) pair: minutes "
                        "where thousands of pairs recur), pooled (a click chance per rank on "
                        "a trend: seconds on any log), shared (one for every rank), auto "
                        "(document where pairs shown --min-impressions times hold a quarter "
                        "of the impressions)")
    p.add_argument("--min-impressions", type=positive_int, default=None, metavar="N",
                   help="the walk's [examination] min_impressions: (query, document) pairs "
                        "shown fewer times share a click chance per rank (the spec's; 10 in "
                        "the default walk); with clicks per document only")
    p.add_argument("--documents", choices=["auto", "sampled", "mode"], default=None,
                   help="with attractiveness per document, the walk's [examination] "
                        "documents: mode (integrated out by a Laplace approximation, NUTS "
                        "on the rest), sampled (NUTS on every document), auto (mode where "
                        "the log shows at least 100 impressions per document of its own, "
                        "for walks whose moves do not depend on the click; the default "
                        "walk's)")
    p.add_argument("--draws", type=positive_int, default=None, help="draws per chain")
    p.add_argument("--chains", type=positive_int, default=None, help="chains")
    p.add_argument("--tune", type=positive_int, default=None, metavar="STEPS",
                   help="NUTS tuning (warm-up) steps per chain, not kept (default: the "
                        "spec's; the walk's 'auto' is 500, 250 on the documents' Laplace "
                        "route)")
    p.add_argument("--seed", type=seed, default=None, help="random seed")
    p.add_argument("--format", dest="log_format", default=None,
                   choices=["yandex", "wscd", "trec-session", "canonical"])
    p.add_argument("--results", default=None, metavar="PAGES",
                   help="for a canonical log: the result pages (serp_id, rank, doc_id) as "
                        "CSV / TSV / Parquet, so page lengths and documents reach the model")
    p.add_argument("--out-of-core", action="store_true",
                   help="canonical files: the walk's pages counted by DuckDB straight from "
                        "the files (the default for globs and files over 32 MB); the "
                        "predictive checks replay a sample of sessions")
    p.add_argument("--memory-limit", default=None, metavar="SIZE", type=memory_size,
                   help="DuckDB's memory limit out of core, e.g. 4GB (default 1.5GB)")
    p.add_argument("--figures", default=None, metavar="DIR",
                   help="write the posterior predictive checks as figures to DIR")
    p.add_argument("--report", default=None, metavar="FILE.html",
                   help="write a self-contained HTML report: the fitted walk, E[H], the "
                        "checks that replay it (figures), diagnostics, provenance")
    p.add_argument("--qrels", default=None,
                   help="TREC qrels for specs whose moves depend on relevance (walk-relevance)")
    p.add_argument("--level", type=int, default=1,
                   help="lowest relevant grade for --qrels (default 1)")
    p.add_argument("--heldout", type=float, default=None, metavar="FRACTION",
                   help="fit on the other sessions and report held-out click prediction "
                        "(log-likelihood, perplexity) on this share of them")
    p.add_argument("--heldout-seed", type=seed, default=0,
                   help="seed of the held-out split by session (default 0)")
    p.add_argument("--force", action="store_true", help="overwrite an existing output")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _figures(spec) -> tuple[str, ...]:
    from ..inference.sections import predictive_checks

    return tuple(name for check in predictive_checks(spec) for name in FIGURES[check])


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..errors import ParameterError
    from ..inference import fit, load_spec
    from ..inference.sections import predictive_checks
    from ..io.clickformats import read_clicks
    from ..io.write import atomic_outputs, check_output_path, prepare_figure_folder
    from .arguments import MAX_TOTAL_DRAWS

    spec = load_spec(args.spec)
    if args.clicks or args.min_impressions or args.documents:
        if spec.section("examination") is None:
            raise ParameterError(f"--clicks, --min-impressions and --documents set the walk's "
                                 f"click model; spec {spec.name!r} has no [examination] "
                                 f"section")
        spec = spec.with_keys("examination", clicks=args.clicks,
                              min_impressions=args.min_impressions,
                              documents=args.documents, note="set on the command line")
    protected = [p for p in (args.log, args.results, args.qrels) if p]
    if args.output:       # checked before the (possibly long) fit, not after it
        if Path(args.output).suffix != ".nc":
            raise ParameterError(f"--output must end in .nc (the posterior is written as "
                                 f"netCDF), got {args.output!r}")
        check_output_path(args.output, force=args.force, protected=protected)
    if args.figures:
        prepare_figure_folder(args.figures, _figures(spec), force=args.force,
                              protected=protected)
    if args.report:
        if Path(args.report).suffix.lower() not in (".html", ".htm"):
            raise ParameterError("--report must end in .html")
        check_output_path(args.report, force=args.force, protected=protected)
    if args.heldout is not None and not 0 < args.heldout < 1:
        raise ParameterError("--heldout must be a fraction between 0 and 1")
    chains = args.chains or spec.sampler["chains"]
    for what, key, per_chain in (("draws", "draws", args.draws or spec.sampler["draws"]),
                                 ("tuning steps", "tune", args.tune)):
        if per_chain is not None and per_chain * chains > MAX_TOTAL_DRAWS:
            raise ParameterError(f"{per_chain * chains:,} {what} in all ({key} x chains) is "
                                 f"more than {MAX_TOTAL_DRAWS:,}: a typo?")
    exam = spec.section("examination")
    by_relevance = exam is not None and exam["by_relevance"]
    qrels = None
    if args.qrels:
        from ..io import read_qrels

        qrels = read_qrels(args.qrels)
    elif by_relevance:
        raise ParameterError(f"spec {spec.name!r} fits moves by relevance: give --qrels")
    from .arguments import out_of_core_files

    files = None
    if out_of_core_files(args.log, args.log_format, args.out_of_core) and \
            _fits_out_of_core(args, spec, candidate := _files_of(args)):
        log = files = _log_files(args, spec, candidate)
    else:
        if args.out_of_core or args.memory_limit:
            raise ParameterError("--out-of-core and --memory-limit read canonical Parquet, "
                                 "CSV or TSV files")
        log = read_clicks(args.log, format=args.log_format, results=args.results)
    test = None
    if args.heldout is not None:
        log, test = log.split(args.heldout, seed=args.heldout_seed)
    # every output is committed together when the command succeeds: an error or an
    # interrupt (fit, report or figures) leaves none, not even a temporary file
    with atomic_outputs(force=args.force, protected=protected) as out:
        print(f"fitting {spec.name} ({_learns(spec)}) to {log!r}", flush=True)
        post = fit(log, spec, method=args.method, draws=args.draws, chains=args.chains,
                   tune=args.tune, seed=args.seed, progress=not args.quiet, qrels=qrels,
                   level=args.level)
        if args.output:   # written (not yet linked) at once: a full disk shows up now
            with out.writing(args.output) as tmp:
                tmp.write_bytes(post.to_netcdf_bytes())
        checks = predictive_checks(spec)
        replayed = None
        check_log = _check_sample(files if files is not None else log)
        if post.parametrises == "walk":
            replayed = _report_walk(post, check_log, qrels, args, out)
        else:
            _print_summary(post)
            if "backward_share" in checks:
                _report_click_to_click(post, check_log, spec, args, out)
        if "dwell" in checks:
            if post.parametrises == "walk" and post.metadata.dwell_observed == 0:
                print("no dwell times in the log: no holding rates fitted (MPcont needs them)")
            else:
                from ..inference import predictive_dwell_distribution

                dwell = predictive_dwell_distribution(post, check_log, seed=0)
                _print_check(dwell)
                if args.figures:
                    _distribution_figure(dwell, out, Path(args.figures) / DWELL_FIGURE)
        if test is not None:
            _report_heldout(post, log, test, qrels)
        if (post.metadata.method or "").startswith("nuts"):
            diag = post.diagnostics(sampled_only=True)
            print(f"NUTS: max R-hat {diag['max_rhat'].max():.3f}, min bulk ESS "
                  f"{diag['min_ess'].min():.0f}, {post.divergences()} divergences"
                  + (f" ({post.attrs['resampled']})" if "resampled" in post.attrs else ""))
        if args.report:
            from ..recipes.reports import fit_report

            report = fit_report(post, log_source=str(args.log), checks=replayed)
            with out.writing(args.report) as tmp:
                tmp.write_text(report.to_html(), encoding="utf-8")
    for path in out.targets:
        print(f"wrote {path}")
    return 0


#: the most sessions the predictive checks replay: larger logs (and logs read out of
#: core) are checked on a random sample of this many sessions (the intervals of a check
#: then have the width of that many sessions')
CHECK_SESSIONS = 20_000


def _check_sample(log):
    """The log the predictive checks replay: ``log``, or a random sample of
    :data:`CHECK_SESSIONS` of its sessions (said on the terminal)."""
    from ..inference.walk.files import ClickLogFiles

    if isinstance(log, ClickLogFiles):
        sample = log.sample(CHECK_SESSIONS, seed=0)
    else:
        sessions = log.summary()["sessions"]
        if sessions <= CHECK_SESSIONS:
            return log
        sample = log.split(CHECK_SESSIONS / sessions, seed=0)[1]
    print(f"predictive checks on a random sample of {sample.summary()['sessions']:,} sessions "
          f"of the log")
    return sample


def _files_of(args):
    """The log's canonical files as :class:`ClickLogFiles` (nothing read yet)."""
    from ..inference.walk.files import ClickLogFiles
    from ..io.clickstats_sql import DUCKDB_MEMORY

    return ClickLogFiles(args.log, results=args.results,
                         memory_limit=args.memory_limit or DUCKDB_MEMORY)


def _fits_out_of_core(args, spec, files) -> bool:
    """Whether a log of canonical files over the size threshold is read out of core: always
    when asked (``--out-of-core``, ``--memory-limit``) or for a glob (then
    :func:`_log_files` and the fit refuse what cannot run out of core, saying why), and
    otherwise only where the fit can run out of core (a walk spec with clicks per rank and
    moves without relevance classes, not deciding once, one reader, no ``--heldout``): a
    large single file is read into memory for the others, as any log."""
    from .arguments import is_glob

    if args.out_of_core or args.memory_limit or is_glob(args.log):
        return True
    exam = spec.section("examination")
    if exam is None or exam["by_relevance"] or args.heldout is not None or \
            exam["clicks"] == "document" or exam["reclicks"] == "once" or \
            exam["readers"] != "one":
        return False
    if exam["clicks"] == "auto" and args.results:
        from ..inference.walk.fit import auto_clicks

        # computed once: the fit reads the same ClickLogFiles' share
        return auto_clicks(files.recurring_share(exam["min_impressions"]),
                           exam["reclicks"]) != "document"
    return True


def _log_files(args, spec, files):
    """The log's files read out of core (clicks per rank, no held-out split)."""
    from ..errors import ParameterError

    if spec.section("examination") is None:
        raise ParameterError(f"spec {spec.name!r} is fitted in memory: only the walk's specs "
                             f"read a log out of core")
    if args.heldout is not None:
        raise ParameterError("--heldout splits a log in memory; out of core, split the "
                             "files instead")
    return files


def _learns(spec) -> str:
    return {"walk": "the walk P@H scores: per-step moves with hidden examinations",
            "click-to-click": "click-to-click transitions: where the next click lands, not "
                              "the walk's per-step moves",
            "dwell": "dwell times"}[spec.parametrises]


def _report_walk(post, log, qrels, args, out) -> None:
    import numpy as np

    from ..inference.walk.checks import predictive_walk_checks
    from ..posterior.walk import expected_visits, walk_summary

    attrs = post.attrs
    level = post.metadata.click_level
    print(f"{attrs['pages']:,} pages, {attrs['clicks']:,} clicks, longest page "
          f"{attrs['longest_page']}; clicks per {level}"
          + (f" ({attrs['recurring_share']:.0%} of the impressions are of (query, document) "
             f"pairs shown {attrs['min_impressions']} times or more; the others share "
             f"a click chance per rank; --clicks pooled fits one click chance per rank "
             f"instead, far faster)" if level == "document" else ""))
    if "document_effects" in attrs:
        print(f"documents: {attrs['document_effects']}")
    if "relevance" not in post.posterior["walk"].dims:
        table = walk_summary(post, ranks=min(10, int(attrs["longest_page"])))
        cols = [c for c in ("forward", "backward", "leave", "click", "visits") if c in table]
        print("per rank, posterior mean [95% interval]:")
        print("rank  " + "".join(f"{c:>22}" for c in cols))
        for _, row in table.iterrows():
            print(f"{int(row['rank']):>4}  " + "".join(
                f"{row[c]:>8.3f} [{row[c + '_lo']:.3f}, {row[c + '_hi']:.3f}]"
                .rjust(22) for c in cols))
        if "reclick" in post.posterior:
            k = post.posterior["reclick"].values.ravel()
            lo, hi = np.quantile(k, [0.025, 0.975])
            print(f"a result clicked before clicks again at a later arrival with kappa = "
                  f"{k.mean():.3f} [{lo:.3f}, {hi:.3f}] times its click probability")
        if "second_look" in post.posterior:
            k = post.posterior["second_look"].values.ravel()
            lo, hi = np.quantile(k, [0.025, 0.975])
            print(f"a result examined before clicks at a later examination with "
                  f"second_look = {k.mean():.3f} [{lo:.3f}, {hi:.3f}] times its click "
                  f"probability (0: the decision made once)")
        if "click_offset" in post.posterior:
            off = post.posterior["click_offset"].stack(s=("chain", "draw")).values
            print("click logit offset by rank (rank 1 = 0), posterior mean: "
                  + " ".join(f"{v:+.2f}" for v in off.mean(axis=-1)[:10]))
        if post.metadata.boundary == "leave":
            h = expected_visits(post, 10).sum(axis=1)
            lo, hi = np.quantile(h, [0.025, 0.975])
            print(f"E[H] on a 10-result page (ranks examined, revisits counted): "
                  f"{h.mean():.2f} [{lo:.2f}, {hi:.2f}]")
        if "reader_effect" in post.posterior:
            _print_readers(post, depths=post.metadata.boundary == "leave")
    else:
        print(post.summary().round(4).to_string(index=False))
    checks = predictive_walk_checks(post, log, qrels=qrels, seed=0)
    for check in checks.distributions():
        _print_check(check)
    if args.figures:
        from pathlib import Path

        for check, name in zip(checks.distributions(), WALK_FIGURES, strict=True):
            _distribution_figure(check, out, Path(args.figures) / name)
    return checks


def _print_readers(post, depths: bool = True) -> None:
    """Readers by query: who has a reader of their own, the spreads of the effects, and
    (``depths``: P@H's walk, ``boundary = "leave"``) each reader's E[H] (the deepest and
    shallowest when there are many)."""
    import numpy as np

    from ..posterior.walk import reader_depths

    spread = post.posterior["reader_spread"]
    effect = post.posterior["reader_effect"]
    pages = effect["pages"].values
    by = post.attrs.get("readers_by", "query")
    units = {"query": ("query", "queries"), "topic": ("topic", "topics")}[by]
    n = pages.size - 1
    print(f"readers by {by}: {n:,} {units[n > 1]} with {int(pages[1:].min()):,} pages or "
          f"more read by their own reader; reader 0 reads the other {units[1]} "
          f"({int(pages[0]):,} pages) and is the walk above, the one the walk measures "
          f"score")
    parts = []
    for name in spread["reader_logit"].values:
        v = spread.sel(reader_logit=name).values.ravel()
        lo, hi = np.quantile(v, [0.025, 0.975])
        parts.append(f"{name} {v.mean():.2f} [{lo:.2f}, {hi:.2f}]")
    print("spread (sd) of the readers' logit effects: " + ", ".join(parts))
    if not depths:
        return
    shown = reader_depths(post, 10).iloc[1:].sort_values("E[H]")
    if len(shown) > 10:
        shown = _ends(shown, 5)
    print("E[H] on a 10-result page by reader, posterior mean [95% interval]:")
    for _, row in shown.iterrows():
        print(f"  {row['reader'][:40]:<40} {row['pages']:>9,} pages  {row['E[H]']:6.2f} "
              f"[{row['lo']:.2f}, {row['hi']:.2f}]")


def _ends(table, n: int):
    """The first and last ``n`` rows of ``table``."""
    import pandas as pd

    return pd.concat([table.head(n), table.tail(n)])


def _report_click_to_click(post, log, spec, args, out) -> None:
    from ..inference import model_data, predictive_backward_share
    from ..io.clickstats import click_statistics

    print("note: this posterior is the click-to-click chain (where the next click lands); "
          "P@H, RBP and MsM refuse it: fit the walk (spec 'walk') for them")
    data = model_data(click_statistics(log), spec.ranks,
                      spec.section("transitions")["categories"])
    check = predictive_backward_share(post, data, seed=0)
    lo, hi = check.interval()
    print(f"backward share of click-to-click moves: observed {check.observed:.3f}, "
          f"posterior predictive 95% [{lo:.3f}, {hi:.3f}] (p = {check.p_value:.2f})")
    if args.figures:
        from pathlib import Path

        _ppc_figure(check, out, Path(args.figures) / CLICK_FIGURES[0])


def _report_heldout(post, train, test, qrels) -> None:
    from ..inference import heldout_click_metrics

    known = set(train.events["query_id"].astype(str))
    for label, queries in (("all held-out pages", None),
                           ("held-out pages whose query is in the training log", known)):
        m = heldout_click_metrics(post, test, qrels=qrels, queries=queries, seed=0)
        print(f"held-out click prediction, {label} ({m.pages:,} pages with >= 10 results): "
              f"log-likelihood {m.log_likelihood:.4f} nats/rank, perplexity "
              f"{m.perplexity:.4f}, conditional perplexity {m.conditional_perplexity:.4f}")


def _print_summary(post) -> None:
    """The posterior summary; per-(query, document) effects are counted, not listed (a
    real log has thousands: they are in the posterior file)."""
    table = post.summary()
    per_item = table["parameter"].str.startswith(("dwell_query_effect[",
                                                  "dwell_document_effect["))
    print(table[~per_item].round(4).to_string(index=False))
    if per_item.any():
        p = post.posterior
        print(f"effects of {p.sizes['dwell_document']:,} (query, document) pairs and "
              f"{p.sizes['dwell_query']:,} queries: in the posterior file")


def _print_check(check, skip=()) -> None:
    """One line per summary of a distribution check, and where the law leaves its band."""
    for name, c in check.summaries.items():
        if name in skip:
            continue
        lo, hi = c.interval()
        flag = "" if lo - 1e-12 <= c.observed <= hi + 1e-12 else "  <- outside"
        print(f"{name}: observed {c.observed:.3f}, posterior predictive 95% "
              f"[{lo:.3f}, {hi:.3f}]{flag}")
    out = check.outside()
    if out.size:
        shown = ", ".join(f"{v:.3g}" for v in out[:6]) + (", ..." if out.size > 6 else "")
        print(f"  observed {check.label} distribution outside its 95% predictive band at "
              f"{out.size} of {check.support.size} points ({shown})")


def _distribution_figure(check, out, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io.write import save_figure
    from ..plots import plot_distribution_check

    fig, ax = plt.subplots(figsize=(5, 3.5))
    plot_distribution_check(ax, check)
    fig.tight_layout()
    with out.writing(path) as tmp:
        save_figure(fig, tmp)


def _ppc_figure(check, out, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io.write import save_figure
    from ..plots import plot_predictive_check

    fig, ax = plt.subplots(figsize=(5, 3.5))
    plot_predictive_check(ax, check, label="share of backward moves")
    fig.tight_layout()
    with out.writing(path) as tmp:
        save_figure(fig, tmp)
