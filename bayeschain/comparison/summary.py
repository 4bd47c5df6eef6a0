r"""Bayesian comparison of systems from posterior scores.

``compare(scores)`` takes ``(chain, draw, run, topic)`` scores (from
:func:`bayeschain.score`) and summarises the mean score of each run over the population of
topics, under two sources of uncertainty combined by default:

* **user model**: each posterior draw of the fitted walk gives every run and topic a score;
* **topics**: the topics are a sample of a population.  Each draw averages the topics with
  its own Dirichlet(1, ..., 1) weights (the Bayesian bootstrap, Rubin 1981), so the draw's
  mean score ``M_s(A) = sum_t w_st y_st(A)`` carries both sources.  ``topics="fixed"``
  averages the topics as given (user-model uncertainty only).

For every pair ``(A, B)`` with ``D = M(A) - M(B)`` over the draws ``s``:

================  =========================================================
column            definition (share of draws)
================  =========================================================
``mean_diff``     mean of ``D``
``hdi_*``         highest-density interval of ``D`` (ArviZ), mass ``ci_prob``
``P(A>B)``        ``D > 0``
``P(A<B)``        ``D < 0``
``P(|A-B|<=rope)``  ``|D| <= rope`` (practically equivalent)
``P(A-B>rope)``   ``D > rope`` (A better by more than the rope)
``P(B-A>rope)``   ``D < -rope``
================  =========================================================

``P(best)`` of a run is the share of draws in which its mean is the largest; a draw where
``k`` runs tie for the largest gives each ``1/k`` (``Comparison.ties`` is the share of
such draws).  ``Comparison.decomposition`` attributes each pair's interval to its sources:
the width from the user model alone (topics fixed), from the topics alone (posterior-mean
scores, bootstrap weights) and from both (the reported interval).  User-to-user
variability (one random user's P@H under A against B) is not in these means: see
:func:`bayeschain.comparison.dominance_probability`.

Results do not depend on the order in which runs are given (pairs in sorted order).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import ParameterError
from ..posterior.draws import stacked_draws

TOPICS = ("bayesian-bootstrap", "fixed")


def hdi(samples: np.ndarray, prob: float = 0.95) -> tuple[float, float]:
    """Highest-density interval of ``samples`` holding ``prob`` of them (ArviZ's ``hdi``:
    the shortest interval between two samples that contains ``ceil(prob * n)`` of them).
    ArviZ 1.x names the mass ``prob``, ArviZ 0.x ``hdi_prob`` (and silently ignores an
    unknown keyword, so the name is chosen by ArviZ's major version, not by trying)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az

    mass = "prob" if int(az.__version__.split(".")[0]) >= 1 else "hdi_prob"
    lo, hi = az.hdi(np.asarray(samples, dtype=float).ravel(), **{mass: prob})
    return float(lo), float(hi)


@dataclass(frozen=True)
class Comparison:
    """Pairwise posterior comparison of runs (see the module docstring)."""

    pairs: pd.DataFrame
    best: pd.Series
    rope: float
    ci_prob: float
    topics: str = "bayesian-bootstrap"
    source: str = "user-model posterior"
    ties: float = 0.0
    decomposition: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: per run, the topics it lacks that another run has, scored 0 (trec_eval -c)
    missing_topics: dict = field(default_factory=dict)

    @property
    def uncertainty(self) -> str:
        """Which sources of uncertainty the intervals include."""
        parts = [self.source]
        if self.topics == "bayesian-bootstrap":
            parts.append("topic sampling (Bayesian bootstrap)")
        return " + ".join(parts)

    def to_pandas(self) -> pd.DataFrame:
        return self.pairs.copy()

    def to_csv(self) -> str:
        """CSV of the pairs; run names that a spreadsheet would execute as a formula
        (leading ``=``, ``+``, ``-``, ``@``) are prefixed with ``'``."""
        table = self.pairs.copy()
        for col in ("A", "B"):
            table[col] = [_csv_cell(v) for v in table[col]]
        return table.to_csv(index=False)

    def to_markdown(self) -> str:
        cols = list(self.pairs.columns)
        lines = ["| " + " | ".join(_markdown(c) for c in cols) + " |",
                 "|" + "|".join("---" for _ in cols) + "|"]
        for row in self.pairs.itertuples(index=False):
            lines.append("| " + " | ".join(_markdown(_fmt(v)) for v in row) + " |")
        lines.append("")
        lines.append(_markdown(f"Uncertainty: {self.uncertainty}; rope {self.rope:g}; "
                               f"HDI mass {self.ci_prob:g}."))
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        cols = list(self.pairs.columns)
        out = ["\\begin{tabular}{" + "l" * 2 + "r" * (len(cols) - 2) + "}", "\\hline",
               " & ".join(_latex(c) for c in cols) + " \\\\", "\\hline"]
        for row in self.pairs.itertuples(index=False):
            out.append(" & ".join(_latex(_fmt(v)) for v in row) + " \\\\")
        out += ["\\hline", "\\end{tabular}"]
        return "\n".join(out) + "\n"


def _fmt(v) -> str:
    return f"{v:.4f}" if isinstance(v, float | np.floating) else str(v)


def _markdown(text: str) -> str:
    """Escape what Markdown would read as markup (a ``|`` would end a table cell)."""
    out = str(text).replace("\\", "\\\\")
    for ch in "|`*_[]<>#":
        out = out.replace(ch, "\\" + ch)
    return out.replace("\n", " ")


_LATEX = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&",
          "#": r"\#", "^": r"\textasciicircum{}", "_": r"\_", "%": r"\%",
          "~": r"\textasciitilde{}", "<": r"\textless{}", ">": r"\textgreater{}",
          "|": r"\textbar{}"}


