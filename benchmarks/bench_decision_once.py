r"""Does the user re-draw the click decision when a snippet is examined again?  Does the
reader keep a direction?  A study.

    python3 benchmarks/bench_decision_once.py [--logs trec clara2 wscd] [--cap K] [--check]
        [--all-test-pages] [--readers 2 [--mixture-kappa 1|free]] [--no-free-kappa]
        [--direction] [--shared-moves] [--simulate PAGES]

The walk that bayeschain fits gives every arrival on a rank a fresh click chance.  Click
models (PBM, UBM, DBN) make the decision once.  This script fits, to the same clicks, the
walk in which the *first* examination of a rank clicks with ``c_i`` and every later one
with ``kappa c_i`` (``kappa = 1``: bayeschain's walk; ``kappa = 0``: the decision made
once; between: the data decide), and compares it with ``kappa`` fixed at 1.  With
``--direction`` it also fits the reader who keeps a direction: moves of their own after
arriving on a rank by a backward move (reading up the page), so that going on up and
turning back down are not the moves of a reader going down (bayeschain's walk has one set
for both, and must make every backward click cost re-reading).  The states carry the depth
for ``kappa``: on WSCD (clicks up to 46 per page) a fit takes over 15 minutes here;
``bench_reader_direction.py --per-rank`` fits the readers with ``kappa = 1`` on the 20
states without it, in seconds.

**The chain.**  With moves to neighbouring ranks only, the ranks examined so far are
``1..d`` (``d`` the deepest), so the state ``(i, d, u)``, ``1 <= i <= d <= n``, says
whether an arrival is fresh: forward from ``(d, d, .)`` reaches ``(d+1, d+1, 0)`` for the
first time; every other move is a re-examination.  ``u`` is the way the user came: 0 by a
forward move (or at the start), 1 by a backward one (110 states on 10 results; without a
direction ``u`` is 0 throughout: 55 states).  After the click decision the user moves with
the moves after a click ``(f^c_i, b^c_i, l^c_i)`` or after no click ``(f^s_i, b^s_i,
l^s_i)`` (one set for both with ``--shared-moves``), each a set of its own for ``u = 1``
with ``--direction``; after a click they click the same result again at once
with ``rho_i`` (a repeat, as in bayeschain's walk).  With ``Q_s`` (``C_s``) the arrivals
without (with) a click after no click, ``Q_c``, ``C_c`` after a click, ``L`` the leave
vectors and ``N = (I - Q_s)^{-1}``, the clicks form a Markov chain over the states of the
click (``e_1`` the start, state ``(1, 1, 0)``): first click
``g = c_1 e_1 + (1 - c_1) e_1^T N C_s``, no click at all ``(1 - c_1) e_1^T N L_s``, next
click ``K = diag(rho) + diag(1 - rho) (C_c + Q_c N C_s)``, leaving after a click
``E = (1 - rho) (L_c + Q_c N L_s)``.  The depth is hidden, so a page's likelihood is a
forward recursion over its ordered clicks (``alpha_{t+1} = (alpha_t K) * [rank = j_{t+1}]``),
not a product of per-rank terms (bayeschain's default likelihood is a sum over per-rank
click-to-click terms, which this walk breaks).  The walk with moves that do not depend on
the click is now the spec ``walk-once`` (``bayeschain/inference/walk/once.py``: the same
chain, its exact gradient by hand, sampled by NUTS); this study keeps what the spec does
not fit: moves that depend on the click (which the spec refuses: its walk over ranks
would not be Markov), the reader with a direction, at the mode, and mixtures of readers
(of bayeschain's walk with moves after a click apart and without a direction).
``--check`` tests the recursion and the clicked-set probabilities against a direct
simulation of the walk (200,000 pages, random parameters; each walk fitted).

**Fit and scores.**  Clicks per rank, moves per rank (softmax of forward and backward
against leaving; rank 1 has no backward move, rank 10 no forward one), logits with
Normal(0, 3) priors, the posterior mode by L-BFGS on PyTensor's exact gradient (leaving
is not split into next query and end: click prediction does not see it).  Held-out
pages and metrics are those of ``bench_click_models.py`` (``log.split(0.25, seed=0)``,
10-result test pages whose query occurs in training, PyClick's definitions via
``bayeschain.inference.click_metrics``); the probabilities of clicked sets are exact
(the chain over ``(i, d, clicked)`` and inclusion-exclusion).  ``E[H]``: expected
examinations (arrivals) per page.  ``--cap K`` also refits on the training pages with at
most ``K`` clicks (are a few heavy clickers what makes the walks long?).  A second table
sets each fit's click rate per rank and share of click-less pages on its own training
pages beside the observed ones; a third, where the clicks go on pages simulated from
each fit (``--simulate``), beside the training pages.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402
from click_model_peers import LOGS, RANKS, _full_pages, heldout_serps, load_log, present_logs  # noqa: E402

from bayeschain.inference import click_metrics  # noqa: E402

N = RANKS


class StateSpace(NamedTuple):
    """The states ``(i, d, u)`` (rank ``i``, deepest rank examined ``d``, ``u = 1`` where
    the user arrived by a backward move, reading up the page; ``u = 0`` only without a
    direction) and the moves between them."""

    S: int
    RANK_OF: np.ndarray
    DIR_OF: np.ndarray
    AT_RANK: np.ndarray          # (N, S)
    SRC_F: np.ndarray            # forward moves: from, to, and whether the arrival is fresh
    TGT_F: np.ndarray
    FRESH_F: np.ndarray
    SRC_B: np.ndarray            # backward moves
    TGT_B: np.ndarray


@lru_cache(maxsize=2)
def states(direction: bool) -> StateSpace:
    """55 states on 10 results, 110 with ``direction``."""
    up = 1 if direction else 0
    space = [(i, d, u) for u in range(up + 1) for d in range(N) for i in range(d + 1)]
    index = {st: k for k, st in enumerate(space)}
    rank = np.array([i for i, _, _ in space])
    return StateSpace(
        len(space), rank, np.array([u for _, _, u in space]),
        np.stack([(rank == j).astype(float) for j in range(N)]),
        np.array([k for k, (i, _, _) in enumerate(space) if i < N - 1]),
        np.array([index[(i + 1, max(d, i + 1), 0)] for i, d, _ in space if i < N - 1]),
        np.array([float(i == d) for i, d, _ in space if i < N - 1]),
        np.array([k for k, (i, _, _) in enumerate(space) if i > 0]),
        np.array([index[(i - 1, d, up)] for i, d, _ in space if i > 0]))


@dataclass(frozen=True)
class Reader:
    """Which moves a reader has: one set after a click and one after no click
    (``click_moves``; one set for both otherwise), each once more for a reader who arrived
    by a backward move, reading up the page (``direction``)."""

    direction: bool = False
    click_moves: bool = True

    @property
    def sets(self) -> int:
        return (2 if self.direction else 1) * (2 if self.click_moves else 1)

    @property
    def dim(self) -> int:
        """Click logits, kappa, repeats, and the forward and backward logits of each set."""
        return 2 * N + 1 + 2 * N * self.sets

    @property
    def label(self) -> str:
        return ", ".join([*(["moves after a click apart"] if self.click_moves else
                            ["moves shared"]),
                          *(["a reader with a direction"] if self.direction else [])])


WALK = Reader()                                          # the study's first walk
DEFAULT_WALK = Reader(direction=False, click_moves=False)   # bayeschain's default walk


def parameters(th, T, reader: Reader = WALK):
    """``c, kappa, rho`` and the moves ``moves[g][u] = (f, b, leave)`` after no click
    (``g = 0``) or a click (``g = 1``), reading down (``u = 0``) or up (``u = 1``), from
    the unconstrained vector (``T``: numpy or pytensor.tensor); sets the reader does not
    have are those it has."""
    def sig(x):
        return 1.0 / (1.0 + T.exp(-x))

    def move_set(k):
        o = 2 * N + 1 + 2 * N * k
        ef = T.exp(th[o:o + N]) * np.r_[np.ones(N - 1), 0.0]
        eb = T.exp(th[o + N:o + 2 * N]) * np.r_[0.0, np.ones(N - 1)]
        total = ef + eb + 1.0
        return ef / total, eb / total, 1.0 / total

    ways = 2 if reader.direction else 1
    moves = []
    for g in range(2):
        k = ways * g if reader.click_moves else 0
        moves.append([move_set(k + u) for u in range(ways)] * (2 // ways))
    return sig(th[:N]), sig(th[N]), sig(th[N + 1:2 * N + 1]), moves


def chain(th, T, kappa=None, reader: Reader = WALK):
    """``(g, z, K, E)`` of the module docstring and the arrival matrices ``(Q, C, L)`` of
    both move sets."""
    c, k_free, rho, moves = parameters(th, T, reader)
    S, RANK_OF, DIR_OF, _, SRC_F, TGT_F, FRESH_F, SRC_B, TGT_B = states(reader.direction)
    stack = np.stack if T is np else T.stack
    kappa = k_free if kappa is None else kappa
    pcf = c[RANK_OF[TGT_F]] * (FRESH_F + (1.0 - FRESH_F) * kappa)
    pcb = c[RANK_OF[TGT_B]] * kappa
    mats = []
    for by_dir in moves:
        f, b, leave = (stack([m[k] for m in by_dir]) for k in range(3))    # (2, N) each
        wf, wb = f[DIR_OF[SRC_F], RANK_OF[SRC_F]], b[DIR_OF[SRC_B], RANK_OF[SRC_B]]
        if T is np:
            Q, C = np.zeros((S, S)), np.zeros((S, S))
            np.add.at(Q, (SRC_F, TGT_F), wf * (1 - pcf))
            np.add.at(Q, (SRC_B, TGT_B), wb * (1 - pcb))
            np.add.at(C, (SRC_F, TGT_F), wf * pcf)
            np.add.at(C, (SRC_B, TGT_B), wb * pcb)
        else:
            Q = T.inc_subtensor(T.zeros((S, S))[SRC_F, TGT_F], wf * (1 - pcf))
            Q = T.inc_subtensor(Q[SRC_B, TGT_B], wb * (1 - pcb))
            C = T.inc_subtensor(T.zeros((S, S))[SRC_F, TGT_F], wf * pcf)
            C = T.inc_subtensor(C[SRC_B, TGT_B], wb * pcb)
        mats.append((Q, C, leave[DIR_OF, RANK_OF]))
    (Qs, Cs, Ls), (Qc, Cc, Lc) = mats
    inv = np.linalg.inv if T is np else T.linalg.inv
    Nm = inv(np.eye(S) - Qs)
    A, X = Nm @ Cs, Nm @ Ls
    g = c[0] * np.eye(S)[0] + (1 - c[0]) * A[0]
    z = (1 - c[0]) * X[0]
    r = rho[RANK_OF]
    K = np.eye(S) * r[:, None] + (1 - r)[:, None] * (Cc + Qc @ A)
    E = (1 - r) * (Lc + Qc @ X)
    return g, z, K, E, mats


def pattern_log_likelihoods(th, patterns, kappa=None, reader: Reader = WALK):
    """PyTensor graph: the log-probability of each click sequence of ``patterns`` (tuples
    of 0-based ranks, in click order)."""
    import pytensor.tensor as pt

    g, z, K, E, _ = chain(th, pt, kappa, reader)
    AT_RANK = states(reader.direction).AT_RANK
    lengths = np.array([len(p) for p in patterns])
    out = pt.zeros(len(patterns))
    if (lengths == 0).any():
        out = pt.set_subtensor(out[np.flatnonzero(lengths == 0)], pt.log(z))
    keep = lengths > 0
    if not keep.any():
        return out
    seq = np.zeros((keep.sum(), lengths.max()), dtype=int)
    for u, p in enumerate(p for p in patterns if p):
        seq[u, :len(p)] = p
    live_len = lengths[keep]
    alpha = g[None, :] * AT_RANK[seq[:, 0]]
    norm = alpha.sum(1)
    logs = pt.log(norm)
    alpha = alpha / norm[:, None]
    for t in range(1, seq.shape[1]):
        live = live_len > t
        nxt = (alpha @ K) * AT_RANK[seq[:, t]]
        norm = pt.switch(live, nxt.sum(1), 1.0)
        logs = logs + pt.log(norm)
        alpha = pt.switch(live[:, None], nxt / norm[:, None], alpha)
    return pt.set_subtensor(out[np.flatnonzero(keep)], logs + pt.log(alpha @ E))


def log_likelihood(th, patterns, counts, kappa=None, reader: Reader = WALK):
    """PyTensor graph: the log-likelihood of ``patterns`` seen ``counts`` times."""
    return (counts * pattern_log_likelihoods(th, patterns, kappa, reader)).sum()


def fit(patterns, counts, kappa=None, prior_sd=3.0, readers=1, reader: Reader = WALK):
    """The posterior mode (L-BFGS on the exact gradient) and its seconds.  ``readers = 2``:
    a mixture of two walks, each page read by one of them (weight ``sigmoid(w)``, the last
    coordinate); the second starts as a reader who leaves early."""
    import pytensor
    import pytensor.tensor as pt
    from scipy.optimize import minimize

    x = pt.dvector("x")
    DIM = reader.dim
    if readers == 1:
        ll = log_likelihood(x, patterns, counts, kappa, reader)
    else:
        w = x[2 * DIM]
        one = pattern_log_likelihoods(x[:DIM], patterns, kappa, reader)
        two = pattern_log_likelihoods(x[DIM:2 * DIM], patterns, kappa, reader)
        ll = (counts * pt.logaddexp(-pt.softplus(-w) + one, -pt.softplus(w) + two)).sum()
    lp = ll - 0.5 * (x ** 2).sum() / prior_sd**2
    fn = pytensor.function([x], [-lp, -pytensor.grad(lp, x)])
    start = np.zeros(DIM)
    start[:N], start[N + 1:2 * N + 1] = -1.0, -2.0
    x0 = start if readers == 1 else np.r_[start, start, 0.0]
    if readers == 2:
        x0[DIM + 2 * N + 1:DIM + 3 * N + 1] = -2.0       # the second reader's forward logits
    t = time.perf_counter()
    res = minimize(fn, x0, jac=True, method="L-BFGS-B", options={"maxiter": 5000})
    if not res.success:
        raise SystemExit(f"L-BFGS did not converge: {res.message}")
    return res.x, time.perf_counter() - t


def _arrivals(th, kappa=None, forbid=None, reader: Reader = WALK):
    """Expected arrivals on the post-decision states ``(i, d, clicked)`` (``forbid``: ranks
    where a click is not allowed, for the no-click probabilities) and the leave vector."""
    c = parameters(th, np, reader)[0]
    S, RANK_OF = states(reader.direction)[:2]
    (Qs, Cs, Ls), (Qc, Cc, Lc) = chain(th, np, kappa, reader)[4]
    ok = np.ones(S) if forbid is None else 1.0 - forbid[RANK_OF]
    W = np.block([[Qs, Cs * ok], [Qc, Cc * ok]])
    x0 = np.zeros(2 * S)
    x0[0], x0[S] = 1 - c[0], c[0] * ok[0]
    return np.linalg.solve(np.eye(2 * S) - W.T, x0), np.r_[Ls, Lc]


def no_click_table(th, kappa=None, reader: Reader = WALK) -> np.ndarray:
    """``Q[mask]``: the probability that the page ends with no click on the ranks of the
    bit mask (all 2^10 masks)."""
    out = np.empty(1 << N)
    for m in range(1 << N):
        y, leave = _arrivals(th, kappa, np.array([(m >> r) & 1 for r in range(N)], float),
                             reader)
        out[m] = y @ leave
    return out


def predict(noclick, clicked):
    """``P(C_r = 1)`` and ``P(C_r = c_r | C_<r)`` per page (inclusion-exclusion)."""
    cache = {}

    def joint(prefix):
        if prefix not in cache:
            ones = [r for r, v in enumerate(prefix) if v]
            zeros = sum(1 << r for r, v in enumerate(prefix) if not v)
            cache[prefix] = sum((-1) ** k * noclick[zeros | sum(1 << r for r in sub)]
                                for k in range(len(ones) + 1)
                                for sub in itertools.combinations(ones, k))
        return cache[prefix]

    p_click = np.tile([1 - noclick[1 << r] for r in range(N)], (clicked.shape[0], 1))
    p_obs = np.empty(clicked.shape)
    for p, row in enumerate(map(tuple, clicked.astype(bool))):
        for r in range(N):
            q = joint(row[:r] + (True,)) / joint(row[:r])
            p_obs[p, r] = q if row[r] else 1 - q
    return p_click, p_obs


def examinations(th, kappa=None, reader: Reader = WALK) -> np.ndarray:
    """Expected arrivals per rank per page."""
    y = _arrivals(th, kappa, reader=reader)[0]
    S, RANK_OF = states(reader.direction)[:2]
    return np.bincount(RANK_OF, weights=y[:S] + y[S:], minlength=N)


def click_sequences(log) -> pd.Series:
    """The ordered clicked ranks (0-based) of each 10-result page, by ``serp_id``."""
    serps = _full_pages(log)[0]
    ev = log.events
    cl = ev[(ev["event"] == "click") & ev["rank"].notna() & ev["serp_id"].notna()]
    cl = cl[cl["serp_id"].isin(serps) & (cl["rank"] <= N)].sort_values("seq")
    seqs = cl.groupby(cl["serp_id"].astype("int64"))["rank"].agg(
        lambda r: tuple(int(x) - 1 for x in r))
    out = pd.Series([()] * len(serps), index=serps, dtype=object)
    out.loc[seqs.index] = seqs
    return out


def simulate(th, pages: int, rng, kappa=None, reader: Reader = WALK):
    """Click sequences (tuples of 0-based ranks, with their counts) and arrivals of
    ``pages`` pages simulated directly from the walk's definition, one step at a time."""
    c, k_free, rho, moves = parameters(th, np, reader)
    kappa = k_free if kappa is None else kappa
    seen, arrivals = {}, 0
    for _ in range(pages):
        i = d = up = 0
        fresh, clicks = True, []
        while True:
            arrivals += 1
            grp = 0
            if rng.random() < c[i] * (1.0 if fresh else kappa):
                clicks.append(i)
                while rng.random() < rho[i]:
                    clicks.append(i)
                grp = 1
            f, b, _ = (m[i] for m in moves[grp][up])
            u = rng.random()
            if u < f:
                i += 1
                fresh, d, up = i > d, max(d, i), 0
            elif u < f + b:
                i, fresh, up = i - 1, False, 1
            else:
                break
        seen[tuple(clicks)] = seen.get(tuple(clicks), 0) + 1
    return seen, arrivals


