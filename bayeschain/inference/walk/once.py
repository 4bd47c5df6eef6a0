r"""The walk whose click decision is made once: exact likelihood and its gradient.

The examination walk of :mod:`.likelihood` gives every arrival on a rank a fresh click
chance.  Click models (PBM, UBM, DBN) decide once per result.  In this walk the *first*
examination of a rank clicks with ``c_i`` and every later one with ``kappa c_i``
(``kappa`` learned: 1 is the walk of :mod:`.likelihood`, 0 the decision made once).
After the decision the user moves with the moves after a click, ``(f^c, b^c, r^c, s^c)``,
or after an examination without one, ``(f^s, b^s, r^s, s^s)`` (the same set twice for
moves that do not depend on the click); right after a click they click the same result
again at once with ``rho_i`` (a repeat, as in the walk of :mod:`.likelihood`).

**The chain.**  With moves to neighbouring ranks only, the ranks examined so far are
``1..d`` (``d`` the deepest), so the state ``(i, d)``, ``1 <= i <= d <= n`` (55 states on
10 results), says whether an arrival is fresh: forward from ``(d, d)`` reaches
``(d + 1, d + 1)`` for the first time; every other move re-examines.  A state is the
user's place *after* the click decision at an arrival.  With ``Q`` (``C``) the arrivals
without (with) a click along one move set (``Q_s``, ``C_s`` after no click; ``Q_c``,
``C_c`` after a click), ``L_o`` the leave vectors of outcome ``o`` (next query ``r``,
end ``s``, or ``r + s`` when the log cannot tell) and ``N = (I - Q_s)^{-1}``, the clicks
form a Markov chain over the states of the click:

* first click: ``g = c_1 e_{11} + (1 - c_1) e_{11}^T N C_s``; no click and outcome ``o``:
  ``z_o = (1 - c_1) e_{11}^T N L_{s,o}``;
* next click: ``K = diag(rho) + diag(1 - rho) (C_c + Q_c N C_s)``; leaving after a
  click: ``E_o = (1 - rho) (L_{c,o} + Q_c N L_{s,o})``.

The depth is hidden, so a page's likelihood is a forward recursion over its ordered
clicks ``j_1 .. j_m``: ``alpha_1 = g * [rank = j_1]``, ``alpha_t = (alpha_{t-1} K) *
[rank = j_t]``, ``P = alpha_m . E_o`` (``z_o`` for a page without a click), not a product
of per-rank terms: pages enter by their distinct click sequences
(:class:`ClickSequences`), each with its count.  The forward pass is scaled
(``alpha_t = u_t hat alpha_t``, ``u_t`` the running product of the scales), and the
backward pass ``hat beta_m = E_o / e``, ``hat beta_{t-1} = K ([rank = j_t] * hat beta_t)
/ s_t`` (``s_t`` the scale of step ``t``) gives the exact gradient: ``d log P / dK =
sum_t hat alpha_{t-1} hat beta_t^T / s_t``, ``d log P / dg = hat beta_1 / s_1``,
``d log P / dE_o = hat alpha_m / e``; the matrices' adjoints then follow by matrix
calculus (``dN = N dQ_s N``), on the states of the clicked ranks only.  ``I - Q_s`` is
factorised in band storage (a backward move goes one state back, a forward one at most
``n + 1`` on).  Every loop is compiled (Numba, without the GIL: nutpie's chains sample
side by side).  A page of ``n`` results has its boundary at rank ``n`` as in
:mod:`.likelihood` (:func:`~.likelihood.boundary_grad`).

Tested against an exact linear system over the *sets* of ranks examined, pages simulated
directly from the walk's definition, and finite differences
(``tests/inference/walk/test_decided_once.py``).  The study that led here,
with held-out clicks and a mixture of readers, is ``benchmarks/bench_decision_once.py``.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from ...browsing import page_walk
from ...chains.jit import jit_globals
from ...errors import ParameterError
from . import likelihood as walk_likelihood
from .likelihood import OUTCOMES

#: the longest page this walk takes: its states grow as n (n + 1) / 2 (55 on 10 results,
#: 210 on 20) and a gradient's cost as the states times n times the states of the clicked
#: ranks (TREC Session's one page of 47 results clicked at 30 ranks: 22 ms a gradient)
MAX_LENGTH = 20


@dataclass(frozen=True)
class StateLayout:
    """The states ``(i, d)`` of a page of ``n`` results (0-based), ``d``-major."""

    n: int
    rank: np.ndarray         # (S,) the rank of each state
    of_rank: np.ndarray      # (n, n) the state (j, j + k) at [j, k]; -1 beyond
    width: np.ndarray        # (n,) states at each rank: n - j
    src: np.ndarray          # every move (forward ones first): from, to,
    tgt: np.ndarray
    fresh: np.ndarray        # whether it is the first arrival at its target,
    forward: np.ndarray      # whether it is a forward move

    @property
    def size(self) -> int:
        return int(self.rank.size)


@lru_cache(maxsize=64)
def state_layout(n: int) -> StateLayout:
    """The layout of the states of a page of ``n`` results."""
    states = [(i, d) for d in range(n) for i in range(d + 1)]
    index = {s: k for k, s in enumerate(states)}
    of_rank = np.full((n, n), -1, dtype=np.int64)
    for (i, d), k in index.items():
        of_rank[i, d - i] = k
    fwd = [(index[(i, d)], index[(i + 1, max(d, i + 1))], i == d)
           for i, d in states if i < n - 1]
    bwd = [(index[(i, d)], index[(i - 1, d)]) for i, d in states if i > 0]
    moves = [(a, b, fresh, True) for a, b, fresh in fwd] + \
        [(a, b, False, False) for a, b in bwd]
    column = lambda k, kind: np.array([mv[k] for mv in moves], dtype=kind)  # noqa: E731
    return StateLayout(n, np.array([i for i, _ in states], dtype=np.int64), of_rank,
                       (n - np.arange(n)).astype(np.int64), column(0, np.int64),
                       column(1, np.int64), column(2, bool), column(3, bool))


@dataclass(frozen=True)
class SequenceGroup:
    """The distinct sequences of the pages of one length ``n``: ``ptr (U + 1,)`` into the
    clicked ranks ``ranks`` (0-based, flat), ``outcome (U,)``, ``counts (U,)``, ``which
    (U,)`` their global index; and what the chain needs of them, fixed by the log: ``V``
    the states of the ranks they click, ``local (S,)`` each state's place in ``V`` (-1
    outside), ``of_rank (n, n)`` the layout's states of each rank as places in ``V``."""

    ptr: np.ndarray
    ranks: np.ndarray
    outcome: np.ndarray
    counts: np.ndarray
    which: np.ndarray
    V: np.ndarray
    local: np.ndarray
    of_rank: np.ndarray

    @classmethod
    def of(cls, n: int, ptr, ranks, outcome, counts, which) -> SequenceGroup:
        lay = state_layout(n)
        V = np.flatnonzero(np.isin(lay.rank, ranks))
        local = np.full(lay.size, -1, dtype=np.int64)
        local[V] = np.arange(V.size)
        return cls(ptr, ranks, outcome, counts, which, V, local,
                   np.where(lay.of_rank >= 0, local[lay.of_rank], -1))


