"""Figures of a Bayesian comparison: forest plot, pairwise probabilities, a difference."""

from __future__ import annotations

import numpy as np

from ..posterior.draws import stacked_draws


def _means(scores):
    return stacked_draws(scores.mean("topic", skipna=True))


def plot_forest(ax, scores, *, ci_prob: float = 0.95, title: str = "mean score"):
    """Posterior mean score of each run over topics with its equal-tailed interval."""
    m = _means(scores)
    runs = [str(r) for r in m["run"].values]
    lo = m.quantile((1 - ci_prob) / 2, dim="sample").values
    hi = m.quantile(1 - (1 - ci_prob) / 2, dim="sample").values
    mean = m.mean("sample").values
    order = np.argsort(mean)
    y = np.arange(len(runs))
    ax.hlines(y, lo[order], hi[order], color="tab:blue", linewidth=2)
    ax.plot(mean[order], y, "o", color="tab:blue")
    ax.set_yticks(y, [runs[i] for i in order])
    ax.set_xlabel(f"{title} ({ci_prob:.0%} interval)")
    return ax


def plot_pairwise(ax, comparison):
    """Matrix of P(row run > column run) from a :class:`~bayeschain.comparison.Comparison`."""
    pairs = comparison.pairs
    runs = sorted(set(pairs["A"]) | set(pairs["B"]))
    idx = {r: i for i, r in enumerate(runs)}
    m = np.full((len(runs), len(runs)), np.nan)
    for row in pairs.itertuples(index=False):
        a, b = idx[row.A], idx[row.B]
        m[a, b] = row[pairs.columns.get_loc("P(A>B)")]
        m[b, a] = row[pairs.columns.get_loc("P(A<B)")]         # ties count for neither
    im = ax.imshow(m, vmin=0, vmax=1, cmap="RdBu_r")
    ax.set_xticks(range(len(runs)), runs, rotation=45, ha="right")
    ax.set_yticks(range(len(runs)), runs)
    ax.set_title("P(row > column)", fontsize=9)
    ax.figure.colorbar(im, ax=ax, shrink=0.8)
    return ax


def plot_difference(ax, scores, a: str, b: str, *, rope: float = 0.01):
    """Posterior of the mean-score difference ``a - b`` with the ROPE shaded."""
    m = _means(scores)
    d = (m.sel(run=a) - m.sel(run=b)).values
    ax.hist(d, bins=50, color="tab:blue", alpha=0.8)
    ax.axvspan(-rope, rope, color="tab:gray", alpha=0.3, label=f"ROPE ±{rope:g}")
    ax.axvline(0, color="black", linewidth=1)
    ax.set_xlabel(f"{a} - {b}")
    ax.set_ylabel("draws")
    ax.legend(fontsize=8)
    return ax


def plot_cdf_bands(ax, bands, *, label: str, color: str = "tab:blue"):
    """Median CDF of P@H over posterior draws with the outer quantiles as a band."""
    q = list(bands["quantile"].values)
    x = bands["x"].values
    ax.fill_between(x, bands.sel(quantile=q[0]).values, bands.sel(quantile=q[-1]).values,
                    step="post", color=color, alpha=0.25)
    ax.step(x, bands.sel(quantile=q[len(q) // 2]).values, where="post", color=color,
            label=label)
    ax.set_xlabel("P@H")
    ax.set_ylabel("F(x)")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, loc="lower right")
    return ax