def _latex(text: str) -> str:
    """Escape every character LaTeX treats specially (run names reach the document as
    text, never as commands)."""
    return "".join(_LATEX.get(ch, ch) for ch in str(text).replace("\n", " "))


def _csv_cell(value) -> str:
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def topic_weights(n_samples: int, n_topics: int, seed=None) -> np.ndarray:
    """Bayesian-bootstrap weights: one Dirichlet(1, ..., 1) vector per sample."""
    return np.random.default_rng(seed).dirichlet(np.ones(n_topics), size=n_samples)


def _weighted_means(values: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """``(samples, runs, topics)`` -> ``(samples, runs)`` means over the topics a run has
    (NaN: the run lacks the topic), with ``weights (samples, topics)`` or equal weights."""
    present = ~np.isnan(values)
    w = np.ones(values.shape[::2]) if weights is None else weights
    w = w[:, None, :] * present
    total = w.sum(axis=-1)
    if np.any(total == 0):
        raise ParameterError("a run has no topic with a score")
    return np.nansum(np.where(present, values, 0.0) * w, axis=-1) / total


#: the most pairs one comparison makes (all pairs of 448 runs; use a reference run beyond)
MAX_PAIRS = 100_000


def missing_topics_score_zero(values: np.ndarray, names: list[str],
                               topics: list[str]) -> tuple[np.ndarray, dict[str, list[str]]]:
    """The topic-alignment rule of every comparison, trec_eval ``-c``'s: a topic a run
    lacks, when another run has it, scores 0 (an empty ranking's score under every
    measure here), so all means are over the same topics (a run missing the hard topics
    cannot look better by it).  ``values (samples, runs, topics)``; returns the filled
    values and, per run, the topics filled."""
    present = ~np.isnan(values).all(axis=0)                        # (runs, topics)
    partial = ~present.all(axis=0) & present.any(axis=0)
    if not partial.any():
        return values, {}
    filled = {n: [t for t, p, has in zip(topics, partial, row, strict=True) if p and not has]
              for n, row in zip(names, present, strict=True)}
    values = values.copy()
    lacking = partial[None, :] & ~present                          # (runs, topics)
    values[:, lacking] = 0.0
    return values, {n: f for n, f in filled.items() if f}


def compare(scores: xr.DataArray, reference: str | None = None, rope: float = 0.01,
            ci_prob: float = 0.95, *, topics: str = "bayesian-bootstrap",
            seed=None) -> Comparison:
    """Compare runs from posterior scores ``(chain, draw, run, topic)``.

    Parameters
    ----------
    reference : compare every run with this one only (default: all pairs)
    rope : half-width of the region of practical equivalence on the mean score
    ci_prob : mass of the highest-density interval of the difference
    topics : ``"bayesian-bootstrap"`` (default) pairs every posterior draw with its own
        Dirichlet topic weights, so the intervals hold user-model and topic-sampling
        uncertainty; ``"fixed"`` averages the topics as given (user model only).
    seed : seed of the topic weights
    """
    if set(scores.dims) != {"chain", "draw", "run", "topic"}:
        raise ParameterError(f"scores must have dims (chain, draw, run, topic); got "
                             f"{scores.dims}")
    if not rope >= 0:
        raise ParameterError("rope must be >= 0")
    if not 0 < ci_prob < 1:
        raise ParameterError("ci_prob must lie in (0, 1)")
    if topics not in TOPICS:
        raise ParameterError(f"topics must be one of {', '.join(TOPICS)}; got {topics!r}")
    if scores.sizes["topic"] == 1:
        topics = "fixed"          # one (population) score per run: nothing to resample
    names = sorted(str(r) for r in scores["run"].values)
    if len(names) < 2:
        raise ParameterError("compare needs at least two runs")
    if reference is not None and reference not in names:
        raise ParameterError(f"reference run {reference!r} is not among {names}")
    pairs = len(names) - 1 if reference is not None else len(names) * (len(names) - 1) // 2
    if pairs > MAX_PAIRS:
        raise ParameterError(
            f"{len(names):,} runs make {pairs:,} pairs, more than {MAX_PAIRS:,} (about 4 ms "
            f"each, as measured: {pairs * 0.004 / 3600:,.1f} hours); compare every run with "
            "one reference run instead (reference=, --reference RUN)")
    stacked = stacked_draws(scores).transpose("sample", "run", "topic")
    stacked = stacked.sel(run=names)
    values = stacked.values.astype(float)
    empty = [n for n, row in zip(names, np.isnan(values).all(axis=(0, 2)), strict=True) if row]
    if empty:
        raise ParameterError(f"run(s) {empty} have no score on any topic")
    values, filled = missing_topics_score_zero(values, names,
                                               [str(t) for t in stacked["topic"].values])
    weights = topic_weights(values.shape[0], values.shape[2], seed)
    user = _weighted_means(values, None)                                   # topics fixed
    combined = _weighted_means(values, weights)                            # both sources
    with warnings.catch_warnings():                   # a run without a topic: NaN, kept
        warnings.simplefilter("ignore", RuntimeWarning)
        posterior_mean = np.nanmean(values, axis=0, keepdims=True)
    topic_only = _weighted_means(np.broadcast_to(posterior_mean, values.shape), weights)
    means = combined if topics == "bayesian-bootstrap" else user
    rows, parts = [], []
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if a == b or (reference is not None and b != reference) or \
                    (reference is None and a > b):
                continue
            d = means[:, i] - means[:, j]
            lo, hi = hdi(d, ci_prob)
            rows.append({"A": a, "B": b, "mean_diff": float(d.mean()),
                         f"hdi_{ci_prob:g}_low": lo, f"hdi_{ci_prob:g}_high": hi,
                         "P(A>B)": float(np.mean(d > 0)),
                         "P(A<B)": float(np.mean(d < 0)),
                         "P(|A-B|<=rope)": float(np.mean(np.abs(d) <= rope)),
                         "P(A-B>rope)": float(np.mean(d > rope)),
                         "P(B-A>rope)": float(np.mean(d < -rope))})
            for label, source in (("user model (topics fixed)", user),
                                  ("topics (posterior-mean scores)", topic_only),
                                  ("user model + topics", combined)):
                ds = source[:, i] - source[:, j]
                lo_s, hi_s = hdi(ds, ci_prob)
                parts.append({"A": a, "B": b, "source": label, "sd": float(ds.std()),
                              "hdi_width": hi_s - lo_s})
    best, ties = _p_best(means, names)
    source = scores.attrs.get("uncertainty", "user-model posterior")
    if "documents_without_own_rate" in scores.attrs:     # per-document holding rates
        source += f" ({scores.attrs['documents_without_own_rate']})"
    return Comparison(pd.DataFrame(rows), best, float(rope), float(ci_prob), topics, source,
                      ties, pd.DataFrame(parts), filled)


def _p_best(means: np.ndarray, names: list[str]) -> tuple[pd.Series, float]:
    """Share of samples in which each run has the largest mean; ties split evenly."""
    top = means.max(axis=1, keepdims=True)
    winners = means == top
    k = winners.sum(axis=1, keepdims=True)
    best = pd.Series((winners / k).mean(axis=0), index=names, name="P(best)")
    return best, float(np.mean(k[:, 0] > 1))
