r"""Relevance-dependent random walks scored under many posterior draws (``drwbm``).

A dynamic model's chain depends on the list, so the visit-vector product of the static
path does not apply: every (list, draw) pair needs its own solve.  For the random walk
with moves ``f_j`` forward and ``b_j`` backward at rank ``j`` (which of ``p, q`` or
``p_rel, q_rel`` applies depends on the relevance of rank ``j``), the expected visits
``v = e_1^T (I - P~)^{-1}`` solve the tridiagonal system
``v_j - f_{j-1} v_{j-1} - b_{j+1} v_{j+1} = [j = 1]``.  Thomas' algorithm on it reduces to
the positive recurrences (0-based ranks, ``n`` the list length)::

    u_0 = 1,  d_0 = 1
    u_j = 1 / (1 - f_{j-1} b_j u_{j-1}),   d_j = f_{j-1} d_{j-1} u_j        (j = 1..n-1)
    v_{n-1} = d_{n-1},   v_j = d_j + b_{j+1} u_j v_{j+1}                    (j = n-2..0)

and the order-2 P@H is ``E[T(H)] / E[H] = sum_j g_j v_j / sum_j v_j``.  No subtraction
occurs, so the recurrences are stable; ``u_j`` stays finite exactly when absorption is
certain (``1 - f_{j-1} b_j u_{j-1} > 0``).

The recurrences are written once, as a compiled kernel (Numba; lists in threads
(:func:`~bayeschain.chains.jit.run_in_threads`), draws in SIMD lanes).  Without Numba,
:func:`bayeschain.scoring.score` solves the same chains
(:func:`bayeschain.browsing.relevance_walk`) with the general batched solvers of
:mod:`bayeschain.chains`; the tests hold the kernel to those solvers and to simulated
users.
"""

from __future__ import annotations

import numpy as np

from ..chains.jit import jit, numba_available, run_in_threads
from ..errors import ParameterError

#: draws handled together in the compiled kernel's inner (vectorised) loop
LANES = 8


def compiled_kernel():
    """Compile (or load from Numba's cache) the kernel; ``None`` without Numba."""
    global _KERNEL
    if _KERNEL is not None:
        return _KERNEL or None
    if not numba_available():
        _KERNEL = False
        return None

    def kernel(relevant, gains, lengths, fwd, bwd, out, bad, first, last):
        width = gains.shape[1]
        n_draws = fwd.shape[2]
        u = np.empty((width, LANES))
        d = np.empty((width, LANES))
        v = np.empty(LANES)
        num = np.empty(LANES)
        den = np.empty(LANES)
        for row in range(first, last):
            n = max(lengths[row], 1)
            for lo in range(0, n_draws, LANES):
                k_n = min(LANES, n_draws - lo)
                for k in range(k_n):
                    u[0, k] = 1.0
                    d[0, k] = 1.0
                for j in range(1, n):
                    cp = relevant[row, j - 1]
                    cj = relevant[row, j]
                    for k in range(k_n):
                        f = fwd[cp, j - 1, lo + k]
                        m = 1.0 - f * bwd[cj, j, lo + k] * u[j - 1, k]
                        if not m > 0.0:
                            bad[row] = True
                            m = 1.0
                        u[j, k] = 1.0 / m
                        d[j, k] = f * d[j - 1, k] * u[j, k]
                g = gains[row, n - 1]
                for k in range(k_n):
                    v[k] = d[n - 1, k]
                    num[k] = g * v[k]
                    den[k] = v[k]
                for j in range(n - 2, -1, -1):
                    cn = relevant[row, j + 1]
                    g = gains[row, j]
                    for k in range(k_n):
                        v[k] = d[j, k] + bwd[cn, j + 1, lo + k] * u[j, k] * v[k]
                        num[k] += g * v[k]
                        den[k] += v[k]
                for k in range(k_n):
                    out[lo + k, row] = num[k] / den[k]

    _KERNEL = jit(kernel, nogil=True)
    return _KERNEL


_KERNEL = None


def _moves(p, q, p_rel, q_rel, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward probabilities ``(class, rank, draw)``: class 0 non-relevant,
    1 relevant; boundary moves removed (rank 1 backward, last rank forward are handled by
    the list length)."""
    from ..browsing.base import extend_ranks, per_rank

    def as_draws(x, name):
        x = np.asarray(x, dtype=float)
        x = x.reshape(1, 1) if x.ndim == 0 else (x[:, None] if x.ndim == 1 else x)
        if x.ndim != 2:
            raise ParameterError(f"{name} must be (draws,) or (draws, ranks)")
        return per_rank(extend_ranks(x, width), width, name)

    def stack(a, b, name):
        a, b = np.broadcast_arrays(as_draws(a, name), as_draws(b, name + "_rel"))
        return np.ascontiguousarray(np.stack([a, b]).transpose(0, 2, 1))

    fwd, bwd = stack(p, p_rel, "p"), stack(q, q_rel, "q")
    if np.any(fwd + bwd > 1 + 1e-12):
        raise ParameterError("forward + backward probability exceeds 1 for some draw and rank")
    bwd[:, 0, :] = 0.0
    return fwd, bwd


def relevance_walk_scores(relevance, gains, lengths, p, q, p_rel, q_rel) -> np.ndarray:
    """Order-2 P@H of every list under every draw of the ``drwbm`` walk (compiled kernel).

    Parameters
    ----------
    relevance : (lists, N) grades; a rank is relevant when its grade is > 0 (pass
        ``grade >= level`` as 0/1 for another threshold)
    gains : (lists, N) rewards ``rho`` (zero beyond each list's length)
    lengths : (lists,) list lengths (the walk stops at the last rank)
    p, q, p_rel, q_rel : (draws,) or (draws, ranks) move probabilities (ranks deeper than
        given take the last rank's value)

    Returns ``(draws, lists)``.  Needs Numba (``pip install 'bayeschain[fast]'``).
    """
    rel = np.asarray(relevance, dtype=float)
    g = np.ascontiguousarray(gains, dtype=float)
    n = np.ascontiguousarray(lengths, dtype=np.int64)
    if rel.shape != g.shape or rel.ndim != 2 or n.shape != rel.shape[:1] or rel.shape[1] < 1:
        raise ParameterError("relevance and gains must be (lists, ranks >= 1) and lengths "
                             "(lists,)")
    if np.any(n < 0) or np.any(n > rel.shape[1]):
        raise ParameterError("list lengths must lie between 0 and the width of the relevance")
    kernel = compiled_kernel()
    if kernel is None:
        raise ParameterError("the compiled drwbm kernel needs Numba: pip install "
                             "'bayeschain[fast]' (bayeschain.score falls back to the general "
                             "solvers without it)")
    relevant = np.ascontiguousarray(rel > 0, dtype=np.uint8)
    fwd, bwd = _moves(p, q, p_rel, q_rel, rel.shape[1])
    out = np.empty((fwd.shape[2], rel.shape[0]))
    bad = np.zeros(rel.shape[0], dtype=np.bool_)
    run_in_threads(kernel, rel.shape[0], relevant, g, n, fwd, bwd, out, bad)
    if np.any(bad):
        raise ParameterError(f"degenerate chain: the walk never stops on list(s) "
                             f"{np.flatnonzero(bad)[:5].tolist()} for some draw (forward and "
                             f"backward probabilities leave no stopping mass)")
    return out
