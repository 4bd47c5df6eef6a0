r"""Invariant distributions, censored chains and continuous-time weighting (Markov Precision).

* :func:`invariant_distribution` solves ``pi P = pi`` for an irreducible stochastic matrix
  by the Grassmann-Taksar-Heyman (GTH) state reduction, which uses no subtractions and is
  accurate to machine precision even for nearly decomposable chains (Grassmann, Taksar &
  Heyman, Operations Research 33 (1985), 1107-1116).
* :func:`censored_chain` is the chain watched only on a subset ``A`` of states (Ferrante,
  Ferro & Maistro, SIGIR 2014, Eq. 8): the Schur complement
  ``P_A = P_AA + P_AB (I - P_BB)^{-1} P_BA``.  Its invariant distribution is the full
  chain's invariant distribution restricted to ``A`` and renormalised.
* :func:`continuous_time_weights` turns the jump chain's invariant distribution into the
  continuous-time one by weighting each state with its mean holding time ``1 / mu_i``:
  ``pi~_i = (pi_i / mu_i) / sum_j (pi_j / mu_j)`` (SIGIR 2014, Section 5).
"""

from __future__ import annotations

import numpy as np

from ..errors import ChainError
from .checks import MAX_WORK, float_array

_STOCHASTIC_TOL = 1e-9


def _check_stochastic(p: np.ndarray, what: str) -> np.ndarray:
    p = float_array(p, what, finite=False)
    if p.ndim < 2 or p.shape[-1] != p.shape[-2] or p.shape[-1] == 0:
        raise ChainError(f"{what} must have shape (..., N, N) with N >= 1; got {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ChainError(f"{what} contains NaN or infinite values")
    if np.any(p < -_STOCHASTIC_TOL):
        raise ChainError(f"{what} has negative entries")
    sums = p.sum(axis=-1)
    if np.any(np.abs(sums - 1) > _STOCHASTIC_TOL):
        raise ChainError(f"rows of {what} must sum to 1; found a row summing to "
                         f"{sums.flat[np.argmax(np.abs(sums - 1))]:.12g}")
    return p


def invariant_distribution(transition, *, check: bool = True) -> np.ndarray:
    """Invariant distribution ``pi`` of an irreducible stochastic matrix, batched (GTH).

    Parameters
    ----------
    transition : array (..., N, N)
        Row-stochastic transition matrix.

    Returns
    -------
    array (..., N)

    Raises
    ------
    ChainError
        If the matrix is not stochastic, or the chain has more than one closed class (the
        state reduction meets a state that cannot reach the remaining ones), so that ``pi``
        is not unique.  A reducible chain with a single closed class has a unique ``pi``
        (zero on its transient states) and is accepted.
    """
    p = _check_stochastic(transition, "transition matrix") if check else \
        float_array(transition, "transition matrix", finite=False)
    n = p.shape[-1]
    work = float(np.prod(p.shape[:-2])) * n**3 / 3
    if work > MAX_WORK:
        raise ChainError(f"GTH state reduction of {n:,} states ({int(np.prod(p.shape[:-2]))} "
                         f"chain(s)) takes about {work:.3g} operations; the limit is "
                         f"{MAX_WORK:.3g}")
    a = np.array(p, dtype=float, copy=True)
    for k in range(n - 1, 0, -1):
        s = a[..., k, :k].sum(axis=-1)
        if np.any(s <= 0):
            raise ChainError(
                "the chain is reducible with more than one closed class, so its invariant "
                "distribution is not unique")
        a[..., :k, k] /= s[..., None]
        a[..., :k, :k] += a[..., :k, k, None] * a[..., k, None, :k]
    pi = np.zeros(a.shape[:-1])
    pi[..., 0] = 1.0
    for k in range(1, n):
        pi[..., k] = np.einsum("...i,...i->...", pi[..., :k], a[..., :k, k])
    return pi / pi.sum(axis=-1, keepdims=True)


def censored_chain(transition, states, *, check: bool = True) -> np.ndarray:
    """The chain watched on ``states``: ``P_AA + P_AB (I - P_BB)^-1 P_BA``.

    Parameters
    ----------
    transition : array (..., N, N)
        Row-stochastic transition matrix.
    states : sequence of int or boolean mask (N,)
        The watched set ``A`` (the same for every batch element).

    Returns
    -------
    array (..., |A|, |A|)
        Row-stochastic transition matrix between the watched states, in their order.
    """
    p = _check_stochastic(transition, "transition matrix") if check else \
        float_array(transition, "transition matrix", finite=False)
    n = p.shape[-1]
    mask = np.zeros(n, dtype=bool)
    try:
        idx = np.asarray(states)
    except ValueError:
        idx = np.asarray([], dtype=object)
    if idx.dtype.kind not in "biu" or idx.ndim > 1:
        raise ChainError(f"watched states must be 0-based state indices or a boolean mask of "
                         f"length {n}")
    if idx.dtype == bool:
        if idx.shape != (n,):
            raise ChainError(f"state mask must have length {n}")
        mask = idx
    else:
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ChainError(f"watched states must lie in 0..{n - 1}")
        mask[idx] = True
    if not mask.any():
        raise ChainError("censored_chain needs at least one watched state")
    a_idx = np.flatnonzero(mask)
    b_idx = np.flatnonzero(~mask)
    paa = p[..., a_idx[:, None], a_idx]
    if b_idx.size == 0:
        return paa
    pab = p[..., a_idx[:, None], b_idx]
    pba = p[..., b_idx[:, None], a_idx]
    pbb = p[..., b_idx[:, None], b_idx]
    try:
        x = np.linalg.solve(np.eye(b_idx.size) - pbb, pba)
    except np.linalg.LinAlgError as exc:
        raise ChainError("the unwatched states contain a closed class: the chain never "
                         "returns to the watched set from it") from exc
    return paa + pab @ x


def continuous_time_weights(pi, holding_rates) -> np.ndarray:
    """Continuous-time invariant distribution from the jump chain's ``pi`` and rates ``mu``.

    ``pi~_i = (pi_i / mu_i) / sum_j (pi_j / mu_j)``: a state is occupied in proportion to
    how often it is entered times how long each stay lasts (mean ``1 / mu_i``).
    """
    pi = float_array(pi, "invariant distribution pi", low=0.0)
    if pi.ndim == 0 or pi.shape[-1] == 0:
        raise ChainError(f"pi must be a distribution over the states (..., N); got shape "
                         f"{pi.shape}")
    mu = float_array(holding_rates, "holding rates mu", last=pi.shape[-1], batch=pi.shape[:-1])
    if np.any(mu <= 0):
        raise ChainError("holding rates mu must be finite and > 0")
    w = pi / mu
    return w / w.sum(axis=-1, keepdims=True)
