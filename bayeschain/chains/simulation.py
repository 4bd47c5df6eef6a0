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
from .checks import MAX_WORK, check_memory, float_array, plain

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
    value = float_array(loss, "utility loss", ndim=0, finite=False)
    if not 0.0 <= float(value) <= 1.0:
        raise ChainError(f"utility loss must lie in [0, 1], got {plain(loss)}")
    keep = 1.0 - float(value)

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
    if isinstance(n_users, bool) or not isinstance(n_users, int | np.integer) or n_users < 1:
        raise ChainError(f"n_users must be a positive integer; got {plain(n_users)}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer) \
            or max_steps < 1:
        raise ChainError(f"max_steps must be a positive integer; got {plain(max_steps)}")
    if loss is not None:
        gain = geometric_loss_gain(loss)
    n = block.n_states
    y = np.zeros(n) if rewards is None else float_array(rewards, "rewards", last=n, ndim=1)
    u = int(n_users)
    p0 = start_vector(start, n)
    _check_budget(block, p0, u, int(max_steps))
    dense = np.asarray(block.to_dense(), dtype=float)
    cum = np.cumsum(dense, axis=1)
    rng = _generator(seed)
    state = rng.choice(n, size=u, p=p0 / p0.sum()) if np.ndim(start) else \
        np.full(u, int(start))
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


def _generator(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator | np.random.SeedSequence | np.random.BitGenerator):
        return np.random.default_rng(seed)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)
                             or seed < 0):
        raise ChainError(f"seed must be a non-negative integer, a numpy Generator or None; "
                         f"got {plain(seed)}")
    return np.random.default_rng(seed)


def _check_budget(block, start: np.ndarray, users: int, max_steps: int) -> None:
    """Refuse a simulation that cannot fit or finish, before drawing anything.

    Memory: the visit counts (users x states) and one step's comparison table.  Time: the
    expected work is ``users x E[H] x states``.  Steps: ``E[H] = sum_n P(H > n)`` and
    ``E[(H - n)^+] <= max_j E_j[H] P(H > n)`` give
    ``P(H > max_steps) >= (E[H] - max_steps - 1) / max_j E_j[H]``; when ``users`` times that
    is above 40, some user is still browsing after ``max_steps`` steps with probability
    above ``1 - e^-40``.
    """
    n = block.n_states
    check_memory((users, n), f"simulating {users:,} users on {n:,} states")
    with np.errstate(all="ignore"):
        k = block.solve(np.ones(n))
    if not np.all(np.isfinite(k)):
        raise ChainError("the chain never stops from some state (I - P~ is singular)")
    mean_h = float(start @ k)
    work = users * mean_h * n
    if work > MAX_WORK:
        raise ChainError(f"simulating {users:,} users of a chain with {n:,} states and expected "
                         f"stopping time {mean_h:.3g} takes about {work:.3g} state-steps; the "
                         f"limit is {MAX_WORK:.3g}: simulate fewer users")
    alive = (mean_h - max_steps - 1) / float(k.max())
    if users * alive > 40:
        raise ChainError(f"the users of this chain browse {mean_h:.3g} ranks on average: "
                         f"some would still be browsing after max_steps={max_steps:,} steps")