@dataclass(frozen=True)
class ClickSequences:
    """The distinct pages of a log as this walk sees them: (page length, outcome, ordered
    clicked ranks), each with its count, grouped by page length.

    ``groups``: ``length ->`` :class:`SequenceGroup`; ``page_sequence (P,)``: the sequence
    of each page (in the order of the page data's ``page_ids``); ``pages (U,)``: the pages
    of each sequence."""

    groups: dict
    page_sequence: np.ndarray
    pages: np.ndarray

    @property
    def size(self) -> int:
        return int(self.pages.size)

    @classmethod
    def of(cls, length, outcome, per_page, ranks) -> ClickSequences:
        """From each page's length, outcome code (:data:`~.likelihood.OUTCOMES`) and number
        of clicks, and the clicked ranks (0-based) of every page in turn."""
        length, outcome = np.asarray(length, np.int64), np.asarray(outcome, np.int64)
        per_page, ranks = np.asarray(per_page, np.int64), np.asarray(ranks, np.int64)
        ptr = np.r_[0, np.cumsum(per_page)]
        keys = [np.r_[length[p], outcome[p], ranks[ptr[p]:ptr[p + 1]]].tobytes()
                for p in range(length.size)]
        codes, _ = pd.factorize(pd.Index(keys, dtype=object))
        first = np.unique(codes, return_index=True)[1]
        counts = np.bincount(codes, minlength=first.size).astype(float)
        groups = {}
        for n in np.unique(length[first]):
            mine = np.flatnonzero(length[first] == n)
            lens = per_page[first[mine]]
            flat = np.concatenate([ranks[ptr[p]:ptr[p + 1]] for p in first[mine]])
            groups[int(n)] = SequenceGroup.of(
                int(n), np.r_[0, np.cumsum(lens)].astype(np.int64), flat.astype(np.int64),
                outcome[first[mine]], counts[mine], mine.astype(np.int64))
        return cls(groups, codes.astype(np.int64), counts.astype(np.int64))


