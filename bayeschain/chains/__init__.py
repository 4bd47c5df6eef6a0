"""Exact solvers for Markov chains over ranks (NumPy/SciPy only, batched).

Every function takes leading batch axes (posterior draws, run-topics) before the state
axes.  Transient blocks are dense ``(..., N, N)`` arrays or :class:`Tridiagonal` bands;
dense arrays that are tridiagonal are solved on the O(N) path automatically.
"""

from ..lazy import lazy_names

#: where each public name lives: imported on first use (PEP 562), so that importing one
#: module of the package (``chains.checks``, which readers of large files call from
#: worker threads) does not import every solver; two threads importing the package from
#: different modules at once met Python's import-lock deadlock detection
#: (``_DeadlockError`` on ``bayeschain.chains.checks`` in ``bayeschain eval``)
_PUBLIC = {
    "Tridiagonal": ".tridiagonal",
    "as_block": ".blocks",
    "censored_chain": ".stationary",
    "continuous_time_weights": ".stationary",
    "effort_values": ".recursion",
    "exit_probabilities": ".absorbing",
    "expected_ratio": ".recursion",
    "expected_reward": ".absorbing",
    "expected_stopping_time": ".absorbing",
    "expected_visits": ".absorbing",
    "forward_passage_times": ".passage",
    "fundamental_matrix": ".absorbing",
    "geometric_loss_reward": ".absorbing",
    "hitting_probabilities": ".absorbing",
    "invariant_distribution": ".stationary",
    "joint_distribution": ".recursion",
    "ratio_distribution": ".recursion",
    "ratio_weights": ".recursion",
    "return_probabilities": ".absorbing",
    "reward_variance": ".absorbing",
    "stopping_time_pmf": ".absorbing",
    "stopping_time_variance": ".absorbing",
}

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


__getattr__, __dir__ = lazy_names(__name__, _PUBLIC, globals())
