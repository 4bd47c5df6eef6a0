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
    """Highest-density interval of ``samples`` holding ``prob`` of them (ArviZ's ``hdi``:
    the shortest interval between two samples that contains ``ceil(prob * n)`` of them)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az

    lo, hi = az.hdi(np.asarray(samples, dtype=float).ravel(), hdi_prob=prob)
    return float(lo), float(hi)


@dataclass(frozen=True)
class Comparison:
    """Pairwise posterior comparison of runs (see the module docstring)."""

    pairs: pd.DataFrame
    best: pd.Series
    rope: float
    ci_prob: float
    topics: str = "fixed"

    source: str = "user-model posterior"

    @property
    def uncertainty(self) -> str:
        """Which sources of uncertainty the intervals include."""
        parts = [self.source]
        if self.topics == "bayesian-bootstrap":
            parts.append("topic sampling (Bayesian bootstrap)")
        return " + ".join(parts)

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
            ci_prob: float = 0.95, *, topics: str = "fixed", seed=None) -> Comparison:
    """Compare runs from posterior scores ``(chain, draw, run, topic)``.

    Parameters
    ----------
    reference : compare every run with this one only (default: all pairs)
    rope : half-width of the region of practical equivalence on the mean score
    ci_prob : mass of the highest-density interval of the difference
    topics : ``"fixed"`` averages the topics as given (user-model uncertainty only);
        ``"bayesian-bootstrap"`` also treats the topics as a sample: each draw averages
        them with Dirichlet(1, ..., 1) weights (Rubin 1981), so the intervals include
        topic-sampling uncertainty.
    """
    if set(scores.dims) != {"chain", "draw", "run", "topic"}:
        raise ParameterError(f"scores must have dims (chain, draw, run, topic); got "
                             f"{scores.dims}")
    if not rope >= 0:
        raise ParameterError("rope must be >= 0")
    if topics == "fixed":
        mean = scores.mean("topic", skipna=True).stack(sample=("chain", "draw"))
    elif topics == "bayesian-bootstrap":
        stacked = scores.stack(sample=("chain", "draw")).transpose("sample", "run", "topic")
        values = stacked.values
        weights = np.random.default_rng(seed).dirichlet(np.ones(values.shape[-1]),
                                                        size=values.shape[0])
        present = ~np.isnan(values)
        w = weights[:, None, :] * present
        mean_values = np.nansum(values * w, axis=-1) / w.sum(axis=-1)
        mean = xr.DataArray(mean_values, dims=("sample", "run"),
                            coords={"run": stacked["run"].values})
    else:
        raise ParameterError(f"topics must be 'fixed' or 'bayesian-bootstrap', got {topics!r}")
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
    source = scores.attrs.get("uncertainty", "user-model posterior")
    return Comparison(pd.DataFrame(rows), best, float(rope), float(ci_prob), topics, source)