def click_sequences(log, data) -> ClickSequences:
    """The click sequences of the pages of ``data`` (:func:`~.data.page_data` of ``log``,
    clicks per rank): repeats kept, in click order."""
    longest = int(data.lengths.max())
    if longest > MAX_LENGTH:
        long = int((data.lengths[data.page_config] > MAX_LENGTH).sum())
        raise ParameterError(
            f"the walk that decides once takes pages of at most {MAX_LENGTH} results (its "
            f"states, (rank, deepest rank examined), grow with the square of the page's "
            f"length); {long} of the log's {data.page_ids.size} pages have more, up to "
            f"{longest}; the default walk (spec walk) takes pages of any length, walk-reclick "
            f"pages of up to 62")
    obs, pages, _ = log.observations()
    page_ids = data.page_ids
    clicks = obs[obs["serp_id"].isin(page_ids)].sort_values(["serp_id", "k"], kind="stable")
    page_of = pd.Index(page_ids).get_indexer(clicks["serp_id"].to_numpy())
    code = {o: i for i, o in enumerate(OUTCOMES)}
    outcome = pages.set_index("serp_id")["outcome"].reindex(page_ids).map(code)
    return ClickSequences.of(data.lengths[data.page_config], outcome.to_numpy(dtype=np.int64),
                             np.bincount(page_of, minlength=page_ids.size),
                             clicks["rank"].to_numpy(dtype=np.int64) - 1)


def bounded(rows: np.ndarray, n: int, rescale: bool) -> np.ndarray:
    """The move rows ``(f, b, r, s)`` of a page of ``n`` results with the walk's boundary
    rule at rank ``n`` (:func:`~bayeschain.browsing.page_walk.boundary`, the rule of the
    likelihood and the simulators)."""
    f, b, r, s = (np.array(rows[:n, k], dtype=float) for k in range(4))
    page_walk.boundary(n, f, b, r, s, rescale)
    return np.stack([f, b, r, s], axis=1)


def lu_factor_kernel(m):
    """``I - Q_s = L U`` in place, in band storage: ``m[i, j - i + 1]`` holds entry
    ``(i, j)`` for ``i - 1 <= j <= i + w`` (``w = m.shape[1] - 2``).  In the states'
    order (``d``-major) a backward move goes one place back, a forward one at most ``n + 1``
    places on, so ``L`` is unit lower bidiagonal and ``U`` keeps the upper band.  No
    pivoting: ``I - Q`` with ``Q`` substochastic by rows is diagonally dominant, and
    Gaussian elimination keeps it so."""
    n, w = m.shape[0], m.shape[1] - 2
    for k in range(n - 1):
        f = m[k + 1, 0] / m[k, 1]
        m[k + 1, 0] = f
        if f != 0.0:
            for j in range(k + 1, min(n, k + w + 1)):
                m[k + 1, j - k] -= f * m[k, j - k + 1]