def click_shape(seen: dict) -> np.ndarray:
    """Per page: clicks, distinct results clicked, re-clicks right after the same result's
    click and after other clicks, and the backward share of click-to-click moves (to a
    higher rank; a repeat counts as a move that is not backward)."""
    pages = clicks = distinct = right = later = back = pairs = 0
    for seq, n in seen.items():
        pages += n
        clicks += n * len(seq)
        distinct += n * len(set(seq))
        for t in range(1, len(seq)):
            pairs += n
            back += n * (seq[t] < seq[t - 1])
            if seq[t] == seq[t - 1]:
                right += n
            elif seq[t] in seq[:t]:
                later += n
    return np.array([clicks / pages, distinct / pages, right / pages, later / pages,
                     back / max(pairs, 1)])


def check(pages: int = 200_000, seed: int = 1, reader: Reader = WALK) -> None:
    """The recursion and the clicked-set probabilities against a direct simulation (of
    ``reader``)."""
    import pytensor
    import pytensor.tensor as pt

    rng = np.random.default_rng(seed)
    th = rng.normal(0, 0.8, reader.dim)
    th[:N] -= 0.5
    seen, arrivals = simulate(th, pages, rng, reader=reader)
    top = sorted(seen, key=seen.get, reverse=True)[:12]
    th_v = pt.dvector()
    worst = 0.0
    for p in top:
        fn = pytensor.function([th_v], log_likelihood(th_v, [p], np.array([1.0]),
                                                       reader=reader))
        exact = float(np.exp(fn(th)))
        se = np.sqrt(exact * (1 - exact) / pages)
        worst = max(worst, abs(seen[p] / pages - exact) / se)
    noclick = no_click_table(th, reader=reader)
    for r in range(N):
        freq = sum(v for k, v in seen.items() if r in k) / pages
        exact = 1 - noclick[1 << r]
        worst = max(worst, abs(freq - exact) / np.sqrt(max(exact * (1 - exact), 1e-12) / pages))
    mean_arrivals = examinations(th, reader=reader).sum()
    what = f" ({reader.label})"
    print(f"check{what}: {pages:,} simulated pages, largest |simulated - exact| / se over the 12 "
          f"commonest click sequences and the 10 click probabilities: {worst:.2f}; "
          f"arrivals per page {arrivals / pages:.3f} simulated, {mean_arrivals:.3f} exact")
    if worst > 4.5:
        raise SystemExit("the exact probabilities disagree with the simulation")


