r"""The examination walk fitted to clicks: the model whose parameters P@H, RBP, drwbm and
MsM score.

**The chain.**  On a page of ``n`` results the user arrives at rank 1.  At every arrival
on rank ``i`` they click with probability ``c_i`` (or the attractiveness of the document
shown there), then move forward with ``p_i``, backward with ``q_i``, or leave the page:
issue the next query with ``r_i`` or end the session with ``s_i``.  Moves that do not
exist are boundary mass: rank 1 has no backward move (its row is a simplex over the other
three moves), and at the page's last rank the forward mass leaves the page
(``boundary = "leave"``: split between ``r`` and ``s`` in their proportion, the convention
of P@H's walk, whose chain stops there) or is spread over the other moves in
proportion (``boundary = "rescale"``: MsM's Algorithm 1, van Dijk et al., ECIR 2019).
The log shows the clicks only; :mod:`~bayeschain.inference.walk.likelihood` gives the
exact likelihood of each page from this chain.

**Parameters and priors** (``[examination]`` of a spec).  Move logits against ``stop``:

* ``moves = "pooled"`` (default): ``eta_ik = a_k + b_k log i + sigma_k z_ik``, a trend in
  log rank plus deviations shrunk towards it (``a ~ N(m, prior_sd)`` with ``m`` 0 for
  the moves, -1 for the clicks and -2 for the repeats below, ``b ~ N(0, 1)``,
  ``log sigma ~ N(log deviation_sd, 0.5)``, zero-avoiding: no funnel's neck;
  ``z ~ N(0, 1)``; at ranks of many clicks the logit ``eta_ik ~ N(a_k + b_k log i,
  sigma_k)`` itself is the coordinate, centred, see :class:`WalkModel`);
* ``moves = "shared"``: ``eta_ik = a_k`` for every rank.

After a click on rank ``i`` the user may click the same result again at once (``rho_i``,
a repeat: the same examination, the walk does not move; logs hold many of them, 52% of
CLARA2's click-to-click moves), with logits of the same two forms as the moves.

Click probabilities on the logit scale, the same two forms per rank (``clicks = "pooled"``
or ``"shared"``), or per document (``clicks = "document"``): each (query, document) pair
shown by the log has an attractiveness ``logit alpha_d = a + b log rbar_d + sigma z_d``
around the trend at the rank ``rbar_d`` where the log shows it (its median rank), so that
examination (the walk) and attractiveness are separated as in PBM and UBM (Chuklin,
Markov & de Rijke, *Click Models for Web Search*, 2015).  A pair the log shows fewer
than ``min_impressions`` times (10 by default) has no attractiveness of its own: wherever
it is shown, it clicks with the chance of a pseudo-document of that rank, shared by every
such pair shown there (on the same trend; posterior variable ``pooled_click``, before the
rank's offset with ``rank_offsets``).  On CLARA2's training split (36,301 pairs on 23,703
pages, 6.5 impressions a pair) this keeps 7,307 pairs, which hold 63% of the impressions;
the walk then predicts held-out clicks better than PBM and UBM, where sampling every pair
was out of reach (``benchmarks/RESULTS.md``).  ``clicks = "auto"`` takes ``"document"``
when such pairs hold at least a quarter of the log's impressions
(:data:`~bayeschain.inference.walk.fit.AUTO_DOCUMENT_SHARE`), ``"pooled"``
otherwise.  Documents with many impressions are
parametrised by their logit itself (centred), the others by ``z`` (non-centred), which
keeps NUTS efficient at both ends.  ``rank_offsets = true`` adds to a document's logit an
offset of the rank it is shown at, ``delta_i`` (``delta_1 = 0``, the others a trend in
log rank with shrunk deviations): the same snippet, once examined, is clicked less often
lower down (trust bias: Agarwal, Zaitsev, Wang, Li, Najork & Joachims, WSDM 2019), which a
click chance shared by every rank can only absorb by distorting the walk.  It is learned
from documents the log shows at several ranks.  ``reclicks = "damped"`` lets a result
already clicked on the page (other than by the immediate repeat) click at a later arrival
with ``kappa c_i`` instead of ``c_i`` (``logit kappa ~ N(-1, prior_sd)``): a walk whose
every arrival is a fresh chance clicks again what it clicked 2-4 times as often as logs
show.  ``reclicks = "once"`` instead damps every later examination of a result, clicked
or not (the click decision made once, as click models make it; spec ``walk-once``): its
likelihood is a forward recursion over each page's clicks (:mod:`.once`), not this
module's per-term counts.  Without sessions in the log, ``r`` is 0 and ``s`` is the
probability of leaving the page.  ``by_relevance = true`` (with qrels) gives each
relevance class of the examined document its own moves (``drwbm``).

**Readers by query** (``readers = "query"`` or ``"topic"``, spec ``walk-query``).  Some
queries are read like navigational searches, others deep (fitted per query at the mode,
WSCD's readers range from E[H] 2.5 to 12: ``benchmarks/RESULTS.md``).  Every query (topic:
the session's, where the log records one) of at least ``reader_pages`` pages gets a reader
``g`` of its own; reader 0 reads the others.  Reader ``g``'s logits are the population's
shifted by effects constant over ranks: ``eta^g_ik = eta_ik + e_gk`` for each free move
family ``k`` (forward and backward against leaving, the next query against the end) and
``logit rho^g_i = logit rho_i + e_g,repeat``, with ``e_gk ~ N(0, tau_k)`` and ``log tau_k
~ N(log deviation_sd, 0.5)`` (hierarchical: a query of few pages stays near the
population, one of many follows its own pages).  Clicks are the population's: per rank,
or per document (whose attractiveness already differs by query).  Each page is walked
by its reader's chain, so its likelihood stays exact (the kernel's move rows and repeats
per reader, indexed by ``move_index = reader * ranks + rank``).  The posterior's
``walk`` and ``repeat`` are reader 0's, and ``reader_effect`` / ``reader_spread`` hold the
rest (:func:`~bayeschain.posterior.walk.reader_tables` rebuilds each reader's tables):
P@H scores reader 0's walk, which for a log whose every query has a reader of its own is a
new query's, drawn from the population.  Held-out pages of a query with a reader are
predicted with it, the others with reader 0's.

**Sampling.**  NUTS by nutpie on the exact log density and its gradient, both computed
here from the page counts (no graph compilation: the only compiled code is the Numba
kernel of the likelihood, cached on disk): :mod:`~bayeschain.inference.walk.sampler`.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ...browsing.page_walk import click_combinations
from ...chains.jit import jit_globals
from ...errors import ParameterError
from ...posterior.vocabulary import READER_LOGITS
from . import likelihood as walk_likelihood

if TYPE_CHECKING:       # (pandas: not for the demo's compile children, which import this)
    from .data import PageData

#: the logit families of the moves: forward and backward against leaving the page, and
#: continuing the session (next query) against ending it when the user leaves
LOGITS = ("forward", "backward", "continue")
#: the suffix of the move families of each set: after an examination without a click,
#: after a click (walks whose moves depend on the click)
MOVE_SETS = ("", "_click")
#: documents (and the rarer pairs' chances per rank) with at least this many impressions
#: get the centred parametrisation
CENTRED_IMPRESSIONS = 20
#: the moves' logits are centred at ranks with at least this many clicks.  Non-centred at
#: a rank whose clicks say much of its logit, the standardised deviation narrows as the
#: family's spread grows (an inverted funnel): at 500 clicks, the damped re-clicks'
#: simulated logs diverged in 3 of 9 fits (rank 9, 374 clicks, non-centred), none at 150,
#: and CLARA2's default fit needed 3,447 draws per chain against 2,868 (525.6 s against
#: 448.5 s on one evening; benchmarks/RESULTS.md)
CENTRED_CLICKS = 150
#: the same for walks with readers by query: each page's move logit is the population's
#: plus its reader's effect, so the clicks inform the population's logit only through the
#: readers, whose effects trade off with it; centred at 150 clicks, a readers' log mixed
#: worse (least bulk ESS 355 against 698 in 1,000 draws, R-hat 1.015 at another seed)
CENTRED_CLICKS_WITH_READERS = 500
#: the clicks' and repeats' logits per rank (and the click offsets by rank) are centred at
#: ranks with at least this many clicks
CENTRED_CLICK_RANKS = 50
#: readers by query with at least this many pages are parametrised by their effects
#: themselves (centred), the others by their standardised effects
CENTRED_READER_PAGES = 100
#: the next query's logits (the population's, and a reader's effect) and a reader's effect
#: on the repeat are centred only where the pages hold at least this many next queries and
#: as many session ends (repeats): WSCD's sessions are one page each, so those logits keep
#: their prior, and centred they made a funnel with their spread (readers by query: 2 x
#: 2,778 draws to reach bulk ESS 434; the default walk's least effective draws were its
#: next query's).  The logit sets next query against end, so the rarer of the two bounds
#: what the pages say of it: a log of few long sessions informs it as little
CENTRED_EVENTS = 100
#: prior mean of the click intercept (logit): about one click in four examinations
CLICK_PRIOR_MEAN = -1.0
#: prior mean of the repeat logit: one click in ten clicked again at once
REPEAT_PRIOR_MEAN = -2.0
#: how a result is clicked at a later arrival: as a fresh chance; damped by a learned
#: factor kappa if it was clicked before on the page; or damped by kappa if it was
#: examined before (the click decision made once: :mod:`.once`)
RECLICKS = ("fresh", "damped", "once")
#: prior mean of logit kappa (``N(-1, prior_sd)``): a result clicked before (or, with
#: ``reclicks = "once"``, examined before) clicked about a quarter as often
RECLICK_PRIOR_MEAN = -1.0


# --------------------------------------------------------------------------- compiled
#: the likelihood's table driver; :func:`compiled` rebinds it to its compiled version
#: before compiling the functions below that call it
table_loglik_kernel = walk_likelihood.compiled_or_python("table_loglik_kernel")

def _families_forward(theta, kind, p_start, c_start, n_coord, x, centred, logits):
    """Logits of every coordinate of every family (see :class:`WalkModel`)."""
    for fam in range(kind.size):
        p, c, m = p_start[fam], c_start[fam], n_coord[fam]
        a = theta[p]
        if kind[fam] == 0:
            for j in range(m):
                logits[c + j] = a
        elif kind[fam] == 2:                      # zero-mean effects: theta[p] = log sd
            sd = math.exp(a)
            for j in range(m):
                v = theta[p + 1 + j]
                logits[c + j] = v if centred[c + j] > 0 else sd * v
        else:
            b = theta[p + 1]
            sd = math.exp(theta[p + 2])
            for j in range(m):
                v = theta[p + 3 + j]
                logits[c + j] = v if centred[c + j] > 0 else a + b * x[c + j] + sd * v


def _families_backward(theta, kind, p_start, c_start, n_coord, x, centred, a0, prior_sd,
                       dev_sd, g_logits, grad):
    """Add the priors' log density and the chain rule from ``g_logits`` into ``grad``;
    returns the log prior."""
    lp = 0.0
    for fam in range(kind.size):
        p, c, m = p_start[fam], c_start[fam], n_coord[fam]
        a = theta[p]
        if kind[fam] == 2:
            # zero-mean effects v_j ~ Normal(0, sd), log sd ~ Normal(log dev_sd, 0.5)
            sd = math.exp(a)
            u = (a - math.log(dev_sd)) / 0.5
            lp -= 0.5 * u * u
            grad[p] -= u / 0.5
            for j in range(m):
                v = theta[p + 1 + j]
                g = g_logits[c + j]
                if centred[c + j] > 0:
                    z = v / sd
                    lp += -0.5 * z * z - a
                    grad[p + 1 + j] += g - z / sd
                    grad[p] += z * z - 1.0
                else:
                    lp -= 0.5 * v * v
                    grad[p + 1 + j] += g * sd - v
                    grad[p] += g * sd * v
            continue
        lp -= 0.5 * ((a - a0[fam]) / prior_sd) ** 2
        grad[p] -= (a - a0[fam]) / prior_sd**2
        if kind[fam] == 0:
            for j in range(m):
                grad[p] += g_logits[c + j]
            continue
        b = theta[p + 1]
        ls = theta[p + 2]
        sd = math.exp(ls)
        lp -= 0.5 * b * b
        grad[p + 1] -= b
        # log sd ~ Normal(log dev_sd, 0.5): zero-avoiding (no funnel's neck)
        u = (ls - math.log(dev_sd)) / 0.5
        lp -= 0.5 * u * u
        grad[p + 2] -= u / 0.5
        for j in range(m):
            v = theta[p + 3 + j]
            g = g_logits[c + j]
            if centred[c + j] > 0:
                mean = a + b * x[c + j]
                z = (v - mean) / sd
                lp += -0.5 * z * z - ls
                grad[p + 3 + j] += g - z / sd
                grad[p] += z / sd
                grad[p + 1] += z / sd * x[c + j]
                grad[p + 2] += z * z - 1.0
            else:
                lp -= 0.5 * v * v
                grad[p + 3 + j] += g * sd - v
                grad[p] += g
                grad[p + 1] += g * x[c + j]
                grad[p + 2] += g * sd * v
    return lp


def _move_rows(logits, n_groups, n_ranks, free, rows):
    """Move rows ``(groups * ranks, 4)`` (forward, backward, reformulate, stop) from the
    logits of the free families (family-major: ``logits[(group * K + k) * ranks + rank]``):
    forward and backward against leaving the page (a softmax; rank 1 has no backward), and
    the logit of continuing the session when the user leaves (``r = leave * rho``,
    ``s = leave * (1 - rho)``; without sessions ``rho = 0``)."""
    n_free = free.size
    for grp in range(n_groups):
        for i in range(n_ranks):
            row = grp * n_ranks + i
            ef = 0.0
            eb = -math.inf
            er = -math.inf
            for k in range(n_free):
                v = logits[(grp * n_free + k) * n_ranks + i]
                if free[k] == 0:
                    ef = v
                elif free[k] == 1:
                    if i > 0:
                        eb = v
                else:
                    er = v
            top = max(ef, eb, 0.0)
            pf = math.exp(ef - top)
            pb = math.exp(eb - top) if eb > -math.inf else 0.0
            pl = math.exp(-top)
            total = pf + pb + pl
            leave = pl / total
            rho = 1.0 / (1.0 + math.exp(-er)) if er > -math.inf else 0.0
            rows[row, 0] = pf / total
            rows[row, 1] = pb / total
            rows[row, 2] = leave * rho
            rows[row, 3] = leave * (1.0 - rho)


def _move_rows_grad(rows, g_rows, n_groups, n_ranks, free, g_logits):
    """Chain rule of :func:`_move_rows`: ``dlogL/d(logits)`` from ``dlogL/d(rows)``."""
    n_free = free.size
    for grp in range(n_groups):
        for i in range(n_ranks):
            row = grp * n_ranks + i
            p, q, r, s = rows[row, 0], rows[row, 1], rows[row, 2], rows[row, 3]
            leave = r + s
            rho = r / leave if leave > 0.0 else 0.0
            g_leave = rho * g_rows[row, 2] + (1.0 - rho) * g_rows[row, 3]
            mean = p * g_rows[row, 0] + q * g_rows[row, 1] + leave * g_leave
            for k in range(n_free):
                at = (grp * n_free + k) * n_ranks + i
                if free[k] == 0:
                    g_logits[at] = p * (g_rows[row, 0] - mean)
                elif free[k] == 1:
                    g_logits[at] = q * (g_rows[row, 1] - mean) if i > 0 else 0.0
                else:
                    g_logits[at] = leave * rho * (1.0 - rho) * (g_rows[row, 2]
                                                                - g_rows[row, 3])


def logp_kernel(theta, kind, p_start, c_start, n_coord, x, centred, a0, prior_sd, dev_sd,
          n_groups, n_ranks, free, n_move_coords, n_sets, n_click_coords, reclick_coord,
          reader_coord, lengths, items, starts, move_index, click_index,
          combo_click, combo_offset, rescale, state_ptr, states, clicked, term_ptr,
          targets, counts, grad, term_ll, kernel):
    """Log posterior density of the walk; its gradient is written into ``grad``; ``kernel``
    is the address of the likelihood's block kernel for ``starts``
    (:func:`~bayeschain.inference.walk.likelihood.block_kernel`).

    The logits are laid out as: the move families (``n_move_coords``: ``n_sets`` sets of
    ``n_groups`` classes, the moves after an examination without a click first, then
    those after a click when ``n_sets == 2``), the repeat family (``n_ranks``: the
    probability of clicking a result again right after clicking it, the same for every
    relevance class), the click family (``n_click_coords``: ranks or documents), then the
    click offsets by rank (ranks 2.., with ``rank_offsets``).  Position ``i`` of
    configuration ``g`` clicks with ``logistic(click logit[combo_click[k]] + offset
    logit[combo_offset[k]])``, ``k = click_index[g, i]`` (no offset where
    ``combo_offset[k] < 0``).  With ``reclick_coord >= 0``, the logit of ``kappa`` (a
    result clicked before on the page clicks again at a later arrival with ``kappa`` times
    its probability) is that coordinate; ``kappa = 1`` otherwise.  With ``reader_coord >=
    0`` (readers by query: one set of move families, no relevance classes) the ``n_groups``
    groups are readers: reader ``g``'s logit of free move family ``k`` at every rank is the
    population's plus the effect ``logits[reader_coord + k * n_groups + g]``, and its
    repeat logit the population's plus ``logits[reader_coord + K * n_groups + g]`` (``K``
    free move families).  The log-probability of every term of the counts is
    written into ``term_ll`` unless it is empty (pointwise log-likelihoods)."""
    logits = np.empty(x.size)
    _families_forward(theta, kind, p_start, c_start, n_coord, x, centred, logits)
    n_rows = n_groups * n_ranks
    n_free = free.size
    rows = np.empty((n_sets * n_rows, 4))
    if reader_coord >= 0:
        move_logits = np.empty(n_groups * n_free * n_ranks)
        for grp in range(n_groups):
            for k in range(n_free):
                e = logits[reader_coord + k * n_groups + grp]
                for i in range(n_ranks):
                    move_logits[(grp * n_free + k) * n_ranks + i] = logits[k * n_ranks + i] + e
        _move_rows(move_logits, n_groups, n_ranks, free, rows)
    else:
        _move_rows(logits, n_sets * n_groups, n_ranks, free, rows)
    repeat = np.empty(n_groups * n_ranks)
    for grp in range(n_groups):
        e = logits[reader_coord + n_free * n_groups + grp] if reader_coord >= 0 else 0.0
        for i in range(n_ranks):
            repeat[grp * n_ranks + i] = 1.0 / (1.0 + math.exp(-(logits[n_move_coords + i]
                                                                 + e)))
    first_click = n_move_coords + n_ranks
    first_offset = first_click + n_click_coords
    n_click = combo_click.size
    click = np.empty(n_click)
    for j in range(n_click):
        v = logits[first_click + combo_click[j]]
        if combo_offset[j] >= 0:
            v += logits[first_offset + combo_offset[j]]
        click[j] = 1.0 / (1.0 + math.exp(-v))
    kappa = 1.0
    if reclick_coord >= 0:
        kappa = 1.0 / (1.0 + math.exp(-logits[reclick_coord]))
    g_rows = np.zeros_like(rows)
    g_click = np.zeros(n_click)
    g_repeat = np.zeros(n_groups * n_ranks)
    g_kappa = np.zeros(1)
    for j in range(grad.size):
        grad[j] = 0.0
    last = (n_sets - 1) * n_rows                 # the moves after a click
    ll = table_loglik_kernel(lengths, items, starts, move_index, click_index, rows[:n_rows],
                             rows[last:last + n_rows], click, repeat, kappa, rescale,
                             state_ptr, states, clicked, term_ptr, targets, counts,
                             g_rows[:n_rows], g_rows[last:last + n_rows], g_click, g_repeat,
                             g_kappa, term_ll, kernel)
    if ll == -math.inf:
        return ll
    g_logits = np.zeros(x.size)
    if reader_coord >= 0:
        g_move = np.zeros(n_groups * n_free * n_ranks)
        _move_rows_grad(rows, g_rows, n_groups, n_ranks, free, g_move)
        for grp in range(n_groups):
            for k in range(n_free):
                total = 0.0
                for i in range(n_ranks):
                    g = g_move[(grp * n_free + k) * n_ranks + i]
                    g_logits[k * n_ranks + i] += g
                    total += g
                g_logits[reader_coord + k * n_groups + grp] = total
        for grp in range(n_groups):
            total = 0.0
            for i in range(n_ranks):
                rho = repeat[grp * n_ranks + i]
                g = g_repeat[grp * n_ranks + i] * rho * (1.0 - rho)
                g_logits[n_move_coords + i] += g
                total += g
            g_logits[reader_coord + n_free * n_groups + grp] = total
    else:
        _move_rows_grad(rows, g_rows, n_sets * n_groups, n_ranks, free, g_logits)
        for i in range(n_ranks):
            rho = repeat[i]
            total = 0.0
            for grp in range(n_groups):
                total += g_repeat[grp * n_ranks + i]
            g_logits[n_move_coords + i] = total * rho * (1.0 - rho)
    for j in range(n_click):
        g = g_click[j] * click[j] * (1.0 - click[j])
        g_logits[first_click + combo_click[j]] += g
        if combo_offset[j] >= 0:
            g_logits[first_offset + combo_offset[j]] += g
    if reclick_coord >= 0:
        g_logits[reclick_coord] = g_kappa[0] * kappa * (1.0 - kappa)
    return ll + _families_backward(theta, kind, p_start, c_start, n_coord, x, centred, a0,
                                   prior_sd, dev_sd, g_logits, grad)


_COMPILED: dict = {}
_JITTED = ("_families_forward", "_families_backward", "_move_rows", "_move_rows_grad",
           "logp_kernel")


_COMPILED_LOCK = threading.Lock()


def compiled(name: str):
    """Functions of this module compiled by Numba (the likelihood's table driver bound as
    their callee), or plain Python without Numba; bound once, under a lock (a density
    sampled through nutpie's Python callback makes its first calls from both chains at
    once: a half-filled table could raise a KeyError in one of them)."""
    with _COMPILED_LOCK:
        if not _COMPILED:
            g = globals()
            g["table_loglik_kernel"] = walk_likelihood.compiled("table_loglik_kernel")
            _COMPILED.update(jit_globals(g, _JITTED, nogil=True, error_model="numpy"))
    return _COMPILED[name]


def callee_types() -> dict[str, tuple]:
    """The argument types :func:`logp_kernel` passes its own callees (C-contiguous arrays,
    as nutpie's C callback builds them, and scalars), for :func:`compile_callees`."""
    from numba import types

    f1, i1, f2 = types.float64[::1], types.int64[::1], types.float64[:, ::1]
    fam = (f1, i1, i1, i1, i1, f1, i1)        # theta, kind, p_start, c_start, n_coord, x,
    return {                                  # centred
        "_families_forward": (*fam, f1),
        "_move_rows": (f1, types.int64, types.int64, i1, f2),
        "_move_rows_grad": (f2, f2, types.int64, types.int64, i1, f1),
        "_families_backward": (*fam, f1, types.float64, types.float64, f1, f1),
    }


def compile_callees() -> None:
    """Compile (or load from the cache) :func:`logp_kernel`'s callees that do not depend on
    the likelihood, for the types it calls them with: the demo's second process does this
    (then the likelihood's block kernel) while the first compiles the table driver, and
    the first then finds them cached (a second off the cold demo's longest wait;
    :mod:`bayeschain.cli.prewarm`)."""
    compiled("logp_kernel")
    for name, types in callee_types().items():
        _COMPILED[name].compile(types)


# --------------------------------------------------------------------------- model
def kernel_theta(theta) -> np.ndarray:
    """``theta`` as the compiled kernels take it: float64, C-contiguous, aligned and
    *writable* (a copy only when it is not).  nutpie's C callback passes a writable array; a
    read-only one (a posterior's stored draw, nutpie's buffer) would make Numba compile,
    and cache, every kernel taking ``theta`` a second time for the read-only type
    (seconds on a cold cache, in every first fit)."""
    return np.require(theta, dtype=np.float64, requirements=["C", "A", "W"])


def logistic(x):
    """``1 / (1 + exp(-x))`` without overflow warnings at the far logits NUTS may try
    (SciPy's ``expit``)."""
    from scipy.special import expit

    return expit(x)


#: how a pooled family's coordinate is parametrised
NON_CENTRED, CENTRED = 0, 1


class LogpArguments(NamedTuple):
    """The arguments of :func:`logp_kernel` between ``theta`` and ``grad``, in its order."""

    kind: np.ndarray
    p_start: np.ndarray
    c_start: np.ndarray
    n_coord: np.ndarray
    x: np.ndarray
    centred: np.ndarray
    a0: np.ndarray
    prior_sd: float
    dev_sd: float
    n_groups: int
    n_ranks: int
    free: np.ndarray
    n_move_coords: int
    n_sets: int
    n_click_coords: int
    reclick_coord: int
    reader_coord: int
    lengths: np.ndarray
    items: np.ndarray
    starts: np.ndarray
    move_index: np.ndarray
    click_index: np.ndarray
    combo_click: np.ndarray
    combo_offset: np.ndarray
    rescale: bool
    state_ptr: np.ndarray
    states: np.ndarray
    clicked: np.ndarray
    term_ptr: np.ndarray
    targets: np.ndarray
    counts: np.ndarray


@dataclass(frozen=True)
class Family:
    """Logits of ``size`` coordinates: ``a`` (shared), or around a trend in the covariate
    ``x`` (pooled): ``a + b x_j + sd z_j`` with ``z_j ~ N(0, 1)`` (non-centred, for
    coordinates the log says little about), the logit ``v_j ~ N(a + b x_j, sd)`` itself
    (centred, for well-observed ones); ``mode`` says which, coordinate by coordinate."""

    name: str
    pooled: bool
    x: np.ndarray
    mode: np.ndarray
    prior_mean: float = 0.0
    #: zero-mean effects instead (readers by query): ``v_j ~ N(0, sd)``, parametrised by
    #: ``log sd`` then the ``v_j`` (centred) or ``v_j / sd`` (non-centred), ``log sd ~
    #: N(log deviation_sd, 0.5)``
    effect: bool = False

    @property
    def size(self) -> int:
        return int(self.x.size)

    @property
    def kind(self) -> int:
        """What the kernels call its kind: 0 shared, 1 pooled, 2 zero-mean effects."""
        return 2 if self.effect else 1 if self.pooled else 0

    @property
    def n_params(self) -> int:
        return 3 + self.size if self.pooled else 1 + self.size if self.effect else 1


class WalkModel:
    """Log density (with gradient) of the examination walk given a log's pages.

    Parameters
    ----------
    data : :class:`~bayeschain.inference.walk.data.PageData`
    moves, clicks : ``"pooled"`` or ``"shared"`` (clicks also ``"document"``, which the
        page data must have been built for)
    backward : whether the walk may move backward (``False``: forward-only walks, SFBM)
    click_moves : whether the moves after a click differ from those after an examination
        without one (two sets of move families; the scored walk mixes them,
        :func:`~bayeschain.posterior.walk.marginal_moves`)
    boundary : ``"leave"`` or ``"rescale"`` (see the module docstring)
    prior_sd, deviation_sd : prior scales of the trend intercepts and of the deviations
    centred_documents : documents with many impressions parametrised by their logit
        (``False``: every document by its standardised deviation ``z``, as the route that
        integrates them out about their mode needs: its rounds and Newton steps work in
        ``z``; the rarer pairs' pseudo-documents, which that route samples, stay centred
        where they have many impressions)
    rank_offsets : with attractiveness per document, the click logit of a document shown
        at rank ``i`` is its own logit plus an offset of the rank, ``delta_i`` (``delta_1
        = 0``; ``delta_i = a + b log i + sd z_i`` for ``i >= 2``): the same snippet is
        clicked less often lower down once examined (trust bias: Agarwal, Zaitsev, Wang,
        Li, Najork & Joachims, WSDM 2019).  Identified by documents the log shows at
        several ranks; ignored with clicks per rank (their own per-rank logits hold it)
    reclicks : ``"fresh"`` (every arrival at a result is a fresh click chance, clicked
        before or not) or ``"damped"``: a result clicked before on the page (other than by
        the immediate repeat) clicks at a later arrival with ``kappa`` times its
        probability, ``logit kappa ~ N(-1, prior_sd)``; the page data must keep the
        positions clicked so far (``page_data(..., reclicks=True)``); or ``"once"``: a
        result examined before (clicked or not) clicks with ``kappa`` times its
        probability, clicks per rank; its density is
        :class:`~bayeschain.inference.walk.once.DecidedOnce`, which reads this model's
        priors and parametrisation (this model's own :meth:`logp` refuses it)
    """

    def __init__(self, data: PageData, *, moves: str = "pooled", clicks: str = "pooled",
                 backward: bool = True, click_moves: bool = False, boundary: str = "leave",
                 prior_sd: float = 2.0, deviation_sd: float = 0.5,
                 centred_documents: bool = True, rank_offsets: bool = False,
                 reclicks: str = "fresh"):
        if moves not in ("pooled", "shared"):
            raise ParameterError(f"moves must be 'pooled' or 'shared', got {moves!r}")
        if clicks not in ("pooled", "shared", "document"):
            raise ParameterError(f"clicks must be 'pooled', 'shared' or 'document', got "
                                 f"{clicks!r}")
        if (clicks == "document") != (data.documents is not None):
            raise ParameterError("page data and click model disagree: build the page data "
                                 "with clicks='document' for attractiveness per document")
        if boundary not in ("leave", "rescale"):
            raise ParameterError(f"boundary must be 'leave' or 'rescale', got {boundary!r}")
        if reclicks not in RECLICKS:
            raise ParameterError(f"reclicks must be one of {RECLICKS}, got {reclicks!r}")
        if (reclicks == "damped") != data.reclicks:
            raise ParameterError("page data and re-click model disagree: build the page "
                                 "data with reclicks=True for damped re-clicks, only then")
        if reclicks == "damped" and click_moves:
            raise ParameterError("damped re-clicks with moves that depend on the click are "
                                 "not supported: the walk over ranks would not be Markov")
        if reclicks == "once" and (clicks == "document" or data.classes > 1 or click_moves):
            raise ParameterError("the walk that decides once (reclicks = 'once') has clicks "
                                 "per rank and moves that depend neither on the click nor "
                                 "on relevance classes (the walk over ranks would not be "
                                 "Markov)")
        if data.readers is not None and (data.classes > 1 or click_moves
                                         or reclicks == "once"):
            raise ParameterError("readers by query take moves that depend neither on the "
                                 "click nor on relevance classes, and fresh or damped "
                                 "re-clicks (reclicks = 'once' has a likelihood of its own)")
        self.data = data
        self.moves, self.clicks, self.boundary = moves, clicks, boundary
        self.rank_offsets = bool(rank_offsets) and clicks == "document" and data.ranks > 1
        self.n_sets = 2 if click_moves else 1
        self.prior_sd, self.deviation_sd = float(prior_sd), float(deviation_sd)
        self.free = np.array([k for k, on in enumerate((True, bool(backward),
                                                         bool(data.sessions))) if on],
                             dtype=np.int64)
        r = data.ranks
        log_rank = np.log(np.arange(1, r + 1, dtype=float))
        per_rank = data.clicks_per_rank()
        # moves centred at ranks with many clicks; with moves by click, the moves after a
        # skipped snippet non-centred: they are seen only through the hidden walk, and
        # centred they mixed slowly (CLARA2, 2 x 1,500 draws: smallest bulk ESS 117)
        enough = CENTRED_CLICKS if data.readers is None else CENTRED_CLICKS_WITH_READERS
        busy = np.where(per_rank >= enough, CENTRED, NON_CENTRED)
        skip_mode = busy if self.n_sets == 1 else np.full(r, NON_CENTRED)
        seen = np.where(per_rank >= CENTRED_CLICK_RANKS, CENTRED, NON_CENTRED)
        # the next query's logits centred only where the log has next queries and session
        # ends to inform them
        uninformed = (np.full(r, NON_CENTRED) if data.next_query_split < CENTRED_EVENTS
                      else None)

        def mode(k, st):
            if LOGITS[k] == "continue" and uninformed is not None:
                return uninformed
            return busy if st else skip_mode

        self.families = [Family(f"{LOGITS[k]}{MOVE_SETS[st]}[{cls}]", moves == "pooled",
                                log_rank, mode(k, st))
                         for st in range(self.n_sets) for cls in range(data.classes)
                         for k in self.free]
        self.families.append(Family("repeat", moves == "pooled", log_rank, seen,
                                    REPEAT_PRIOR_MEAN))
        if clicks == "document":
            docs = data.documents
            self.families.append(Family(
                "click", True, np.log(docs["median_rank"].to_numpy(dtype=float, na_value=np.nan)),
                np.where((docs["impressions"].to_numpy() >= CENTRED_IMPRESSIONS)
                         & (centred_documents | (docs["pooled_rank"].to_numpy() > 0)),
                         CENTRED, NON_CENTRED), CLICK_PRIOR_MEAN))
        else:
            self.families.append(Family("click", clicks == "pooled", log_rank, seen,
                                        CLICK_PRIOR_MEAN))
        if self.rank_offsets:
            self.families.append(Family("click_offset", True, log_rank[1:], seen[1:]))
        self.reclicks = reclicks
        if reclicks != "fresh":
            self.families.append(Family("reclick", False, np.zeros(1), np.zeros(1),
                                        RECLICK_PRIOR_MEAN))
        self.readers = data.readers
        if self.readers is not None:
            # one effect per reader on each free move family and on the repeats; centred
            # for readers of many pages (and, on the next query and the repeat, of many
            # such events: for the next query, of next queries and of ends)
            split, repeats = data.reader_events()
            informed = {"continue": split, "repeat": repeats}
            self.families += [Family(f"reader_{name}", False, np.zeros(data.readers.size),
                                     np.where((data.reader_pages >= CENTRED_READER_PAGES)
                                              & (informed.get(name, CENTRED_EVENTS)
                                                 >= CENTRED_EVENTS),
                                              CENTRED, NON_CENTRED), effect=True)
                              for name in self.reader_logits]
        fams = self.families
        names = [f.name for f in fams]
        self._kind = np.array([f.kind for f in fams], dtype=np.int64)
        self._n_coord = np.array([f.size for f in fams], dtype=np.int64)
        self._c_start = np.r_[0, np.cumsum(self._n_coord)[:-1]].astype(np.int64)
        n_params = np.array([f.n_params for f in fams], dtype=np.int64)
        self._p_start = np.r_[0, np.cumsum(n_params)[:-1]].astype(np.int64)
        self._x = np.concatenate([f.x for f in fams])
        self._centred = np.concatenate([f.mode if f.kind else np.zeros(f.size)
                                        for f in fams]).astype(np.int64)
        self._a0 = np.array([f.prior_mean for f in fams])
        self.ndim = int(n_params.sum())
        self._click_family = names.index("click")
        self._offset_family = names.index("click_offset") if self.rank_offsets else -1
        self._reclick_coord = int(self._c_start[names.index("reclick")]) \
            if reclicks != "fresh" else -1
        self._n_move_coords = int(self._c_start[self._click_family - 1])
        self._reader_coord = (int(self._c_start[names.index(f"reader_{self.reader_logits[0]}")])
                              if self.readers is not None else -1)
        self._combos = click_combinations(data.click_index, self.rank_offsets,
                                           int(self._n_coord[self._click_family]))
        self._blocks = walk_likelihood.blocks(data.lengths, data.counts.state_ptr)
        # the pseudo-documents of the rarer pairs: their click coordinates and ranks
        pooled = (np.zeros(0, dtype=np.int64) if data.documents is None
                  else data.documents["pooled_rank"].to_numpy(dtype=np.int64))
        self._pooled = (np.flatnonzero(pooled > 0), pooled[pooled > 0])
        self._arguments: LogpArguments | None = None

    @property
    def reader_logits(self) -> tuple[str, ...]:
        """The logits a reader's effect shifts: the free move families, then the repeat."""
        return tuple(READER_LOGITS[k] for k in self.free) + (READER_LOGITS[-1],)

    def reader_effects(self, theta, logits=None) -> np.ndarray:
        """``(readers, len(reader_logits))`` each reader's effects on the logits (an empty
        ``(0, ...)`` array without readers by query)."""
        if self.readers is None:
            return np.zeros((0, len(self.reader_logits)))
        logits = self._logits(theta) if logits is None else logits
        n = len(self.readers)
        start = self._reader_coord
        return logits[start:start + n * len(self.reader_logits)].reshape(-1, n).T.copy()

    def reader_spreads(self, theta) -> np.ndarray:
        """``(len(reader_logits),)`` the spread (sd on the logit scale) of the readers'
        effects on each logit (empty without readers by query)."""
        names = [f.name for f in self.families]
        return np.array([math.exp(theta[self._p_start[names.index(f"reader_{name}")]])
                         for name in self.reader_logits]) if self.readers is not None \
            else np.zeros(0)

    def _with_reader(self, logits, reader: int) -> np.ndarray:
        """``logits`` with reader ``reader``'s effects added to the move families and the
        repeats (``logits`` itself without readers by query)."""
        if self.readers is None:
            return logits
        e = self.reader_effects(None, logits)[reader]
        out = logits.copy()
        k, r = self.free.size, self.data.ranks
        out[:k * r] += np.repeat(e[:k], r)
        out[self._n_move_coords:self._n_move_coords + r] += e[k]
        return out

    def click_coordinates(self) -> tuple[int, int]:
        """``(start, n)``: the click family's first coordinate in ``theta`` (for a pooled
        family: its intercept, then slope, log sd and the ``n`` coordinates)."""
        k = self._click_family
        return int(self._p_start[k]), int(self._n_coord[k])

    def kernel_arguments(self) -> LogpArguments:
        """The arguments of :func:`logp_kernel` after ``theta`` (and before ``grad``), by
        name: what the C callback's address table is built from.  Every array is
        C-contiguous, as the C callback's are: a strided one (a column of the log's
        terms) would make Numba compile a second specialisation of the kernel (12 s on
        a cold cache) instead of loading the one the callback compiled."""
        if self.reclicks == "once":
            raise ParameterError("the walk that decides once has its own likelihood "
                                 "(bayeschain.inference.walk.once.DecidedOnce)")
        if self._arguments is None:
            d = self.data
            groups = d.classes if self.readers is None else len(self.readers)
            args = LogpArguments(self._kind, self._p_start, self._c_start, self._n_coord,
                                 self._x, self._centred, self._a0, self.prior_sd,
                                 self.deviation_sd, groups, d.ranks, self.free,
                                 self._n_move_coords, self.n_sets,
                                 int(self._n_coord[self._click_family]),
                                 self._reclick_coord, self._reader_coord, d.lengths,
                                 *self._blocks, d.move_index, *self._combos,
                                 self.boundary == "rescale", *d.counts.arrays())
            self._arguments = LogpArguments(*(
                np.ascontiguousarray(a) if isinstance(a, np.ndarray) else a for a in args))
        return self._arguments

    def block_kernel(self) -> int:
        """The address of the likelihood's block kernel for this model's pages, the last
        argument of :func:`logp_kernel` (:func:`~bayeschain.inference.walk.likelihood.
        block_kernel`; valid in this process only)."""
        return walk_likelihood.block_kernel(self.kernel_arguments().starts)

    @property
    def has_c_density(self) -> bool:
        """Whether :func:`logp_kernel` is this model's density (what nutpie's C callback
        calls); not for the walk that decides once (:mod:`.once`)."""
        return self.reclicks != "once"

    def prior_arguments(self) -> tuple:
        """The arguments of ``_families_forward`` / ``_families_backward`` after ``theta``
        (``kind, p_start, c_start, n_coord, x, centred``, then ``a0, prior_sd, dev_sd``)."""
        return (self._kind, self._p_start, self._c_start, self._n_coord, self._x,
                self._centred, self._a0, self.prior_sd, self.deviation_sd)

    def logp(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Log posterior density (up to a constant) and its gradient."""
        theta = kernel_theta(theta)
        grad = np.empty_like(theta)
        lp = compiled("logp_kernel")(theta, *self.kernel_arguments(), grad, np.empty(0),
                                     self.block_kernel())
        if not np.isfinite(lp):
            return -np.inf, np.zeros_like(theta)
        return float(lp), grad

    def pattern_log_likelihood(self, theta: np.ndarray) -> np.ndarray:
        """``(U,)`` the log-likelihood of one page of each pattern of the data
        (:class:`~bayeschain.inference.walk.data.PagePatterns`) at ``theta``: the sum of
        its terms' log-probabilities, as the density's kernel computes them."""
        theta = kernel_theta(theta)
        term_ll = np.full(self.data.counts.targets.size, np.nan)
        compiled("logp_kernel")(theta, *self.kernel_arguments(), np.empty_like(theta),
                                term_ll, self.block_kernel())
        return self.data.patterns.terms @ term_ll

    def _logits(self, theta) -> np.ndarray:
        logits = np.empty(self._x.size)
        compiled("_families_forward")(kernel_theta(theta),
                                       self._kind, self._p_start, self._c_start,
                                       self._n_coord, self._x, self._centred, logits)
        return logits

    def move_tables(self, theta, logits=None) -> np.ndarray:
        """``(sets, classes, ranks, 4)`` probabilities of forward, backward, reformulate,
        stop: after an examination without a click, then (second set, with click
        moves) after a click.  ``logits``: those of ``theta`` when the caller has them
        (so for :meth:`reclick_factor` and :meth:`repeat_table`)."""
        d = self.data
        rows = np.empty((self.n_sets * d.classes * d.ranks, 4))
        compiled("_move_rows")(self._logits(theta) if logits is None else logits,
                               self.n_sets * d.classes, d.ranks, self.free, rows)
        return rows.reshape(self.n_sets, d.classes, d.ranks, 4)

    def click_table(self, theta) -> np.ndarray:
        """Click probability of each rank (or attractiveness of each document: at rank 1
        with ``rank_offsets``)."""
        first = self._n_move_coords + self.data.ranks
        n = int(self._n_coord[self._click_family])
        return logistic(self._logits(theta)[first:first + n])

    def offset_table(self, theta) -> np.ndarray:
        """``(ranks,)`` the click logit's offset at each rank (0 at rank 1; all 0 without
        ``rank_offsets``)."""
        out = np.zeros(self.data.ranks)
        if self.rank_offsets:
            start = self._c_start[self._offset_family]
            out[1:] = self._logits(theta)[start:start + self.data.ranks - 1]
        return out

    def reclick_factor(self, theta, logits=None) -> float:
        """``kappa``: how much less often a result clicked (``reclicks = "damped"``) or
        examined (``"once"``) before is clicked at a later arrival (1 for fresh ones)."""
        if self._reclick_coord < 0:
            return 1.0
        logits = self._logits(theta) if logits is None else logits
        return float(logistic(logits[self._reclick_coord]))

    def repeat_table(self, theta, logits=None) -> np.ndarray:
        """Probability of clicking a result again right after clicking it, per rank."""
        logits = self._logits(theta) if logits is None else logits
        return logistic(logits[self._n_move_coords:self._n_move_coords + self.data.ranks])

    # ------------------------------------------------------------------ draws
    def initial_point(self, rng) -> np.ndarray:
        """A start near the prior's centre: trends at their prior means, small deviations."""
        theta = rng.normal(0.0, 0.1, self.ndim)
        for fam, start in zip(self.families, self._p_start, strict=True):
            theta[start] += fam.prior_mean
            if fam.effect:
                theta[start] = np.log(self.deviation_sd)
            if fam.pooled:
                theta[start + 2] = np.log(0.5)
                coords = slice(start + 3, start + 3 + fam.size)
                theta[coords] = np.where(fam.mode != NON_CENTRED, fam.prior_mean + rng.normal(
                    0.0, 0.1, fam.size), theta[coords])
        return theta

    def expand(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """The named quantities stored in the posterior for one draw.  With readers by
        query, ``walk`` and ``repeat`` are those of reader 0, who reads the queries
        without a reader of their own (:func:`~bayeschain.inference.walk.data.page_data`'s
        ``readers``), and ``reader_effect`` / ``reader_spread`` hold every reader's
        effects and their spreads."""
        base = self._logits(theta)
        logits = self._with_reader(base, 0)
        tables = self.move_tables(theta, logits)
        out = {"walk": tables[0], "click": self.click_table(theta),
               "repeat": self.repeat_table(theta, logits)}
        if self.readers is not None:
            out["reader_effect"] = self.reader_effects(theta, base)
            out["reader_spread"] = self.reader_spreads(theta)
        click = self.families[self._click_family]
        if click.pooled:
            start = self._p_start[self._click_family]
            out["click_trend"] = np.array([theta[start], theta[start + 1],
                                           np.exp(theta[start + 2])])
        if self.rank_offsets:
            out["click_offset"] = self.offset_table(theta)
        if self._reclick_coord >= 0:
            out["reclick"] = np.array(self.reclick_factor(theta))
        if self.n_sets == 2:
            from ...posterior.walk import marginal_moves, run_click

            per_rank = out["click"]
            if self.clicks == "document":
                at, ranks = self._pooled
                offset = out.get("click_offset")
                per_rank = run_click(out["click_trend"][None], self.data.ranks,
                                     None if offset is None else offset[None],
                                     out["click"][None, at], ranks)[0]
            out["walk_skip"], out["walk_click"] = tables[0], tables[1]
            out["walk"] = marginal_moves(tables[0], tables[1], per_rank)
        return out

