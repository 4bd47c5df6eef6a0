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
broadcast against each other.
"""

from __future__ import annotations

import numpy as np

from ..errors import ChainError
from .blocks import as_block, start_vector


def _start_weighted(values: np.ndarray, start) -> np.ndarray:
    """Average per-state values over the start distribution (or pick the start state)."""
    if start is None:
        return values
    s = start_vector(start, values.shape[-1])  # validates the index or the distribution
    if np.ndim(start) == 0:
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
    s = start_vector(start, block.n_states)
    return block.transpose().solve(s)


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
    m = block.solve(np.asarray(rewards, dtype=float))
    return _start_weighted(m, start)


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
    rho = np.asarray(rewards, dtype=float)
    m = block.solve(rho)
    second = block.solve(rho * (2.0 * m - rho))
    if start is None:
        return second - m * m
    mean = _start_weighted(m, start)
    return _start_weighted(second, start) - mean**2


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
    distribution forward (a vector-matrix product per step; O(N) per step for walks).
    """
    if int(n_max) < 1:
        raise ChainError(f"n_max must be a positive integer, got {n_max!r}")
    block = as_block(transient, check=check)
    exit_p = np.clip(1.0 - block.row_sums(), 0.0, None)
    a = np.broadcast_to(start_vector(start, block.n_states),
                        block.batch_shape + (block.n_states,)).astype(float)
    out = np.empty(np.broadcast_shapes(a.shape, exit_p.shape)[:-1] + (int(n_max),))
    for n in range(int(n_max)):
        out[..., n] = np.einsum("...i,...i->...", a, exit_p)
        a = block.rmatvec(a)
    return out


def fundamental_matrix(transient, *, check: bool = True) -> np.ndarray:
    """The fundamental matrix ``N = (I - P~)^-1``, ``N_ij`` = expected visits to j from i.

    Dense output (N x N per chain); prefer the vector functions when only one start state
    matters.
    """
    return as_block(transient, check=check).inverse()


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
    return 1.0 - 1.0 / block.inverse_diagonal()


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
    lam = np.asarray(loss, dtype=float)
    if np.any(~np.isfinite(lam)) or np.any((lam < 0) | (lam > 1)):
        raise ChainError(f"utility loss lambda must lie in [0, 1], got {loss!r}")
    block = as_block(transient, check=check)
    visits = block.transpose().solve(start_vector(start, block.n_states))
    diag = block.inverse_diagonal()
    rho = np.asarray(rewards, dtype=float)
    return np.sum(rho * visits / (1.0 + lam[..., None] * (diag - 1.0)), axis=-1)
