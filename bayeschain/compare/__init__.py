"""Posterior scoring of runs and Bayesian comparison of systems."""

from .comparison import Comparison, compare, hdi
from .score import posterior_from_parameters, score, walk_parameters

__all__ = ["Comparison", "compare", "hdi", "posterior_from_parameters", "score",
           "walk_parameters"]
