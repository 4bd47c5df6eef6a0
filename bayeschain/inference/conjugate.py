r"""Exact conjugate posteriors: Dirichlet for transitions, Gamma for exponential dwell rates.

* Transitions after a click on rank ``i``: counts ``n_ic`` over the categories are
  multinomial, and a ``Dirichlet(alpha)`` prior gives the posterior
  ``Dirichlet(alpha + n_i)`` (per rank), or ``Dirichlet(alpha + sum_i n_i)`` when the
  probabilities are shared by all ranks.
* Dwell times after a click on rank ``i`` are exponential with rate ``mu_i``; with
  ``m_i`` observed times summing to ``S_i`` and a ``Gamma(a, b)`` prior (shape, rate) the
  posterior is ``Gamma(a + m_i, b + S_i)``.  Right-censored times with no known lower
  bound leave it unchanged.

Under the limiting prior ``a, b -> 0`` the posterior is ``Gamma(m, S)``, whose mode
``(m - 1) / S = (m - 1) / (m * mean)`` is the estimator of Ferrante, Ferro & Maistro
(SIGIR 2014, Section 5.5): their "inverse of the sample mean multiplied by (n - 1)/n".

Draws are exact and independent: ``chains x draws`` samples straight from the posterior,
in milliseconds whatever the size of the log (the statistics are already aggregated).
"""

from __future__ import annotations

import numpy as np

from .data import ModelData


def dirichlet_parameters(data: ModelData, prior, shared: bool) -> np.ndarray:
    """Posterior Dirichlet concentration, ``(ranks, categories)`` or ``(categories,)``.

    Per rank, rank 1's ``backward`` concentration is 0: nothing lies above rank 1, so that
    probability is a structural zero (its draws are exactly 0).
    """
    alpha = np.asarray(prior, dtype=float)
    if shared:
        return alpha + data.transitions.sum(axis=0)
    post = np.broadcast_to(alpha, data.transitions.shape) + data.transitions
    if "backward" in data.categories:
        post = post.copy()
        post[0, list(data.categories).index("backward")] = 0.0
    return post


def gamma_parameters(data: ModelData, prior, shared: bool) -> tuple[np.ndarray, np.ndarray]:
    """Posterior Gamma ``(shape, rate)`` of the dwell rates, per rank or shared."""
    a, b = (float(x) for x in prior)
    n = data.dwell_n.sum() if shared else data.dwell_n
    s = data.dwell_sum.sum() if shared else data.dwell_sum
    return a + n, b + s


def sample_dirichlet(concentration: np.ndarray, chains: int, draws: int, rng) -> np.ndarray:
    """``(chains, draws, ..., categories)`` exact draws (normalised Gamma variates)."""
    g = rng.standard_gamma(concentration, size=(chains, draws) + concentration.shape)
    return g / g.sum(axis=-1, keepdims=True)


def sample_gamma(shape, rate, chains: int, draws: int, rng) -> np.ndarray:
    shape, rate = np.broadcast_arrays(np.asarray(shape, float), np.asarray(rate, float))
    return rng.standard_gamma(shape, size=(chains, draws) + shape.shape) / rate