def training_rates(noclick: np.ndarray) -> np.ndarray:
    """``P(C_r = 1)`` on ranks 1..10 and the share of pages without a click, from the
    no-click table of a fit (to set beside the training pages' own)."""
    return np.r_[[1 - noclick[1 << r] for r in range(N)], noclick[(1 << N) - 1]]


def observed_rates(seqs: pd.Series) -> np.ndarray:
    """The training pages' click rate per rank and their share without a click."""
    return np.r_[[seqs.map(lambda s, r=r: r in s).mean() for r in range(N)],
                 (seqs.map(len) == 0).mean()]


def study(name: str, cap: int | None, known: bool = True, readers: int = 1,
          free: bool = True, mixture_kappa: float | None = 1.0,
          walks: tuple[Reader, ...] = (WALK,), sim_pages: int = 0
          ) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """The score rows, the training click-rate rows and (``sim_pages`` pages simulated
    from each fit) the rows of where the clicks go, of one log; each reader of ``walks``
    fitted with ``kappa`` free (``free``) and 1."""
    log = load_log(name)
    train, test = log.split(0.25, seed=0)
    seqs = click_sequences(train)
    serps, _, _, clicked = _full_pages(test)
    clicked = clicked[np.isin(serps, heldout_serps(log, known=known))]
    rows = []
    rates = [(name, "observed", *(f"{x:.3f}" for x in observed_rates(seqs)))]
    shapes = [(name, "observed", *(f"{x:.3f}" for x in click_shape(
        seqs.value_counts().to_dict())), "")]
    fits = []
    for reader in walks:
        fits += [(None, None, f"free, {reader.label}", reader)] * free + \
            [(1.0, None, f"1, {reader.label}" + (" (bayeschain's walk)" if reader ==
                                                  DEFAULT_WALK else ""), reader)]
    if cap is not None:
        fits.append((None, cap, f"free, {WALK.label}, pages of <= {cap} clicks", WALK))
    for kappa, most, label, reader in fits:
        use = seqs if most is None else seqs[seqs.map(len) <= most]
        vc = use.value_counts()
        th, seconds = fit(list(vc.index), vc.to_numpy(dtype=float), kappa, reader=reader)
        noclick = no_click_table(th, kappa, reader)
        m = click_metrics(clicked, *predict(noclick, clicked))
        if most is None:
            rates.append((name, f"kappa {label}", *(f"{x:.3f}" for x in
                                                    training_rates(noclick))))
            if sim_pages:
                seen, arrivals = simulate(th, sim_pages, np.random.default_rng(0), kappa,
                                          reader)
                shapes.append((name, f"kappa {label}", *(f"{x:.3f}" for x in
                                                         click_shape(seen)),
                               f"{arrivals / sim_pages:.2f}"))
        k_hat = f"{parameters(th, np, reader)[1]:.3f}" if kappa is None else "fixed"
        prof = examinations(th, kappa, reader)
        rows.append((name, label, len(use), m.pages, f"{seconds:.0f}", k_hat,
                     f"{m.log_likelihood:.4f}", f"{m.perplexity:.4f}",
                     f"{m.conditional_perplexity:.4f}", f"{prof.sum():.2f}",
                     " ".join(f"{x:.2f}" for x in prof[:4])))
    if readers == 2:
        DIM = WALK.dim
        vc = seqs.value_counts()
        kappa = mixture_kappa
        x, seconds = fit(list(vc.index), vc.to_numpy(dtype=float), kappa, readers=2)
        share = 1.0 / (1.0 + np.exp(-x[2 * DIM]))
        parts = [(share, x[:DIM]), (1 - share, x[DIM:2 * DIM])]
        # no click in S under the mixture: the readers' probabilities, weighted
        noclick = sum(w * no_click_table(th, kappa) for w, th in parts)
        m = click_metrics(clicked, *predict(noclick, clicked))
        profs = [examinations(th, kappa) for _, th in parts]
        prof = sum(w * p for (w, _), p in zip(parts, profs, strict=True))
        k_txt = "1" if kappa is not None else "free"
        k_hat = "fixed" if kappa is not None else " / ".join(
            f"{parameters(th, np)[1]:.3f}" for _, th in parts)
        label = (f"{k_txt}, two readers (" + ", ".join(f"{w:.2f} of pages: E[H] {p.sum():.2f}"
                                                 for (w, _), p in zip(parts, profs,
                                                                       strict=True)) + ")")
        rows.append((name, label, len(seqs), m.pages, f"{seconds:.0f}", k_hat,
                     f"{m.log_likelihood:.4f}", f"{m.perplexity:.4f}",
                     f"{m.conditional_perplexity:.4f}", f"{prof.sum():.2f}",
                     " ".join(f"{x:.2f}" for x in prof[:4])))
        rates.append((name, f"kappa {k_txt}, two readers", *(f"{x:.3f}" for x in
                                                      training_rates(noclick))))
    return rows, rates, shapes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", nargs="+", default=list(LOGS), choices=list(LOGS))
    ap.add_argument("--cap", type=int, default=None,
                    help="also fit on the training pages with at most this many clicks")
    ap.add_argument("--check", action="store_true",
                    help="first test the exact probabilities against a simulation")
    ap.add_argument("--readers", type=int, default=1, choices=[1, 2],
                    help="2: also fit a mixture of two readers, each page read by one of "
                         "them (kappa as --mixture-kappa says)")
    ap.add_argument("--mixture-kappa", default="1", choices=["1", "free"],
                    help="the readers' kappa in the mixture: 1 (bayeschain's walk) or "
                         "free (each reader its own)")
    ap.add_argument("--no-free-kappa", action="store_true",
                    help="skip the fit with kappa free (only kappa = 1 and what else is asked)")
    ap.add_argument("--direction", action="store_true",
                    help="also fit the reader with a direction: moves of their own after "
                         "arriving by a backward move (reading up the page)")
    ap.add_argument("--shared-moves", action="store_true",
                    help="also fit each reader with one set of moves after a click and "
                         "after no click (as bayeschain's default walk)")
    ap.add_argument("--simulate", type=int, default=50_000, metavar="PAGES",
                    help="pages simulated from each fit for the table of where the clicks "
                         "go (0: none)")
    ap.add_argument("--all-test-pages", action="store_true",
                    help="score every held-out 10-result page, not only those whose query "
                         "occurs in training (TREC Session keeps 2 pages otherwise)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", module="pytensor")
    import logging

    logging.getLogger("pytensor").setLevel(logging.ERROR)
    print(f"machine: {machine()}")
    walks = [Reader(direction, moves) for direction in (False, True)[:1 + args.direction]
             for moves in (True, False)[:1 + args.shared_moves]]
    if args.check:
        for reader in walks:
            check(reader=reader)
    rows, rates, shapes = [], [], []
    for name in present_logs(args.logs):
        got = study(name, args.cap, not args.all_test_pages, args.readers,
                    not args.no_free_kappa, 1.0 if args.mixture_kappa == "1" else None,
                    tuple(walks), args.simulate)
        rows += got[0]
        rates += got[1]
        shapes += got[2]
    print(table(rows, ("log", "kappa, walk", "train pages", "test pages", "fit s",
                       "kappa fitted", "LL", "perplexity", "cond. perplexity", "E[H]",
                       "arrivals on ranks 1-4")))
    print("\nClick rate per rank on the training pages and their share without a click, "
          "observed and as each fit gives them (a model whose likelihood is the per-rank "
          "Bernoulli laws, as PBM's or RCTR's, matches the observed row):\n")
    print(table(rates, ("log", "fit", *(str(r) for r in range(1, N + 1)), "no click")))
    if args.simulate:
        print(f"\nWhere the clicks go, per training page: observed, and {args.simulate:,} "
              "pages simulated from each fit:\n")
        print(table(shapes, ("log", "fit", "clicks", "distinct results",
                             "re-clicks right after", "re-clicks after others",
                             "backward share of click-to-click moves", "arrivals")))


if __name__ == "__main__":
    main()
