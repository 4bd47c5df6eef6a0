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
from .blocks import as_block, start_vector, state_values
from .checks import MAX_STEPS, MAX_WORK, check_memory, float_array, plain
from .jit import jit, run_in_threads

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
    if not callable(effort):
        raise ChainError(f"effort must be 'h', '1' or a function of h; got {plain(effort)}")
    out = float_array(effort(n), "effort function f(h)", finite=False)
    if out.shape != n.shape or np.any(~np.isfinite(out)) or np.any(out <= 0):
        raise ChainError("effort function f(h) must return finite positive values, one per h")
    return out


def _check_tol(tol, max_steps) -> tuple[float, int]:
    if isinstance(tol, bool) or not isinstance(tol, int | float | np.integer | np.floating) \
            or not np.isfinite(tol) or not tol > 0:
        raise ChainError(f"tol must be a positive finite number; got {plain(tol)}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int | np.integer) \
            or max_steps < 1:
        raise ChainError(f"max_steps must be a positive integer; got {plain(max_steps)}")
    return float(tol), int(max_steps)


def _solve_checked(block, rhs: np.ndarray, what: str) -> np.ndarray:
    """``(I - P~)^-1 rhs`` for non-negative ``rhs``; a result that is not finite and
    non-negative means ``I - P~`` is singular (a chain that never stops, passed with
    ``check=False``)."""
    with np.errstate(all="ignore"):
        try:
            x = block.solve(rhs)
        except np.linalg.LinAlgError:
            x = np.full(1, np.nan)
    if not np.all(np.isfinite(x)) or np.any(x < -1e-9 * np.max(np.abs(x), initial=1.0)):
        raise ChainError(f"{what}: I - P~ is singular, the chain never stops from some state "
                         f"(a closed class; run with check=True to have it named)")
    return np.maximum(x, 0.0)


def _index(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0]) if np.ndim(mask) else ()


