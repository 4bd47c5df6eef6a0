"""Comparison of systems from posterior scores: probabilities, intervals, dominance, topics.

``compare(scores)`` (pairs of runs: difference, HDI, ROPE, P(best)), ``dominance_probability``
(laws of P@H), ``topic_model`` (topics as a sample of a population, PyMC).
"""

from .dominance import dominance_probability
from .summary import Comparison, compare, hdi
from .topics import topic_model

__all__ = ["Comparison", "compare", "dominance_probability", "hdi", "topic_model"]
