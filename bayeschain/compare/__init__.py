"""Posterior scoring of runs and Bayesian comparison of systems."""

from ..inference.parameters import session_parameters, walk_parameters
from .comparison import Comparison, compare, dominance_probability, hdi
from .score import path_cdf_bands, posterior_from_parameters, score, score_sessions
from .topics import topic_model

__all__ = ["Comparison", "compare", "dominance_probability", "hdi", "path_cdf_bands",
           "posterior_from_parameters", "score", "score_sessions", "session_parameters",
           "topic_model", "walk_parameters"]