def expected_ratio(transient, rewards, effort: Effort = "h", start=0, *, tol: float = 1e-12,
                   max_steps: int = MAX_STEPS, check: bool = True) -> np.ndarray:
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
        ``tol`` of the exact value, for every batch element (or within ``1e-300`` times the
        largest reward, if that is larger: rewards near the largest float).
    max_steps : int
        Most steps of the recursion.  A chain that stops too rarely to reach ``tol`` within
        them is refused before the first step (see :func:`_fail_fast`), and so is one whose
        recursion would take more than :data:`~bayeschain.chains.checks.MAX_WORK`
        state-steps.
    """
    tol, max_steps = _check_tol(tol, max_steps)
    block = as_block(transient, check=check)
    rho = state_values(rewards, "rewards", block)
    if np.any(rho < 0):
        raise ChainError(f"expected_ratio needs non-negative rewards; got {plain(rho.min())}")
    effort_values(effort, np.array(1.0))                      # a bad effort fails here
    exit_p = np.clip(1.0 - block.row_sums(), 0.0, None)
    # the recursion runs on rewards scaled to at most 1 (no overflow of its sums), against
    # the tolerance scaled alike (floored at 1e-300 of the largest reward, far below the
    # resolution of a float result); the result is scaled back at the end
    scale = float(rho.max(initial=0.0)) or 1.0
    rho = rho / scale
    m = _solve_checked(block, rho, "expected_ratio")
    shape = np.broadcast_shapes(block.batch_shape + (block.n_states,), rho.shape, m.shape)
    check_memory(shape, "expected_ratio")
    a = np.broadcast_to(start_vector(start, block.n_states, shape[:-1]), shape).astype(float)
    per_step = int(np.prod(shape)) + _STEP_OVERHEAD
    shown = tol
    tol = max(tol / scale, _TOL_FLOOR)
    _fail_fast(block, rho, m, a, effort, tol, max_steps, per_step, shown)
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
            with np.errstate(over="ignore"):
                total = total * scale
            if not np.all(np.isfinite(total)):
                raise ChainError(f"expected_ratio overflows: rewards up to {scale:.3g} give "
                                 f"values beyond the largest float ({np.finfo(float).max:.3g})")
            return total
        if (n + 1) * per_step > MAX_WORK:
            raise ChainError(f"expected_ratio: {n:,} steps over {int(np.prod(shape)):,} "
                             f"state values have not reached tol={plain(shown)}; the limit is "
                             f"{MAX_WORK:.3g} state-steps (the chain stops too rarely for "
                             f"this tolerance: raise tol)")
    raise ChainError(f"expected_ratio did not reach tol={plain(shown)} within {max_steps:,} "
                     f"steps (the chain stops too rarely: raise tol or max_steps)")


#: Smallest tolerance relative to the largest reward (keeps the tail out of subnormals,
#: whose rounding can stall its decay).
_TOL_FLOOR = 1e-300
#: Fixed cost of one recursion step, in state values (Python and NumPy call overhead).
_STEP_OVERHEAD = 2_000


def _fail_fast(block, rho, m, a, effort, tol, max_steps, per_step, shown) -> None:
    r"""Refuse, before the first step, a recursion that cannot reach ``tol`` in time.

    With ``U_n = E[T(H); H > n]`` (non-increasing, ``U_0 = E[T]``, ``sum_n U_n = E[T H]``)
    the recursion stops at the first ``n_0`` with ``U_{n_0} <= tol f(n_0 + 1)``.  By the
    Markov property at visit ``n_0 + 1``,
    ``sum_{n >= n_0} U_n <= (max_j E_j[H] + max_j E_j[T H] / E_j[T]) U_{n_0}``, so

    ``n_0 >= (E[T H] - (max_j E_j[H] + max_j E_j[T H] / E_j[T]) tol f(max_steps + 1)) / E[T]``.

    ``E_j[H] = (N e)_j``, ``E_j[T] = (N rho)_j`` and, by first-step analysis,
    ``E_j[T H] = (N (rho k + m - rho))_j`` with ``k = N e``, ``m = N rho``: two more solves.
    Second, ``U_n - U_{n+1} = E[T; H = n + 1] <= s_max U_n`` with ``s_max`` the largest stop
    probability of a state, so ``U_n >= (1 - s_max)^n E[T]`` and
    ``n_0 >= log(E[T] / (tol f(max_steps + 1))) / -log(1 - s_max)``.

    A chain that almost never stops (spectral radius within ~1/max_steps of 1) needs far more
    than ``max_steps`` steps by one bound or the other and is refused at once instead of
    after ``max_steps`` steps; so is a recursion whose lower bound times the work per step
    exceeds :data:`MAX_WORK`.  The bounds never refuse a recursion that would succeed.
    """
    ones = np.ones(block.n_states)
    k = _solve_checked(block, ones, "expected_ratio")              # E_j[H]
    v = _solve_checked(block, rho * k + np.maximum(m - rho, 0.0), "expected_ratio")  # E_j[TH]
    mean_t = np.sum(a * m, axis=-1)
    mean_th = np.sum(a * v, axis=-1)
    mean_h = np.sum(a * k, axis=-1)
    k_max = k.max(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(m > 0, v / np.where(m > 0, m, 1.0), 0.0).max(axis=-1)
        eps = tol * float(effort_values(effort, np.array(float(max_steps + 1))))
        lower = np.where(mean_t > 0, (mean_th - (k_max + kappa) * eps) / mean_t, 1.0)
        s_max = np.clip(1.0 - block.row_sums(), 0.0, 1.0).max(axis=-1)
        rate = -np.log1p(-np.minimum(s_max, 1.0 - 1e-300))
        decay = np.where((s_max < 1) & (mean_t > eps),
                         (np.log(mean_t) - np.log(eps)) / rate, 1.0)
    # a relative slack for the rounding of the solves (the bounds are exact in exact
    # arithmetic; the recursion may stop a step earlier than a rounded bound says)
    lower = np.maximum(np.maximum(lower, decay), 1.0) * (1 - 1e-6) - 1
    worst = float(np.max(lower))
    where = _index(lower == worst) if np.ndim(lower) else ()
    at = f" (batch index {where})" if where else ""
    if worst > max_steps:
        h = float(np.asarray(mean_h)[where]) if where else float(np.max(mean_h))
        raise ChainError(
            f"expected_ratio cannot reach tol={plain(shown)} within max_steps={max_steps:,}: "
            f"the recursion needs at least {worst:.3g} steps{at}, since the chain stops "
            f"too rarely (expected stopping time {h:.3g} visits from the start); check the "
            f"stopping probabilities (expected_reward and expected_stopping_time solve such "
            f"a chain directly)")
    if worst * per_step > MAX_WORK:
        raise ChainError(
            f"expected_ratio would need at least {worst:.3g} steps over "
            f"{per_step - _STEP_OVERHEAD:,} state values{at}: more than the limit of "
            f"{MAX_WORK:.3g} state-steps; use fewer ranks or a smaller batch")


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
    one compiled loop per chain (Numba when installed): ``O(steps x moves x t_max)``.  The
    number of steps is found first by propagating the alive mass (``O(steps x N)`` for
    walks), and the table it needs, ``steps x (steps x max reward)`` values, is checked
    against the memory limit before the recursion starts; a chain with
    ``E[H] > max_steps`` (``P(H > max_steps) >= (E[H] - max_steps - 1) / max_j E_j[H]``)
    is refused at once.
    """
    tol, max_steps = _check_tol(tol, max_steps)
    block = as_block(transient, check=check)
    rho = state_values(rewards, "rewards", block, low=0.0)
    if np.any(rho != np.round(rho)):
        raise ChainError("joint_distribution needs non-negative integer rewards")
    if rho.size and rho.max() > 2**31:
        raise ChainError(f"joint_distribution: rewards up to {plain(rho.max())} make a table "
                         f"of that many columns per step; rewards must be small integers")
    exit_p = np.clip(1.0 - block.row_sums(), 0.0, None)
    batch = np.broadcast_shapes(block.batch_shape, rho.shape[:-1])
    n = block.n_states
    start_p = np.broadcast_to(start_vector(start, n, batch), batch + (n,))
    k = _solve_checked(block, np.ones(n), "joint_distribution")
    mean_h = np.einsum("...i,...i->...", start_p, k)
    bound = mean_h - 1 - tol * k.max(axis=-1)
    if np.any(bound > max_steps):
        raise ChainError(f"joint_distribution cannot bring P(H > n) below tol={plain(tol)} "
                         f"within max_steps={max_steps:,}: the expected stopping time is "
                         f"{float(np.max(mean_h)):.3g} visits; raise tol, or check the "
                         f"stopping probabilities")
    steps = _alive_steps(block, start_p, tol, max_steps)
    top = int(rho.max(initial=0))
    cap = 64
    while cap <= steps:
        cap *= 2
    cells = float(cap) * (top * cap + 1) + 2.0 * n * (top * cap + 1)
    check_memory(int(cells), f"joint_distribution ({steps:,} steps, rewards up to {top})")
    dense = block.to_dense()
    check_memory(int(np.prod(batch)) * n * n, "joint_distribution's dense blocks")
    dense = np.broadcast_to(dense, batch + (n, n)).reshape(-1, n, n)
    exit_p = np.broadcast_to(exit_p, batch + (n,)).reshape(-1, n)
    rho = np.broadcast_to(rho.astype(np.int64), batch + (n,)).reshape(-1, n)
    start_p = start_p.reshape(-1, n)
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
                             f"{max_steps:,} steps")
        laws.append(law)
    steps = max(law.shape[0] for law in laws)
    width = max(law.shape[1] for law in laws)
    out = np.zeros((len(laws), steps, width))
    for b, law in enumerate(laws):
        out[b, :law.shape[0], :law.shape[1]] = law
    return out.reshape(batch + (steps, width))


