r"""A reader who keeps a direction, with attractiveness per document: a study at the mode.

    python3 benchmarks/bench_reader_direction.py [--logs wscd clara2 trec] [--check]
        [--click-moves | --damped-reclicks] [--prior-sd 1.5] [--per-rank | --rank-offsets]
        [--rank-scales] [--direction-only] [--all-test-pages] [--readers 2 [--reader-clicks]]
        [--marginal-fit] [--upward-look] [--query-readers {apart,moves,shrunk}]
        [--query-sd 0.5] [--query-groups {query,topic}]

``bench_decision_once.py --direction`` found, with one click chance per rank, that a reader
with moves of their own after arriving by a backward move (reading up the page) examines
fewer results than bayeschain's walk and predicts held-out clicks about as well.  On
WSCD the field's models gain most from attractiveness per (query, document) pair, so this
script fits both readers with it, at the posterior mode, beside PBM and UBM on the same
pages.

**The chain.**  States ``(i, u)``: rank ``i`` and the way the user came, ``u = 0`` by a
forward move (or at the start, rank 1), ``u = 1`` by a backward one (20 states on 10
results).  Every arrival on rank ``i`` of page ``g`` clicks with
``c_gi = logistic(alpha_{q, d_gi})`` (fresh at every arrival, as in bayeschain's walk);
right after a click the same result is clicked again with ``rho_i`` (a repeat).  After the
decision the user moves forward ``f^u_i``, backward ``b^u_i`` or leaves (a softmax per
rank; rank 1 has no backward move, rank 10 no forward one), with one set per ``u`` for the
reader with a direction and one for both ``u`` for bayeschain's walk (``--click-moves``:
a set after a click and one after no click as well).  With ``Q_s``, ``C_s`` (``Q_c``,
``C_c``) the arrivals without and with a click along the moves after no click (after a
click), ``L`` the leave vectors and ``N = (I - Q_s)^{-1}``, per configuration of the
page's documents: first click ``g = c_1 e_1 + (1 - c_1) e_1^T N C_s``, no click
``(1 - c_1) e_1^T N L_s``, next click ``K = diag(rho) + diag(1 - rho) (C_c + Q_c N C_s)``,
leaving after a click ``E = (1 - rho) (L_c + Q_c N L_s)``; the direction is hidden, so a
page's likelihood is a forward recursion over its ordered clicks (as in
``bench_decision_once.py``, whose chain this is with the depth left out: every arrival is
a fresh click chance).  ``--check`` tests it, and the PyTensor graph that is fitted,
against pages simulated step by step (random parameters) by
``bench_decision_once.simulate`` and, for damped re-clicks, by :func:`simulate_damped`.

**Fit and scores.**  Logits ``alpha`` of every (query, document) pair of the training
pages with a Normal(m, ``--prior-sd``) prior around a learned mean ``m`` (a pair not seen
in training gets ``m``); moves and repeats Normal(0, 3); with ``--rank-offsets`` a
document shown at rank ``i`` clicks with ``logistic(alpha + delta_i)``, ``delta_1 = 0``,
the others Normal(0, 3) (the spec key ``rank_offsets`` has a pooled trend instead), and
with ``--rank-scales`` instead with ``logistic(alpha) logistic(s_i)``, ``logistic(s_1) =
1`` (PBM's form: the document's chance scaled by a factor of the rank); with
``--damped-reclicks`` a result clicked before on the page clicks at a later arrival with
``kappa c`` (the spec key ``reclicks = "damped"``: after the ``t``-th click the chain's
click chances are those of the ranks clicked so far, so the transition is keyed by the
configuration and the clicked set; ``kappa``'s logit Normal(0, 3)); the mode by L-BFGS
on PyTensor's exact gradient.  Split, held-out pages and metrics of
``bench_click_models.py``; ``P(C_r = 1)`` and ``P(C_r = c_r | C_<r)`` exact per
configuration (the no-click table over the 2^10 sets of ranks and inclusion-exclusion,
``bench_decision_once.predict``).
``--readers 2``: each page is read by one of two readers of the same kind, each with its
own repeats and moves (the documents, offsets and kappa shared), in learned shares; a
page's likelihood is the shares' mixture of the readers', and so are its no-click table
(a probability), E[H] and the ranks examined.  With ``--reader-clicks`` the second reader
also adds a learned shift to every click logit (users who click more, or less, than
others on the same page).
``--marginal-fit``: each reader fitted instead to the per-rank marginals of the training
pages, ``sum_{page, r} log P(C_r = c_r)`` (a composite likelihood that treats a page's
clicks as independent, as PBM's likelihood is): a diagnostic of what the reader's click
probabilities per rank can fit, not a posterior (:func:`fit_marginals`).
``--upward-look``: an arrival by a backward move, which always comes back to a rank seen
before, clicks with a learned factor times the chance (its logit Normal(0, 3)), exact on
these states (a re-examination by a forward move keeps its fresh chance): a test of
whether the likelihood wants a second look to click less.
``--query-readers``: each query's pages fitted on their own (:func:`fit_by_query`):
``apart`` shares nothing between queries (documents, their mean, offsets, kappa, repeats,
moves); ``moves`` holds the documents' mean, the offsets and kappa at a fit of the whole log
and fits each query's documents, repeats and moves to its pages (a reader per query);
``shrunk`` does the same with each query's repeat and move logits shrunk to the whole
log's, Normal(the whole log's, ``--query-sd``) in place of Normal(0, 3): the mode of a
hierarchical model whose population is held at the whole log's fit (the shape a spec with
a per-query effect on the moves would have, without its learned spread).
``--query-groups topic`` groups the pages by their session's topic instead (TREC Session:
its free-text queries rarely recur, its 60-odd topics do), with clicks per rank
(``--per-rank``) held at the whole log's so that only the reader differs; a held-out
page of a topic not in training is read by the whole log's reader.  In ``moves`` and
``shrunk`` modes the whole log's reader is scored on the same pages too.
WSCD's 20 queries have 141 to 17,941 training pages each (median 541); a query without a
held-out page is fitted and not scored.  The held-out configurations are keyed by their
query (a page whose pairs were all unseen in training shows no query otherwise).  PBM and
UBM are then also fitted to each query's pages alone.
A second table gives each model's held-out perplexity at every rank and its mean
``P(C_r = 1)`` beside the held-out pages' click rate, and the perplexity left after each
rank's probabilities are recalibrated on the held-out pages (:func:`recalibrated`).
A third gives the law of the number of distinct ranks clicked on a held-out page, observed,
each reader's (exact, :func:`clicked_counts`) and PBM's (independent clicks: the
Poisson-binomial law), and for each reader a table says where its held-out log-loss
exceeds PBM's, by how often the pair at a (page, rank) was shown in training
(:func:`gap_by_impressions`).
E[H]: expected arrivals per training page; the distinct ranks examined: the sum over
ranks of the probability that the rank is examined at least once (eye-tracking's count).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402
from bench_decision_once import Reader, click_sequences, predict, simulate  # noqa: E402
from click_model_peers import (  # noqa: E402
    MODELS,
    RANKS,
    _full_pages,
    heldout_serps,
    load_log,
    present_logs,
    split_pages,
)

from bayeschain.inference import click_metrics, perplexity_difference  # noqa: E402
from bayeschain.measures.eprum import poisson_binomial  # noqa: E402

N = RANKS
S = 2 * N                                       # states (i, u), u-major: k = u N + i
RANK_OF = np.tile(np.arange(N), 2)
DIR_OF = np.repeat([0, 1], N)
SRC_F = np.array([k for k in range(S) if RANK_OF[k] < N - 1])
TGT_F = RANK_OF[SRC_F] + 1                      # (i + 1, 0)
SRC_B = np.array([k for k in range(S) if RANK_OF[k] > 0])
TGT_B = N + RANK_OF[SRC_B] - 1                  # (i - 1, 1)
SRC = np.r_[SRC_F, SRC_B]
TGT = np.r_[TGT_F, TGT_B]
SCATTER = np.zeros((SRC.size, S * S))           # a move's value into its matrix entry
SCATTER[np.arange(SRC.size), SRC * S + TGT] = 1.0
AT_RANK = np.stack([(RANK_OF == j).astype(float) for j in range(N)])      # (N, S)
UPWARD = (DIR_OF[TGT] == 1).astype(float)     # the moves that arrive by a backward move


def moves(th, T, reader: Reader):
    """``[(F, B, L)]`` after no click and after a click, each ``(2, N)`` by the way the
    user came, from the move logits ``th`` (the sets the reader does not have are those
    it has)."""
    stack = np.stack if T is np else T.stack
    ways = 2 if reader.direction else 1

    def move_set(k):
        o = 2 * N * k
        ef = T.exp(th[o:o + N]) * np.r_[np.ones(N - 1), 0.0]
        eb = T.exp(th[o + N:o + 2 * N]) * np.r_[0.0, np.ones(N - 1)]
        total = ef + eb + 1.0
        return ef / total, eb / total, 1.0 / total

    out = []
    for g in range(2):
        k = ways * g if reader.click_moves else 0
        sets = [move_set(k + u) for u in range(ways)] * (2 // ways)
        out.append(tuple(stack([s[j] for s in sets]) for j in range(3)))
    return out


class Layout:
    """Where each block of the parameter vector sits: pair logits, their mean, then per
    reader of the mixture (``readers``, 1 by default) its repeats and moves, then
    (``rank_offsets``) the click logit's offsets at ranks 2..N, kappa's logit
    (``damped``), the logits of readers 2.. against reader 1 (their shares),
    (``reader_clicks``) what readers 2.. add to every click logit and (``upward``) the
    logit of the factor on the click chance of an arrival by a backward move."""

    def __init__(self, pairs: int, reader: Reader, rank_offsets: bool = False,
                 damped: bool = False, readers: int = 1, scales: bool = False,
                 reader_clicks: bool = False, upward: bool = False):
        self.pairs, self.reader, self.readers = pairs, reader, readers
        self.damped = damped
        self.rank_offsets = rank_offsets and not scales     # added to the click logit
        self.scales = scales                                # scaling the click chance
        self.mean = pairs
        width = N + 2 * N * reader.sets
        start = [pairs + 1 + k * width for k in range(readers)]
        self.rhos = [slice(o, o + N) for o in start]
        self.moveses = [slice(o + N, o + width) for o in start]
        end = start[-1] + width
        self.offsets = slice(end, end + (N - 1) * (rank_offsets or scales))
        self.kappa = self.offsets.stop                  # its logit, with ``damped``
        self.shares = slice(self.kappa + damped, self.kappa + damped + readers - 1)
        self.shifts = slice(self.shares.stop,
                            self.shares.stop + (readers - 1) * reader_clicks)
        self.upward = upward
        self.look = self.shifts.stop                    # its logit, with ``upward``
        self.size = self.shifts.stop + upward

    def upward_factor(self, x, T):
        """What an arrival by a backward move multiplies its click chance by (1 without
        ``upward``)."""
        return 1.0 / (1.0 + T.exp(-x[self.look])) if self.upward else 1.0

    def click_shift(self, x, k: int):
        """What reader ``k`` adds to every click logit: 0 for reader 1 and without
        ``reader_clicks``."""
        if k == 0 or self.shifts.stop == self.shifts.start:
            return 0.0
        return x[self.shifts.start + k - 1]

    def log_weights(self, x, T):
        """The logs of the readers' shares of the pages (a log-softmax, reader 1's logit
        0)."""
        logits = T.concatenate([np.zeros(1), x[self.shares]]) if T is not np else \
            np.r_[0.0, x[self.shares]]
        top = logits.max()
        return logits - top - T.log(T.exp(logits - top).sum())

    def weights(self, x, T):
        """The readers' shares of the pages."""
        return T.exp(self.log_weights(x, T))


