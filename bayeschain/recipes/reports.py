"""The reports the commands write: ``report.html`` for ``compare``, ``fit`` and ``demo``,
built with :class:`bayeschain.report.Report`."""

from __future__ import annotations

from pathlib import Path

from ..report import Report

#: what each column of a comparison means (the wording the reports print)
COMPARISON_TERMS = {
    "mean_diff": "posterior mean of D = mean score of A - mean score of B over the topics",
    "hdi_*": "highest-density interval of D holding the stated mass",
    "P(A>B), P(A<B)": "share of posterior draws with D > 0, D < 0",
    "P(|A-B|<=rope)": "share of draws with |D| <= rope: practically equal",
    "P(A-B>rope), P(B-A>rope)": "share of draws with D beyond the rope either way",
    "P(best)": "share of draws in which the run's mean is the largest; ties split evenly",
    "source of uncertainty": "user model: posterior draws of the fitted walk; topics: the "
                             "topics as a sample of a population (Bayesian bootstrap, each "
                             "draw with its own weights); the decomposition gives the "
                             "interval width from each source alone and from both",
}


def comparison_report(comparison, scores, *, measure: str, posterior=None,
                      title: str = "bayeschain compare", inputs=()) -> Report:
    """A comparison: the pairwise table, P(best), the decomposition of each interval, the
    forest plot and the matrix of P(row > column), with what each number means."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from ..plots import plot_forest, plot_pairwise

    r = Report(title, intro=f"{measure}; uncertainty: {comparison.uncertainty}; rope "
                            f"{comparison.rope:g}.")
    r.section("Pairs of runs").table(comparison.pairs)
    best = pd.DataFrame({"run": comparison.best.index, "P(best)": comparison.best.values})
    note = f" (ties in {comparison.ties:.1%} of draws, split evenly)" if comparison.ties \
        else ""
    r.table(best, caption="probability of being the best" + note)
    if len(comparison.decomposition):
        r.section("Where the uncertainty comes from").table(
            comparison.decomposition, caption="HDI width of each difference by source")
    fig, ax = plt.subplots(figsize=(6, 0.5 + 0.4 * scores.sizes["run"] + 1))
    plot_forest(ax, scores, title=f"{measure}: mean over topics")
    fig.tight_layout()
    r.section("Figures").figure(fig, caption="mean score of each run over the topics, with "
                                             "its 95% interval under the user model")
    fig, ax = plt.subplots(figsize=(5, 4))
    plot_pairwise(ax, comparison)
    fig.tight_layout()
    r.figure(fig, caption="P(row run > column run)")
    r.section("What the numbers mean").definitions(COMPARISON_TERMS)
    _provenance(r, posterior, inputs)
    return r


def fit_report(posterior, *, log_source: str = "", checks=None,
               title: str = "bayeschain fit") -> Report:
    """A fitted walk: the per-rank summary, E[H], the predictive checks replaying the fitted
    model (``checks``: :class:`~bayeschain.inference.walk.checks.WalkChecks`, or None),
    and the diagnostics."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    from ..plots import plot_distribution_check
    from ..posterior.walk import expected_visits, walk_summary

    r = Report(title, intro=f"{posterior.metadata.spec_name or ''} fitted to "
                            f"{log_source or 'a click log'}.")
    if posterior.parametrises == "walk":
        by_relevance = "relevance" in posterior.posterior["walk"].dims
        summary = None if by_relevance else walk_summary(posterior)   # one walk per class
        h = expected_visits(posterior, 10).sum(axis=1)
        lo, hi = np.quantile(h, [0.025, 0.975])
        r.section("The walk").paragraph(
            f"E[H] on a 10-result page: {h.mean():.2f} examinations, 95% interval "
            f"[{lo:.2f}, {hi:.2f}].")
        if summary is not None:
            r.table(summary.reset_index() if not isinstance(summary.index, pd.RangeIndex)
                    else summary, caption="per rank: posterior mean and 95% interval")
    diag = posterior.diagnostics()
    r.section("Diagnostics").table(diag.reset_index(), caption="R-hat and effective sample "
                                                               "size per variable")
    r.paragraph(f"{posterior.divergences()} divergent transitions.")
    for check in checks.distributions() if checks is not None else ():
        fig, ax = plt.subplots(figsize=(6, 3.5))
        plot_distribution_check(ax, check)
        fig.tight_layout()
        r.section("Checks that replay the fitted model").figure(
            fig, caption=f"{check.label}: observed against the 95% posterior predictive band")
    r.section("What the numbers mean").definitions({
        "forward / backward / leave": "per-step probabilities of the walk that examines "
                                      "every rank it visits (what P@H scores)",
        "E[H]": "expected number of examinations before leaving the page",
        "R-hat, ESS": "convergence diagnostics of the sampler (R-hat <= 1.01 and bulk "
                      "ESS >= 400 wanted)",
        "predictive band": "where the statistic of logs replayed by the fitted model falls "
                           "in 95% of posterior draws; the observed value outside it is a "
                           "misfit"})
    _provenance(r, posterior, [log_source] if log_source else [])
    return r


def demo_report(*, steps, post, scores, table, check, explanation: str,
                data_source: str, seed=None, title: str = "bayeschain demo") -> Report:
    """The demo's results in one page: what it did and found (its printed steps), the walk
    learned from the log, the comparisons with every probability, the figures and what
    each number means, and the provenance (data digest, spec, seed, version)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..plots import plot_distribution_check, plot_forest

    r = Report(title, intro=f"The walk that P@H scores, fitted to the clicks of "
                            f"{data_source}, and the systems built from the log compared "
                            f"under every posterior draw.")
    r.section("What the demo did and found")
    for line in steps:
        r.paragraph(line)
    walk = fit_report(post, log_source=data_source)
    for section in walk.sections[:1]:               # the walk: E[H] and per-rank table
        r.sections.append(section)
    r.section("Comparisons").table(table, caption="each question: A - B with its 95% "
                                                  "HDI, the probabilities of the "
                                                  "difference, and the laws of P@H over "
                                                  "users")
    fig, ax = plt.subplots(figsize=(6, 3.2))
    plot_forest(ax, scores, title="P@H (fitted walk, order 2): mean over sessions")
    fig.tight_layout()
    r.section("Figures").figure(fig, caption="mean score of each system over the sessions, "
                                             "95% interval under the user model")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    plot_distribution_check(ax, check)
    fig.tight_layout()
    r.figure(fig, caption="deepest clicked rank per page: the log against the 95% band of "
                          "pages replayed by the fitted walk")
    r.section("How to read these numbers").paragraph(" ".join(explanation.split()))
    r.definitions(COMPARISON_TERMS)
    _provenance(r, post, [data_source])
    if seed is not None:
        r.provenance_of(**{"demo seed": seed})
    return r


def _provenance(report: Report, posterior, inputs) -> None:
    items = {}
    if posterior is not None:
        attrs = posterior.attrs
        for key in ("spec_name", "spec_digest", "data_digest", "seed", "method", "sampler"):
            if key in attrs:
                items[key] = attrs[key]
    for i, path in enumerate(inputs):
        items[f"input {i + 1}"] = str(Path(path))
    report.provenance_of(**items)
