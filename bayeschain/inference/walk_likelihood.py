r"""Exact log-likelihood of clicks under the examination walk, and its gradient.

The walk of the P@H paper (Ferrante & Ferro, ICTIR 2020, Section 3) examines every rank
it visits; a log shows only the clicks.  On a page of ``n`` results the user arrives at
rank 1; at every arrival on rank ``i`` they click with probability ``c_i`` (a revisit may
click again), then move forward with ``f_i``, backward with ``b_i``, or leave the page,
issuing the next query with ``r_i`` or ending the session with ``s_i``
(``f_i + b_i + r_i + s_i = 1``; ``b_1 = 0`` and ``f_n = 0``: their mass is moved by the
boundary rule, see :func:`apply_boundary`).  With the move matrix ``P``
(``P_{i,i+1} = f_i``, ``P_{i,i-1} = b_i``), ``a = 1 - c`` and the tridiagonal

.. math::  A = I - \operatorname{diag}(a) P, \qquad M = A^{-1}

(``M_ij``: expected arrivals at ``j`` before the first click, from an arrival at ``i``),
the click process is Markov at click times (DESIGN.md section 4):

* first click on ``j``: ``G_1j = (e_1^T M)_j c_j``; no click and outcome ``o``
  (``o = r``, ``s``, or ``r + s`` when the log cannot tell): ``z_1 = e_1^T M (a o)``;
* after a click on ``i`` the next click lands on ``j`` with ``K_ij = (P M)_ij c_j``
  (``K_ii > 0``: a repeated click is an observation), and the page ends with outcome ``o``
  with ``e_i = o_i + (P M (a o))_i``.

A page's likelihood is ``G_{1,k_1} prod_t K_{k_t, k_{t+1}} e_{k_m}`` (or ``z_1``), so a
log enters only through counts per page configuration (:class:`ClickCounts`): first
clicks, click-less pages, click-to-click moves and last clicks by outcome.  Every
probability is ``x^T M y`` for a *left* vector ``x`` (``e_1`` from the start, ``P^T e_i``
after a click on ``i``): one tridiagonal solve ``A^T lambda = x`` per left state gives all
of them, and reverse mode needs one more solve ``A mu = dL/dlambda`` per left state, with
``dL/dA = -sum lambda mu^T`` (read on the three diagonals only).  The cost is O(n) per
left state and page configuration, whatever the number of pages.

The arithmetic is written once (:func:`_config_loglik`, compiled by Numba when it is
installed, plain Python otherwise) and driven two ways: per-position arrays
(:func:`walk_log_likelihood`) and move / click tables indexed by the page
configurations (:func:`table_log_likelihood`, what the fitted models call).  Tested
against dense linear algebra, finite differences and simulated pages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: outcome columns of the counts: next query (r), end of session (s), unknown (r + s)
OUTCOMES = ("next_query", "end", "unknown")
#: boundary rules for the forward mass at a page's last rank
BOUNDARIES = ("leave", "rescale")
_WORK_ROWS = 24


def _thomas_factor(lower, upper, n, cprime, inv):
    """LU of the tridiagonal ``A`` with unit diagonal, ``lower[i] = A[i, i-1]`` and
    ``upper[i] = A[i, i+1]``, without pivoting (A is diagonally dominant by rows):
    ``A = L U`` with ``L`` lower bidiagonal (pivots ``1 / inv[i]``, subdiagonal ``lower``)
    and ``U`` unit upper bidiagonal (superdiagonal ``cprime``)."""
    inv[0] = 1.0
    cprime[0] = upper[0] if n > 1 else 0.0
    for i in range(1, n):
        v = 1.0 / (1.0 - lower[i] * cprime[i - 1])
        inv[i] = v
        cprime[i] = upper[i] * v if i < n - 1 else 0.0


def _thomas_solve(lower, cprime, inv, rhs, out, n):
    """``A out = rhs`` from the factors of :func:`_thomas_factor`."""
    out[0] = rhs[0]
    for i in range(1, n):
        out[i] = (rhs[i] - lower[i] * out[i - 1]) * inv[i]
    for i in range(n - 2, -1, -1):
        out[i] -= cprime[i] * out[i + 1]


def _thomas_solve_t(lower, cprime, inv, rhs, out, n):
    """``A^T out = rhs`` from the same factors (``A^T = U^T L^T``)."""
    out[0] = rhs[0]
    for i in range(1, n):
        out[i] = rhs[i] - cprime[i - 1] * out[i - 1]
    out[n - 1] *= inv[n - 1]
    for i in range(n - 2, -1, -1):
        out[i] = (out[i] - lower[i + 1] * out[i + 1]) * inv[i]


def _config_loglik(n, f, b, r, s, c, states, s_lo, s_hi, term_ptr, targets, counts,
                   gf, gb, gr, gs, gc, work):
    """Log-likelihood of one configuration; gradients *added* into ``gf .. gc``.

    ``f .. c`` are the per-position rows (length >= n).  The configuration's left states
    are ``states[s_lo:s_hi]`` (-1: the page's start, i: after a click on rank i); left
    state ``k`` has the terms ``term_ptr[k]:term_ptr[k + 1]``, each a count of a target
    (``j >= 0`` a click on rank j, ``-1 - o`` leaving with outcome o).  Returns ``-inf``
    when an observed event has probability 0.
    """
    a, lo, up = work[0], work[1], work[2]
    cp, dn, x = work[5], work[6], work[9]
    lam, gbar, mu, d_up, d_lo, ga = work[10], work[11], work[12], work[13], work[14], work[15]
    go = work[16:19]
    ov = work[19:22]
    total = 0.0
    for i in range(n):
        a[i] = 1.0 - c[i]
        ov[0, i] = r[i]
        ov[1, i] = s[i]
        ov[2, i] = r[i] + s[i]
        lo[i] = -a[i] * b[i] if i > 0 else 0.0
        up[i] = -a[i] * f[i] if i < n - 1 else 0.0
        d_up[i] = 0.0
        d_lo[i] = 0.0
        ga[i] = 0.0
        go[0, i] = 0.0
        go[1, i] = 0.0
        go[2, i] = 0.0
        x[i] = 0.0
    _thomas_factor(lo, up, n, cp, dn)
    for k in range(s_lo, s_hi):
        state = states[k]
        if state < 0:
            x[0] = 1.0
        else:
            if state + 1 < n:
                x[state + 1] = f[state]
            if state > 0:
                x[state - 1] = b[state]
        _thomas_solve_t(lo, cp, dn, x, lam, n)
        if state < 0:
            x[0] = 0.0
        else:
            if state + 1 < n:
                x[state + 1] = 0.0
            if state > 0:
                x[state - 1] = 0.0
        for j in range(n):
            gbar[j] = 0.0
        for t in range(term_ptr[k], term_ptr[k + 1]):
            j = targets[t]
            cnt = counts[t]
            if j >= 0:
                p = lam[j] * c[j]
                if not p > 0.0:
                    return -math.inf
                total += cnt * math.log(p)
                gbar[j] += cnt / lam[j]
                gc[j] += cnt / c[j]
            else:
                o = -1 - j
                p = 0.0
                for i in range(n):
                    p += lam[i] * a[i] * ov[o, i]
                if state >= 0:
                    p += ov[o, state]
                if not p > 0.0:
                    return -math.inf
                total += cnt * math.log(p)
                w = cnt / p
                for i in range(n):
                    gbar[i] += w * a[i] * ov[o, i]
                    ga[i] += w * lam[i] * ov[o, i]
                    go[o, i] += w * lam[i] * a[i]
                if state >= 0:
                    go[o, state] += w
        _thomas_solve(lo, cp, dn, gbar, mu, n)
        for i in range(n):
            if i < n - 1:
                d_up[i] -= lam[i] * mu[i + 1]
            if i > 0:
                d_lo[i] -= lam[i] * mu[i - 1]
        if state >= 0:
            if state + 1 < n:
                gf[state] += mu[state + 1]
            if state > 0:
                gb[state] += mu[state - 1]
    for i in range(n):
        if i < n - 1:
            gf[i] -= a[i] * d_up[i]
            ga[i] -= f[i] * d_up[i]
        if i > 0:
            gb[i] -= a[i] * d_lo[i]
            ga[i] -= b[i] * d_lo[i]
        gc[i] -= ga[i]
        gr[i] += go[0, i] + go[2, i]
        gs[i] += go[1, i] + go[2, i]
    return total


def _loglik(lengths, f, b, r, s, c, state_ptr, states, term_ptr, targets, counts,
            gf, gb, gr, gs, gc):
    """Per-position driver: rows ``f .. c`` of shape (G, N), gradients added to ``g*``."""
    n_cfg, width = f.shape
    work = np.zeros((_WORK_ROWS, width))
    total = 0.0
    for g in range(n_cfg):
        n = lengths[g]
        if n <= 0 or state_ptr[g] == state_ptr[g + 1]:
            continue
        ll = _config_loglik(n, f[g], b[g], r[g], s[g], c[g], states, state_ptr[g],
                            state_ptr[g + 1], term_ptr, targets, counts, gf[g], gb[g],
                            gr[g], gs[g], gc[g], work)
        if ll == -math.inf:
            return ll
        total += ll
    return total


def _boundary(n, f, b, r, s, rescale):
    """Apply the boundary rule at position ``n - 1`` in place; returns the moves before."""
    k = n - 1
    fl, bl, rl, sl = f[k], b[k], r[k], s[k]
    if rescale:
        rest = bl + rl + sl
        b[k], r[k], s[k] = bl / rest, rl / rest, sl / rest
    else:
        scale = (rl + sl + fl) / (rl + sl)
        r[k], s[k] = rl * scale, sl * scale
    f[k] = 0.0
    return fl, bl, rl, sl


def _boundary_grad(n, gf, gb, gr, gs, fl, bl, rl, sl, rescale):
    """Gradients at position ``n - 1`` with respect to the moves before the boundary."""
    k = n - 1
    dr, ds = gr[k], gs[k]
    if rescale:
        db = gb[k]
        rest = bl + rl + sl
        dot = (db * bl + dr * rl + ds * sl) / rest**2
        gb[k] = db / rest - dot
        gr[k] = dr / rest - dot
        gs[k] = ds / rest - dot
        gf[k] = 0.0
    else:
        leave = rl + sl
        total = leave + fl
        # r' = r T / L, s' = s T / L with L = r + s, T = L + f
        gr[k] = dr * (total / leave - rl * fl / leave**2) - ds * sl * fl / leave**2
        gs[k] = ds * (total / leave - sl * fl / leave**2) - dr * rl * fl / leave**2
        gf[k] = (dr * rl + ds * sl) / leave


def _table_loglik(lengths, move_index, click_index, moves, click, rescale, state_ptr, states,
                  term_ptr, targets, counts, g_moves, g_click):
    """Table driver: position ``i`` of configuration ``g`` takes the move row
    ``moves[move_index[g, i]]`` (forward, backward, reformulate, stop) and the click
    probability ``click[click_index[g, i]]``; the boundary rule applies at the page's
    last position.  Gradients are added to ``g_moves`` and ``g_click``."""
    n_cfg, width = move_index.shape
    work = np.zeros((_WORK_ROWS, width))
    rows = np.zeros((5, width))
    grads = np.zeros((5, width))
    total = 0.0
    for g in range(n_cfg):
        n = lengths[g]
        if n <= 0 or state_ptr[g] == state_ptr[g + 1]:
            continue
        for i in range(n):
            m = move_index[g, i]
            rows[0, i] = moves[m, 0]
            rows[1, i] = moves[m, 1] if i > 0 else 0.0
            rows[2, i] = moves[m, 2]
            rows[3, i] = moves[m, 3]
            rows[4, i] = click[click_index[g, i]]
            for k in range(5):
                grads[k, i] = 0.0
        fl, bl, rl, sl = _boundary(n, rows[0], rows[1], rows[2], rows[3], rescale)
        ll = _config_loglik(n, rows[0], rows[1], rows[2], rows[3], rows[4], states,
                            state_ptr[g], state_ptr[g + 1], term_ptr, targets, counts,
                            grads[0], grads[1], grads[2], grads[3], grads[4], work)
        if ll == -math.inf:
            return ll
        total += ll
        _boundary_grad(n, grads[0], grads[1], grads[2], grads[3], fl, bl, rl, sl, rescale)
        for i in range(n):
            m = move_index[g, i]
            g_moves[m, 0] += grads[0, i]
            if i > 0:
                g_moves[m, 1] += grads[1, i]
            g_moves[m, 2] += grads[2, i]
            g_moves[m, 3] += grads[3, i]
            g_click[click_index[g, i]] += grads[4, i]
    return total


_COMPILED: dict = {}


def compiled(name: str):
    """A function of this module compiled by Numba (cached on disk), or the same Python
    function without Numba."""
    if not _COMPILED:
        g = globals()
        try:
            import numba
        except ImportError:
            _COMPILED.update({k: g[k] for k in _JITTED})
        else:
            jit = numba.njit(cache=True, nogil=True, error_model="numpy")
            for k in _JITTED:                      # callees first: globals are bound
                g[k] = jit(g[k])
                _COMPILED[k] = g[k]
    return _COMPILED[name]


def compiled_or_python(name: str):
    """A function of this module as it stands now (compiled once :func:`compiled` ran)."""
    return globals()[name]


_JITTED = ("_thomas_factor", "_thomas_solve", "_thomas_solve_t", "_config_loglik", "_boundary",
           "_boundary_grad",
           "_loglik", "_table_loglik")


@dataclass(frozen=True)
class ClickCounts:
    """Sparse click counts per page configuration (see :func:`_config_loglik`).

    Built from dense arrays by :meth:`from_dense`: ``first (G, N)`` first clicks,
    ``none (G, 3)`` click-less pages by outcome (next query, end, unknown), ``moves
    (G, N, N)`` click ``i`` followed by click ``j``, ``ends (G, N, 3)`` last click ``i``
    by outcome.
    """

    state_ptr: np.ndarray     # (G + 1,)
    states: np.ndarray        # (S,) -1 = start, i = after a click on i
    term_ptr: np.ndarray      # (S + 1,)
    targets: np.ndarray       # (T,) j >= 0 click on j; -1 - o: leave with outcome o
    counts: np.ndarray        # (T,)

    @property
    def n_configs(self) -> int:
        return self.state_ptr.size - 1

    def arrays(self) -> tuple:
        return self.state_ptr, self.states, self.term_ptr, self.targets, self.counts

    @classmethod
    def from_dense(cls, first, none, moves, ends) -> ClickCounts:
        first, none, moves, ends = (np.asarray(x, dtype=float)
                                    for x in (first, none, moves, ends))
        n_cfg, width = first.shape
        # per (config, state) rows of targets: columns 0..N-1 clicks, N..N+2 outcomes
        start = np.concatenate([first, none], axis=1)[:, None, :]        # (G, 1, N + 3)
        after = np.concatenate([moves, ends], axis=2)                     # (G, N, N + 3)
        table = np.concatenate([start, after], axis=1)                    # (G, N + 1, N + 3)
        active = table.sum(axis=2) > 0                                    # (G, N + 1)
        cfg, row = np.nonzero(active)
        state_ptr = np.searchsorted(cfg, np.arange(n_cfg + 1))
        rows = table[cfg, row]                                            # (S, N + 3)
        srow, col = np.nonzero(rows)
        term_ptr = np.searchsorted(srow, np.arange(rows.shape[0] + 1))
        targets = np.where(col < width, col, -1 - (col - width))
        return cls(state_ptr.astype(np.int64), (row - 1).astype(np.int64),
                   term_ptr.astype(np.int64), targets.astype(np.int64),
                   rows[srow, col].astype(np.float64))


def walk_log_likelihood(lengths, forward, backward, reformulate, stop, click,
                        counts: ClickCounts, *, gradient: bool = True):
    """Log-likelihood of per-configuration click counts under per-position walk rows.

    Parameters
    ----------
    lengths : (G,) int
        Page length ``n`` of each configuration (positions ``>= n`` are ignored).
    forward, backward, reformulate, stop, click : (G, N) float
        Per-position moves (summing to 1 over the four moves, boundary already applied:
        ``backward[:, 0]`` and ``forward[g, n - 1]`` are ignored) and click probabilities.
    counts : :class:`ClickCounts`

    Returns ``log L`` and, with ``gradient=True``, a dict of ``dlogL/d(parameter)`` arrays
    ``(G, N)`` keyed ``forward``, ``backward``, ``reformulate``, ``stop``, ``click``.
    """
    arrays = [np.ascontiguousarray(x, dtype=np.float64)
              for x in (forward, backward, reformulate, stop, click)]
    grads = [np.zeros_like(arrays[0]) for _ in range(5)]
    ll = compiled("_loglik")(np.ascontiguousarray(lengths, dtype=np.int64), *arrays,
                             *counts.arrays(), *grads)
    if not gradient:
        return ll
    return ll, dict(zip(("forward", "backward", "reformulate", "stop", "click"), grads,
                        strict=True))


def table_log_likelihood(lengths, move_index, click_index, moves, click, counts: ClickCounts,
                         *, boundary: str = "leave"):
    """Log-likelihood when every position takes its moves and click probability from
    tables: ``moves (M, 4)`` rows (forward, backward, reformulate, stop) indexed by
    ``move_index (G, N)`` and ``click (C,)`` indexed by ``click_index (G, N)``; the
    boundary rule (``"leave"`` or ``"rescale"``) applies at each page's last position.

    Returns ``(log L, dlogL/dmoves, dlogL/dclick)``.
    """
    if boundary not in BOUNDARIES:
        raise ValueError(f"boundary must be one of {BOUNDARIES}, got {boundary!r}")
    g_moves = np.zeros_like(moves, dtype=np.float64)
    g_click = np.zeros_like(click, dtype=np.float64)
    ll = compiled("_table_loglik")(lengths, move_index, click_index,
                                   np.ascontiguousarray(moves, dtype=np.float64),
                                   np.ascontiguousarray(click, dtype=np.float64),
                                   boundary == "rescale", *counts.arrays(), g_moves, g_click)
    return ll, g_moves, g_click
