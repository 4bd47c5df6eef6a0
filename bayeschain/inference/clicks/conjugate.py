"""Exact draws from the conjugate posteriors of the spec sections
(:mod:`bayeschain.inference.sections`): Dirichlet rows and Gamma rates.

Draws are exact and independent: ``chains x draws`` samples straight from the posterior,
in milliseconds whatever the size of the log (the statistics are already aggregated).
"""

from __future__ import annotations

import numpy as np


def sample_dirichlet(concentration: np.ndarray, chains: int, draws: int, rng) -> np.ndarray:
    """``(chains, draws, ..., categories)`` exact draws (normalised Gamma variates); a
    concentration of 0 draws exactly 0 (a structural zero)."""
    g = rng.standard_gamma(concentration, size=(chains, draws) + concentration.shape)
    return g / g.sum(axis=-1, keepdims=True)


def sample_gamma(shape, rate, chains: int, draws: int, rng) -> np.ndarray:
    """``(chains, draws, ...)`` exact draws of ``Gamma(shape, rate)``."""
    shape, rate = np.broadcast_arrays(np.asarray(shape, float), np.asarray(rate, float))
    return rng.standard_gamma(shape, size=(chains, draws) + shape.shape) / rate
