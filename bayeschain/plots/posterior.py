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
