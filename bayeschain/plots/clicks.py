"""Figures of a click log: clicks per rank, transition heat map, dwell-time histogram."""

from __future__ import annotations

import numpy as np


def plot_clicks_per_rank(ax, counts, *, title: str = "clicks per rank"):
    """Bar chart of clicks on each rank (a Series indexed by rank)."""
    ax.bar(np.asarray(counts.index), np.asarray(counts.values), color="tab:blue")
    ax.set_xlabel("rank")
    ax.set_ylabel("clicks")
    ax.set_title(title, fontsize=9)
    return ax


def plot_transition_matrix(ax, matrix, *, title: str = "click-to-click transitions"):
    """Heat map of transition counts from rank i (rows) to rank j (columns), log colour."""
    m = np.asarray(matrix, dtype=float)
    im = ax.imshow(np.log10(1 + m), cmap="viridis", origin="upper",
                   extent=(0.5, m.shape[1] + 0.5, m.shape[0] + 0.5, 0.5))
    ax.set_xlabel("to rank")
    ax.set_ylabel("from rank")
    ax.set_title(title + " (log10(1 + count))", fontsize=9)
    ax.figure.colorbar(im, ax=ax, shrink=0.8)
    return ax


def plot_dwell_histogram(ax, dwell, *, title: str = "dwell time"):
    """Histogram of positive dwell times on a log axis (seconds)."""
    d = np.asarray(dwell, dtype=float)
    d = d[np.isfinite(d) & (d > 0)]
    if d.size:
        bins = np.logspace(np.log10(d.min()), np.log10(d.max()), 40)
        ax.hist(d, bins=bins, color="tab:green")
        ax.set_xscale("log")
    ax.set_xlabel("seconds")
    ax.set_ylabel("clicks")
    ax.set_title(title, fontsize=9)
    return ax
