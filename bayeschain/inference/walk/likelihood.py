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
the click process is Markov at click times:

* first click on ``j``: ``G_1j = (e_1^T M)_j c_j``; no click and outcome ``o``
  (``o = r``, ``s``, or ``r + s`` when the log cannot tell): ``z_1 = e_1^T M (a o)``;
* after a click on ``i`` the user clicks the same result again at once with ``rho_i``
  (a repeat: the same examination, no move), or walks on: the next click lands on ``j``
  with ``K'_ij = rho_i [i = j] + (1 - rho_i) K_ij``, ``K_ij = (P M)_ij c_j`` (``K_ii > 0``
  too: a revisit may click again), and the page ends with outcome ``o`` with
  ``e'_i = (1 - rho_i) (o_i + (P M (a o))_i)``.  Repeats are observations, not anomalies:
  without ``rho`` a log full of them (52% of CLARA2's click-to-click moves) can only be
  explained by walks bouncing between neighbouring ranks.

A page's likelihood is ``G_{1,k_1} prod_t K'_{k_t, k_{t+1}} e'_{k_m}`` (or ``z_1``), so a
log enters only through counts per page configuration (:class:`ClickCounts`): first
clicks, click-less pages, click-to-click moves and last clicks by outcome.

**Damped re-clicks.**  When a result already clicked on the page (the set ``S`` of the
positions clicked so far) clicks at a later arrival with ``kappa c_i``, the click process
is still Markov given ``S``, which the log shows: after the ``t``-th click the terms use
``c'_S`` (``c'_i = kappa c_i`` for ``i`` in ``S``, ``c_i`` otherwise) in place of ``c``,
``A_S = I - diag(1 - c'_S) P`` and ``K_ij = (P A_S^{-1})_ij c'_j``.  The counts are then
keyed also by ``S`` (a bit mask per left state), and each such state solves with its own
``A_S``; the immediate repeat keeps ``rho_i``.  ``kappa = 1`` is the walk above.  Every
probability is ``x^T M y`` for a *left* vector ``x`` (``e_1`` from the start, ``P^T e_i``
after a click on ``i``): one tridiagonal solve ``A^T lambda = x`` per left state gives all
of them, and reverse mode needs one more solve ``A mu = dL/dlambda`` per left state, with
``dL/dA = -sum lambda mu^T`` (read on the three diagonals only).  The cost is O(n) per
left state and page configuration, whatever the number of pages.

The arithmetic is written once (:func:`block_loglik_kernel`, compiled by Numba when it is
installed, plain Python otherwise; work items, each a configuration's left states or
some of them, run side by side in SIMD lanes, a block of :data:`LANES` at a time, or of
:data:`NARROW_LANES` on a log of few of them: see :func:`blocks`) and driven two ways:
per-position arrays (:func:`walk_log_likelihood`) and move / click tables indexed by the page
configurations (:func:`table_log_likelihood`, what the fitted models call).  The drivers
call the block kernel of the log's width by its address (:func:`block_kernel`), so
that neither they nor the density and C callback that call them compile the kernels'
code again (:func:`~bayeschain.chains.jit.function_pointers`), and a log compiles only
the kernel of its own width.  Tested against dense linear algebra, finite differences
and simulated pages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...browsing import page_walk
from ...chains.jit import function_pointers, jit, jit_globals
from ...posterior.vocabulary import BOUNDARIES

#: outcome columns of the counts: next query (r), end of session (s), unknown (r + s)
OUTCOMES = ("next_query", "end", "unknown")
#: the target of leaving the page for the session's next query (``-1 - o``)
NEXT_QUERY = -1 - OUTCOMES.index("next_query")
#: the target of leaving the page at the session's end
END = -1 - OUTCOMES.index("end")
_WORK_ROWS = 28
#: work items processed side by side (SIMD lanes), a compile-time constant: a lane count
#: read at run time made every lane loop one of unknown length and the kernel's first
#: compile 3 s longer (the cold demo 32.4 s); read from the arrays, one kernel for both
#: widths compiled once (4.5 s less on a cold cache) but the demo's TREC Session walks
#: sampled about 10% slower (2026-12-01, ad hoc).  One gradient of the default walk
#: (``benchmarks/bench_walk_sampler.py --gradient``): 8 lanes and 4 left states an item
#: before, 32 lanes and the split :func:`blocks` chooses now: WSCD per document (1,479
#: configurations) 1.68 -> 0.95 ms, CLARA2 per document (6,611) 3.45 -> 2.30 ms; TREC
#: Session (10 configurations: most lanes of its one block empty) 0.065 -> 0.076 ms
#: on 2026-11-29; on 2026-11-30's slower machine the same comparison (the walk's TREC
#: model, b9c82d9 against d34a5a1) gave 109-113 -> 155-160 us, and the demo 7 s of its 48
#: (``benchmarks/RESULTS.md``); such logs now run blocks of :data:`NARROW_LANES`.
#: Without Numba the plain Python kernel runs every lane too
LANES = 32
#: the lanes of the narrow variant of the block kernel (:func:`with_lanes`), for logs of
#: few work items, whose one or few blocks of :data:`LANES` run mostly empty lanes: on
#: 2026-11-30 one gradient of TREC Session's walk took 0.159 ms at 32 lanes and 0.108 at
#: 8, WSCD per document 1.444 and 1.743 ms, CLARA2 3.698 and 4.698 ms (each width at its
#: best split; ``benchmarks/bench_walk_sampler.py --gradient``); a simulated log of one
#: configuration (10 results, 11 left states) 35 and 15 us
NARROW_LANES = 8
#: :func:`blocks` takes the narrow lanes when their blocks' work (:func:`_block_cost`)
#: times this is less than the wide ones': at equal modelled work the wide blocks ran
#: CLARA2 1.3 times faster (the lane loops' fixed cost per block, outside the model)
NARROW_PENALTY = 1.3


def fill_lanes(n, f, b, r, s, c, kappa, mask, a, aov, lo, up):
    """Per lane ``w``: ``a = 1 - c'`` (``c'_i = kappa c_i`` where bit ``i`` of ``mask[w]``
    is set, ``c_i`` elsewhere), ``aov[o] = a v_o`` for the outcomes ``r, s, r + s``, and
    the off-diagonals of ``A = I - diag(a) P``: ``lo = -a b``, ``up = -a f``."""
    for i in range(n):
        for w in range(a.shape[1]):
            ci = c[i, w] * kappa if (mask[w] >> i) & 1 else c[i, w]
            ai = 1.0 - ci
            a[i, w] = ai
            aov[0, i, w] = ai * r[i, w]
            aov[1, i, w] = ai * s[i, w]
            aov[2, i, w] = ai * (r[i, w] + s[i, w])
            lo[i, w] = -ai * b[i, w] if i > 0 else 0.0
            up[i, w] = -ai * f[i, w] if i < n - 1 else 0.0


def factor_lanes(n, lo, up, cp, inv):
    """``A = L U`` of the tridiagonal ``A`` (unit diagonal, subdiagonal ``lo``,
    superdiagonal ``up``) of every lane: ``L`` lower bidiagonal with pivots ``1 / inv``
    and subdiagonal ``lo``, ``U`` unit upper bidiagonal with superdiagonal ``cp``."""
    lanes = lo.shape[1]
    for w in range(lanes):
        inv[0, w] = 1.0
        cp[0, w] = up[0, w] if n > 1 else 0.0
    for i in range(1, n):
        for w in range(lanes):
            v = 1.0 / (1.0 - lo[i, w] * cp[i - 1, w])
            inv[i, w] = v
            cp[i, w] = up[i, w] * v if i < n - 1 else 0.0


def block_loglik_kernel(n, f, b, r, s, fc, bc, rc, sc, c, q, kappa, s_lo, s_hi, states,
                        clicked, term_ptr, targets, counts, gf, gb, gr, gs, gfc, gbc, grc,
                        gsc, gc, gq, g_kappa, wk, term_ll):
    """Log-likelihood of up to ``LANES`` work items side by side, on ``n`` positions:
    column ``w`` of the rows ``f .. c`` (shape ``(width >= n, LANES)``, C-contiguous so that
    the lane loops vectorise) is the configuration of item ``w`` (a shorter page has zero
    moves from its last position on, so the positions it lacks are never reached), whose
    left states are ``states[s_lo[w]:s_hi[w]]`` (-1: the page's start, i: after a click on
    rank i; an empty range marks an unused lane).  Left state ``k`` has the terms
    ``term_ptr[k]:term_ptr[k + 1]``, each a count of a target (``j >= 0`` a click on rank j,
    ``-1 - o`` leaving with outcome o).  ``q`` holds the repeat probabilities ``rho``.
    ``fc .. sc`` are the moves after a click (the left vector ``P_c^T e_i`` and the
    direct leave after a click on ``i``); ``f .. s`` the moves after an examination
    without a click (the matrix ``A``).  Pass the same arrays (and the same gradient
    arrays) twice for moves that do not depend on the click.
    ``clicked[k]``: the positions clicked on the page so far at left state ``k`` (a bit
    mask, bit ``i`` for position ``i``); an arrival at a clicked position clicks with
    ``kappa c_i`` instead of ``c_i`` (a result already clicked is clicked again less
    often; an all-zero mask is the walk whose every arrival is a fresh click chance), so
    such a state solves with its own matrix ``A_S = I - diag(1 - c'_S) P``.
    Gradients are *added* into ``gf .. gq`` and ``g_kappa[0]``; the log-probability of
    every term is written into ``term_ll`` unless it is empty.  The tridiagonal solves run
    across the lanes at once (SIMD); the terms are read lane by lane.  Returns ``-inf``
    when an observed event has probability 0.

    Outcome ``o`` leaves with ``v_o = r, s`` or ``r + s``; ``L_o = sum_k (count / P) lam_k``
    over the terms with outcome ``o`` collects what ``dL/da`` and ``dL/dv_o`` need, so the
    per-state work is two solves and a few vector updates.
    """
    lanes = LANES
    a, lo, up, cp, inv, x = wk[0], wk[1], wk[2], wk[3], wk[4], wk[5]
    lam, gbar, mu, d_up, d_lo = wk[6], wk[7], wk[8], wk[9], wk[10]
    big = wk[11:14]            # L_o
    aov = wk[14:17]            # a * v_o
    direct = wk[17:20]         # dL/dv_o at the clicked state itself (e_i = v_o,i + ...)
    a_s, lo_s, up_s, cp_s, inv_s = wk[20], wk[21], wk[22], wk[23], wk[24]
    aov_s = wk[25:28]          # the same for a state with clicked positions
    mask = np.zeros(lanes, dtype=np.int64)
    pw = np.zeros((3, lanes))
    wsum = np.zeros((3, lanes))
    total = 0.0
    slots = 0
    for w in range(lanes):
        slots = max(slots, s_hi[w] - s_lo[w])
    fill_lanes(n, f, b, r, s, c, kappa, mask, a, aov, lo, up)    # mask 0: no click yet
    for i in range(n):
        for w in range(lanes):
            d_up[i, w] = 0.0
            d_lo[i, w] = 0.0
            big[0, i, w] = 0.0
            big[1, i, w] = 0.0
            big[2, i, w] = 0.0
            direct[0, i, w] = 0.0
            direct[1, i, w] = 0.0
            direct[2, i, w] = 0.0
            x[i, w] = 0.0
    factor_lanes(n, lo, up, cp, inv)
    for k in range(slots):
        own = False            # some lane's state has clicked positions: its own matrix
        for w in range(lanes):
            mask[w] = clicked[s_lo[w] + k] if k < s_hi[w] - s_lo[w] else 0
            if mask[w] != 0:
                own = True
        if own:
            fill_lanes(n, f, b, r, s, c, kappa, mask, a_s, aov_s, lo_s, up_s)
            factor_lanes(n, lo_s, up_s, cp_s, inv_s)
            lom, cpm, invm, aovm = lo_s, cp_s, inv_s, aov_s
        else:
            lom, cpm, invm, aovm = lo, cp, inv, aov
        for w in range(lanes):
            if k < s_hi[w] - s_lo[w]:
                state = states[s_lo[w] + k]
                if state < 0:
                    x[0, w] = 1.0
                else:
                    if state + 1 < n:
                        x[state + 1, w] = fc[state, w]
                    if state > 0:
                        x[state - 1, w] = bc[state, w]
        # A^T lam = x: U^T then L^T
        for w in range(lanes):
            lam[0, w] = x[0, w]
        for i in range(1, n):
            for w in range(lanes):
                lam[i, w] = x[i, w] - cpm[i - 1, w] * lam[i - 1, w]
        for w in range(lanes):
            lam[n - 1, w] *= invm[n - 1, w]
        for i in range(n - 2, -1, -1):
            for w in range(lanes):
                lam[i, w] = (lam[i, w] - lom[i + 1, w] * lam[i + 1, w]) * invm[i, w]
        for w in range(lanes):
            pw[0, w] = 0.0
            pw[1, w] = 0.0
            pw[2, w] = 0.0
        for i in range(n):
            for w in range(lanes):
                gbar[i, w] = 0.0
                pw[0, w] += lam[i, w] * aovm[0, i, w]
                pw[1, w] += lam[i, w] * aovm[1, i, w]
                pw[2, w] += lam[i, w] * aovm[2, i, w]
        for w in range(lanes):
            wsum[0, w] = 0.0
            wsum[1, w] = 0.0
            wsum[2, w] = 0.0
            if k >= s_hi[w] - s_lo[w]:
                continue
            state = states[s_lo[w] + k]
            rho = 0.0
            if state < 0:
                x[0, w] = 0.0
            else:
                rho = q[state, w]
                if state + 1 < n:
                    x[state + 1, w] = 0.0
                if state > 0:
                    x[state - 1, w] = 0.0
            for t in range(term_ptr[s_lo[w] + k], term_ptr[s_lo[w] + k + 1]):
                j = targets[t]
                cnt = counts[t]
                if j >= 0:
                    again = (mask[w] >> j) & 1
                    cj = c[j, w] * kappa if again else c[j, w]
                    walk = lam[j, w] * cj
                    p = (1.0 - rho) * walk + (rho if j == state else 0.0)
                    if not p > 0.0:
                        return -math.inf
                    total += cnt * math.log(p)
                    if term_ll.size:
                        term_ll[t] = math.log(p)
                    scale = cnt * (1.0 - rho) / p        # dL / d(walk probability)
                    gbar[j, w] += scale * cj
                    if again:
                        gc[j, w] += scale * lam[j, w] * kappa
                        g_kappa[0] += scale * lam[j, w] * c[j, w]
                    else:
                        gc[j, w] += scale * lam[j, w]
                    if state >= 0:
                        gq[state, w] += cnt * ((1.0 if j == state else 0.0) - walk) / p
                else:
                    o = -1 - j
                    p = pw[o, w]
                    if state >= 0:
                        p += rc[state, w] if o == 0 else (sc[state, w] if o == 1 else
                                                          rc[state, w] + sc[state, w])
                    if not p > 0.0 or not rho < 1.0:
                        return -math.inf
                    total += cnt * (math.log(p) + math.log(1.0 - rho))
                    if term_ll.size:
                        term_ll[t] = math.log(p) + math.log(1.0 - rho)
                    wsum[o, w] += cnt / p
                    if state >= 0:
                        direct[o, state, w] += cnt / p
                        gq[state, w] -= cnt / (1.0 - rho)
        if own:
            for i in range(n):
                for w in range(lanes):
                    gbar[i, w] += wsum[0, w] * aovm[0, i, w] + wsum[1, w] * aovm[1, i, w] \
                        + wsum[2, w] * aovm[2, i, w]
        else:                  # the shared matrix: summed over its states, read at the end
            for i in range(n):
                for w in range(lanes):
                    w0, w1, w2 = wsum[0, w], wsum[1, w], wsum[2, w]
                    gbar[i, w] += w0 * aov[0, i, w] + w1 * aov[1, i, w] + w2 * aov[2, i, w]
                    big[0, i, w] += w0 * lam[i, w]
                    big[1, i, w] += w1 * lam[i, w]
                    big[2, i, w] += w2 * lam[i, w]
        # A mu = gbar: L then U
        for w in range(lanes):
            mu[0, w] = gbar[0, w]
        for i in range(1, n):
            for w in range(lanes):
                mu[i, w] = (gbar[i, w] - lom[i, w] * mu[i - 1, w]) * invm[i, w]
        for i in range(n - 2, -1, -1):
            for w in range(lanes):
                mu[i, w] -= cpm[i, w] * mu[i + 1, w]
        if own:                # this state's matrix: its gradient at once
            for i in range(n):
                for w in range(lanes):
                    l0, l1, l2 = wsum[0, w] * lam[i, w], wsum[1, w] * lam[i, w], \
                        wsum[2, w] * lam[i, w]
                    ga = l0 * r[i, w] + l1 * s[i, w] + l2 * (r[i, w] + s[i, w])
                    if i < n - 1:
                        du = -lam[i, w] * mu[i + 1, w]
                        gf[i, w] -= a_s[i, w] * du
                        ga -= f[i, w] * du
                    if i > 0:
                        dl = -lam[i, w] * mu[i - 1, w]
                        gb[i, w] -= a_s[i, w] * dl
                        ga -= b[i, w] * dl
                    if (mask[w] >> i) & 1:
                        gc[i, w] -= ga * kappa
                        g_kappa[0] -= ga * c[i, w]
                    else:
                        gc[i, w] -= ga
                    gr[i, w] += (l0 + l2) * a_s[i, w]
                    gs[i, w] += (l1 + l2) * a_s[i, w]
        else:
            for i in range(n - 1):
                for w in range(lanes):
                    d_up[i, w] -= lam[i, w] * mu[i + 1, w]
            for i in range(1, n):
                for w in range(lanes):
                    d_lo[i, w] -= lam[i, w] * mu[i - 1, w]
        for w in range(lanes):
            if k < s_hi[w] - s_lo[w]:
                state = states[s_lo[w] + k]
                if state >= 0:
                    if state + 1 < n:
                        gfc[state, w] += mu[state + 1, w]
                    if state > 0:
                        gbc[state, w] += mu[state - 1, w]
    for i in range(n):
        for w in range(lanes):
            l0, l1, l2 = big[0, i, w], big[1, i, w], big[2, i, w]
            ga = l0 * r[i, w] + l1 * s[i, w] + l2 * (r[i, w] + s[i, w])
            if i < n - 1:
                gf[i, w] -= a[i, w] * d_up[i, w]
                ga -= f[i, w] * d_up[i, w]
            if i > 0:
                gb[i, w] -= a[i, w] * d_lo[i, w]
                ga -= b[i, w] * d_lo[i, w]
            gc[i, w] -= ga
            gr[i, w] += (l0 + l2) * a[i, w]
            gs[i, w] += (l1 + l2) * a[i, w]
            grc[i, w] += direct[0, i, w] + direct[2, i, w]
            gsc[i, w] += direct[1, i, w] + direct[2, i, w]
    return total


def with_lanes(func, lanes: int):
    """A copy of ``func`` (its code, its module's globals as they are now) in which
    :data:`LANES` is ``lanes``: a kernel whose lane loops have another compile-time
    length.  Named ``<func>_<lanes>_lanes``: Numba's disk cache keys its entries by the
    function's qualified name and code, not by its globals, so the lane count is in the
    name, and a copy's compiled code never stands in for another width's."""
    import types

    space = dict(func.__globals__)
    space["LANES"] = lanes
    name = f"{func.__name__}_{lanes}_lanes"
    copy = types.FunctionType(func.__code__, space, name, func.__defaults__,
                              func.__closure__)
    copy.__qualname__ = name
    copy.__doc__ = func.__doc__
    copy.__module__ = func.__module__
    return copy


#: :func:`block_loglik_kernel` on :data:`NARROW_LANES` lanes (compiled with the others by
#: :func:`compiled`; plain Python here)
narrow_block_loglik_kernel = with_lanes(block_loglik_kernel, NARROW_LANES)


#: the most left states per work item (a lane of a block) that :func:`blocks` tries: a
#: configuration's states are split into items of at most ``k`` states, ``k`` in 1, 2, 4,
#: ... up to this; a page with many states fills several lanes, each of which factors the
#: page's matrix again
STATES_PER_ITEM = 16
#: a block's fixed work (filling and factoring its matrices, zeroing, the gradients'
#: scatter) in units of one left state's solves, for :func:`blocks`' choice of ``k``
BLOCK_OVERHEAD = 2.0


def _items(lengths, state_ptr, per_item: int) -> np.ndarray:
    """``(configuration, first state, end state)`` of each work item of at most
    ``per_item`` left states, ordered by page length, then number of states."""
    g = np.flatnonzero((lengths > 0) & (np.diff(state_ptr) > 0))
    k = np.diff(state_ptr)[g]
    m = -(-k // per_item)                                   # items of each configuration
    cfg = np.repeat(g, m)
    j = np.arange(m.sum()) - np.repeat(np.cumsum(m) - m, m)
    kk, mm, lo = np.repeat(k, m), np.repeat(m, m), state_ptr[cfg]
    items = np.stack([cfg, lo + j * kk // mm, lo + (j + 1) * kk // mm], axis=1)
    key = np.lexsort((items[:, 2] - items[:, 1], lengths[items[:, 0]]))
    return np.ascontiguousarray(items[key], dtype=np.int64)


def _block_cost(items, lengths, lanes: int) -> float:
    """The work of the blocks of ``lanes`` consecutive items: each runs at its longest
    page and its most states, every lane working, ``lanes n (slots + BLOCK_OVERHEAD)``
    per block."""
    if not items.shape[0]:
        return 0.0
    firsts = np.arange(0, items.shape[0], lanes)
    n = np.maximum.reduceat(lengths[items[:, 0]], firsts)
    slots = np.maximum.reduceat(items[:, 2] - items[:, 1], firsts)
    return float(lanes * np.sum(n * (slots + BLOCK_OVERHEAD)))


def blocks(lengths, state_ptr) -> tuple[np.ndarray, np.ndarray]:
    """Work items and blocks: ``items (K, 3)`` rows ``(configuration, first state, end
    state)`` ordered by page length and number of states, and ``starts`` the first item of
    each block of :data:`LANES` or :data:`NARROW_LANES` items (the last may be shorter).
    A block runs at its longest page (the positions a shorter page does not have are cut
    off by zero moves, so they are never reached) and its lanes' most left states, and
    every lane of it works whether it holds an item or not.  The log-likelihood and its
    gradient are sums over left states, so a configuration's states may be split into
    several items (each factors the page's matrix again): into items of at most ``k``
    states, ``k`` the power of two up to :data:`STATES_PER_ITEM` whose blocks cost least
    (:func:`_block_cost`), at each width; the blocks are of :data:`NARROW_LANES` items
    where their work times :data:`NARROW_PENALTY` is less than the :data:`LANES`-wide
    blocks' (a log of few items: the drivers then run the narrow kernel, whose every block
    holds at most that many).  A log of few configurations (TREC Session: 10, of 6 to 49
    results) fills its lanes by splitting (at 32 lanes k = 4: one gradient 0.076 ms,
    against 0.152 at k = 16, on 2026-11-29; it now runs 8 lanes, k = 4: 0.108 against
    0.159 ms at 32 on 2026-11-30); one of many (WSCD per document: 1,479) keeps them
    whole at 32 lanes (k = 16: 0.95 ms, 1.17 at k = 4; ``benchmarks/
    bench_walk_sampler.py --gradient``).  Computed once per page data, outside the
    compiled drivers."""
    lengths = np.asarray(lengths, dtype=np.int64)
    state_ptr = np.asarray(state_ptr, dtype=np.int64)
    found = []
    for lanes, weight in ((LANES, 1.0), (NARROW_LANES, NARROW_PENALTY)):
        best = None
        k = 1
        while k <= STATES_PER_ITEM:
            items = _items(lengths, state_ptr, k)
            cost = weight * _block_cost(items, lengths, lanes)
            if best is None or cost <= best[0]:
                best = (cost, items, lanes)
            k *= 2
        found.append(best)
    _, items, lanes = found[1] if found[1][0] < found[0][0] else found[0]
    starts = np.r_[np.arange(0, items.shape[0], lanes), items.shape[0]]
    return items, np.ascontiguousarray(starts, dtype=np.int64)


#: the block kernels run by address (:func:`block_kernel`), in the registry of the
#: Python drivers when Numba is absent: address -> kernel
_BY_ADDRESS: dict = {}
#: the kernel of each lane count: address (of the compiled or the Python kernel)
_ADDRESSES: dict = {}


def block_kernel_at(address):
    """The block kernel at ``address`` (:func:`block_kernel`), for the drivers: compiled,
    Numba's first-class function at that address (:func:`compiled` binds
    :func:`~bayeschain.chains.jit.function_pointers`' ``function_at`` under this name);
    in plain Python, the kernel registered there."""
    return _BY_ADDRESS[address]


def block_kernel_signature():
    """The Numba signature of :func:`block_loglik_kernel` as the drivers call it (its
    narrow copy's is the same): :func:`block_kernel_types`, returning the log-likelihood."""
    from numba import types

    return types.float64(*block_kernel_types())


def block_kernel(starts) -> int:
    """The address the drivers call the block kernel of blocks ``starts`` at
    (:func:`block_kernel_address` of :func:`block_lanes`, which the drivers size their
    work arrays by)."""
    return block_kernel_address(int(compiled("block_lanes")(starts)))


def block_kernel_address(lanes: int) -> int:
    """The address of :func:`block_loglik_kernel` (``lanes`` :data:`LANES`) or of its
    narrow copy (:data:`NARROW_LANES`), compiled (or loaded from the cache) at the first
    call for that width in a process.  Called by address, a kernel's code is not compiled
    again into the drivers, the density and its C callback (from an empty cache, the
    density and its C callback compiled in 25.4-26.4 s with both kernels linked in,
    8.5-8.9 s without, and the narrow kernel alone in 4.6-4.7 s; 2026-12-01, ad hoc,
    ``benchmarks/RESULTS.md``), and a log never compiles the kernel of the other width."""
    if lanes not in _ADDRESSES:
        kernel = _block_kernel_of(lanes)
        if hasattr(kernel, "py_func"):
            _ADDRESSES[lanes] = function_pointers(block_kernel_signature())[0](kernel)
        else:                                  # plain Python (no Numba)
            _ADDRESSES[lanes] = id(kernel)
            _BY_ADDRESS[id(kernel)] = kernel
    return _ADDRESSES[lanes]


def compile_block_kernel(lanes: int) -> None:
    """Compile (or load from the cache) the block kernel of ``lanes`` for the drivers'
    argument types (:func:`block_kernel_types`), without taking its address: for a
    process that compiles it for others (the demo's ``rehearse`` child)."""
    kernel = _block_kernel_of(lanes)
    if hasattr(kernel, "py_func"):
        kernel.compile(block_kernel_types())


def _block_kernel_of(lanes: int):
    """:func:`block_loglik_kernel` (:data:`LANES`) or its narrow copy
    (:data:`NARROW_LANES`), compiled where Numba is installed (:func:`compiled`)."""
    return compiled("narrow_block_loglik_kernel" if lanes == NARROW_LANES else
                    "block_loglik_kernel")


def run_block(kernel, n, rows, grads, kappa, s_lo, s_hi, states, clicked, term_ptr,
              targets, counts, g_kappa, wk, term_ll):
    """One block through the block kernel at address ``kernel`` on the drivers' work
    arrays ``rows`` and ``grads`` (``(ROWS, width, lanes)``: forward, backward,
    reformulate, stop, click, repeat, then the moves after a click).  Compiled on its own,
    it links nothing of the kernel (:func:`block_kernel`)."""
    return block_kernel_at(kernel)(
        n, rows[0], rows[1], rows[2], rows[3], rows[6], rows[7], rows[8], rows[9], rows[4],
        rows[5], kappa, s_lo, s_hi, states, clicked, term_ptr, targets, counts, grads[0],
        grads[1], grads[2], grads[3], grads[6], grads[7], grads[8], grads[9], grads[4],
        grads[5], g_kappa, wk, term_ll)


def block_lanes(starts) -> int:
    """The lanes the drivers run blocks ``starts`` with: :data:`NARROW_LANES` when no block
    holds more items, :data:`LANES` otherwise."""
    for blk in range(starts.size - 1):
        if starts[blk + 1] - starts[blk] > NARROW_LANES:
            return LANES
    return NARROW_LANES


#: rows of the drivers' work arrays: forward, backward, reformulate, stop after an
#: examination without a click, click, repeat, then the four moves after a click
ROWS = 10


def loglik_kernel(lengths, items, starts, f, b, r, s, fc, bc, rc, sc, c, q, kappa, state_ptr,
                  states, clicked, term_ptr, targets, counts, gf, gb, gr, gs, gfc, gbc, grc,
                  gsc, gc, gq, g_kappa, term_ll, kernel):
    """Per-position driver: rows ``f .. q`` of shape (G, N) (``fc .. sc``: the moves after a
    click), gradients added to ``g*``; ``kernel`` the block kernel's address
    (:func:`block_kernel` of ``starts``)."""
    n_cfg, width = f.shape
    lanes = block_lanes(starts)
    wk = np.zeros((_WORK_ROWS, width, lanes))
    rows = np.zeros((ROWS, width, lanes))
    grads = np.zeros((ROWS, width, lanes))
    s_lo = np.zeros(lanes, dtype=np.int64)
    s_hi = np.zeros(lanes, dtype=np.int64)
    total = 0.0
    for blk in range(starts.size - 1):
        n = lengths[items[starts[blk + 1] - 1, 0]]      # the block's longest page
        for w in range(lanes):
            k = starts[blk] + w
            on = k < starts[blk + 1]
            g = items[k, 0] if on else 0
            nw = lengths[g] if on else 0
            s_lo[w], s_hi[w] = (items[k, 1], items[k, 2]) if on else (0, 0)
            for i in range(n):
                inside = i < nw
                rows[0, i, w] = f[g, i] if inside and i < nw - 1 else 0.0
                rows[1, i, w] = b[g, i] if inside else 0.0
                rows[2, i, w] = r[g, i] if inside else 0.0
                rows[3, i, w] = s[g, i] if inside else 0.0
                rows[4, i, w] = c[g, i] if inside else 0.5
                rows[5, i, w] = q[g, i] if inside else 0.0
                rows[6, i, w] = fc[g, i] if inside and i < nw - 1 else 0.0
                rows[7, i, w] = bc[g, i] if inside else 0.0
                rows[8, i, w] = rc[g, i] if inside else 0.0
                rows[9, i, w] = sc[g, i] if inside else 0.0
                for k in range(ROWS):
                    grads[k, i, w] = 0.0
        ll = run_block(kernel, n, rows, grads, kappa, s_lo, s_hi, states, clicked, term_ptr,
                       targets, counts, g_kappa, wk, term_ll)
        if ll == -math.inf:
            return ll
        total += ll
        for w in range(starts[blk + 1] - starts[blk]):
            g = items[starts[blk] + w, 0]
            for i in range(lengths[g]):
                gf[g, i] += grads[0, i, w]
                gb[g, i] += grads[1, i, w]
                gr[g, i] += grads[2, i, w]
                gs[g, i] += grads[3, i, w]
                gc[g, i] += grads[4, i, w]
                gq[g, i] += grads[5, i, w]
                gfc[g, i] += grads[6, i, w]
                gbc[g, i] += grads[7, i, w]
                grc[g, i] += grads[8, i, w]
                gsc[g, i] += grads[9, i, w]
    return total


def boundary_grad(n, gf, gb, gr, gs, fl, bl, rl, sl, rescale):
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


def table_loglik_kernel(lengths, items, starts, move_index, click_index, moves, moves_click,
                        click, repeat, kappa, rescale, state_ptr, states, clicked, term_ptr,
                        targets, counts, g_moves, g_moves_click, g_click, g_repeat, g_kappa,
                        term_ll, kernel):
    """Table driver: position ``i`` of configuration ``g`` takes the move row
    ``moves[move_index[g, i]]`` (forward, backward, reformulate, stop) after an
    examination without a click and ``moves_click[move_index[g, i]]`` after a click (the
    same table, and the same gradient table, for moves that do not depend on the click),
    the repeat probability ``repeat[move_index[g, i]]`` and the click probability
    ``click[click_index[g, i]]``; the boundary rule applies at the page's last position;
    ``kappa`` damps the clicks on positions clicked before (:func:`block_loglik_kernel`).
    Gradients are added to ``g_moves``, ``g_moves_click``, ``g_click``, ``g_repeat`` and
    ``g_kappa[0]``; each term's log-probability is written into ``term_ll`` unless it is
    empty; ``kernel`` is the block kernel's address (:func:`block_kernel` of
    ``starts``)."""
    n_cfg, width = move_index.shape
    lanes = block_lanes(starts)
    wk = np.zeros((_WORK_ROWS, width, lanes))
    rows = np.zeros((ROWS, width, lanes))
    grads = np.zeros((ROWS, width, lanes))
    saved = np.zeros((8, lanes))
    s_lo = np.zeros(lanes, dtype=np.int64)
    s_hi = np.zeros(lanes, dtype=np.int64)
    total = 0.0
    for blk in range(starts.size - 1):
        n = lengths[items[starts[blk + 1] - 1, 0]]      # the block's longest page
        used = starts[blk + 1] - starts[blk]
        for w in range(lanes):
            nw = lengths[items[starts[blk] + w, 0]] if w < used else 0
            for i in range(n):
                for k in range(ROWS):
                    grads[k, i, w] = 0.0
                if i >= nw:          # a position this page lacks: no move in or out
                    for k in range(ROWS):
                        rows[k, i, w] = 0.0
                    rows[4, i, w] = 0.5
            if w >= used:
                s_lo[w], s_hi[w] = 0, 0
                continue
            g = items[starts[blk] + w, 0]
            s_lo[w], s_hi[w] = items[starts[blk] + w, 1], items[starts[blk] + w, 2]
            for i in range(nw):
                m = move_index[g, i]
                rows[0, i, w] = moves[m, 0]
                rows[1, i, w] = moves[m, 1] if i > 0 else 0.0
                rows[2, i, w] = moves[m, 2]
                rows[3, i, w] = moves[m, 3]
                rows[4, i, w] = click[click_index[g, i]]
                rows[5, i, w] = repeat[m]
                rows[6, i, w] = moves_click[m, 0]
                rows[7, i, w] = moves_click[m, 1] if i > 0 else 0.0
                rows[8, i, w] = moves_click[m, 2]
                rows[9, i, w] = moves_click[m, 3]
            for h in range(2):
                o = 6 * h
                fl, bl, rl, sl = page_walk.boundary(nw, rows[o, :, w], rows[o + 1, :, w],
                                                    rows[o + 2, :, w], rows[o + 3, :, w],
                                                    rescale)
                saved[4 * h, w], saved[4 * h + 1, w] = fl, bl
                saved[4 * h + 2, w], saved[4 * h + 3, w] = rl, sl
        ll = run_block(kernel, n, rows, grads, kappa, s_lo, s_hi, states, clicked, term_ptr,
                       targets, counts, g_kappa, wk, term_ll)
        if ll == -math.inf:
            return ll
        total += ll
        for w in range(used):
            g = items[starts[blk] + w, 0]
            nw = lengths[g]
            for h in range(2):
                o = 6 * h
                boundary_grad(nw, grads[o, :, w], grads[o + 1, :, w], grads[o + 2, :, w],
                              grads[o + 3, :, w], saved[4 * h, w], saved[4 * h + 1, w],
                              saved[4 * h + 2, w], saved[4 * h + 3, w], rescale)
            for i in range(nw):
                m = move_index[g, i]
                g_moves[m, 0] += grads[0, i, w]
                g_moves_click[m, 0] += grads[6, i, w]
                if i > 0:
                    g_moves[m, 1] += grads[1, i, w]
                    g_moves_click[m, 1] += grads[7, i, w]
                g_moves[m, 2] += grads[2, i, w]
                g_moves[m, 3] += grads[3, i, w]
                g_moves_click[m, 2] += grads[8, i, w]
                g_moves_click[m, 3] += grads[9, i, w]
                g_click[click_index[g, i]] += grads[4, i, w]
                g_repeat[m] += grads[5, i, w]
    return total


_COMPILED: dict = {}


def compiled(name: str):
    """A function of this module compiled by Numba (cached on disk), or the same Python
    function without Numba."""
    if not _COMPILED:
        page_walk.compiled("page_rows")            # the page kernels, bound first
        done = jit_globals(globals(), _JITTED, nogil=True, error_model="numpy")
        if hasattr(done["table_loglik_kernel"], "py_func"):
            # compiled drivers call the block kernels at their address (block_kernel)
            globals()["block_kernel_at"] = function_pointers(block_kernel_signature())[1]
        # the table driver stays a callee of the density: inlined there, it compiled no
        # faster (12.2 s against 12.3-12.4 for the driver, the density and its C callback)
        # and TREC Session's walks sampled about 10% slower (2026-12-01, ad hoc)
        # the narrow copy of the block kernel's code, calling the compiled callees
        kernel = getattr(done["block_loglik_kernel"], "py_func",
                         done["block_loglik_kernel"])
        done["narrow_block_loglik_kernel"] = jit(with_lanes(kernel, NARROW_LANES),
                                                 nogil=True, error_model="numpy")
        globals()["narrow_block_loglik_kernel"] = done["narrow_block_loglik_kernel"]
        _COMPILED.update(done)
    return _COMPILED[name]


def table_driver_types() -> tuple:
    """The argument types :func:`table_loglik_kernel` is called with by the walk's density
    (C-contiguous arrays, as nutpie's C callback builds them, scalars, and the block
    kernel's address)."""
    from numba import types

    f1, i1 = types.float64[::1], types.int64[::1]
    f2, i2 = types.float64[:, ::1], types.int64[:, ::1]
    return (i1, i2, i1, i2, i2, f2, f2, f1, f1, types.float64, types.boolean,
            i1, i1, i1, i1, i1, f1, f2, f2, f1, f1, f1, f1, types.int64)


def block_kernel_types() -> tuple:
    """The argument types the drivers call :func:`block_loglik_kernel` (and its narrow
    copy) with: rows and gradients of their C-contiguous work arrays, the left states'
    arrays, the work array itself."""
    from numba import types

    f1, i1 = types.float64[::1], types.int64[::1]
    f2, f3 = types.float64[:, ::1], types.float64[:, :, ::1]
    return (types.int64, *[f2] * 10, types.float64, i1, i1, i1, i1, i1, i1, f1, *[f2] * 10,
            f1, f3, f1)


def compile_table_driver() -> None:
    """Compile (or load from the cache) the table driver, and what it calls, for the walk
    density's argument types: done first, the density's other callees can be compiled
    meanwhile by another process (:func:`bayeschain.inference.walk.model.compile_callees`),
    and so can the block kernel of the log's width, which the driver calls by its address
    (:func:`block_kernel_address`)."""
    compiled("table_loglik_kernel").compile(table_driver_types())


def compiled_or_python(name: str):
    """A function of this module as it stands now (compiled once :func:`compiled` ran)."""
    return globals()[name]


_JITTED = ("fill_lanes", "factor_lanes", "block_loglik_kernel", "block_lanes", "run_block",
           "boundary_grad", "loglik_kernel", "table_loglik_kernel")


@dataclass(frozen=True)
class ClickCounts:
    """Sparse click counts per page configuration (see :func:`block_loglik_kernel`).

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
    clicked: np.ndarray | None = None   # (S,) bit mask of the positions clicked so far

    def __post_init__(self):
        if self.clicked is None:           # every arrival a fresh click chance
            object.__setattr__(self, "clicked", np.zeros(self.states.size, dtype=np.int64))

    @property
    def n_configs(self) -> int:
        return self.state_ptr.size - 1

    def term_states(self) -> tuple[np.ndarray, np.ndarray]:
        """``(configuration, state)`` of each term, ``(T,)`` each."""
        per_state = np.diff(self.term_ptr)
        config = np.repeat(np.arange(self.n_configs), np.diff(self.state_ptr))
        return np.repeat(config, per_state), np.repeat(self.states, per_state)

    def arrays(self) -> tuple:
        """What the kernels take, in their order: ``state_ptr, states, clicked,
        term_ptr, targets, counts``."""
        return (self.state_ptr, self.states, self.clicked, self.term_ptr, self.targets,
                self.counts)

    @classmethod
    def from_terms(cls, configs, states, targets, counts, n_configs: int,
                   clicked=None) -> ClickCounts:
        """From the distinct terms ``(configuration, state[, clicked], target)`` with their
        counts, sorted by configuration, then state (and the mask of the positions
        clicked so far), then target (as the kernel reads them)."""
        cfg = np.asarray(configs, dtype=np.int64)
        state = np.asarray(states, dtype=np.int64)
        mask = np.zeros_like(state) if clicked is None else np.asarray(clicked, np.int64)
        new_state = np.r_[True, (cfg[1:] != cfg[:-1]) | (state[1:] != state[:-1])
                          | (mask[1:] != mask[:-1])]
        term_ptr = np.r_[np.flatnonzero(new_state), cfg.size]
        state_ptr = np.searchsorted(cfg[new_state], np.arange(n_configs + 1))
        return cls(state_ptr.astype(np.int64), state[new_state], term_ptr.astype(np.int64),
                   np.asarray(targets, dtype=np.int64), np.asarray(counts, dtype=np.float64),
                   mask[new_state])

    def digest(self, configurations: np.ndarray) -> str:
        """A short hash of the configurations ``(G, ...)`` and these counts: the identity
        of a log's pages for the walk (the posterior's ``data_digest``)."""
        import hashlib

        masks = self.clicked.tobytes() if self.clicked.any() else b""
        return hashlib.sha256(np.ascontiguousarray(configurations).tobytes()
                              + self.counts.tobytes() + self.targets.tobytes() + masks
                              ).hexdigest()[:16]

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
                        counts: ClickCounts, repeat=None, *, after_click=None,
                        reclick: float = 1.0, gradient: bool = True):
    """Log-likelihood of per-configuration click counts under per-position walk rows.

    Parameters
    ----------
    lengths : (G,) int
        Page length ``n`` of each configuration (positions ``>= n`` are ignored).
    forward, backward, reformulate, stop, click : (G, N) float
        Per-position moves (summing to 1 over the four moves, boundary already applied:
        ``backward[:, 0]`` and ``forward[g, n - 1]`` are ignored) and click probabilities.
        With ``after_click``, the four moves are those after an examination without a
        click.
    counts : :class:`ClickCounts`
    repeat : (G, N) float, optional
        Probability of clicking the same result again right after a click (0 without).
    after_click : four (G, N) arrays, optional
        The moves (forward, backward, reformulate, stop) after a click; the same moves as
        without a click when None.
    reclick : ``kappa``: a position clicked before on the page (``counts.clicked``) clicks
        at a later arrival with ``kappa`` times its click probability

    Returns ``log L`` and, with ``gradient=True``, a dict of ``dlogL/d(parameter)`` arrays
    ``(G, N)`` keyed ``forward``, ``backward``, ``reformulate``, ``stop``, ``click``,
    ``repeat`` (and ``forward_click`` ... ``stop_click`` with ``after_click``), and the
    float ``reclick``.
    """
    if repeat is None:
        repeat = np.zeros_like(np.asarray(click, dtype=np.float64))
    arrays = [np.ascontiguousarray(x, dtype=np.float64)
              for x in (forward, backward, reformulate, stop, click, repeat)]
    grads = [np.zeros_like(arrays[0]) for _ in range(6)]
    if after_click is None:
        clicked, g_clicked = arrays[:4], grads[:4]
    else:
        clicked = [np.ascontiguousarray(x, dtype=np.float64) for x in after_click]
        g_clicked = [np.zeros_like(arrays[0]) for _ in range(4)]
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    g_kappa = np.zeros(1)
    items, starts = blocks(lengths, counts.state_ptr)
    ll = compiled("loglik_kernel")(lengths, items, starts, *arrays[:4], *clicked, *arrays[4:],
                                   float(reclick), *counts.arrays(), *grads[:4], *g_clicked,
                                   *grads[4:], g_kappa, np.empty(0), block_kernel(starts))
    if not gradient:
        return ll
    out = dict(zip(("forward", "backward", "reformulate", "stop", "click", "repeat"),
                   grads, strict=True))
    out["reclick"] = float(g_kappa[0])
    if after_click is not None:
        out.update(zip(("forward_click", "backward_click", "reformulate_click",
                        "stop_click"), g_clicked, strict=True))
    return ll, out


def table_log_likelihood(lengths, move_index, click_index, moves, click, counts: ClickCounts,
                         repeat=None, *, moves_click=None, boundary: str = "leave"):
    """Log-likelihood when every position takes its moves and click probability from
    tables: ``moves (M, 4)`` rows (forward, backward, reformulate, stop) and ``repeat
    (M,)`` (0 without) indexed by ``move_index (G, N)``, ``click (C,)`` indexed by
    ``click_index (G, N)``; ``moves_click (M, 4)`` the moves after a click (``moves``
    when None); the boundary rule (``"leave"`` or ``"rescale"``) applies at each page's
    last position.

    Returns ``(log L, dlogL/dmoves, dlogL/dclick, dlogL/drepeat)``, and
    ``dlogL/dmoves_click`` last when ``moves_click`` is given.
    """
    if boundary not in BOUNDARIES:
        raise ValueError(f"boundary must be one of {BOUNDARIES}, got {boundary!r}")
    moves = np.ascontiguousarray(moves, dtype=np.float64)
    repeat = np.zeros(moves.shape[0]) if repeat is None else \
        np.ascontiguousarray(repeat, dtype=np.float64)
    g_moves = np.zeros_like(moves)
    if moves_click is None:
        clicked, g_clicked = moves, g_moves
    else:
        clicked = np.ascontiguousarray(moves_click, dtype=np.float64)
        g_clicked = np.zeros_like(clicked)
    g_click = np.zeros_like(click, dtype=np.float64)
    g_repeat = np.zeros_like(repeat)
    items, starts = blocks(lengths, counts.state_ptr)
    ll = compiled("table_loglik_kernel")(lengths, items, starts, move_index, click_index,
                                         moves, clicked,
                                         np.ascontiguousarray(click, dtype=np.float64),
                                         repeat, 1.0, boundary == "rescale",
                                         *counts.arrays(), g_moves, g_clicked, g_click,
                                         g_repeat, np.zeros(1), np.empty(0),
                                         block_kernel(starts))
    if moves_click is None:
        return ll, g_moves, g_click, g_repeat
    return ll, g_moves, g_click, g_repeat, g_clicked
