r"""Exact moments and distributions of absorbing chains (the stopping-time measures).

Notation (Ferrante & Ferro, ICTIR 2020, Electronic Appendix B): ``P~`` is the transient
block (transitions between ranks), ``N = (I - P~)^{-1}`` the fundamental matrix, ``rho``
the per-state reward (gain) and ``e`` the vector of ones.  The user starts in state
``X_1`` (``start``), collects ``rho[X_n]`` at each visit and stops after ``H`` visits;
``T(H) = sum_{n<=H} rho[X_n]``.

* expected visits          ``v = e_s^T N``                                   (row of N)
* expected reward          ``E_i[T(H)] = (N rho)_i``                         (Appendix B, Eq. 1)
* second moment            ``E_i[T(H)^2] = (N (rho * (2 N rho - rho)))_i``
* stopping time            ``E_i[H] = (N e)_i``,  ``P_i(H = n) = (P~^{n-1} (I - P~) e)_i``
* hitting / return         ``h_ij = N_ij / N_jj`` (``i != j``), ``f_jj = 1 - 1 / N_jj``
* geometric utility loss   ``E_s[sum g(k(n), rho[X_n])] = sum_j rho_j h_sj / (1 - (1-lambda) f_jj)``

States are 0-based array positions; state ``i`` is rank ``i + 1``.  Every function is
batched over the leading axes of the block, the rewards and the start distribution, which
broadcast against each other.  Rewards and starts are checked
(:func:`~bayeschain.chains.blocks.state_values`: finite numbers, one per state, batch axes
that broadcast), and a result that overflows (rewards near the largest float) is a
:class:`~bayeschain.errors.ChainError`, never ``inf`` or NaN.
"""

from __future__ import annotations

import numpy as np

from ..errors import ChainError
from .blocks import as_block, start_vector, state_values
from .checks import MAX_STEPS, check_memory, float_array, plain


def _finite(values, what: str):
    """``values``, or a ChainError when they overflowed (rewards near the largest float, or
    a chain that never stops passed with ``check=False``)."""
    if not np.all(np.isfinite(values)):
        raise ChainError(f"{what} is not finite: the rewards are too large for this chain "
                         f"(beyond {np.finfo(float).max:.3g}), or the chain never stops "
                         f"(run with check=True to have its closed class named)")
    return values


def _start_weighted(values: np.ndarray, start) -> np.ndarray:
    """Average per-state values over the start distribution (or pick the start state)."""
    if start is None:
        return values
    # validates the index or the distribution (and its batch axes against the values')
    s = start_vector(start, values.shape[-1], values.shape[:-1])
    if isinstance(start, int | np.integer):
        return values[..., int(start)]
    return np.einsum("...i,...i->...", s, values)


def expected_visits(transient, start=0, *, check: bool = True) -> np.ndarray:
    """Expected number of visits to each state before absorption, ``v = e_s^T (I - P~)^-1``.

    Parameters
    ----------
    transient : array (..., N, N) or Tridiagonal
        Transient block.
    start : int or array (..., N)
        0-based start state, or a start distribution.

    Returns
    -------
    array (..., N)
        ``v[..., j]`` = expected visits to state ``j``.  For static browsing models this
        vector does not depend on the run, and ``E[T(H)] = v @ rho`` for every run.
    """
    block = as_block(transient, check=check)
    s = start_vector(start, block.n_states, block.batch_shape)
    check_memory(np.broadcast_shapes(s.shape[:-1], block.batch_shape) + (block.n_states,),
                 "expected_visits")
    with np.errstate(all="ignore"):
        return _finite(block.transpose().solve(s), "expected_visits")


