r"""Closed forms printed in the Electronic Appendix of Ferrante & Ferro (ICTIR 2020).

These are the paper's explicit formulas for constant-parameter forward walks (SFBM,
``p_i = p``) and random walks (RWBM, ``p_i = p``, ``q_i = q``), plus the closed form of the
law of ``T(H)`` for binary rewards.  Each is checked in ``tests/chains/test_appendix.py``
against the general solvers and against Monte-Carlo simulation; where the printed formula
is wrong the docstring says so and the function implements the verified one.

State conventions are those of the paper's Section 3 matrix: the SFBM user at rank ``i < N``
moves on with probability ``p`` and stops otherwise, and stops at rank ``N``.
"""

from __future__ import annotations

import numpy as np

from ..errors import ChainError
from .blocks import as_block, start_vector, state_values
from .checks import MAX_STEPS, check_memory, float_array, plain


def _check_p(p, name: str = "p") -> np.ndarray:
    p = float_array(p, name, finite=False)
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ChainError(f"{name} must lie in [0, 1], got {plain(p)}")
    return p


def _rewards(rewards, p: np.ndarray) -> np.ndarray:
    """Rewards ``(..., N)`` whose leading axes broadcast against those of ``p``."""
    r = float_array(rewards, "rewards", ndim=tuple(range(1, 33)))
    if r.shape[-1] == 0:
        raise ChainError("rewards must cover at least one rank")
    try:
        shape = np.broadcast_shapes(r.shape[:-1], p.shape)
    except ValueError:
        raise ChainError(f"rewards of shape {r.shape} do not broadcast against p of shape "
                         f"{p.shape} (leading axes)") from None
    check_memory(shape + r.shape[-1:], "the rewards over the batch of p")
    return r


def sfbm_expected_reward(rewards, p) -> np.ndarray:
    """``E_1[T(H)] = sum_i r[i] p^(i-1)`` for the SFBM with constant ``p`` (Appendix B)."""
    p = _check_p(p)
    r = _rewards(rewards, p)
    powers = p[..., None] ** np.arange(r.shape[-1])
    return np.sum(r * powers, axis=-1)


def sfbm_reward_variance(rewards, p) -> np.ndarray:
    r"""``Var_1[T(H)]`` for the SFBM with constant ``p`` (Appendix B; verified as printed).

    ``sum_{m=2}^N r[m] p^(m-1) (1 - p^(m-1)) [r[m] + 2 sum_{i>m} r[i] p^(i-m)]``.
    It follows from ``T = sum_i r[i] 1{H >= i}``, ``P(H >= i) = p^(i-1)`` and
    ``Cov(1{H>=m}, 1{H>=i}) = p^(i-1) (1 - p^(m-1))`` for ``m < i``.
    """
    p = _check_p(p)
    r = _rewards(rewards, p)
    p = p[..., None]
    n = r.shape[-1]
    k = np.arange(n)  # m - 1
    pm = p**k
    # tail[m] = sum_{i > m} r[i] p^(i - m)
    tail = np.zeros(np.broadcast_shapes(r.shape, pm.shape))
    for m in range(n - 2, -1, -1):
        tail[..., m] = p[..., 0] * (r[..., m + 1] + tail[..., m + 1])
    return np.sum(r * pm * (1 - pm) * (r + 2 * tail), axis=-1)


def sfbm_expected_precision(rewards, p) -> np.ndarray:
    r"""``E[P@H]`` (order <=1, ``f(h) = h``) for the SFBM with constant ``p`` (Appendix A).

    ``sum_{h=1}^{N-1} p^(h-1) (1-p) (1/h) sum_{i<=h} r[i] + p^(N-1) (1/N) sum_{i<=N} r[i]``.

    The appendix prints ``p^N`` in the last term; the user reaches rank ``N`` with
    probability ``p^(N-1)`` and then stops, so the exponent is ``N - 1`` (the printed
    version does not sum to a probability: with ``r = e`` it gives ``1 - p^(N-1) + p^N``
    instead of 1).  Simulation agrees with ``N - 1``.
    """
    p = _check_p(p)
    r = _rewards(rewards, p)
    p = p[..., None]
    n = r.shape[-1]
    h = np.arange(1, n + 1)
    stop = p ** (h - 1) * np.where(h < n, 1 - p, 1.0)
    return np.sum(stop * np.cumsum(r, axis=-1) / h, axis=-1)