def lu_solve_kernel(m, b, trans):
    """``b <- (L U)^{-1} b`` (``trans``: ``(L U)^{-T} b``) in place, ``b`` of shape
    ``(n, k)``, for the band factors of :func:`lu_factor_kernel`."""
    n, k = b.shape
    w = m.shape[1] - 2
    if not trans:
        for i in range(1, n):                    # L y = b
            f = m[i, 0]
            if f != 0.0:
                for c in range(k):
                    b[i, c] -= f * b[i - 1, c]
        for i in range(n - 1, -1, -1):           # U x = y
            for j in range(i + 1, min(n, i + w + 1)):
                f = m[i, j - i + 1]
                if f != 0.0:
                    for c in range(k):
                        b[i, c] -= f * b[j, c]
            for c in range(k):
                b[i, c] /= m[i, 1]
    else:
        for i in range(n):                       # U^T y = b
            for j in range(max(0, i - w), i):
                f = m[j, i - j + 1]
                if f != 0.0:
                    for c in range(k):
                        b[i, c] -= f * b[j, c]
            for c in range(k):
                b[i, c] /= m[i, 1]
        for i in range(n - 2, -1, -1):           # L^T x = y
            f = m[i + 1, 0]
            if f != 0.0:
                for c in range(k):
                    b[i, c] -= f * b[i + 1, c]


def chain_kernel(src, tgt, fresh, forward, rank, V, local, skip, after, c, kappa, rho, m,
                 pc, A, X, g, z, K, E, M, W):
    """The click chain of one page length on the states ``V`` (see the module docstring),
    written into ``A = N C_s[:, V]``, ``X = N L_s^T``, ``g, z, K, E`` and the parts of
    ``K`` and ``E`` before the repeats (``M = C_c[V, V] + Q_c[V] A``, ``W = L_c[:, V] +
    (Q_c[V] X)^T``); ``m`` ``(S, n + 3)`` receives the band LU factors of ``I - Q_s``.
    Moves ``mv`` go from ``src`` to ``tgt`` (``forward``: a forward move; ``fresh``: the
    first arrival at its target); ``pc`` receives each move's click probability there."""
    S, nv = rank.size, V.size
    for i in range(S):
        for j in range(m.shape[1]):
            m[i, j] = 1.0 if j == 1 else 0.0
        for j in range(nv):
            A[i, j] = 0.0
        X[i, 0] = skip[rank[i], 2]
        X[i, 1] = skip[rank[i], 3]
        X[i, 2] = skip[rank[i], 2] + skip[rank[i], 3]
    for mv in range(src.size):
        pc[mv] = c[rank[tgt[mv]]] * (1.0 if fresh[mv] else kappa)
        w = skip[rank[src[mv]], 0 if forward[mv] else 1]
        m[src[mv], tgt[mv] - src[mv] + 1] -= w * (1.0 - pc[mv])
        if local[tgt[mv]] >= 0:
            A[src[mv], local[tgt[mv]]] += w * pc[mv]
    lu_factor_kernel(m)
    lu_solve_kernel(m, A, False)
    lu_solve_kernel(m, X, False)
    for v in range(nv):
        r = after[rank[V[v]], 2]
        s = after[rank[V[v]], 3]
        W[0, v] = r
        W[1, v] = s
        W[2, v] = r + s
        for u in range(nv):
            M[v, u] = 0.0
    for mv in range(src.size):
        v = local[src[mv]]
        if v < 0:
            continue
        w = after[rank[src[mv]], 0 if forward[mv] else 1]
        q = w * (1.0 - pc[mv])
        if local[tgt[mv]] >= 0:
            M[v, local[tgt[mv]]] += w * pc[mv]
        for u in range(nv):
            M[v, u] += q * A[tgt[mv], u]
        for o in range(3):
            W[o, v] += q * X[tgt[mv], o]
    for v in range(nv):
        g[v] = (1.0 - c[0]) * A[0, v]
        r = rho[rank[V[v]]]
        for u in range(nv):
            K[v, u] = (1.0 - r) * M[v, u]
        K[v, v] += r
        for o in range(3):
            E[o, v] = (1.0 - r) * W[o, v]
    if local[0] >= 0:
        g[local[0]] += c[0]
    for o in range(3):
        z[o] = (1.0 - c[0]) * X[0, o]