def expected_reward(transient, rewards, start=0, *, check: bool = True) -> np.ndarray:
    """Expected accumulated reward ``E[T(H)] = e_s^T (I - P~)^-1 rho`` (Appendix B, Eq. 1).

    Parameters
    ----------
    transient : array (..., N, N) or Tridiagonal
    rewards : array (..., N)
        Reward collected at each visit of a state (the gain ``g(r[i])``).
    start : int, array (..., N) or None
        Start state or distribution; ``None`` returns the vector over all start states.
    """
    block = as_block(transient, check=check)
    with np.errstate(all="ignore"):
        m = block.solve(state_values(rewards, "rewards", block))
        return _finite(_start_weighted(m, start), "expected_reward")


def reward_variance(transient, rewards, start=0, *, check: bool = True) -> np.ndarray:
    r"""Variance of the accumulated reward ``Var[T(H)]``.

    First-step analysis gives ``E_i[T^2] = rho_i^2 + 2 rho_i (P~ m)_i + (P~ E[T^2])_i``
    with ``m = N rho``; since ``P~ m = m - rho``,

    ``E[T^2] = N (rho * (2 m - rho))`` and ``Var[T] = E[T^2] - m^2``.

    The Electronic Appendix B prints ``V = (I - P~)^-1 R [I - 2 P~ (I - P~)^-1] rho``; that
    expression is not the variance (it can be negative, e.g. for any chain with
    ``E[H] > 3/2`` and ``rho = e``).  Simulation agrees with the formula used here, which is
    ``N R [I + 2 P~ N] rho - m * m``: the printed one has a minus sign for a plus and omits
    the ``- m * m`` term (see ``tests/chains/test_appendix.py``).
    """
    block = as_block(transient, check=check)
    rho = state_values(rewards, "rewards", block)
    with np.errstate(all="ignore"):
        m = block.solve(rho)
        second = block.solve(rho * (2.0 * m - rho))
        if start is None:
            return _finite(second - m * m, "reward_variance")
        mean = _start_weighted(m, start)
        return _finite(_start_weighted(second, start) - mean**2, "reward_variance")


def expected_stopping_time(transient, start=0, *, check: bool = True) -> np.ndarray:
    """Expected number of visited ranks ``E[H] = e_s^T (I - P~)^-1 e`` (Appendix B, Eq. 2)."""
    block = as_block(transient, check=check)
    return expected_reward(block, np.ones(block.n_states), start, check=False)


def stopping_time_variance(transient, start=0, *, check: bool = True) -> np.ndarray:
    """Variance of the stopping time ``Var[H] = ((2N - I) N e - (N e)^2)_s``.

    This is :func:`reward_variance` with ``rho = e``; the printed Appendix-B formula
    ``V = (I - P~)^-1 [I - 2 P~ (I - P~)^-1] e`` is wrong in the same way.
    """
    block = as_block(transient, check=check)
    return reward_variance(block, np.ones(block.n_states), start, check=False)


def exit_probabilities(transient, *, check: bool = True) -> np.ndarray:
    """Probability of stopping from each state, ``s = (I - P~) e = 1 - row sums``."""
    block = as_block(transient, check=check)
    return np.clip(1.0 - block.row_sums(), 0.0, None)


def stopping_time_pmf(transient, n_max: int, start=0, *, check: bool = True) -> np.ndarray:
    """``P(H = n)`` for ``n = 1..n_max``: ``e_s^T P~^{n-1} (I - P~) e`` (Appendix B).

    Returns an array ``(..., n_max)`` whose entry ``n - 1`` is ``P(H = n)``.  The mass
    beyond ``n_max`` is ``1 - sum``; the pmf is computed by propagating the start
    distribution forward (a vector-matrix product per step; O(N) per step for walks),
    and stops early once every user has stopped (the rest is 0).  ``n_max`` is an integer
    from 1 to :data:`~bayeschain.chains.checks.MAX_STEPS` (10^6), and the result must fit
    the memory limit of :func:`~bayeschain.chains.checks.check_memory`.
    """
    if not isinstance(n_max, int | np.integer) or isinstance(n_max, bool) or \
            not 1 <= n_max <= MAX_STEPS:
        raise ChainError(f"n_max must be an integer from 1 to {MAX_STEPS:,} (the limit on "
                         f"steps); got {plain(n_max)}")
    n_max = int(n_max)
    block = as_block(transient, check=check)
    exit_p = np.clip(1.0 - block.row_sums(), 0.0, None)
    s = start_vector(start, block.n_states, block.batch_shape)
    shape = np.broadcast_shapes(s.shape, exit_p.shape)
    check_memory(shape[:-1] + (n_max,), "stopping_time_pmf")
    a = np.broadcast_to(s, shape).astype(float)
    out = np.zeros(shape[:-1] + (n_max,))
    for n in range(n_max):
        out[..., n] = np.einsum("...i,...i->...", a, exit_p)
        a = block.rmatvec(a)
        if not np.any(a):              # every user has stopped: the rest of the pmf is 0
            break
    return out


