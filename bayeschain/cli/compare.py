"""``bayeschain compare QRELS RUN... --posterior post.nc -m MEASURE``: Bayesian comparison.

Scores every run and topic under every posterior draw of the user model, prints the
pairwise table (mean difference with its HDI, P(A > B), P(A < B), P(|A - B| <= rope),
P(A - B > rope), P(B - A > rope)), each run's probability of being the best (ties split
evenly), and what each interval owes to each source of uncertainty; optionally writes the
table (CSV, Markdown or LaTeX by extension, run names escaped) and the figures (forest
plot, pairwise matrix).  Uncertainty included by default: the user-model posterior and the
sampling of topics (Bayesian bootstrap, paired with the draws); ``--topics fixed`` keeps
the user model only.
"""

from __future__ import annotations

import argparse

FIGURES = ("forest.png", "pairwise.png")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .arguments import seed
    from .score import add_scoring_arguments

    add_scoring_arguments(p, runs_help="TREC run files (two or more)")
    p.add_argument("--rope", type=float, default=0.01,
                   help="region of practical equivalence on the mean score (default 0.01)")
    p.add_argument("--reference", default=None, help="compare every run with this one only")
    p.add_argument("--topics", choices=("bayesian-bootstrap", "fixed"),
                   default="bayesian-bootstrap",
                   help="topics as a sample of a population (default) or as given")
    p.add_argument("--seed", type=seed, default=2026, help="seed of the topic weights")
    p.add_argument("-o", "--output", default=None,
                   help="write the table: .csv, .md or .tex")
    p.add_argument("--report", default=None, metavar="FILE.html",
                   help="write a self-contained HTML report: the tables, the figures, what "
                        "each number means and where it came from")
    p.add_argument("--figures", default=None, metavar="DIR",
                   help="write forest.png and pairwise.png to DIR")
    p.add_argument("--force", action="store_true", help="overwrite existing outputs")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..comparison import compare
    from ..errors import ParameterError
    from ..io.write import atomic_outputs, check_output_path, prepare_figure_folder
    from ..scoring import score
    from .score import load_scoring_inputs

    if len(args.runs) < 2:
        raise ParameterError("compare needs at least two runs")
    if args.output:
        suffix = Path(args.output).suffix
        if suffix not in (".csv", ".md", ".tex"):
            raise ParameterError("--output must end in .csv, .md or .tex")
        check_output_path(args.output, force=args.force,
                          protected=[args.qrels, args.posterior, *args.runs])
    if args.report:
        if Path(args.report).suffix.lower() not in (".html", ".htm"):
            raise ParameterError("--report must end in .html")
        check_output_path(args.report, force=args.force,
                          protected=[args.qrels, args.posterior, *args.runs])
    if args.figures:
        prepare_figure_folder(args.figures, FIGURES, force=args.force,
                              protected=[args.qrels, args.posterior, *args.runs])
    posterior, qrels, runs = load_scoring_inputs(args)
    # trec_eval -c: every run is scored on every topic of the qrels, a topic it lacks as
    # an empty ranking, so that all means are over the same topics
    from .progress import stage

    with stage(f"scoring {len(runs):,} runs under {posterior.n_draws:,} draws"):
        scores = score(runs, qrels, args.measure, posterior, complete=True,
                       fixed_reference=args.fixed_reference)
    with stage("comparing the runs"):
        result = compare(scores, reference=args.reference, rope=args.rope,
                         topics=args.topics, seed=args.seed)
    print(f"{args.measure} under {posterior.n_draws:,} posterior draws of "
          f"{posterior.metadata.spec_name}; uncertainty: {result.uncertainty}")
    print(result.pairs.round(4).to_string(index=False))
    ties = f" (ties in {result.ties:.1%} of draws, split evenly)" if result.ties else ""
    print("\nP(best): " + ", ".join(f"{k} {v:.3f}" for k, v in result.best.items()) + ties)
    print("\nwidth of each HDI by source of uncertainty:")
    print(result.decomposition.round(4).to_string(index=False))
    with atomic_outputs(force=args.force,           # the table and figures: all or none
                        protected=[args.qrels, args.posterior, *args.runs]) as out:
        if args.output:
            suffix = Path(args.output).suffix
            text = {".csv": result.to_csv, ".md": result.to_markdown,
                    ".tex": result.to_latex}[suffix]()
            with out.writing(args.output) as tmp:
                tmp.write_text(text, encoding="utf-8")
        if args.figures:
            _figures(Path(args.figures), scores, result, out)
        if args.report:
            from ..recipes.reports import comparison_report

            report = comparison_report(result, scores, measure=args.measure,
                                       posterior=posterior,
                                       inputs=[args.qrels, *args.runs, args.posterior])
            with out.writing(args.report) as tmp:
                tmp.write_text(report.to_html(), encoding="utf-8")
    for path in out.targets:
        print(f"wrote {path}")
    return 0


def _figures(folder, scores, result, out) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io.write import save_figure
    from ..plots import plot_forest, plot_pairwise

    for name, draw in zip(FIGURES, (lambda ax: plot_forest(ax, scores),
                                    lambda ax: plot_pairwise(ax, result)), strict=True):
        fig, ax = plt.subplots(figsize=(5, 4))
        draw(ax)
        fig.tight_layout()
        with out.writing(folder / name) as tmp:
            save_figure(fig, tmp)