def adjoint_kernel(src, tgt, fresh, forward, rank, V, local, skip, after, c, kappa, rho, m,
                   pc, A, X, M, W, Gg, Gz, GK, GE, g_skip, g_after, g_c, g_kappa, g_rho):
    """Reverse mode of :func:`chain_kernel`: from the gradients with respect to ``g, z, K,
    E`` to those with respect to the bounded move rows after no click (``g_skip``) and
    after a click (``g_after``), ``c``, ``kappa`` (``g_kappa[0]``) and ``rho``, *added*.
    ``dN = N dQ_s N``, so ``G_{Q_s} = N^T G_A A^T + N^T G_X X^T`` and ``G_{C_s} = N^T G_A``,
    read at the moves' entries only."""
    S, nv = rank.size, V.size
    GM = np.empty((nv, nv))
    GW = np.empty((3, nv))
    for v in range(nv):
        r = rho[rank[V[v]]]
        acc = GK[v, v]
        for u in range(nv):
            acc -= GK[v, u] * M[v, u]
            GM[v, u] = (1.0 - r) * GK[v, u]
        for o in range(3):
            acc -= GE[o, v] * W[o, v]
            GW[o, v] = (1.0 - r) * GE[o, v]
        g_rho[rank[V[v]]] += acc
        # the leave probabilities after a click (L_c at V)
        g_after[rank[V[v]], 2] += GW[0, v] + GW[2, v]
        g_after[rank[V[v]], 3] += GW[1, v] + GW[2, v]
    GA = np.zeros((S, nv))
    GX = np.zeros((S, 3))
    for mv in range(src.size):
        v = local[src[mv]]
        if v < 0:
            continue
        q = after[rank[src[mv]], 0 if forward[mv] else 1] * (1.0 - pc[mv])
        for u in range(nv):
            GA[tgt[mv], u] += q * GM[v, u]
        for o in range(3):
            GX[tgt[mv], o] += q * GW[o, v]
    gc0 = 0.0
    for v in range(nv):
        gc0 -= Gg[v] * A[0, v]
        GA[0, v] += (1.0 - c[0]) * Gg[v]
    for o in range(3):
        gc0 -= Gz[o] * X[0, o]
        GX[0, o] += (1.0 - c[0]) * Gz[o]
    if local[0] >= 0:
        gc0 += Gg[local[0]]
    g_c[0] += gc0
    lu_solve_kernel(m, GA, True)                       # N^T G_A
    lu_solve_kernel(m, GX, True)                       # N^T G_X
    for i in range(S):                                 # the leave probabilities (L_s)
        g_skip[rank[i], 2] += GX[i, 0] + GX[i, 2]
        g_skip[rank[i], 3] += GX[i, 1] + GX[i, 2]
    for mv in range(src.size):
        a, b = src[mv], tgt[mv]
        col = 0 if forward[mv] else 1
        p = pc[mv]
        gq = 0.0                                        # without a click, after no click
        for u in range(nv):
            gq += GA[a, u] * A[b, u]
        for o in range(3):
            gq += GX[a, o] * X[b, o]
        gk = GA[a, local[b]] if local[b] >= 0 else 0.0  # with a click, after no click
        w = skip[rank[a], col]
        g_skip[rank[a], col] += gq * (1.0 - p) + gk * p
        g_p = w * (gk - gq)
        v = local[a]
        if v >= 0:                                      # the moves after a click
            gq = 0.0
            for u in range(nv):
                gq += GM[v, u] * A[b, u]
            for o in range(3):
                gq += GW[o, v] * X[b, o]
            gk = GM[v, local[b]] if local[b] >= 0 else 0.0
            w = after[rank[a], col]
            g_after[rank[a], col] += gq * (1.0 - p) + gk * p
            g_p += w * (gk - gq)
        if fresh[mv]:
            g_c[rank[b]] += g_p
        else:
            g_c[rank[b]] += g_p * kappa
            g_kappa[0] += g_p * c[rank[b]]


