r"""Bayesian comparison of systems from posterior scores.

``compare(scores)`` takes ``(chain, draw, run, topic)`` scores (from :func:`score`),
averages over topics within each draw (the user-model uncertainty; topics as given), and
for every pair of runs reports

* the posterior mean of ``A - B`` and its highest-density interval (``ci_prob``),
* ``P(A > B)``, ``P(|A - B| < rope)`` (practically equivalent) and ``P(A < B)``,

and for every run the probability that it is the best.  Results do not depend on the
order in which runs are given (pairs are reported in sorted order of names).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import ParameterError


def hdi(samples: np.ndarray, prob: float = 0.95) -> tuple[float, float]:
    """Shortest interval holding ``prob`` of the samples."""
    x = np.sort(np.asarray(samples, dtype=float).ravel())
    n = x.size
    k = max(1, int(np.ceil(prob * n)))
    if k >= n:
        return float(x[0]), float(x[-1])
    widths = x[k - 1:] - x[: n - k + 1]
    i = int(np.argmin(widths))
    return float(x[i]), float(x[i + k - 1])


@dataclass(frozen=True)
class Comparison:
    """Pairwise posterior comparison of runs (see the module docstring)."""

    pairs: pd.DataFrame
    best: pd.Series
    rope: float
    ci_prob: float

    def to_pandas(self) -> pd.DataFrame:
        return self.pairs.copy()

    def to_markdown(self) -> str:
        cols = list(self.pairs.columns)
        lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
        for row in self.pairs.itertuples(index=False):
            lines.append("| " + " | ".join(_fmt(v) for v in row) + " |")
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        cols = list(self.pairs.columns)
        out = ["\\begin{tabular}{" + "l" * 2 + "r" * (len(cols) - 2) + "}", "\\hline",
               " & ".join(c.replace("_", "\\_").replace(">", "$>$").replace("<", "$<$")
                          for c in cols) + " \\\\", "\\hline"]
        for row in self.pairs.itertuples(index=False):
            out.append(" & ".join(_fmt(v).replace("_", "\\_") for v in row) + " \\\\")
        out += ["\\hline", "\\end{tabular}"]
        return "\n".join(out) + "\n"


def _fmt(v) -> str:
    return f"{v:.4f}" if isinstance(v, float | np.floating) else str(v)


def compare(scores: xr.DataArray, reference: str | None = None, rope: float = 0.01,
            ci_prob: float = 0.95) -> Comparison:
    """Compare runs from posterior scores ``(chain, draw, run, topic)``.

    Parameters
    ----------
    reference : compare every run with this one only (default: all pairs)
    rope : half-width of the region of practical equivalence on the mean score
    ci_prob : mass of the highest-density interval of the difference
    """
    if set(scores.dims) != {"chain", "draw", "run", "topic"}:
        raise ParameterError(f"scores must have dims (chain, draw, run, topic); got "
                             f"{scores.dims}")
    if not rope >= 0:
        raise ParameterError("rope must be >= 0")
    mean = scores.mean("topic", skipna=True).stack(sample=("chain", "draw"))
    names = sorted(str(r) for r in mean["run"].values)
    if reference is not None and reference not in names:
        raise ParameterError(f"reference run {reference!r} is not among {names}")
    draws = {n: mean.sel(run=n).values for n in names}
    rows = []
    for a in names:
        for b in names:
            if a == b or (reference is not None and b != reference) or \
                    (reference is None and a > b):
                continue
            d = draws[a] - draws[b]
            lo, hi = hdi(d, ci_prob)
            rows.append({"A": a, "B": b, "mean_diff": float(d.mean()),
                         f"hdi_{ci_prob:g}_low": lo, f"hdi_{ci_prob:g}_high": hi,
                         "P(A>B)": float(np.mean(d > rope)),
                         "P(|A-B|<rope)": float(np.mean(np.abs(d) <= rope)),
                         "P(A<B)": float(np.mean(d < -rope))})
    stacked = np.stack([draws[n] for n in names])
    winners = np.argmax(stacked, axis=0)
    best = pd.Series(np.bincount(winners, minlength=len(names)) / winners.size,
                     index=names, name="P(best)")
    return Comparison(pd.DataFrame(rows), best, float(rope), float(ci_prob))
