"""Evaluation measures: P@H and the classical measures as its instances.

``evaluate(measure, relevance, **context)`` runs a measure string such as ``"AP"``,
``"P@10"``, ``"RBP(p=0.8)"``, ``"nDCG@10"``, ``"ERR@20"`` or
``"PatH(model='rwbm', p=0.5, q=0.25, loss=0.25)"``.
"""

from . import builtin  # noqa: F401  (registration)
from .classical import (
                        average_precision,
                        discounted_cumulative_gain,
                        expected_reciprocal_rank,
                        normalized_dcg,
                        precision_at,
                        rank_biased_precision,
                        rank_biased_precision_finite,
)
from .dominance import Dominance, stochastic_dominance
from .eprum import (
                        discovered_distribution,
                        eprum_precision,
                        expected_inverse_search_length,
                        expected_minimum_length,
                        pointer_navigation,
                        seen_probabilities,
)
from .markov import markov_precision
from .path import PathDistribution, apply_gains, path_distribution, path_expectation
from .registry import MEASURES, Measure, MeasureSpec, evaluate, parse_measure, register_measure
from .search_length import (
                        convolve_search_lengths,
                        expected_search_length,
                        levels_from_run,
                        levels_from_scores,
                        search_length_distribution,
)
from .session import msm, msm_pseudocode, session_quantities

__all__ = [
    "MEASURES", "Dominance", "Measure", "MeasureSpec", "PathDistribution", "apply_gains",
    "average_precision", "discounted_cumulative_gain", "evaluate", "expected_reciprocal_rank",
    "markov_precision", "msm", "msm_pseudocode", "session_quantities",
    "convolve_search_lengths", "expected_search_length", "levels_from_run", "levels_from_scores",
    "search_length_distribution", "discovered_distribution", "eprum_precision",
    "expected_inverse_search_length", "expected_minimum_length", "pointer_navigation",
    "seen_probabilities",
    "normalized_dcg", "parse_measure", "path_distribution", "path_expectation", "precision_at",
    "rank_biased_precision", "rank_biased_precision_finite", "register_measure",
    "stochastic_dominance",
]
