r"""Posterior predictive checks and held-out likelihood of a fitted posterior.

* :func:`predictive_backward_share`: for each posterior draw, replicate the transition
  counts of every rank (``Multinomial(N_i, theta_i)`` with the observed ``N_i``) and take
  the share of backward moves among click-to-click moves; compare with the observed share
  (posterior predictive p-value).
* :func:`predictive_dwell_means`: replicated mean dwell per rank under the exponential
  rates, against the observed means.

Held-out click prediction (the click-model field's log-likelihood and perplexity) is
:mod:`~bayeschain.inference.walk.prediction`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...posterior.draws import stacked_draws
from .data import ModelData


@dataclass(frozen=True)
class PredictiveCheck:
    """Observed statistic, its replicated draws, and the posterior predictive p-value."""

    observed: float
    replicated: np.ndarray

    @property
    def p_value(self) -> float:
        """``P(replicated >= observed)`` under the posterior predictive."""
        return float(np.mean(self.replicated >= self.observed))

    def interval(self, prob: float = 0.95) -> tuple[float, float]:
        lo, hi = np.quantile(self.replicated, [(1 - prob) / 2, 1 - (1 - prob) / 2])
        return float(lo), float(hi)


def predictive_backward_share(posterior, data: ModelData, *, seed=None) -> PredictiveCheck:
    theta = stacked_draws(posterior.transition_probabilities()).transpose(
        "sample", "rank", "category").values
    cats = list(data.categories)
    fwd, bwd = cats.index("forward"), cats.index("backward")
    totals = data.transitions.sum(axis=1).astype(np.int64)
    rng = np.random.default_rng(seed)
    rep = np.stack([rng.multinomial(totals[i], theta[:, i, :]) for i in range(data.ranks)],
                   axis=1)                                   # (draws, ranks, categories)
    moves = rep[..., fwd].sum(axis=1) + rep[..., bwd].sum(axis=1)
    share = np.divide(rep[..., bwd].sum(axis=1), moves, out=np.zeros(moves.shape),
                      where=moves > 0)
    obs_moves = data.transitions[:, [fwd, bwd]].sum()
    observed = data.transitions[:, bwd].sum() / obs_moves if obs_moves else np.nan
    return PredictiveCheck(float(observed), share)


def predictive_dwell_means(posterior, data: ModelData, *, seed=None) -> list[PredictiveCheck]:
    mu = stacked_draws(posterior.holding_rates()).transpose("sample", "rank").values
    rng = np.random.default_rng(seed)
    checks = []
    for i in range(data.ranks):
        n = int(data.dwell_n[i])
        if n == 0:
            continue
        # the mean of n exponential(mu) times is Gamma(n, n mu)
        rep = rng.standard_gamma(n, size=mu.shape[0]) / (n * mu[:, i])
        checks.append(PredictiveCheck(float(data.dwell_sum[i] / n), rep))
    return checks