def move_weights(F, B, T):
    """The probability of each move (forward moves first, as ``SRC``/``TGT``) from the
    forward and backward move tables ``(2, N)`` by the way the user came."""
    forward, backward = F[DIR_OF[SRC_F], RANK_OF[SRC_F]], B[DIR_OF[SRC_B], RANK_OF[SRC_B]]
    return np.r_[forward, backward] if T is np else T.concatenate([forward, backward])


def chain(c, rho, mv, T, up=1.0):
    """``(g, z, K, E)`` per configuration (``c``: ``(G, N)`` click chances; an arrival
    by a backward move clicks with ``up`` times the chance) and the arrival matrices (for
    the no-click tables)."""
    G = c.shape[0]
    ct = c[:, RANK_OF[TGT]] * (1.0 + (up - 1.0) * UPWARD)              # (G, moves)
    mats = []
    for F, B, L in mv:
        w = move_weights(F, B, T)
        Q = ((w * (1 - ct)) @ SCATTER).reshape((G, S, S))
        C = ((w * ct) @ SCATTER).reshape((G, S, S))
        mats.append((Q, C, L[DIR_OF, RANK_OF]))
    (Qs, Cs, Ls), (Qc, Cc, Lc) = mats
    eye = np.eye(S)
    solve = np.linalg.solve if T is np else T.linalg.solve
    A = solve(eye - Qs, Cs)                                            # N C_s
    X = solve(eye - Qs, T.broadcast_to(Ls[None, :, None], (G, S, 1)))[:, :, 0]
    c0 = c[:, 0]
    e0 = np.eye(S)[0]
    g = c0[:, None] * e0 + (1 - c0)[:, None] * A[:, 0, :]
    z = (1 - c0) * X[:, 0]
    r = rho[RANK_OF]
    K = eye * r[:, None] + (1 - r)[None, :, None] * (Cc + Qc @ A)
    E = (1 - r) * (Lc + (Qc @ X[:, :, None])[:, :, 0])
    return g, z, K, E, mats


def unpack(x, lay: Layout, pair_of_cfg, T, k: int = 0):
    """Reader ``k``'s click chances per configuration ``(G, N)`` (pair ``-1``: the
    mean; with ``reader_clicks``, its shift added to every logit), repeats and moves."""
    alpha = T.concatenate([x[:lay.pairs], x[lay.mean:lay.mean + 1]]) if T is not np else \
        np.r_[x[:lay.pairs], x[lay.mean]]
    logit = alpha[np.where(pair_of_cfg < 0, lay.pairs, pair_of_cfg)] + lay.click_shift(x, k)
    if lay.rank_offsets:
        zero = np.zeros(1)
        logit = logit + (T.concatenate([zero, x[lay.offsets]]) if T is not np else
                         np.r_[zero, x[lay.offsets]])[None, :]
    c = 1.0 / (1.0 + T.exp(-logit))
    if lay.scales:
        scale = 1.0 / (1.0 + T.exp(-x[lay.offsets]))
        c = c * (T.concatenate([np.ones(1), scale]) if T is not np else
                 np.r_[1.0, scale])[None, :]
    rho = 1.0 / (1.0 + T.exp(-x[lay.rhos[k]]))
    return c, rho, moves(x[lay.moveses[k]], T, lay.reader)


def sequence_log_likelihoods(x, lay, pair_of_cfg, cfg, seqs):
    """PyTensor graph: the log-probability of each unit (configuration ``cfg[u]``, click
    sequence ``seqs[u]``: 0-based ranks in click order); with several readers, a page is
    read by reader ``k`` with its share ``w_k``: ``log sum_k w_k P_k(unit)``."""
    import pytensor.tensor as pt

    if lay.readers == 1:
        return _reader_log_likelihoods(x, lay, pair_of_cfg, cfg, seqs, 0)
    parts = pt.stack([_reader_log_likelihoods(x, lay, pair_of_cfg, cfg, seqs, k)
                      for k in range(lay.readers)])
    return pt.logsumexp(parts + lay.log_weights(x, pt)[:, None], axis=0)