def sequences_kernel(of_rank, width, g, z, K, E, ptr, ranks, outcome, counts, Gg, Gz, GK,
                     GE, seq_ll):
    """The scaled forward-backward recursion of the module docstring over the sequences
    ``ptr, ranks, outcome, counts`` of one page length: their log-likelihood (each
    sequence's into ``seq_ll``, weighted sum returned) and the gradients *added* into
    ``Gg, Gz, GK, GE``.  ``-inf`` when an observed sequence has probability 0."""
    n = of_rank.shape[0]
    longest = 1
    for u in range(ptr.size - 1):
        longest = max(longest, ptr[u + 1] - ptr[u])
    alpha = np.zeros((longest, n))
    scale = np.zeros(longest)
    beta = np.zeros(n)
    nb = np.zeros(n)
    total = 0.0
    for u in range(ptr.size - 1):
        lo, hi = ptr[u], ptr[u + 1]
        m, o, w = hi - lo, outcome[u], counts[u]
        if m == 0:
            p = z[o]
            if not p > 0.0:
                return -math.inf
            seq_ll[u] = math.log(p)
            total += w * seq_ll[u]
            Gz[o] += w / p
            continue
        j = ranks[lo]
        s = 0.0
        for k in range(width[j]):
            alpha[0, k] = g[of_rank[j, k]]
            s += alpha[0, k]
        if not s > 0.0:
            return -math.inf
        scale[0] = s
        for k in range(width[j]):
            alpha[0, k] /= s
        ll = math.log(s)
        for t in range(1, m):
            jp, jt = ranks[lo + t - 1], ranks[lo + t]
            s = 0.0
            for k2 in range(width[jt]):
                col = of_rank[jt, k2]
                acc = 0.0
                for k1 in range(width[jp]):
                    acc += alpha[t - 1, k1] * K[of_rank[jp, k1], col]
                alpha[t, k2] = acc
                s += acc
            if not s > 0.0:
                return -math.inf
            scale[t] = s
            for k2 in range(width[jt]):
                alpha[t, k2] /= s
            ll += math.log(s)
        jm = ranks[hi - 1]
        e = 0.0
        for k in range(width[jm]):
            e += alpha[m - 1, k] * E[o, of_rank[jm, k]]
        if not e > 0.0:
            return -math.inf
        ll += math.log(e)
        seq_ll[u] = ll
        total += w * ll
        for k in range(width[jm]):
            beta[k] = E[o, of_rank[jm, k]] / e
            GE[o, of_rank[jm, k]] += w * alpha[m - 1, k] / e
        for t in range(m - 1, 0, -1):
            jp, jt = ranks[lo + t - 1], ranks[lo + t]
            for k1 in range(width[jp]):
                row = of_rank[jp, k1]
                acc = 0.0
                for k2 in range(width[jt]):
                    col = of_rank[jt, k2]
                    GK[row, col] += w * alpha[t - 1, k1] * beta[k2] / scale[t]
                    acc += K[row, col] * beta[k2]
                nb[k1] = acc / scale[t]
            for k1 in range(width[jp]):
                beta[k1] = nb[k1]
        for k in range(width[j]):
            Gg[of_rank[j, k]] += w * beta[k] / scale[0]
    return total


_KERNELS: dict = {}
_KERNELS_LOCK = threading.Lock()
_JITTED = ("lu_factor_kernel", "lu_solve_kernel", "chain_kernel", "adjoint_kernel",
           "sequences_kernel")


def _kernels() -> dict:
    """This module's kernels compiled by Numba (callees first, bound as the globals their
    callers compile against), or plain Python without it; built once, under a lock:
    nutpie's chains make their first calls at the same time."""
    with _KERNELS_LOCK:
        if not _KERNELS:
            _KERNELS.update(jit_globals(globals(), _JITTED, nogil=True,
                                        error_model="numpy"))
    return _KERNELS


