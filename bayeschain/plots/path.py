"""CDFs of P@H with the order-1 and order-2 lines (Figure 1 of Ferrante & Ferro, ICTIR 2020)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def plot_path_cdfs(ax, laws: Sequence, labels: Sequence[str], *, order1: Sequence[float] = (),
                   order2: Sequence[float] = (), colors=("tab:blue", "tab:red", "tab:green"),
                   title: str | None = None):
    """Step CDFs ``F(x) = P(P@H <= x)`` of several runs on one axis.

    Parameters
    ----------
    ax : matplotlib Axes
    laws : objects with ``values`` and ``probabilities`` (e.g. ``PathDistribution``)
    labels : run labels for the legend
    order1, order2 : per-run expectations, drawn as dashed and dotted vertical lines
    """
    for i, (law, label) in enumerate(zip(laws, labels, strict=True)):
        color = colors[i % len(colors)]
        x = np.concatenate([[0.0], law.values, [max(1.0, float(law.values[-1]))]])
        y = np.concatenate([[0.0], np.cumsum(law.probabilities), [1.0]])
        ax.step(x, y, where="post", color=color, label=label)
        if i < len(order1):
            ax.axvline(order1[i], color=color, linestyle="--", linewidth=1)
        if i < len(order2):
            ax.axvline(order2[i], color=color, linestyle=":", linewidth=1.5)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("P@H")
    ax.set_ylabel("F(x)")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    return ax