def _reader_log_likelihoods(x, lay, pair_of_cfg, cfg, seqs, k):
    """:func:`sequence_log_likelihoods` of reader ``k`` alone."""
    import pytensor.tensor as pt

    c, rho, mv = unpack(x, lay, pair_of_cfg, pt, k)
    up = lay.upward_factor(x, pt)
    g, z, K, E, _ = chain(c, rho, mv, pt, up)
    lengths = np.array([len(s) for s in seqs])
    out = pt.zeros(len(seqs))
    empty = np.flatnonzero(lengths == 0)
    if empty.size:
        out = pt.set_subtensor(out[empty], pt.log(z[cfg[empty]]))
    live_units = np.flatnonzero(lengths > 0)
    if not live_units.size:                       # a group of click-less pages only
        return out
    order = live_units[np.argsort(-lengths[live_units], kind="stable")]
    seq = np.zeros((order.size, lengths.max()), dtype=int)
    for u, unit in enumerate(order):
        seq[u, :lengths[unit]] = seqs[unit]
    live_len = lengths[order]
    if lay.damped:
        # the transition after the t-th click and the end use the chain in which the
        # ranks clicked so far click with kappa c (keyed by configuration and clicked set)
        masks = np.zeros(seq.shape, dtype=np.int64)
        for u in range(order.size):
            m = 0
            for t in range(live_len[u]):
                m |= 1 << int(seq[u, t])
                masks[u, t] = m
            masks[u, live_len[u]:] = m               # padding: a chain the unit has anyway
        keys = cfg[order][:, None] * (1 << N) + masks
        combos, combo = np.unique(keys, return_inverse=True)
        combo = combo.reshape(keys.shape)
        clicked = ((combos[:, None] % (1 << N)) >> np.arange(N)) & 1       # (combos, N)
        kappa = 1.0 / (1.0 + pt.exp(-x[lay.kappa]))
        damp = 1.0 - (1.0 - kappa) * clicked
        _, _, Kd, Ed, _ = chain(c[combos // (1 << N)] * damp, rho, mv, pt, up)
    else:
        combo = np.broadcast_to(cfg[order][:, None], seq.shape)
        Kd, Ed = K, E
    alpha = g[cfg[order]] * AT_RANK[seq[:, 0]]
    norm = alpha.sum(1)
    logs = pt.log(norm)
    alpha = alpha / norm[:, None]
    for t in range(1, seq.shape[1]):
        n = int((live_len > t).sum())             # units are sorted by length: a prefix
        nxt = pt.matmul(alpha[:n, None, :], Kd[combo[:n, t - 1]])[:, 0, :] * \
            AT_RANK[seq[:n, t]]
        norm = nxt.sum(1)
        logs = pt.inc_subtensor(logs[:n], pt.log(norm))
        alpha = pt.set_subtensor(alpha[:n], nxt / norm[:, None])
    end = (alpha * Ed[combo[np.arange(order.size), live_len - 1]]).sum(1)
    return pt.set_subtensor(out[order], logs + pt.log(end))


def fit(lay, pair_of_cfg, cfg, seqs, counts, prior_sd, fixed=None, centre=None, scale=None):
    """The posterior mode (L-BFGS on PyTensor's exact gradient) and its seconds."""
    return posterior_mode(lay, lambda x: (counts * sequence_log_likelihoods(
        x, lay, pair_of_cfg, cfg, seqs)).sum(), prior_sd, fixed, centre, scale)


def posterior_mode(lay, log_likelihood, prior_sd, fixed=None, centre=None, scale=None):
    """The mode of ``log_likelihood(x)`` (a PyTensor graph of the parameter vector) plus
    the log prior (the pairs' logits Normal(mean, ``prior_sd``), the rest Normal(0, 3), or
    Normal(``centre``, ``scale``) entry by entry where given), by L-BFGS on PyTensor's
    exact gradient, and its seconds; ``fixed`` ``(indices, values)`` holds those entries
    at their values (bounds of zero width)."""
    import pytensor
    import pytensor.tensor as pt
    from scipy.optimize import minimize

    x = pt.dvector("x")
    rest = lay.size - lay.pairs
    centre = np.zeros(rest) if centre is None else centre
    scale = np.full(rest, 3.0) if scale is None else scale
    lp = log_likelihood(x) - 0.5 * ((x[:lay.pairs] - x[lay.mean]) ** 2).sum() / prior_sd**2 \
        - 0.5 * (((x[lay.pairs:] - centre) / scale) ** 2).sum()
    fn = pytensor.function([x], [-lp, -pytensor.grad(lp, x)])
    x0 = np.zeros(lay.size)
    x0[:lay.pairs + 1] = -1.0
    for k in range(lay.readers):                 # readers start apart: later ones leave sooner
        x0[lay.rhos[k]] = -2.0
        x0[lay.moveses[k]] = -1.5 * k
    x0[lay.shifts] = 0.5                         # and later ones click more
    bounds = None
    if fixed is not None:
        x0[fixed[0]] = fixed[1]
        bounds = [(None, None)] * lay.size
        for i, v in zip(*fixed, strict=True):
            bounds[i] = (v, v)
    t = time.perf_counter()
    res = minimize(fn, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 10000})
    if not res.success:
        raise SystemExit(f"L-BFGS did not converge: {res.message}")
    return res.x, time.perf_counter() - t


def marginal_no_click(x, lay, pair_of_cfg):
    """PyTensor graph ``(G, N)``: per configuration, the probability that the page ends
    with no click at rank ``r``, for one reader whose moves do not depend on the click and
    fresh click chances: the chain of the moves with the arrivals at ``r`` cut by ``1 -
    c_r`` (the entries ``tables[g, 1 << r]`` of :func:`no_click_tables`)."""
    import pytensor.tensor as pt

    if lay.readers > 1 or lay.damped or lay.reader.click_moves:
        raise SystemExit("the fit to the marginals takes one reader, moves shared, fresh "
                         "re-clicks")
    c, _, mv = unpack(x, lay, pair_of_cfg, pt)
    F, B, L = mv[0]
    P = (move_weights(F, B, pt) @ SCATTER).reshape((S, S))     # the moves alone
    look = 1.0 + (lay.upward_factor(x, pt) - 1.0) * (DIR_OF == 1)
    keep = 1.0 - c[:, :, None] * (AT_RANK * look)[None, :, :]  # (G, N, S): into a state
    start = keep * np.eye(S)[0]                                # the first arrival, rank 1
    cut = np.eye(S) - P[None, None, :, :] * keep[:, :, None, :]
    visits = pt.linalg.solve(pt.swapaxes(cut, -1, -2), start[..., None], b_ndim=2)[..., 0]
    return (visits * L[DIR_OF, RANK_OF]).sum(-1)


def fit_marginals(lay, pair_of_cfg, page_cfg, clicked, prior_sd):
    """The mode of the same prior with the likelihood replaced by the per-rank marginals
    (a composite likelihood: ``sum_{page, r} log P(C_r = c_r)``, the clicks of a page
    treated as independent, as PBM's likelihood does) and its seconds: a diagnostic of
    what the reader's marginals can fit, not a posterior."""
    import pytensor.tensor as pt

    G = pair_of_cfg.shape[0]
    pages = np.bincount(page_cfg, minlength=G).astype(float)
    ones = np.zeros((G, N))
    np.add.at(ones, page_cfg, clicked.astype(float))

    def log_likelihood(x):
        q = pt.clip(marginal_no_click(x, lay, pair_of_cfg), 1e-12, 1.0 - 1e-12)
        return ((pages[:, None] - ones) * pt.log(q) + ones * pt.log1p(-q)).sum()

    return posterior_mode(lay, log_likelihood, prior_sd)


def fit_by_query(lay, cfgs, units, tr_query, te_cfgs, te_query, prior_sd, shared=None,
                 shrink=None, hold_clicks=False):
    """Each query's pages fitted on their own (its documents, mean, offsets, kappa, repeats
    and moves; the log's queries share nothing; with ``shared``, a fit of the whole log,
    the documents' mean, the offsets and kappa are held at its values and each query's
    documents, repeats and moves are fitted, a reader per query; with ``shrink`` as well,
    each query's repeat and move logits have the prior Normal(the whole log's, ``shrink``)
    instead of Normal(0, 3): the mode of a hierarchical model whose population is held at
    the whole log's fit, an empirical-Bayes shrinkage of each query's reader; with
    ``hold_clicks``, clicks per rank, the click logits are held at the whole log's as well,
    so that only the reader differs; a held-out group not in training, ``te_query`` -1, is
    read by the whole log's reader): the held-out
    configurations' no-click tables, the training configurations' expected arrivals and
    probabilities of each rank examined, the seconds of the fits and each query's
    parameter vector.  This asks how much the readers of different queries differ and
    what that is worth on held-out clicks, where each query has hundreds of pages or more
    (WSCD)."""
    tables = np.empty((len(te_cfgs), 1 << N))
    arrivals, seen, seconds, xs = np.empty(len(cfgs)), np.empty((len(cfgs), N)), 0.0, []
    cfg_of_unit, seqs, counts = (units["cfg"].to_numpy(), list(units["seq"]),
                                 units["n"].to_numpy(float))
    fixed = None
    if shared is not None:
        at = np.r_[np.arange(lay.pairs) if hold_clicks else [], lay.mean,
                   np.arange(lay.size)[lay.offsets],
                   np.array([lay.kappa] * lay.damped, dtype=int)].astype(np.int64)
        fixed = (at, shared[at])
        unseen = np.flatnonzero(te_query < 0)
        if unseen.size:
            tables[unseen] = no_click_tables(shared, lay, te_cfgs[unseen])
    elif np.any(te_query < 0):
        raise SystemExit("each query apart scores only held-out groups seen in training")
    centre = scale = None
    if shrink is not None:
        rest = lay.size - lay.pairs                  # the prior of the held entries is moot
        centre, scale = np.zeros(rest), np.full(rest, 3.0)
        for part in (*lay.rhos, *lay.moveses):
            at = slice(part.start - lay.pairs, part.stop - lay.pairs)
            centre[at], scale[at] = shared[part], shrink
    for k in range(tr_query.max() + 1):
        mine, theirs = np.flatnonzero(tr_query == k), np.flatnonzero(tr_query[cfg_of_unit] == k)
        x, spent = fit(lay, cfgs[mine], np.searchsorted(mine, cfg_of_unit[theirs]),
                       [seqs[u] for u in theirs], counts[theirs], prior_sd, fixed,
                       centre, scale)
        seconds += spent
        xs.append(x)
        held = np.flatnonzero(te_query == k)
        if held.size:                   # a query may have no held-out page
            tables[held] = no_click_tables(x, lay, te_cfgs[held])
        arrivals[mine], seen[mine], _ = profile(x, lay, cfgs[mine])
    return tables, arrivals, seen, seconds, xs


def reader_label(reader: Reader) -> str:
    """The name a reader goes by in the tables."""
    return "bayeschain's walk" if reader == Reader(False, False) else reader.label


def heldout_probabilities(tables, te_cfg, te_clicked) -> tuple[np.ndarray, np.ndarray]:
    """``P(C_r = 1)`` and ``P(C_r = c_r | C_<r)`` of every held-out page from the no-click
    tables of its configuration (``te_cfg``)."""
    p_click, p_obs = np.empty(te_clicked.shape), np.empty(te_clicked.shape)
    for gi in range(len(tables)):
        at = te_cfg == gi
        p_click[at], p_obs[at] = predict(tables[gi], te_clicked[at])
    return p_click, p_obs


def topics_of(log, serps) -> np.ndarray:
    """The topic of each page of ``serps``: its session's, from the log's
    ``session_topic`` (TREC Session 2013 has one per session)."""
    topic = log.meta.get("session_topic")
    if not topic:
        raise SystemExit("readers per topic need a log whose sessions have topics (trec)")
    ev = log.events.dropna(subset=["serp_id"]).drop_duplicates("serp_id")
    session = pd.Series(ev["session_id"].astype(str).to_numpy(),
                        index=ev["serp_id"].astype("int64").to_numpy())
    out = session.reindex(serps).map(topic)
    if out.isna().any():
        raise SystemExit(f"{int(out.isna().sum())} pages have no session topic")
    return out.to_numpy(dtype=object)


def query_means(values, weight, query) -> np.ndarray:
    """Per query, the mean of the training configurations' ``values`` weighted by their
    pages (``weight``; ``query``: each configuration's query)."""
    return np.array([weight[query == k] @ values[query == k] / weight[query == k].sum()
                     for k in range(query.max() + 1)])


def kappas(lay, xs) -> str:
    """Kappa, the damping of re-clicks, of the fits ``xs``: one value when they share it,
    else the least, median and most over them (one fit per query)."""
    values = np.array([1 / (1 + np.exp(-v[lay.kappa])) for v in xs])
    if np.ptp(values) == 0:
        return f"kappa {values[0]:.3f}"
    return ("kappa per query " + " / ".join(f"{v:.2f}" for v in
                                            np.percentile(values, [0, 50, 100])) +
            ": least / median / most")


def _clicks_do_not_steer(lay) -> None:
    """With damped re-clicks the no-click tables and the examination profile below hold
    only for moves that do not depend on the click: then the ranks a page's reader visits
    do not depend on its clicks, and a rank never clicked is a fresh chance at every
    arrival."""
    if lay.damped and lay.reader.click_moves:
        raise SystemExit("damped re-clicks are studied with moves shared after a click")


def after_decision(x, lay, pair_of_cfg, k: int = 0):
    """The chain of reader ``k`` over the states after each click decision, per
    configuration: ``W`` ``(G, 2S, 2S)`` (rows: after no click, after a click), its start
    ``(G, 2S)``, the leave vector ``(2S,)`` and the click chances ``(G, N)``."""
    _clicks_do_not_steer(lay)
    c, rho, mv = unpack(x, lay, pair_of_cfg, np, k)
    (Qs, Cs, Ls), (Qc, Cc, Lc) = chain(c, rho, mv, np, lay.upward_factor(x, np))[4]
    start = np.zeros((c.shape[0], 2 * S))
    start[:, 0], start[:, S] = 1 - c[:, 0], c[:, 0]
    return np.block([[Qs, Cs], [Qc, Cc]]), start, np.r_[Ls, Lc], c


def _visits(W, start):
    """Expected visits of each state from ``start`` (batched)."""
    return np.linalg.solve(np.eye(W.shape[-1]) - np.swapaxes(W, -1, -2),
                           start[..., None])[..., 0]


def no_click_tables(x, lay, pair_of_cfg) -> np.ndarray:
    """``(G, 2^N)``: per configuration, the probability that the page ends with no click
    on the ranks of each bit mask (arrivals with a click there are cut from the chain);
    a mixture's is the readers' tables weighted by their shares (a probability)."""
    masks = np.array([[(m >> r) & 1 for r in range(N)] for m in range(1 << N)], float)
    ok = np.c_[np.ones((1 << N, S)), 1.0 - masks[:, RANK_OF]]       # (M, 2S): into a click
    out = 0.0
    for k, w in enumerate(lay.weights(x, np)):
        W, start, leave, _ = after_decision(x, lay, pair_of_cfg, k)
        out = out + w * np.stack([_visits(W[g] * ok[:, None, :], start[g] * ok) @ leave
                                  for g in range(W.shape[0])])
    return out


def profile(x, lay, pair_of_cfg) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Per configuration, the expected arrivals per page ``(G,)`` and the probability
    that each rank is examined at least once ``(G, N)`` (the states of the rank made
    absorbing); a mixture's, weighted by the readers' shares; and each reader's expected
    arrivals ``[(G,)]``."""
    arrivals, seen, by_reader = 0.0, 0.0, []
    for k, w in enumerate(lay.weights(x, np)):
        a, s = reader_profile(x, lay, pair_of_cfg, k)
        arrivals, seen = arrivals + w * a, seen + w * s
        by_reader.append(a)
    return arrivals, seen, by_reader


def reader_profile(x, lay, pair_of_cfg, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`profile` of reader ``k`` alone."""
    W, start, _, _ = after_decision(x, lay, pair_of_cfg, k)
    arrivals = _visits(W, start).sum(1)
    seen = np.ones((W.shape[0], N))
    for j in range(1, N):
        at = np.r_[RANK_OF == j, RANK_OF == j]
        seen[:, j] = _visits(W * ~at[None, :, None], start)[:, at].sum(1)
    return arrivals, seen


def exact_probability(x, lay, pair_of_cfg, seq) -> float:
    """One click sequence's probability on the first configuration (numpy; after each
    click the ranks clicked so far click with ``kappa c`` with ``lay.damped``; a mixture's
    is its readers' weighted by their shares)."""
    return float(sum(w * _reader_probability(x, lay, pair_of_cfg, seq, k)
                     for k, w in enumerate(lay.weights(x, np))))


def _reader_probability(x, lay, pair_of_cfg, seq, k) -> float:
    """:func:`exact_probability` of reader ``k`` alone."""
    c, rho, mv = unpack(x, lay, pair_of_cfg[:1], np, k)
    up = lay.upward_factor(x, np)
    g, z, K, E, _ = chain(c, rho, mv, np, up)
    if not seq:
        return float(z[0])
    kappa = 1.0 / (1.0 + np.exp(-x[lay.kappa])) if lay.damped else 1.0
    clicked = np.zeros(N)

    def after(j):
        clicked[j] = 1.0
        return chain(c * (1.0 - (1.0 - kappa) * clicked), rho, mv, np, up)

    alpha = g[0] * AT_RANK[seq[0]]
    _, _, K, E, _ = after(seq[0])
    for j in seq[1:]:
        alpha = (alpha @ K[0]) * AT_RANK[j]
        _, _, K, E, _ = after(j)
    return float(alpha @ E[0])


def simulate_damped(x, lay, pages: int, rng, k: int = 0) -> tuple[dict, int]:
    """Click sequences (with their counts) and arrivals of ``pages`` pages of the first
    configuration read by reader ``k``, simulated step by step: a result clicked before on
    the page clicks again at a later arrival with ``kappa c`` (``lay.damped``; ``c``
    without), an arrival by a backward move with ``lay.upward_factor`` times that; right
    after a click, a repeat with ``rho``."""
    c, rho, mv = unpack(x, lay, np.arange(N)[None, :], np, k)
    c = c[0]
    kappa = 1.0 / (1.0 + np.exp(-x[lay.kappa])) if lay.damped else 1.0
    look = lay.upward_factor(x, np)
    seen, arrivals = {}, 0
    for _ in range(pages):
        i = up = 0
        clicks = []
        while True:
            arrivals += 1
            g = 0
            if rng.random() < c[i] * (kappa if i in clicks else 1.0) * (look if up else 1.0):
                clicks.append(i)
                while rng.random() < rho[i]:
                    clicks.append(i)
                g = 1
            F, B, _ = mv[g]
            u = rng.random()
            if u < F[up, i]:
                i, up = i + 1, 0
            elif u < F[up, i] + B[up, i]:
                i, up = i - 1, 1
            else:
                break
        seen[tuple(clicks)] = seen.get(tuple(clicks), 0) + 1
    return seen, arrivals


def check(pages: int = 200_000, seed: int = 3) -> None:
    """The chain of this script against pages simulated step by step from the walk's
    definition (by ``bench_decision_once.simulate`` with kappa = 1 for fresh re-clicks,
    by :func:`simulate_damped` for damped ones and for a factor on the arrivals by a
    backward move), for each reader; for a mixture of two,
    each page's reader drawn first with the readers' shares."""
    import pytensor
    import pytensor.tensor as pt

    rng = np.random.default_rng(seed)
    cases = [(Reader(False, False), False, 1, False, False),
             (Reader(True, False), False, 1, False, False),
             (Reader(True, True), False, 1, False, False),
             (Reader(True, False), True, 1, False, False),
             (Reader(True, False), False, 2, False, False),
             (Reader(True, False), True, 2, False, False),
             (Reader(True, False), False, 2, True, False),
             (Reader(True, False), True, 2, True, False),
             (Reader(True, False), False, 1, False, True),
             (Reader(True, False), True, 1, False, True)]
    for reader, damped, readers, shifts, upward in cases:
        lay = Layout(N, reader, damped=damped, readers=readers, reader_clicks=shifts,
                     upward=upward)
        x = rng.normal(0, 0.8, lay.size)
        x[:N] -= 0.5
        pair_of_cfg = np.arange(N)[None, :]                 # one page: pair i at rank i
        if damped:
            x[lay.kappa] = -1.0
        if shifts:
            x[lay.shifts] = 1.2                             # reader 2 clicks more
        if upward:
            x[lay.look] = -1.0                              # a look upward: 0.27 c
            x[lay.moveses[0]] += 1.0                        # walks long enough to show it
        share = lay.weights(x, np)
        seen, arrivals = {}, 0
        for k, n in enumerate(rng.multinomial(pages, share)):
            if damped or upward:
                got, more = simulate_damped(x, lay, n, rng, k)
            else:
                # the same walk in bench_decision_once's layout: clicks, kappa, repeats,
                # moves
                th = np.r_[x[:N] + lay.click_shift(x, k), 0.0, x[lay.rhos[k]],
                           x[lay.moveses[k]]]
                got, more = simulate(th, n, rng, 1.0, reader)
            for key, v in got.items():
                seen[key] = seen.get(key, 0) + v
            arrivals += more
        worst = 0.0
        top = [p for p in sorted(seen, key=seen.get, reverse=True) if seen[p] >= 50]
        for p in top:
            exact = exact_probability(x, lay, pair_of_cfg, list(p))
            worst = max(worst, abs(seen[p] / pages - exact) / np.sqrt(exact * (1 - exact)
                                                                     / pages))
        # the graph that is fitted computes the same probabilities
        xv = pt.dvector()
        graph = pytensor.function([xv], sequence_log_likelihoods(
            xv, lay, pair_of_cfg, np.zeros(len(top), dtype=int), top))
        direct = np.log([exact_probability(x, lay, pair_of_cfg, list(p)) for p in top])
        if not np.allclose(graph(x), direct, rtol=0, atol=1e-9):
            raise SystemExit("the fitted graph disagrees with the chain")
        tables = no_click_tables(x, lay, pair_of_cfg)
        if readers == 1 and not damped and not reader.click_moves:
            marginal = pytensor.function([xv], marginal_no_click(xv, lay, pair_of_cfg))(x)
            if not np.allclose(marginal[0], tables[0, 1 << np.arange(N)], rtol=0,
                               atol=1e-9):
                raise SystemExit("the marginals' graph disagrees with the no-click table")
        exp_arrivals = profile(x, lay, pair_of_cfg)[0]
        for r in range(N):
            freq = sum(v for k, v in seen.items() if r in k) / pages
            exact = 1 - tables[0, 1 << r]
            worst = max(worst, abs(freq - exact) / np.sqrt(max(exact * (1 - exact), 1e-12)
                                                           / pages))
        law = clicked_counts(tables)[0]                      # distinct ranks clicked
        for size in range(N + 1):
            freq = sum(v for k, v in seen.items() if len(set(k)) == size) / pages
            worst = max(worst, abs(freq - law[size]) / np.sqrt(
                max(law[size] * (1 - law[size]), 1e-12) / pages))
        what = reader.label + (", damped re-clicks" if damped else "") + \
            (f", a mixture of {readers} (shares {np.round(share, 3).tolist()})"
             if readers > 1 else "") + \
            (f", reader 2's click logits shifted by {x[lay.shifts][0]:+.2f}" if shifts
             else "") + (", arrivals by a backward move click with 0.27 c" if upward
                         else "")
        print(f"check ({what}): {pages:,} simulated pages, largest |simulated - "
              f"exact| / se over the {len(top)} click sequences seen at least 50 times and "
              f"the 10 click probabilities and the 11 of the number of ranks clicked: "
              f"{worst:.2f}; arrivals per page {arrivals / pages:.3f} simulated, "
              f"{exp_arrivals[0]:.3f} exact")
        if worst > 4.5 or abs(arrivals / pages / exp_arrivals[0] - 1) > 0.01:
            raise SystemExit("the exact probabilities disagree with the simulation")


def recalibrated(clicked, p_click) -> tuple[float, float, float]:
    """A diagnostic that favours the model it is given: at each rank,
    ``logistic(a_r + b_r logit p)`` fitted to the held-out clicks themselves (maximum
    likelihood; a rank whose held-out pages are all clicked or all not is left as it is),
    then the perplexity of those probabilities (PyClick's definition, ``click_metrics``).
    Returns it with the smallest and largest slope ``b_r``.  What
    recalibration leaves of a gap between two models is in the order of the pages at a
    rank, not in a monotone miscalibration."""
    from scipy.optimize import minimize
    from scipy.special import expit, logit

    z = logit(np.clip(p_click, 1e-12, 1.0 - 1e-12))
    y = clicked.astype(float)
    out, slopes = np.array(p_click, dtype=float), []
    for r in range(p_click.shape[1]):
        if y[:, r].min() == y[:, r].max():
            continue

        def loss(t, r=r):
            eta = t[0] + t[1] * z[:, r]
            q = expit(eta)
            return (-np.sum(y[:, r] * eta - np.logaddexp(0.0, eta)),
                    -np.array([np.sum(y[:, r] - q), np.sum((y[:, r] - q) * z[:, r])]))
        a, b = minimize(loss, [0.0, 1.0], jac=True, method="L-BFGS-B").x
        out[:, r] = expit(a + b * z[:, r])
        slopes.append(b)
    slopes = slopes or [np.nan]
    return click_metrics(clicked, out, out).perplexity, min(slopes), max(slopes)


def clicked_counts(tables) -> np.ndarray:
    """``(G, N + 1)``: the law of the number of distinct ranks clicked on a page, per
    configuration, from its no-click table (``tables[g, M]``: no click on the ranks of
    ``M``).  ``P(clicked set within A) = tables[g, ~A]``, and Moebius inversion over the
    subsets gives ``P(clicked set = A)``."""
    full = (1 << N) - 1
    f = np.array(tables, dtype=float)[:, full ^ np.arange(1 << N)]
    for i in range(N):
        view = f.reshape(f.shape[0], -1, 2, 1 << i)     # the sets with and without rank i
        view[:, :, 1, :] -= view[:, :, 0, :]
    size = np.array([bin(m).count("1") for m in range(1 << N)])
    return np.stack([np.bincount(size, weights=row, minlength=N + 1) for row in f])


def gap_by_impressions(clicked, p_click, p_peer, shown) -> str:
    """A table of where a model's held-out log-loss exceeds a peer's: the (page, rank)
    cells grouped by how often the pair shown there was shown in training (``shown``,
    like ``clicked``), each group's mean excess in bits per cell, its share of the total
    excess, and both models' 2 to the mean bits per cell on the group (the perplexity of
    the pooled cells, not PyClick's mean over ranks of each rank's).  The shares are of the
    net excess: unstable when the two models are close overall."""
    y = np.asarray(clicked, dtype=float)

    def bits(p):
        p = np.clip(p, 1e-12, 1 - 1e-12)
        return -(y * np.log2(p) + (1 - y) * np.log2(1 - p))

    ours, theirs = bits(p_click), bits(p_peer)
    excess = ours - theirs
    edges = (0, 1, 10, 30, 100, 300, 1000, np.inf)
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        at = (shown >= lo) & (shown < hi)
        if at.any():
            rows.append((f"[{lo}, {hi})", int(at.sum()), f"{excess[at].mean():+.5f}",
                         f"{excess[at].sum() / excess.sum():+.2f}",
                         f"{2 ** ours[at].mean():.4f}", f"{2 ** theirs[at].mean():.4f}"))
    return table(rows, ("impressions in training", "held-out cells", "excess bits per cell",
                        "share of the excess", "2^(mean bits)", "peer's 2^(mean bits)"))


def study(name: str, readers, prior_sd: float, per_rank: bool = False,
          known: bool = True, rank_offsets: bool = False, damped: bool = False,
          mixture: int = 1, scales: bool = False, reader_clicks: bool = False,
          marginal: bool = False, upward: bool = False, by_query: str | None = None,
          query_sd: float = 0.5, group: str = "query"
          ) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """The rows of one log (each reader fitted at the mode, then PBM and UBM) and their
    held-out perplexity and mean ``P(C_r = 1)`` at each rank.  With
    ``per_rank`` every page's "pair" at rank ``i`` is rank ``i`` (one click chance per
    rank, the states of bench_decision_once.py's study without the depth); with
    ``mixture`` > 1 each page is read by one of that many readers of the same kind, each
    with its own repeats and moves (the documents shared), in learned shares; with
    ``by_query`` each query's pages are fitted on their own (:func:`fit_by_query`:
    ``"apart"``, sharing nothing, ``"moves"``, the documents' mean, offsets and kappa
    held at a fit of the whole log, or ``"shrunk"``, as ``"moves"`` with each query's
    repeats and moves shrunk to the whole log's with sd ``query_sd``), and PBM and UBM are
    also fitted per query; ``group = "topic"`` takes the session's topic (TREC Session)
    for the query."""
    log = load_log(name)
    train, test = log.split(0.25, seed=0)
    tr_serps, tr_q, tr_d, tr_clicked = _full_pages(train)
    seqs_by_serp = click_sequences(train)
    (q, d, clicks), te = split_pages(log, known=known)
    pairs = pd.Index(pd.unique(pd.Series(list(zip(np.repeat(tr_q, N), tr_d.ravel(),
                                                  strict=True)))))
    te_serps, te_q, te_d, te_clicked = _full_pages(test)
    keep = np.isin(te_serps, heldout_serps(log, known=known))
    te_q, te_d, te_clicked = te_q[keep], te_d[keep], te_clicked[keep]
    if not np.array_equal(np.asarray(te[2], dtype=bool), te_clicked.astype(bool)):
        raise SystemExit("the peers' held-out pages are not the readers'")

    def pair_ids(qs, ds):
        keys = pd.Series(list(zip(np.repeat(qs, N), ds.ravel(), strict=True)))
        return pairs.get_indexer(keys).reshape(ds.shape)

    tr_pairs = pair_ids(tr_q, tr_d)
    te_pairs = pair_ids(te_q, te_d)
    if per_rank:
        pairs = pd.RangeIndex(N)
        tr_pairs = np.broadcast_to(np.arange(N), tr_pairs.shape)
        te_pairs = np.broadcast_to(np.arange(N), te_pairs.shape)
    cfgs, tr_cfg = np.unique(tr_pairs, axis=0, return_inverse=True)
    units = pd.DataFrame({"cfg": tr_cfg.ravel(), "seq": seqs_by_serp.loc[tr_serps].to_numpy()})
    units = units.groupby(["cfg", "seq"]).size().reset_index(name="n")
    te_cfgs, te_cfg = np.unique(te_pairs, axis=0, return_inverse=True)
    te_cfg = te_cfg.ravel()
    if by_query:
        if marginal or upward or mixture > 1 or (by_query == "apart" and (per_rank or not known)):
            raise SystemExit("a reader per query is one reader; each query apart takes "
                             "documents and held-out pages whose query occurs in training")
        tr_group = topics_of(log, tr_serps) if group == "topic" else tr_q
        te_group = topics_of(log, te_serps[keep]) if group == "topic" else te_q
        # the groups (queries, or topics with group "topic"): tr_query / te_query hold
        # each configuration's group index, ``queries`` the groups
        queries = pd.Index(pd.unique(tr_group))
        if per_rank or group != "query":
            # a configuration shown for several groups: one configuration per group
            keyed, tr_cfg = np.unique(np.c_[tr_pairs, queries.get_indexer(tr_group)],
                                      axis=0, return_inverse=True)
            cfgs, tr_query = keyed[:, :N], keyed[:, N]
            units = pd.DataFrame({"cfg": tr_cfg.ravel(),
                                  "seq": seqs_by_serp.loc[tr_serps].to_numpy()})
            units = units.groupby(["cfg", "seq"]).size().reset_index(name="n")
        else:
            tr_query = np.full(len(cfgs), -1)
            tr_query[tr_cfg.ravel()] = queries.get_indexer(tr_q)
            if not np.array_equal(tr_query[tr_cfg.ravel()], queries.get_indexer(tr_q)):
                raise SystemExit("a training configuration is shown for two queries")
        # a held-out page whose pairs were all unseen in training has no query in its
        # pairs: held-out configurations are keyed by the query (group) as well; -1: a
        # group not in training, read by the whole log's reader
        keyed, te_cfg = np.unique(np.c_[te_pairs, queries.get_indexer(te_group)], axis=0,
                                  return_inverse=True)
        te_cfgs, te_query, te_cfg = keyed[:, :N], keyed[:, N], te_cfg.ravel()
    print(f"{name}: {len(tr_serps):,} training pages, {len(pairs):,} pairs, {len(cfgs):,} "
          f"configurations, {len(units):,} (configuration, click sequence) units; "
          f"{len(te_q):,} test pages", flush=True)
    rows = []
    per_rank_rows = [(name, "observed", *[""] * N,
                      *(f"{v:.3f}" for v in te_clicked.mean(0)), "", "")]
    fitted = []
    count_rows = [(name, "observed", *(f"{v:.4f}" for v in np.bincount(
        te_clicked.sum(1).astype(int), minlength=N + 1) / len(te_clicked)))]
    for reader in readers:
        lay = Layout(len(pairs), reader, rank_offsets, damped, mixture, scales,
                     reader_clicks, upward)
        if by_query:
            shared, seconds = fit(lay, cfgs, units["cfg"].to_numpy(), list(units["seq"]),
                                  units["n"].to_numpy(float), prior_sd) \
                if by_query in ("moves", "shrunk") else (None, 0.0)
            tables, arrivals, seen, spent, xs = fit_by_query(
                lay, cfgs, units, tr_query, te_cfgs, te_query, prior_sd, shared,
                query_sd if by_query == "shrunk" else None, hold_clicks=per_rank)
            seconds += spent
            if shared is not None:          # the whole log's reader on the same pages
                one = click_metrics(te_clicked, *heldout_probabilities(
                    no_click_tables(shared, lay, te_cfgs), te_cfg, te_clicked))
                print(f"{name}, {reader_label(reader)}: the whole log's fit (one reader), "
                      f"LL {one.log_likelihood:.4f}, perplexity {one.perplexity:.4f}, "
                      f"cond. perplexity {one.conditional_perplexity:.4f}", flush=True)
        elif marginal:
            x, seconds = fit_marginals(lay, cfgs, tr_cfg.ravel(), tr_clicked, prior_sd)
        else:
            x, seconds = fit(lay, cfgs, units["cfg"].to_numpy(), list(units["seq"]),
                             units["n"].to_numpy(float), prior_sd)
        if not by_query:
            tables = no_click_tables(x, lay, te_cfgs)
            arrivals, seen, by_reader = profile(x, lay, cfgs)
        p_click, p_obs = heldout_probabilities(tables, te_cfg, te_clicked)
        m = click_metrics(te_clicked, p_click, p_obs)
        fitted.append(p_click)
        label = reader_label(reader)
        again, low, high = recalibrated(te_clicked, p_click)
        per_rank_rows.append((name, label, *(f"{v:.4f}" for v in m.perplexity_at_rank),
                              *(f"{v:.3f}" for v in p_click.mean(0)), f"{again:.4f}",
                              f"{low:.2f}-{high:.2f}"))
        weight = np.bincount(tr_cfg.ravel(), minlength=len(cfgs)) / len(tr_serps)
        eh, seen_all, seen = weight @ arrivals, seen, weight @ seen
        how = ("clicks per rank" if per_rank else "per document") + \
            (", click offsets by rank" if rank_offsets else "") + \
            (", click scales by rank" if scales else "") + \
            (f", damped re-clicks ({kappas(lay, xs if by_query else [x])})" if damped
             else "") + \
            (", fitted to the per-rank marginals" if marginal else "") + \
            (f", a look upward clicks with {lay.upward_factor(x, np):.3f} of the chance"
             if upward else "")
        if by_query:
            per_query = query_means(arrivals, weight, tr_query)
            ranks_seen = query_means(seen_all.sum(1), weight, tr_query)
            held = ("the clicks per rank" if per_rank else
                    "the documents' mean, offsets and kappa") + " from the whole log"
            how += {"moves": f", a reader per {group} ({held})",
                    "shrunk": f", a reader per {group} shrunk to the whole log's (repeat "
                              f"and move logits Normal(the whole log's, {query_sd:g}); "
                              f"{held})",
                    "apart": ", each query's pages fitted on their own"}[by_query] + \
                (f" ({len(queries)} {'topics' if group == 'topic' else 'queries'}; E[H] "
                    f"{per_query.min():.2f} to {per_query.max():.2f}, median "
                    f"{np.median(per_query):.2f}; distinct ranks examined "
                    f"{ranks_seen.min():.2f} to {ranks_seen.max():.2f})")
        elif mixture > 1:
            how += ", a mixture: " + "; ".join(
                f"{w:.2f} of pages E[H] {weight @ a:.2f}"
                for w, a in zip(lay.weights(x, np), by_reader, strict=True))
            if reader_clicks:
                how += "; click logits of readers 2.. shifted by " + ", ".join(
                    f"{v:+.2f}" for v in x[lay.shifts])
        weight_te = np.bincount(te_cfg, minlength=len(te_cfgs)) / te_cfg.size
        count_rows.append((name, f"{label} ({how})",
                           *(f"{v:.4f}" for v in weight_te @ clicked_counts(tables))))
        rows.append((name, f"walk ({how}): {label}", len(tr_serps), m.pages, f"{seconds:.0f}",
                     f"{m.log_likelihood:.4f}", f"{m.perplexity:.4f}",
                     f"{m.conditional_perplexity:.4f}", f"{eh:.2f}", f"{seen.sum():.2f}",
                     " / ".join(f"{seen[j]:.2f}" for j in (1, 2, 4, 9))))
        print(rows[-1], flush=True)
    for peer in ("PBM", "UBM"):
        model = MODELS[peer]().fit(q, d, clicks)
        predicted = model.predict(*te)
        r = click_metrics(te[2], *predicted)
        again, low, high = recalibrated(te[2], predicted[0])
        per_rank_rows.append((name, peer, *(f"{v:.4f}" for v in r.perplexity_at_rank),
                              *(f"{v:.3f}" for v in predicted[0].mean(0)), f"{again:.4f}",
                              f"{low:.2f}-{high:.2f}"))
        rows.append((name, peer, len(q), r.pages, "", f"{r.log_likelihood:.4f}",
                     f"{r.perplexity:.4f}", f"{r.conditional_perplexity:.4f}", "", "", ""))
        if by_query:                        # the peer fitted to each query's pages alone
            mine = np.empty_like(te[2], dtype=float), np.empty_like(te[2], dtype=float)
            test = [np.asarray(v) for v in te]
            train_g, test_g = np.asarray(tr_group), np.asarray(te_group)
            for one in np.unique(test_g):
                on, held = train_g == one, test_g == one
                if not on.any():            # a group not in training: the whole log's
                    mine[0][held], mine[1][held] = predicted[0][held], predicted[1][held]
                    continue
                got = MODELS[peer]().fit(*(np.asarray(v)[on] for v in (q, d, clicks)))\
                    .predict(*(v[held] for v in test))
                mine[0][held], mine[1][held] = got
            r = click_metrics(te[2], *mine)
            rows.append((name, f"{peer}, each {group}'s pages fitted on their own", len(q),
                         r.pages, "", f"{r.log_likelihood:.4f}", f"{r.perplexity:.4f}",
                         f"{r.conditional_perplexity:.4f}", "", "", ""))
        if peer == "PBM":                        # its clicks are independent given the page
            count_rows.append((name, peer, *(f"{v:.4f}" for v in
                                             poisson_binomial(predicted[0]).mean(0))))
            impressions = np.bincount(tr_pairs.ravel(), minlength=len(pairs))
            shown = np.where(te_pairs >= 0, impressions[np.maximum(te_pairs, 0)], 0)
            what = "rank" if per_rank else "(query, document) pair"
            for reader, p_click in zip(readers, fitted, strict=True):
                print(f"{name}, {reader_label(reader)}: perplexity against PBM's "
                      + str(perplexity_difference(te_clicked, p_click, predicted[0], seed=0)),
                      flush=True)
                print(f"{name}, {reader_label(reader)}: behind PBM by the impressions in "
                      f"training of "
                      f"the {what} shown\n" + gap_by_impressions(
                          te_clicked, p_click, predicted[0], shown), flush=True)
    return rows, per_rank_rows, count_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", nargs="+", default=["wscd"], choices=["wscd", "clara2", "trec"])
    ap.add_argument("--check", action="store_true",
                    help="first test the exact probabilities against a simulation")
    ap.add_argument("--click-moves", action="store_true",
                    help="also fit the reader with a direction whose moves after a click "
                         "are apart")
    ap.add_argument("--per-rank", action="store_true",
                    help="one click chance per rank instead of per (query, document) pair")
    ap.add_argument("--rank-offsets", action="store_true",
                    help="a document shown at rank i clicks with logistic(alpha + delta_i), "
                         "delta_1 = 0 (as the spec key rank_offsets)")
    ap.add_argument("--rank-scales", action="store_true",
                    help="a document shown at rank i clicks with logistic(alpha) "
                         "logistic(s_i), s_1 = +inf (PBM's form) instead")
    ap.add_argument("--damped-reclicks", action="store_true",
                    help="a result clicked before on the page clicks at a later arrival with "
                         "kappa c (as the spec key reclicks = 'damped'); moves shared only")
    ap.add_argument("--direction-only", action="store_true",
                    help="fit only the readers with a direction (bayeschain's walk with the "
                         "same keys is in bench_click_models.py)")
    ap.add_argument("--all-test-pages", action="store_true",
                    help="score every held-out 10-result page, not only those whose query "
                         "occurs in training (TREC Session keeps 2 pages otherwise)")
    ap.add_argument("--readers", type=int, default=1,
                    help="a mixture of this many readers of each kind (each page read by "
                         "one, in learned shares; the documents shared)")
    ap.add_argument("--reader-clicks", action="store_true",
                    help="with --readers 2: the second reader adds a learned shift to every "
                         "click logit (users who click more, or less, than others)")
    ap.add_argument("--marginal-fit", action="store_true",
                    help="fit each reader to the per-rank marginals instead of the click "
                         "sequences (a composite likelihood, clicks treated as independent "
                         "as in PBM's: a diagnostic)")
    ap.add_argument("--upward-look", action="store_true",
                    help="an arrival by a backward move (a rank seen before) clicks with a "
                         "learned factor of the chance")
    ap.add_argument("--query-readers", choices=["apart", "moves", "shrunk"],
                    help="fit each query's pages on their own, sharing nothing (apart) or with "
                         "the documents' mean, offsets and kappa held at a fit of the whole "
                         "log (moves; shrunk: and the repeats and moves shrunk to the whole "
                         "log's, --query-sd); WSCD's 20 queries have 141 to 17,941 pages each")
    ap.add_argument("--query-groups", choices=["query", "topic"], default="query",
                    help="with --query-readers: a reader per query, or per session topic "
                         "(TREC Session, whose free-text queries rarely recur)")
    ap.add_argument("--query-sd", type=float, default=None,
                    help="with --query-readers shrunk: the sd of a query's repeat and move "
                         "logits around the whole log's (0.5)")
    ap.add_argument("--prior-sd", type=float, default=1.5,
                    help="the sd of the pairs' logits around their mean")
    args = ap.parse_args()
    if args.per_rank and (args.rank_offsets or args.rank_scales):
        raise SystemExit("--rank-offsets and --rank-scales need attractiveness per document "
                         "(not --per-rank)")
    if args.rank_offsets and args.rank_scales:
        raise SystemExit("--rank-offsets or --rank-scales, not both")
    if args.marginal_fit and (args.readers > 1 or args.damped_reclicks or args.click_moves):
        raise SystemExit("--marginal-fit takes one reader, moves shared, fresh re-clicks")
    if args.reader_clicks and args.readers < 2:
        raise SystemExit("--reader-clicks needs --readers 2 or more")
    if args.query_readers is None and args.query_groups != "query":
        raise SystemExit("--query-groups goes with --query-readers")
    if args.query_readers != "shrunk" and args.query_sd is not None:
        raise SystemExit("--query-sd goes with --query-readers shrunk")
    if args.damped_reclicks and args.click_moves:
        raise SystemExit("--damped-reclicks is studied with moves shared after a click")
    warnings.filterwarnings("ignore", module="pytensor")
    import logging

    logging.getLogger("pytensor").setLevel(logging.ERROR)
    print(f"machine: {machine()}")
    if args.check:
        check()
    readers = [Reader(False, False)] * (not args.direction_only) + [Reader(True, False)] + \
        [Reader(True, True)] * args.click_moves
    rows, per_rank, counts = [], [], []
    for name in present_logs(args.logs):
        got = study(name, readers, args.prior_sd, args.per_rank, not args.all_test_pages,
                    args.rank_offsets, args.damped_reclicks, args.readers,
                    args.rank_scales, args.reader_clicks, args.marginal_fit,
                    args.upward_look, args.query_readers,
                    0.5 if args.query_sd is None else args.query_sd,
                    args.query_groups)
        rows, per_rank, counts = rows + got[0], per_rank + got[1], counts + got[2]
    print(table(rows, ("log", "model", "train pages", "test pages", "fit s", "LL",
                       "perplexity", "cond. perplexity", "E[H]", "distinct ranks examined",
                       "P(examined), ranks 2 / 3 / 5 / 10")))
    print("\nHeld-out perplexity at each rank, then the mean P(C_r = 1) over the held-out "
          "pages (observed: their click rate), then the perplexity with each rank's "
          "probabilities recalibrated on those pages and the slopes (`recalibrated`):")
    print(table(per_rank, ("log", "model", *(f"ppl {r}" for r in range(1, N + 1)),
                           *(f"P(C_{r})" for r in range(1, N + 1)),
                           "ppl recalibrated", "slopes")))
    print("\nThe number of distinct ranks clicked on a held-out page: observed, each "
          "reader's law (`clicked_counts`) and PBM's (independent clicks), averaged over "
          "the pages:")
    print(table(counts, ("log", "model", *(f"{k} clicked" for k in range(N + 1)))))


if __name__ == "__main__":
    main()
