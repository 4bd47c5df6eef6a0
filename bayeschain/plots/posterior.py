"""Posterior predictive check figure: replicated statistic against the observed one."""

from __future__ import annotations

import numpy as np


def plot_predictive_check(ax, check, *, label: str = "statistic"):
    """Histogram of replicated values with the observed value and its p-value."""
    rep = np.asarray(check.replicated, dtype=float)
    ax.hist(rep, bins=40, color="tab:blue", alpha=0.7, label="posterior predictive")
    ax.axvline(check.observed, color="tab:red", linewidth=2, label="observed")
    ax.set_xlabel(label)
    ax.set_ylabel("draws")
    ax.set_title(f"{label}: p = {check.p_value:.2f}", fontsize=9)
    ax.legend(fontsize=8)
    return ax


def plot_distribution_check(ax, check, *, prob: float = 0.95):
    """Observed distribution (click-depth pmf as bars, dwell CDF as a step line) against
    the ``prob`` posterior predictive band (:class:`~bayeschain.inference.dwell.checks.
    DistributionCheck`)."""
    lo, hi = check.band(prob)
    x = np.asarray(check.support, dtype=float)
    if check.kind == "pmf":
        ax.bar(x, check.observed, width=0.6, color="tab:red", alpha=0.6, label="observed")
        mid = np.median(check.replicated, axis=0)
        ax.errorbar(x, mid, yerr=[mid - lo, hi - mid], fmt="o", color="tab:blue",
                    capsize=3, label=f"posterior predictive {prob:.0%}")
        ax.set_ylabel("share of pages")
    else:
        ax.fill_between(x, lo, hi, step="post", color="tab:blue", alpha=0.3,
                        label=f"posterior predictive {prob:.0%}")
        ax.step(x, check.observed, where="post", color="tab:red", label="observed")
        ax.set_xscale("log")
        ax.set_ylabel("CDF")
    ax.set_xlabel(check.label)
    notes = ", ".join(f"{k}: p = {v.p_value:.2f}" for k, v in check.summaries.items())
    ax.set_title(notes, fontsize=8)
    ax.legend(fontsize=8)
    return ax
