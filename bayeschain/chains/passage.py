r"""Expected first-passage times of a birth-death chain (forward/backward walk, no stopping).

For a walk on ranks ``0..N-1`` that moves forward with ``p_k`` and backward with
``1 - p_k`` (``p_0 = 1``: rank 0 has no backward move), the expected number of steps to go
from rank ``k`` to ``k + 1`` satisfies first-step analysis

``tau_k = p_k * 1 + (1 - p_k) (1 + tau_{k-1} + tau_k)``, i.e.
``tau_k = (1 + (1 - p_k) tau_{k-1}) / p_k``,

and the time from rank 0 to rank ``i`` is ``e_i = tau_0 + ... + tau_{i-1}``: an O(N)
recursion instead of one dense solve per prefix (MsM's ``e(i)``, ECIR 2019 Algorithm 1).
"""

from __future__ import annotations

import numpy as np

from ..errors import ChainError
from .checks import float_array


def forward_passage_times(forward) -> np.ndarray:
    """``e[..., i]``: expected steps from state 0 to state ``i`` (``e[..., 0] = 0``).

    Parameters
    ----------
    forward : array (..., N)
        Probability of moving forward from each state; the rest moves backward.
        ``forward[..., 0]`` must be 1 and ``forward[..., :N-1]`` positive;
        ``forward[..., N-1]`` is not used.
    """
    p = float_array(forward, "forward probabilities", finite=False)
    if p.ndim == 0 or p.shape[-1] < 1:
        raise ChainError("forward_passage_times needs at least one state")
    inner = p[..., :-1]
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ChainError("forward probabilities must lie in [0, 1]")
    if inner.size and np.any(inner <= 0):
        raise ChainError("a state before the last has no forward move: later states are "
                         "never reached (infinite passage time)")
    if inner.size and np.any(inner[..., 0] != 1):
        raise ChainError("the first state has no backward move: forward[..., 0] must be 1")
    tau = np.zeros(p.shape)
    prev = np.zeros(p.shape[:-1])
    for k in range(p.shape[-1] - 1):
        prev = (1.0 + (1.0 - p[..., k]) * prev) / p[..., k]
        tau[..., k + 1] = prev
    return np.cumsum(tau, axis=-1)
