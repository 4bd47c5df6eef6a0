"""Exact solvers for Markov chains over ranks (NumPy/SciPy only, batched).

Every function takes leading batch axes (posterior draws, run-topics) before the state
axes.  Transient blocks are dense ``(..., N, N)`` arrays or :class:`Tridiagonal` bands;
dense arrays that are tridiagonal are solved on the O(N) path automatically.
"""

from .absorbing import (
    exit_probabilities,
    expected_reward,
    expected_stopping_time,
    expected_visits,
    fundamental_matrix,
    geometric_loss_reward,
    hitting_probabilities,
    return_probabilities,
    reward_variance,
    stopping_time_pmf,
    stopping_time_variance,
)
from .blocks import as_block
from .passage import forward_passage_times
from .recursion import (
    effort_values,
    expected_ratio,
    joint_distribution,
    ratio_distribution,
    ratio_weights,
)
from .stationary import censored_chain, continuous_time_weights, invariant_distribution
from .tridiagonal import Tridiagonal

__all__ = [
    "Tridiagonal",
    "as_block",
    "censored_chain",
    "continuous_time_weights",
    "effort_values",
    "exit_probabilities",
    "expected_ratio",
    "expected_reward",
    "expected_stopping_time",
    "expected_visits",
    "forward_passage_times",
    "fundamental_matrix",
    "geometric_loss_reward",
    "hitting_probabilities",
    "invariant_distribution",
    "joint_distribution",
    "ratio_distribution",
    "ratio_weights",
    "return_probabilities",
    "reward_variance",
    "stopping_time_pmf",
    "stopping_time_variance",
]