def fundamental_matrix(transient, *, check: bool = True) -> np.ndarray:
    """The fundamental matrix ``N = (I - P~)^-1``, ``N_ij`` = expected visits to j from i.

    Dense output (N x N per chain); prefer the vector functions when only one start state
    matters.
    """
    with np.errstate(all="ignore"):
        return _finite(as_block(transient, check=check).inverse(), "fundamental_matrix")


def hitting_probabilities(transient, *, check: bool = True) -> np.ndarray:
    """``h_ij = P_i(the chain ever visits j)`` (time 0 included, so ``h_ii = 1``).

    From the fundamental matrix: ``N_ij = h_ij N_jj`` (strong Markov property at the first
    visit to ``j``), so ``h_ij = N_ij / N_jj``.
    """
    inv = fundamental_matrix(transient, check=check)
    diag = np.diagonal(inv, axis1=-2, axis2=-1)
    return inv / diag[..., None, :]


def return_probabilities(transient, *, check: bool = True) -> np.ndarray:
    """``f_jj = P_j(the chain comes back to j)``, from ``N_jj = 1 / (1 - f_jj)``.

    Computed from the diagonal of ``(I - P~)^-1`` only: O(N) per chain for walks.
    """
    block = as_block(transient, check=check)
    with np.errstate(all="ignore"):
        return _finite(1.0 - 1.0 / block.inverse_diagonal(), "return_probabilities")


def geometric_loss_reward(transient, rewards, loss: float, start=0, *,
                          check: bool = True) -> np.ndarray:
    r"""Expected reward under the geometric document-utility loss ``g(k, y) = y (1-λ)^(k-1)``.

    The user gains ``y (1 - lambda)^(k-1)`` on the k-th visit of a document of gain ``y``.
    Visits to ``j`` from ``s`` number at least ``k`` with probability ``h_sj f_jj^(k-1)``,
    so the expected gain from state ``j`` is

    ``rho_j h_sj / (1 - (1 - lambda) f_jj) = rho_j N_sj / (1 + lambda (N_jj - 1))``,

    the second form using ``h_sj = N_sj / N_jj`` and ``f_jj = 1 - 1/N_jj``.  It needs one
    row of ``N`` and its diagonal: O(N) per chain for walks.
    """
    lam = float_array(loss, "utility loss lambda", finite=False)
    if np.any(~np.isfinite(lam)) or np.any((lam < 0) | (lam > 1)):
        raise ChainError(f"utility loss lambda must lie in [0, 1], got {plain(loss)}")
    block = as_block(transient, check=check)
    try:
        np.broadcast_shapes(lam.shape, block.batch_shape)
    except ValueError:
        raise ChainError(f"utility loss lambda has shape {lam.shape}, which does not broadcast "
                         f"against the batch axes {block.batch_shape}") from None
    rho = state_values(rewards, "rewards", block)
    start_p = start_vector(start, block.n_states, block.batch_shape)
    with np.errstate(all="ignore"):
        visits = block.transpose().solve(start_p)
        diag = block.inverse_diagonal()
        return _finite(np.sum(rho * visits / (1.0 + lam[..., None] * (diag - 1.0)), axis=-1),
                       "geometric_loss_reward")