def _alive_steps(block, start_p: np.ndarray, tol: float, max_steps: int) -> int:
    """Steps until ``P(H > n) <= tol`` for every batch element (the joint recursion's count,
    from the alive mass alone); ``max_steps`` if it is not reached."""
    a = np.array(start_p, dtype=float)
    for step in range(1, max_steps + 1):
        a = block.rmatvec(a)
        if np.all(a.sum(axis=-1) <= tol):
            return step
    return max_steps


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
        # step ``step`` writes rewards up to hi + top = top * (step + 2): the buffers need
        # ``step + 2 <= cap`` columns of rewards (and ``step < cap`` rows)
        if step + 2 > cap:                     # grow the buffers
            cap *= 2
            new_width = top * cap + 1
            # element by element: a slice assignment would compile NumPy's shape checks
            # and their error messages, seconds of compilation for a line
            grown = np.zeros((cap, new_width))
            for r in range(rows.shape[0]):
                for t in range(rows.shape[1]):
                    grown[r, t] = rows[r, t]
            rows = grown
            bigger = np.zeros((n, new_width))
            for i in range(n):
                for t in range(width):
                    bigger[i, t] = a[i, t]
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
        _JOINT = jit(_joint_law, nogil=True)
    return _JOINT


def ratio_laws(upper, lower, rewards, *, tol: float = 1e-10,
               max_steps: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    """Laws of ``T(H) / H`` for many walks and reward vectors at once, on one support.

    Parameters
    ----------
    upper, lower : arrays (D, N)
        Forward and backward probabilities of ``D`` walks on ``N`` ranks (no staying move;
        the rest of each row is stopping mass), e.g. ``D`` posterior draws; ``upper[:,
        -1]`` and ``lower[:, 0]`` must be 0 (there is no rank beyond either end).
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
    tol, max_steps = _check_tol(tol, max_steps)
    up = np.ascontiguousarray(float_array(upper, "upper", ndim=2))
    lo = np.ascontiguousarray(float_array(lower, "lower", ndim=2))
    rho = float_array(rewards, "rewards", ndim=2)
    if up.shape != lo.shape or rho.shape[1] != up.shape[1] or up.shape[1] == 0:
        raise ChainError(f"ratio_laws takes upper, lower (D, N) and rewards (L, N); got shapes "
                         f"{up.shape}, {lo.shape} and {rho.shape}")
    if np.any(rho < 0) or np.any(rho != np.round(rho)) or np.any(up < 0) or np.any(lo < 0) \
            or np.any(up + lo > 1 + 1e-12):
        raise ChainError("ratio_laws needs non-negative integer rewards and move "
                         "probabilities with forward + backward <= 1")
    if np.any(up[:, -1] > 0) or np.any(lo[:, 0] > 0):
        # the recursion moves mass along these edges: past either end it wrote outside its
        # table (the process aborted, "free(): invalid next size") or into the last rank
        raise ChainError(f"ratio_laws: a walk on {up.shape[1]} ranks has no forward move "
                         f"from the last rank and no backward move from the first; got "
                         f"upper[:, -1] up to {plain(up[:, -1].max())} and lower[:, 0] up "
                         f"to {plain(lo[:, 0].max())} (leaving there is stopping mass: set "
                         f"them to 0)")
    if rho.size and rho.max() > 2**31:
        raise ChainError(f"ratio_laws: rewards up to {plain(rho.max())}; rewards must be "
                         f"small integers")
    rho = np.ascontiguousarray(rho.astype(np.int64))
    steps = _steps_needed(up, lo, tol, max_steps)
    top = max(int(rho.max(initial=0)), 1)
    check_memory((steps + 1, (steps + 1) * top + 1), f"ratio_laws ({steps:,} steps, rewards "
                 f"up to {top})")
    n = np.arange(1, steps + 1)
    t = np.arange((steps + 1) * top + 1)         # the recursion's buffer: one step more
    ratio = np.round(t[None, :] / n[:, None], 12)
    reachable = t[None, :] <= n[:, None] * top
    values = np.unique(ratio[reachable])
    index = np.full((steps + 1, t.size), -1, dtype=np.int64)
    index[1:] = np.where(reachable, np.searchsorted(values, ratio), -1)
    out = np.zeros((rho.shape[0], up.shape[0], values.size))
    bad = np.zeros((rho.shape[0], up.shape[0]), dtype=np.bool_)
    _run_ratio_laws(up, lo, rho, index, float(tol), int(max_steps), out, bad)
    if np.any(bad):
        raise ChainError("ratio_laws: a walk needed more steps than its survival bound")
    return values, out


def _steps_needed(up, lo, tol, max_steps) -> int:
    """First ``n`` with ``P(H > n) <= tol`` for every walk (the alive mass after n steps)."""
    global _STEPS
    if _STEPS is None:
        _STEPS = jit(_walk_steps, nogil=True)
    step = _STEPS(up, lo, tol, max_steps)
    if step < 0:
        raise ChainError(f"ratio_laws: P(H > n) still above tol after {max_steps} steps")
    return int(step)


_STEPS = None


def _walk_steps(up, lo, tol, max_steps):
    """:func:`_steps_needed`'s loop (compiled): the alive mass of every walk stepped until
    its largest is at most ``tol``; -1 when ``max_steps`` do not suffice."""
    draws, n = up.shape
    a = np.zeros((draws, n))
    nxt = np.zeros((draws, n))
    a[:, 0] = 1.0
    for step in range(1, max_steps + 1):
        worst = 0.0
        for d in range(draws):
            alive = 0.0
            for i in range(n):
                v = 0.0
                if i > 0:
                    v += a[d, i - 1] * up[d, i - 1]
                if i < n - 1:
                    v += a[d, i + 1] * lo[d, i + 1]
                nxt[d, i] = v
                alive += v
            worst = max(worst, alive)
        a, nxt = nxt, a
        if worst <= tol:
            return step
    return -1


def _ratio_laws(up, lo, rho, index, tol, max_steps, out, bad, first, last):
    """(list, walk) pairs ``first .. last - 1`` (job = list * walks + walk): the joint law
    by ``_joint_law``, summed onto the support."""
    n = rho.shape[1]
    draws = up.shape[0]
    src = np.empty(2 * n, dtype=np.int64)
    dst = np.empty(2 * n, dtype=np.int64)
    prob = np.empty(2 * n)
    exit_p = np.empty(n)
    start = np.zeros(n)
    start[0] = 1.0
    for job in range(first, last):
        li = job // draws
        d = job % draws
        m = 0
        for i in range(n):
            exit_p[i] = max(1.0 - up[d, i] - lo[d, i], 0.0)
            if up[d, i] > 0.0:
                src[m], dst[m], prob[m] = i, i + 1, up[d, i]
                m += 1
            if lo[d, i] > 0.0:
                src[m], dst[m], prob[m] = i, i - 1, lo[d, i]
                m += 1
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


def _ratio_kernel():
    """The driver, compiled with the joint recursion as its callee (Numba, without the
    GIL), or plain Python."""
    global _RATIO, _JOINT_FOR_LAWS
    if _RATIO is None:
        _JOINT_FOR_LAWS = _joint_kernel()
        _RATIO = jit(_ratio_laws, nogil=True)
    return _RATIO


def _run_ratio_laws(up, lo, rho, index, tol, max_steps, out, bad) -> None:
    """Every (list, walk) pair, in threads over ranges of pairs
    (:func:`~bayeschain.chains.jit.run_in_threads`; each pair writes its own row of
    ``out``)."""
    run_in_threads(_ratio_kernel(), rho.shape[0] * up.shape[0], up, lo, rho, index, tol,
                   max_steps, out, bad)


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
    joint = float_array(joint, "joint law", low=0.0)
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
    one chain is then a matrix product.  Computed by
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