def log_likelihood(seqs: ClickSequences, skip, click_rows, c, kappa: float, rho, *,
                   rescale: bool = False, gradient: bool = True):
    """The log-likelihood of the sequences ``seqs`` under the walk of the module docstring:
    move rows ``(ranks, 4)`` ``(f, b, r, s)`` after no click (``skip``) and after a click,
    click probabilities ``c``, ``kappa`` and repeats ``rho`` per rank.

    Returns ``(ll, seq_ll, grads)``: ``seq_ll (U,)`` each sequence's log-probability,
    ``grads`` the gradients with respect to ``skip, click_rows, c, kappa, rho`` (None
    without ``gradient``).  ``ll = -inf`` when an observed sequence is impossible."""
    ranks = skip.shape[0]
    skip, click_rows = np.asarray(skip, float), np.asarray(click_rows, float)
    c, rho = np.ascontiguousarray(c, float), np.ascontiguousarray(rho, float)
    out = [np.zeros((ranks, 4)), np.zeros((ranks, 4)), np.zeros(ranks), np.zeros(1),
           np.zeros(ranks)]
    seq_ll = np.full(seqs.size, np.nan)
    total = 0.0
    k = _kernels()
    boundary_grad = getattr(walk_likelihood.boundary_grad, "py_func",
                            walk_likelihood.boundary_grad)      # views: no specialisation
    for n, grp in seqs.groups.items():
        lay = state_layout(n)
        S, nv = lay.size, grp.V.size
        s_n, c_n = bounded(skip, n, rescale), bounded(click_rows, n, rescale)
        m, pc, A, X = np.empty((S, n + 3)), np.empty(lay.src.size), np.empty((S, nv)), \
            np.empty((S, 3))
        g, z, K, E = np.empty(nv), np.empty(3), np.empty((nv, nv)), np.empty((3, nv))
        M, W = np.empty((nv, nv)), np.empty((3, nv))
        args = (lay.src, lay.tgt, lay.fresh, lay.forward, lay.rank, grp.V, grp.local, s_n,
                c_n, c[:n], float(kappa), rho[:n], m, pc, A, X)
        k["chain_kernel"](*args, g, z, K, E, M, W)
        Gg, Gz = np.zeros(nv), np.zeros(3)
        GK, GE = np.zeros((nv, nv)), np.zeros((3, nv))
        mine = np.full(grp.which.size, np.nan)
        ll = k["sequences_kernel"](grp.of_rank, lay.width, g, z, K, E, grp.ptr, grp.ranks,
                                   grp.outcome, grp.counts, Gg, Gz, GK, GE, mine)
        seq_ll[grp.which] = mine
        if ll == -math.inf:
            return -math.inf, seq_ll, None
        total += ll
        if not gradient:
            continue
        g_skip, g_click = np.zeros((n, 4)), np.zeros((n, 4))
        g_c, g_rho = np.zeros(n), np.zeros(n)
        k["adjoint_kernel"](*args, M, W, Gg, Gz, GK, GE, g_skip, g_click, g_c, out[3],
                            g_rho)
        for rows, g_rows, into in ((skip, g_skip, out[0]), (click_rows, g_click, out[1])):
            f, b, r, s = rows[n - 1]
            boundary_grad(n, g_rows[:, 0], g_rows[:, 1], g_rows[:, 2], g_rows[:, 3],
                          f, b, r, s, rescale)
            into[:n] += g_rows
        out[2][:n] += g_c
        out[4][:n] += g_rho
    if not gradient:
        return total, seq_ll, None
    return total, seq_ll, (out[0], out[1], out[2], float(out[3][0]), out[4])


