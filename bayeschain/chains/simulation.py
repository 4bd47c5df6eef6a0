"""Vectorised Monte-Carlo users walking an absorbing chain.

The simulator is the independent check of every exact solver: it knows nothing of
fundamental matrices, it just draws each user's next state from the row of the transition
matrix (stopping with the row's missing mass) until every user has stopped.  All users
advance together, one NumPy step per move, so 10^5 users on a 10-rank walk take a few
hundredths of a second.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import ChainError
from .blocks import as_block, start_vector

Gain = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SimulatedUsers:
    """What each simulated user did.

    Attributes
    ----------
    stopping_time : int array (U,)
        ``H``, the number of rank visits before stopping.
    reward : float array (U,)
        ``T(H) = sum_n g(k(n), rho[X_n])``, the accumulated gain.
    visits : int array (U, N)
        Visits of each user to each state.
    first_state : int array (U,)
        ``X_1`` (0-based).
    """

    stopping_time: np.ndarray
    reward: np.ndarray
    visits: np.ndarray
    first_state: np.ndarray

    def precision(self, effort: str | Callable[[np.ndarray], np.ndarray] = "h") -> np.ndarray:
        """Each user's ``P@H = T(H) / f(H)``."""
        from .recursion import effort_values

        return self.reward / effort_values(effort, self.stopping_time)


def geometric_loss_gain(loss: float) -> Gain:
    """``g(k, y) = y (1 - loss)^(k - 1)``: the k-th visit yields a shrinking share of ``y``."""
    if not 0.0 <= float(loss) <= 1.0:
        raise ChainError(f"utility loss must lie in [0, 1], got {loss!r}")
    keep = 1.0 - float(loss)

    def gain(k: np.ndarray, y: np.ndarray) -> np.ndarray:
        return y * keep ** (k - 1)

    return gain


def simulate_users(transient, n_users: int, *, rewards=None, start=0, gain: Gain | None = None,
                   loss: float | None = None, seed=None, max_steps: int = 1_000_000,
                   check: bool = True) -> SimulatedUsers:
    """Simulate ``n_users`` independent users of one absorbing chain.

    Parameters
    ----------
    transient : array (N, N) or Tridiagonal
        Transient block of one chain (no batch axes); ``1 - row sum`` is the stop probability.
    n_users : int
    rewards : array (N,), optional
        Per-state relevance ``y`` (default zeros).
    start : int or array (N,)
        0-based start state or start distribution.
    gain : callable ``g(k, y)``, optional
        Visit-dependent gain (vectorised; ``k`` is the 1-based visit count).  Default
        ``g(k, y) = y``, or the geometric loss when ``loss`` is given.
    seed : int or numpy Generator
    """
    block = as_block(transient, check=check)
    if block.batch_shape:
        raise ChainError("simulate_users takes one chain; loop over batch elements")
    if gain is not None and loss is not None:
        raise ChainError("give either gain or loss, not both")
    if loss is not None:
        gain = geometric_loss_gain(loss)
    n = block.n_states
    dense = np.asarray(block.to_dense(), dtype=float)
    cum = np.cumsum(dense, axis=1)
    y = np.zeros(n) if rewards is None else np.asarray(rewards, dtype=float)
    if y.shape != (n,):
        raise ChainError(f"rewards must have shape ({n},), got {y.shape}")
    rng = np.random.default_rng(seed)
    u = int(n_users)
    p0 = start_vector(start, n)
    state = rng.choice(n, size=u, p=p0) if np.ndim(start) else np.full(u, int(start))
    first = state.copy()
    visits = np.zeros((u, n), dtype=np.int64)
    reward = np.zeros(u)
    h = np.zeros(u, dtype=np.int64)
    alive = np.arange(u)
    for _ in range(max_steps):
        s = state[alive]
        visits[alive, s] += 1
        k = visits[alive, s]
        reward[alive] += y[s] if gain is None else gain(k, y[s])
        h[alive] += 1
        draw = rng.random(alive.size)
        nxt = np.sum(cum[s] <= draw[:, None], axis=1)  # == n means the user stops
        go_on = nxt < n
        state[alive[go_on]] = nxt[go_on]
        alive = alive[go_on]
        if alive.size == 0:
            break
    else:
        raise ChainError(f"some users were still browsing after {max_steps} steps")
    return SimulatedUsers(stopping_time=h, reward=reward, visits=visits, first_state=first)
