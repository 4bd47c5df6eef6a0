r"""Forward recursions over steps: ``E[T(H) / f(H)]`` and the exact law of ``(T(H), H)``.

``E[T(H)/f(H)]`` (order <=1 of P@H) has no closed form for random walks (Ferrante & Ferro,
ICTIR 2020, Appendix A), but it is a sum over steps that can be accumulated exactly.  With
``a_n(i) = P(X_n = i, H >= n)`` and ``G_n(i) = E[T_n ; X_n = i, H >= n]``
(``T_n`` the reward collected in the first ``n`` visits):

* ``a_1 = start``, ``G_1 = start * rho``;
* ``E[T(H)/f(H)] = sum_n sum_i s_i G_n(i) / f(n)``, ``s = 1 - P~ e`` the stop probabilities;
* ``a_{n+1} = a_n P~``, ``G_{n+1} = G_n P~ + a_{n+1} * rho``.

The recursion stops when the neglected part is provably below ``tol``: for non-negative
rewards and non-decreasing ``f``,
``E[T/f(H) ; H > n] <= E[T ; H > n] / f(n + 1)`` and
``E[T ; H > n] = sum_j G_{n+1}(j) + a_{n+1}(j) (m_j - rho_j)`` with ``m = N rho``.
The mass still alive decays like ``spectral_radius(P~)^n``, so the number of steps grows
only with ``log(1/tol)``.

For integer rewards the same recursion over (state, reward so far) gives the exact joint
distribution ``P(H = n, T(H) = t)``, from which the law of ``P@H = T(H) / f(H)`` follows.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import ChainError
from .blocks import as_block, start_vector

Effort = str | Callable[[np.ndarray], np.ndarray]


def effort_values(effort: Effort, n: np.ndarray) -> np.ndarray:
    """Evaluate the effort function ``f(h)`` on stopping times ``n``.

    ``"h"`` gives ``f(h) = h`` (P@H, Precision, AP, RBP), ``"1"`` gives ``f(h) = 1`` (DCG),
    and a callable must return positive values.
    """
    n = np.asarray(n, dtype=float)
    if isinstance(effort, str):
        if effort == "h":
            return n
        if effort == "1":
            return np.ones_like(n)
        raise ChainError(f"unknown effort {effort!r}; use 'h', '1' or a function of h")
    out = np.asarray(effort(n), dtype=float)
    if out.shape != n.shape or np.any(~np.isfinite(out)) or np.any(out <= 0):
        raise ChainError("effort function f(h) must return finite positive values, one per h")
    return out


def expected_ratio(transient, rewards, effort: Effort = "h", start=0, *, tol: float = 1e-12,
                   max_steps: int = 1_000_000, check: bool = True) -> np.ndarray:
    """``E[T(H) / f(H)]`` (order <=1 of P@H), exact to the absolute tolerance ``tol``.

    Parameters
    ----------
    transient : array (..., N, N) or Tridiagonal
    rewards : array (..., N)
        Non-negative reward per visit.
    effort : "h", "1" or callable
        ``f(h)``, non-decreasing and positive.
    tol : float
        Bound on the neglected tail (see the module docstring); the result is within
        ``tol`` of the exact value, for every batch element.
    """
    block = as_block(transient, check=check)
    rho = np.asarray(rewards, dtype=float)
    if np.any(rho < 0):
        raise ChainError("expected_ratio needs non-negative rewards")
    exit_p = np.clip(1.0 - block.row_sums(), 0.0, None)
    m = block.solve(rho)
    shape = np.broadcast_shapes(block.batch_shape + (block.n_states,), rho.shape, m.shape)
    a = np.broadcast_to(start_vector(start, block.n_states), shape).astype(float)
    g = a * rho
    total = np.zeros(shape[:-1])
    for n in range(1, max_steps + 1):
        f_n = effort_values(effort, np.array(float(n)))
        total += np.sum(exit_p * g, axis=-1) / f_n
        a = block.rmatvec(a)
        g = block.rmatvec(g) + a * rho
        tail = np.sum(g + a * (m - rho), axis=-1)
        f_next = effort_values(effort, np.array(float(n + 1)))
        if np.all(tail / f_next <= tol):
            return total
    raise ChainError(f"expected_ratio did not reach tol={tol} within {max_steps} steps")


def joint_distribution(transient, rewards, start=0, *, tol: float = 1e-12,
                       max_steps: int = 100_000, check: bool = True) -> np.ndarray:
    """Exact joint law ``P(H = n, T(H) = t)`` for integer rewards.

    Parameters
    ----------
    transient : array (..., N, N) or Tridiagonal
    rewards : int array (..., N)
        Non-negative integer reward per visit.
    tol : float
        The recursion stops when ``P(H > n) <= tol`` for every batch element; that mass is
        missing from the result (``1 - joint.sum()`` reports it).

    Returns
    -------
    array (..., n_max, t_max + 1)
        ``out[..., n - 1, t] = P(H = n, T(H) = t)``.

    The recursion over (state, reward so far) runs over the chain's nonzero moves only,
    one compiled loop per chain (Numba when installed): ``O(steps x moves x t_max)``.
    """
    block = as_block(transient, check=check)
    rho = np.asarray(rewards)
    if not np.all(np.isfinite(rho)) or np.any(rho < 0) or np.any(rho != np.round(rho)):
        raise ChainError("joint_distribution needs non-negative integer rewards")
    exit_p = np.clip(1.0 - block.row_sums(), 0.0, None)
    dense = block.to_dense()
    batch = np.broadcast_shapes(block.batch_shape, rho.shape[:-1])
    n = block.n_states
    dense = np.broadcast_to(dense, batch + (n, n)).reshape(-1, n, n)
    exit_p = np.broadcast_to(exit_p, batch + (n,)).reshape(-1, n)
    rho = np.broadcast_to(rho.astype(np.int64), batch + (n,)).reshape(-1, n)
    start_p = np.broadcast_to(start_vector(start, n), batch + (n,)).reshape(-1, n)
    laws = []
    kernel = _joint_kernel()
    for b in range(dense.shape[0]):
        src, dst = np.nonzero(dense[b])
        law = kernel(np.ascontiguousarray(start_p[b], dtype=np.float64),
                     np.ascontiguousarray(exit_p[b], dtype=np.float64), src.astype(np.int64),
                     dst.astype(np.int64), dense[b][src, dst].astype(np.float64),
                     np.ascontiguousarray(rho[b]), float(tol), int(max_steps))
        if law.shape[0] == 0:
            raise ChainError(f"joint_distribution: P(H > n) still above tol after "
                             f"{max_steps} steps")
        laws.append(law)
    steps = max(law.shape[0] for law in laws)
    width = max(law.shape[1] for law in laws)
    out = np.zeros((len(laws), steps, width))
    for b, law in enumerate(laws):
        out[b, :law.shape[0], :law.shape[1]] = law
    return out.reshape(batch + (steps, width))


def _joint_law(start, exit_p, src, dst, prob, rho, tol, max_steps):
    """One chain: ``a[i, t] = P(X_n = i, H >= n, T_n = t)``; each step records the exits
    ``P(H = n, T = t) = sum_i exit_i a[i, t]`` and moves ``a[j, t + rho_j] += a[i, t] P_ij``.
    Returns the ``(steps, t_max + 1)`` law, or an empty array after ``max_steps``."""
    n = start.size
    top = 0
    for i in range(n):
        top = max(top, rho[i])
    cap = 64
    width = top * cap + 1
    a = np.zeros((n, width))
    nxt = np.zeros((n, width))
    rows = np.zeros((cap, width))
    for i in range(n):
        a[i, rho[i]] = start[i]
    hi = top                                   # rewards so far lie in 0..hi
    for step in range(max_steps):
        if step >= cap:                        # grow the buffers
            cap *= 2
            new_width = top * cap + 1
            grown = np.zeros((cap, new_width))
            grown[:rows.shape[0], :rows.shape[1]] = rows
            rows = grown
            bigger = np.zeros((n, new_width))
            bigger[:, :width] = a
            a = bigger
            nxt = np.zeros((n, new_width))
            width = new_width
        for i in range(n):
            e = exit_p[i]
            if e > 0.0:
                for t in range(hi + 1):
                    rows[step, t] += e * a[i, t]
        for i in range(n):
            for t in range(hi + top + 1):
                nxt[i, t] = 0.0
        for k in range(src.size):
            i, j, pr = src[k], dst[k], prob[k]
            shift = rho[j]
            for t in range(hi + 1):
                nxt[j, t + shift] += a[i, t] * pr
        hi += top
        alive = 0.0
        for i in range(n):
            for t in range(hi + 1):
                a[i, t] = nxt[i, t]
                alive += nxt[i, t]
        if alive <= tol:
            return rows[:step + 1, :hi + 1].copy()
    return np.zeros((0, 0))


_JOINT = None


def _joint_kernel():
    global _JOINT
    if _JOINT is None:
        try:
            import numba
        except ImportError:
            _JOINT = _joint_law
        else:
            _JOINT = numba.njit(cache=True, nogil=True)(_joint_law)
    return _JOINT


def ratio_laws(upper, lower, rewards, *, tol: float = 1e-10,
               max_steps: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    """Laws of ``T(H) / H`` for many walks and reward vectors at once, on one support.

    Parameters
    ----------
    upper, lower : arrays (D, N)
        Forward and backward probabilities of ``D`` walks on ``N`` ranks (no staying move;
        the rest of each row is stopping mass), e.g. ``D`` posterior draws.
    rewards : int array (L, N)
        ``L`` reward vectors (lists), every one walked by every walk.

    Returns
    -------
    values : (K,) the sorted distinct ratios ``t / n`` reachable within the steps needed
        (``n`` up to the first step where ``P(H > n) <= tol`` for every walk), rounded to
        12 decimals as :func:`ratio_distribution` does;
    probabilities : (L, D, K) ``P(T(H)/H = values[k])`` of list ``l`` under walk ``d``
        (each row sums to ``1 - P(H > n_max)``, at least ``1 - tol``).

    The recursion over (rank, reward so far) is :func:`joint_distribution`'s, run for every
    (list, walk) pair in parallel threads (Numba) and accumulated on the common support.
    """
    up = np.ascontiguousarray(upper, dtype=np.float64)
    lo = np.ascontiguousarray(lower, dtype=np.float64)
    rho = np.ascontiguousarray(rewards, dtype=np.int64)
    if up.ndim != 2 or up.shape != lo.shape or rho.ndim != 2 or rho.shape[1] != up.shape[1]:
        raise ChainError("ratio_laws takes upper, lower (D, N) and rewards (L, N)")
    if np.any(rho < 0) or np.any(up < 0) or np.any(lo < 0) or \
            np.any(up + lo > 1 + 1e-12):
        raise ChainError("ratio_laws needs non-negative integer rewards and move "
                         "probabilities with forward + backward <= 1")
    steps = _steps_needed(up, lo, tol, max_steps)
    top = max(int(rho.max(initial=0)), 1)
    n = np.arange(1, steps + 1)
    t = np.arange((steps + 1) * top + 1)         # the recursion's buffer: one step more
    ratio = np.round(t[None, :] / n[:, None], 12)
    reachable = t[None, :] <= n[:, None] * top
    values = np.unique(ratio[reachable])
    index = np.full((steps + 1, t.size), -1, dtype=np.int64)
    index[1:] = np.where(reachable, np.searchsorted(values, ratio), -1)
    out = np.zeros((rho.shape[0], up.shape[0], values.size))
    bad = np.zeros((rho.shape[0], up.shape[0]), dtype=np.bool_)
    _ratio_kernel()(up, lo, rho, index, float(tol), int(max_steps), out, bad)
    if np.any(bad):
        raise ChainError("ratio_laws: a walk needed more steps than its survival bound")
    return values, out


def _steps_needed(up, lo, tol, max_steps) -> int:
    """First ``n`` with ``P(H > n) <= tol`` for every walk (the alive mass after n steps)."""
    a = np.zeros_like(up)
    a[:, 0] = 1.0
    for step in range(1, max_steps + 1):
        nxt = np.zeros_like(a)
        nxt[:, 1:] += a[:, :-1] * up[:, :-1]
        nxt[:, :-1] += a[:, 1:] * lo[:, 1:]
        a = nxt
        if a.sum(axis=1).max() <= tol:
            return step
    raise ChainError(f"ratio_laws: P(H > n) still above tol after {max_steps} steps")


def _ratio_laws(up, lo, rho, index, tol, max_steps, out, bad):
    """Every (list, walk) pair: the joint law by ``_joint_law``, summed onto the support."""
    n_lists, n = rho.shape
    draws = up.shape[0]
    for job in _prange(n_lists * draws):
        li = job // draws
        d = job % draws
        src = np.empty(2 * n, dtype=np.int64)
        dst = np.empty(2 * n, dtype=np.int64)
        prob = np.empty(2 * n)
        exit_p = np.empty(n)
        m = 0
        for i in range(n):
            exit_p[i] = max(1.0 - up[d, i] - lo[d, i], 0.0)
            if up[d, i] > 0.0:
                src[m], dst[m], prob[m] = i, i + 1, up[d, i]
                m += 1
            if lo[d, i] > 0.0:
                src[m], dst[m], prob[m] = i, i - 1, lo[d, i]
                m += 1
        start = np.zeros(n)
        start[0] = 1.0
        law = _JOINT_FOR_LAWS(start, exit_p, src[:m], dst[:m], prob[:m], rho[li], tol,
                              max_steps)
        if law.shape[0] == 0 or law.shape[0] >= index.shape[0] or \
                law.shape[1] > index.shape[1]:
            bad[li, d] = True
            continue
        for s in range(law.shape[0]):
            for t in range(law.shape[1]):
                v = law[s, t]
                if v > 0.0:
                    out[li, d, index[s + 1, t]] += v


_RATIO = None
_JOINT_FOR_LAWS = None


def _prange(n):
    return range(n)


def _ratio_kernel():
    """The driver, compiled with the joint recursion inlined (Numba), or plain Python."""
    global _RATIO, _JOINT_FOR_LAWS, _prange
    if _RATIO is None:
        _JOINT_FOR_LAWS = _joint_kernel()
        try:
            import numba
        except ImportError:
            _RATIO = _ratio_laws
        else:
            _prange = numba.prange
            _RATIO = numba.njit(parallel=True, cache=True)(_ratio_laws)
    return _RATIO


def ratio_distribution(joint: np.ndarray, effort: Effort = "h", *,
                       decimals: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Law of ``P@H = T(H) / f(H)`` from the joint law of :func:`joint_distribution`.

    Parameters
    ----------
    joint : array (n_max, t_max + 1)
        One chain's ``P(H = n, T = t)`` (no batch axes).

    Returns
    -------
    values, probabilities : arrays (K,)
        Sorted distinct values of ``T/f(H)`` (equal ratios such as 1/2 and 2/4 merged after
        rounding to ``decimals``) and their probabilities.
    """
    joint = np.asarray(joint, dtype=float)
    if joint.ndim != 2:
        raise ChainError("ratio_distribution takes one chain's (n_max, t_max + 1) joint law")
    n = np.arange(1, joint.shape[0] + 1, dtype=float)
    t = np.arange(joint.shape[1], dtype=float)
    ratio = t[None, :] / effort_values(effort, n)[:, None]
    keep = joint > 0
    vals = np.round(ratio[keep], decimals)
    support, inverse = np.unique(vals, return_inverse=True)
    probs = np.bincount(inverse, weights=joint[keep], minlength=support.size)
    return support, probs


def ratio_weights(transient, effort: Effort = "h", start=0, *, tol: float = 1e-12,
                  check: bool = True) -> np.ndarray:
    r"""Weights ``w`` with ``E[T(H) / f(H)] = sum_i rho_i w_i`` for every reward vector.

    ``E[T/f(H)]`` is linear in the rewards, so ``w_i`` is the order-1 value of the reward
    vector ``e_i``: ``w_i = sum_n E[N_i(n) ; H = n] / f(n)`` with ``N_i(n)`` the visits to
    ``i`` in the first ``n`` steps.  It depends only on the chain: scoring many lists under
    one chain is then a matrix product (DESIGN.md section 4).  Computed by
    :func:`expected_ratio` with the identity as a batch of reward vectors, so each chain
    costs ``O(steps x N^2)``.

    Returns ``(..., N)``.
    """
    block = as_block(transient, check=check)
    n = block.n_states
    if hasattr(block, "bands"):
        b = block.bands
        from .tridiagonal import Tridiagonal

        expanded = Tridiagonal(b.lower[..., None, :], b.diag[..., None, :], b.upper[..., None, :])
    else:
        expanded = block.matrix[..., None, :, :]
    return expected_ratio(expanded, np.eye(n), effort, start, tol=tol, check=False)