def rw_expected_stopping_time(p, q, n) -> np.ndarray:
    r"""``K(p, q, N) = E_1[H]`` for the random walk with constant ``p``, ``q`` (Appendix C, Eq. 3).

    With ``r = sqrt(1 - 4pq)``, ``x_pm = (1 pm r) / (2p)``, ``g_1 = x_-^N - q x_-^(N-1)``,
    ``g_2 = x_+^N - q x_+^(N-1)`` and
    ``A = (g_1 / (1-p-q) - p / (1-p-q)) / (g_2 - g_1)``:

    ``K(p, q, N) = A r / p + (2p - 1 + r) / (2p (1 - p - q))``.

    ``n = inf`` gives the limit ``K(p, q, inf) = (2p - 1 + r) / (2p (1 - p - q))``.
    Verified as printed (requires ``0 < p``, ``0 < 1 - p - q``, ``4pq < 1``).  For ``q = 0``
    it reduces to ``K(p, 0, N) = (1 - p^N) / (1 - p)``.
    """
    p = _check_p(p)
    q = _check_p(q, "q")
    n = float_array(n, "n (list length)", finite=False)
    if np.any(np.isnan(n)) or np.any(n < 1):
        raise ChainError(f"n (list length) must be >= 1 or inf; got {plain(n)}")
    if np.any(p <= 0) or np.any(p + q >= 1) or np.any(4 * p * q >= 1):
        raise ChainError("K(p, q, N) needs p > 0, p + q < 1 and 4pq < 1")
    r = np.sqrt(1 - 4 * p * q)
    limit = (2 * p - 1 + r) / (2 * p * (1 - p - q))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        xm = (1 - r) / (2 * p)
        xp = (1 + r) / (2 * p)
        g1 = xm**n - q * xm ** (n - 1)
        g2 = xp**n - q * xp ** (n - 1)
        a = (g1 / (1 - p - q) - p / (1 - p - q)) / (g2 - g1)
        finite = a * r / p + limit
    return np.where(np.isinf(n), limit, finite)


def binary_reward_pmf(transient, relevant, n_max: int, start=0, *,
                      check: bool = True) -> np.ndarray:
    r"""``P(T(H) = t)`` for ``t = 0..n_max`` with binary rewards (Appendix B; verified).

    With ``R = diag(relevant)`` and ``M = [I - (I - R) P~]^{-1}`` (the chain stopped at its
    first relevant state), the appendix gives, for ``t >= 1``,

    ``P(T = t) = [(M R P~)^(t-1) (I - M R P~) M rho]_s``

    which is ``P(T >= t) - P(T >= t + 1)``: ``M rho`` is the probability of ever meeting a
    relevant state and ``M R P~`` moves from one relevant visit to the step after it.
    ``P(T = 0) = 1 - (M rho)_s``.  Verified as printed (the ``(1 - R)`` in the second factor
    means ``(I - R)``).
    """
    block = as_block(transient, check=check)
    rel = state_values(relevant, "relevant", block)
    if not np.all((rel == 0) | (rel == 1)):
        raise ChainError("binary_reward_pmf needs 0/1 rewards")
    if isinstance(n_max, bool) or not isinstance(n_max, int | np.integer) \
            or not 0 <= n_max <= MAX_STEPS:
        raise ChainError(f"n_max must be an integer from 0 to {MAX_STEPS:,}; got "
                         f"{plain(n_max)}")
    n = block.n_states
    check_memory(np.broadcast_shapes(block.batch_shape, rel.shape[:-1]) + (n, n),
                 "binary_reward_pmf")
    dense = block.to_dense()
    big_r = rel[..., None] * np.eye(n)
    m = np.linalg.inv(np.eye(n) - (np.eye(n) - big_r) @ dense)
    mrp = m @ big_r @ dense
    hit = m @ rel.astype(float)[..., None]          # P_i(T >= 1)
    s = start_vector(start, n)
    out = [1.0 - np.einsum("...i,...i->...", s, hit[..., 0])]
    tail = hit
    for _ in range(int(n_max)):
        nxt = mrp @ tail                                # P_i(T >= t + 1)
        out.append(np.einsum("...i,...i->...", s, (tail - nxt)[..., 0]))
        tail = nxt
    return np.stack(out, axis=-1)