class DecidedOnce:
    """The density the sampler draws for a :class:`~.model.WalkModel` built with
    ``reclicks = "once"``: its priors and parametrisation (the same families, ``kappa``
    its ``reclick`` coordinate) with the likelihood of this module over the log's click
    sequences.  Sampled through nutpie's Python callback; the posterior keeps the walk's
    moves, clicks and repeats as the default walk's and ``second_look`` (``kappa``).  The
    moves do not depend on the click (the model refuses ``click_moves`` with it: whether
    an arrival clicks depends on the ranks examined before, so the walk over ranks with
    the clicks marginalised would not be Markov), so the walk over ranks is the default
    walk's chain and P@H scores it as it is.  The likelihood of this module takes moves
    after a click apart (``bench_decision_once.py`` fits them at the mode).  The pointwise
    log-likelihood is kept per distinct click sequence (:class:`ClickSequences`), for
    LOO."""

    unchecked: tuple = ()

    def __init__(self, model, sequences: ClickSequences):
        import dataclasses

        from .data import PagePatterns

        self.model = model
        self.sequences = sequences
        self.ndim = model.ndim
        self.data = dataclasses.replace(model.data, patterns=PagePatterns(
            None, sequences.pages, sequences.page_sequence))
        data = model.data
        # the click coordinate of each rank (clicks per rank: the same at every page)
        widest = int(np.argmax(data.lengths))
        index, combo_click, _ = model._combos
        self._click_at = combo_click[index[widest, :data.ranks]]
        # compile (or load) every kernel now, in this thread: nutpie's chains make their
        # first calls at once (before this, the same seed sampled 609 and 900 draws in
        # two runs of one log; a race on the kernels' first use the likely cause)
        self.logp(model.initial_point(np.random.default_rng(0)))

    def initial_point(self, rng) -> np.ndarray:
        return self.model.initial_point(rng)

    def _parts(self, theta):
        from .model import logistic

        m = self.model
        logits = m._logits(theta)                   # once: every table reads them
        click = logistic(logits[m._n_move_coords + m.data.ranks + self._click_at])
        return (logits, m.move_tables(theta, logits), click, m.repeat_table(theta, logits),
                m.reclick_factor(theta, logits))

    def _likelihood(self, theta, gradient: bool):
        logits, tables, click, rho, kappa = self._parts(theta)
        return (logits, tables, click, rho, kappa) + log_likelihood(
            self.sequences, tables[0, 0], tables[-1, 0], click, kappa, rho,
            rescale=self.model.boundary == "rescale", gradient=gradient)

    def logp(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Log posterior density (up to a constant) and its gradient."""
        from .model import compiled, kernel_theta

        theta = kernel_theta(theta)
        m = self.model
        logits, tables, click, rho, kappa, ll, _, grads = self._likelihood(theta, True)
        if not np.isfinite(ll):
            return -np.inf, np.zeros_like(theta)
        g_skip, g_click, g_c, g_kappa, g_rho = grads
        ranks = m.data.ranks
        g_rows = np.zeros((m.n_sets * ranks, 4))
        g_rows[:ranks] += g_skip
        g_rows[(m.n_sets - 1) * ranks:] += g_click
        g_logits = np.zeros(logits.size)
        compiled("_move_rows_grad")(np.ascontiguousarray(tables.reshape(-1, 4)), g_rows,
                                     m.n_sets, ranks, m.free, g_logits)
        n_move = m._n_move_coords
        g_logits[n_move:n_move + ranks] = g_rho * rho * (1.0 - rho)
        np.add.at(g_logits, n_move + ranks + self._click_at, g_c * click * (1.0 - click))
        if m._reclick_coord >= 0:
            g_logits[m._reclick_coord] = g_kappa * kappa * (1.0 - kappa)
        grad = np.zeros_like(theta)
        kind, p_start, c_start, n_coord, x, centred, a0, prior_sd, dev_sd = \
            m.prior_arguments()
        lp = compiled("_families_backward")(theta, kind, p_start, c_start, n_coord, x,
                                            centred, a0, prior_sd, dev_sd, g_logits, grad)
        return float(ll + lp), grad

    def pattern_log_likelihood(self, theta: np.ndarray) -> np.ndarray:
        """``(U,)`` the log-likelihood of each distinct click sequence at ``theta``."""
        return self._likelihood(np.asarray(theta, dtype=float), False)[6]

    def expand(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """The named quantities of one draw (see the class)."""
        out = self.model.expand(theta)
        out["second_look"] = out.pop("reclick")
        return out
