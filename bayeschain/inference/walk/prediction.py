r"""Held-out click prediction by the fitted walk, judged as click models are judged.

Click models are compared on the binary click vector ``C_1..C_n`` of each page (was rank
``r`` clicked at least once?), with the definitions of PyClick (Chuklin, Markov & de Rijke,
*Click Models for Web Search*, 2015; ``pyclick/click_models/Evaluation.py``):

* *log-likelihood*: per page, the mean over ranks of ``ln P(C_r = c_r | C_1..C_{r-1})``,
  averaged over pages (nats per rank);
* *perplexity at rank r*: ``2 ** (-mean over pages of log2 P(C_r = c_r))`` with the
  unconditional click probability, and the perplexity, its mean over ranks 1..10;
* *conditional perplexity*: the same with the conditional probabilities.

**Exact probabilities under the walk.**  For a set ``S`` of ranks the probability that the
user never clicks in ``S`` is the probability that the walk leaves the page before any
click in ``S``: ``Q(S) = e_1^T (I - D_S)^{-1} l_S`` (one tridiagonal solve), where an
arrival at ``i`` in ``S`` must not click and moves on with the moves after no click,
``D_S[i] = (1 - c_i) P^s_i``, ``l_S[i] = (1 - c_i) l^s_i``, and an arrival elsewhere
clicks or not, ``D_S[i] = c_i P^c_i + (1 - c_i) P^s_i``, ``l_S[i] = c_i l^c_i +
(1 - c_i) l^s_i`` (``P^c``, ``l^c``: the moves and leave probability after a click, the
same as after no click for walks whose moves do not depend on it).  Then
``P(C_r = 1) = 1 - Q({r})`` and, by inclusion-exclusion over the clicked ranks ``A`` of a
prefix (``B`` the others), ``P(C_A = 1, C_B = 0) = sum_{T subset A} (-1)^{|T|} Q(B u T)``;
the conditional is the ratio of consecutive prefixes.  Over the posterior, prefix
probabilities are averaged over draws before the ratio is taken (the posterior predictive
of the click vector).  With damped re-clicks (``kappa``) these are unchanged: a rank in
``S`` is never clicked before the walk leaves, so its chance stays ``c_i``, and elsewhere
``kappa`` changes how often a result is clicked again, not whether the walk clicks it nor
(moves that do not depend on the click) where it goes.

**The click decision made once** (spec ``walk-once``: a result examined before clicks
with ``kappa c_i``; moves that do not depend on the click).  An arrival at ``i`` in ``S``
then does not click with ``1 - c_i`` when it is the first examination of ``i`` and
``1 - kappa c_i`` otherwise; arrivals elsewhere do not matter (the moves do not depend on
the click).  The ranks examined so far are ``1..d``, so ``Q(S)`` is the value at the
start of the chain over ``(i, d)`` (:mod:`~bayeschain.inference.walk.once`):
``U(i, d) = l_i + f_i a_{i+1} U(i+1, max(d, i+1)) + b_i a_{i-1} U(i-1, d)`` with
``a_j`` the no-click factor of the arrival, ``Q(S) = a_1 U(1, 1)``.  Since ``d`` never
decreases, the blocks of one ``d`` (a birth-death chain over ranks ``1..d``) are solved
from the deepest up, each a tridiagonal solve whose right-hand side at ``i = d`` takes the
fresh arrival at ``(d + 1, d + 1)`` from the block below: ``O(n^2)`` per ``Q(S)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...browsing import page_walk
from ...chains.jit import jit_globals
from ...chains.tridiagonal import thomas_factor, thomas_solve
from ...errors import ParameterError
from ...posterior.draws import draw_indices
from ...posterior.walk import page_tables

#: ranks that click-model evaluation reports (PyClick's RANK_MAX)
METRIC_RANKS = 10
#: at most this many clicked ranks per page prefix enter the inclusion-exclusion sum
MAX_CLICKED = 20


def _no_click(n, f, b, lv, fc, bc, lvc, c, mask, lo, up, cp, inv, rhs, y):
    """``Q(S)``: the walk leaves the page without a click on the positions in ``mask``."""
    for i in range(n):
        a = 1.0 - c[i]
        k = 0.0 if mask[i] else c[i]           # the weight of the moves after a click
        lo[i] = -(a * b[i] + k * bc[i]) if i > 0 else 0.0
        up[i] = -(a * f[i] + k * fc[i]) if i < n - 1 else 0.0
        rhs[i] = a * lv[i] + k * lvc[i]
    thomas_factor(lo, up, n, cp, inv)
    thomas_solve(lo, cp, inv, rhs, y, n)
    return y[0]


def _no_click_once(n, f, b, lv, c, kappa, mask, lo, up, cp, inv, rhs, y):
    """``Q(S)`` when a result examined before clicks with ``kappa c_i`` and the moves do
    not depend on the click (see the module docstring)."""
    below = 0.0                                # U(d + 1, d + 1), the fresh arrival below
    for d in range(n - 1, -1, -1):
        for i in range(d + 1):
            rhs[i] = lv[i]
            lo[i] = 0.0
            up[i] = 0.0
            if i > 0:
                lo[i] = -b[i] * ((1.0 - kappa * c[i - 1]) if mask[i - 1] else 1.0)
            if i < d:
                up[i] = -f[i] * ((1.0 - kappa * c[i + 1]) if mask[i + 1] else 1.0)
        if d < n - 1:
            rhs[d] += f[d] * ((1.0 - c[d + 1]) if mask[d + 1] else 1.0) * below
        thomas_factor(lo, up, d + 1, cp, inv)
        thomas_solve(lo, cp, inv, rhs, y, d + 1)
        below = y[d]
    return ((1.0 - c[0]) if mask[0] else 1.0) * below


def _predict(move_index, click_index, moves, moves_click, click, second, rescale, clicked,
             upto, uncond, joint):
    """Per page row: ``uncond[p, r] = P(C_r = 1)``, ``joint[p, r] = P(C_1..C_r as
    observed)`` for ``r <= upto`` (``joint[p, 0] = 1``; NaN when more than
    :data:`MAX_CLICKED` ranks of the prefix are clicked).  ``second < 1``: a result
    examined before clicks with ``second`` times its probability (moves that do not
    depend on the click)."""
    n_rows, width = move_index.shape
    f = np.empty(width)
    b = np.empty(width)
    r = np.empty(width)
    s = np.empty(width)
    c = np.empty(width)
    lv = np.empty(width)
    fc = np.empty(width)
    bc = np.empty(width)
    rc = np.empty(width)
    sc = np.empty(width)
    lvc = np.empty(width)
    lo = np.empty(width)
    up = np.empty(width)
    cp = np.empty(width)
    inv = np.empty(width)
    rhs = np.empty(width)
    y = np.empty(width)
    mask = np.zeros(width, dtype=np.bool_)
    ones = np.empty(width, dtype=np.int64)
    for p in range(n_rows):
        page_walk.page_rows(p, move_index, click_index, moves_click, click, rescale, fc, bc,
                            rc, sc, c)
        n = page_walk.page_rows(p, move_index, click_index, moves, click, rescale, f,
                                       b, r, s, c)
        for i in range(n):
            lv[i] = r[i] + s[i]
            lvc[i] = rc[i] + sc[i]
            mask[i] = False
        for i in range(n):
            mask[i] = True
            if second < 1.0:
                q = _no_click_once(n, f, b, lv, c, second, mask, lo, up, cp, inv, rhs, y)
            else:
                q = _no_click(n, f, b, lv, fc, bc, lvc, c, mask, lo, up, cp, inv, rhs, y)
            uncond[p, i] = 1.0 - q
            mask[i] = False
        joint[p, 0] = 1.0
        k = 0                                         # clicked positions so far
        for rr in range(min(n, upto)):
            if clicked[p, rr]:
                ones[k] = rr
                k += 1
            if k > MAX_CLICKED:
                joint[p, rr + 1] = np.nan
                continue
            kk = k
            total = 0.0
            for subset in range(1 << kk):
                # B u T: unclicked prefix positions, plus the clicked ones in the subset
                for i in range(n):
                    mask[i] = i <= rr and not clicked[p, i]
                sign = 1.0
                for j in range(kk):
                    if subset >> j & 1:
                        mask[ones[j]] = True
                        sign = -sign
                if second < 1.0:
                    q = _no_click_once(n, f, b, lv, c, second, mask, lo, up, cp, inv, rhs, y)
                else:
                    q = _no_click(n, f, b, lv, fc, bc, lvc, c, mask, lo, up, cp, inv, rhs, y)
                total += sign * q
            joint[p, rr + 1] = total
        for i in range(n):
            mask[i] = False


_COMPILED = None


def _kernel():
    global _COMPILED
    if _COMPILED is None:
        page_walk.compiled("page_rows")
        _COMPILED = jit_globals(globals(), ("thomas_factor", "thomas_solve", "_no_click",
                                            "_no_click_once", "_predict"),
                                nogil=True, error_model="numpy")["_predict"]
    return _COMPILED


def pages_for(posterior, log, qrels, level):
    """The pages of ``log`` as the posterior's walk sees them: clicks per rank or per
    document (the pairs without an attractiveness of their own sharing their rank's
    pseudo-document), grouped by relevance when its moves depend on it, by its readers
    when it has readers by query or topic (a query or topic without one read by reader
    0); when it damps re-clicks, the pages its fit built (with the positions clicked so
    far) if that fit built them from ``log``, so that a fit and its checks build the
    pages once."""
    from ...posterior.walk import pd_index
    from .data import page_data

    fitted_level = posterior.metadata.relevance_level
    clicks = "document" if "attractiveness" in posterior.posterior else "rank"
    by_relevance = "relevance" in posterior.posterior["walk"].dims \
        if "walk" in posterior.posterior else False
    if by_relevance and qrels is None:
        raise ParameterError("the posterior's moves depend on relevance: pass the qrels")
    known, least = None, 1
    if "pooled_click" in posterior.posterior:     # the other pairs share their rank's chance
        att = posterior.posterior["attractiveness"]
        known = pd_index(att["query_id"].values, att["doc_id"].values)
        least = int(posterior.posterior["pooled_click"].attrs.get("min_impressions", 1))
    readers = (tuple(posterior.posterior["reader_effect"]["reader"].values.astype(str))
               if "reader_effect" in posterior.posterior else None)
    return page_data(log, clicks=clicks, qrels=qrels if by_relevance else None,
                     level=fitted_level if by_relevance and fitted_level is not None else level,
                     reclicks=None if "reclick" in posterior.posterior else False,
                     known=known, min_impressions=least, readers=readers,
                     readers_by=posterior.attrs.get("readers_by", "query"))


def predict_clicks(posterior, log, *, qrels=None, level: int = 1, ranks: int | None = None,
                   max_draws: int | None = 200, seed=None) -> pd.DataFrame:
    """Click probabilities of every page and rank of ``log`` under the fitted walk.

    Returns one row per (page, rank): ``serp_id, query_id, rank, clicked`` (the page has a
    click there), ``p_click`` (``P(C_r = 1)``, averaged over the draws) and ``p_observed``
    (``P(C_r = c_r | C_1..C_{r-1})`` of the observed click vector, the posterior
    predictive; computed on the first ``ranks`` ranks, all with None: NaN on the others).
    ``max_draws``
    posterior draws are used (all with None).
    """
    data = pages_for(posterior, log, qrels, level)
    clicked = data.clicked(log)
    key = np.concatenate([data.page_config[:, None], clicked.astype(np.int64)], axis=1)
    uniq, back = np.unique(key, axis=0, return_inverse=True)
    back = back.ravel()
    cfg = uniq[:, 0]
    pattern = np.ascontiguousarray(uniq[:, 1:].astype(np.bool_))
    move_index = np.ascontiguousarray(data.move_index[cfg])
    post = posterior.posterior
    rows = draw_indices(int(post.sizes["chain"] * post.sizes["draw"]), max_draws, seed)
    tables = page_tables(posterior, data, rows, seed=seed)    # repeats: the same C_r
    second = np.ones(rows.size) if tables.second_look is None else tables.second_look
    click_index = np.ascontiguousarray(tables.click_index[cfg])
    rescale = posterior.metadata.boundary == "rescale"
    width = data.ranks
    upto = width if ranks is None else min(int(ranks), width)
    uncond = np.zeros((uniq.shape[0], width))
    joint = np.zeros((uniq.shape[0], width + 1))
    # what the kernel does not write (ranks a page lacks, prefixes past ``ranks``) stays
    # NaN: uninitialised memory summed over the draws gave garbage there, and overflowed
    u = np.full_like(uncond, np.nan)
    j = np.full_like(joint, np.nan)
    kernel = _kernel()
    for d in range(rows.size):
        kernel(move_index, click_index, np.ascontiguousarray(tables.moves[d]),
               np.ascontiguousarray(tables.moves_click[d]),
               np.ascontiguousarray(tables.click[d]), float(second[d]), rescale, pattern,
               upto, u, j)
        uncond += u
        joint += j
    uncond /= rows.size
    joint /= rows.size
    # P(C_r = c_r | earlier clicks) = P(prefix to r) / P(prefix to r - 1) <= 1; a prefix
    # whose probability underflows to a denormal can round the ratio above 1 (or to inf)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        cond = np.minimum(joint[:, 1:] / joint[:, :-1], 1.0)
    n_pages = data.page_ids.size
    inside = np.arange(width)[None, :] < data.lengths[data.page_config][:, None]
    pg, rk = np.nonzero(inside)
    return pd.DataFrame({"serp_id": data.page_ids[pg], "query_id": data.page_queries[pg],
                         "rank": rk + 1, "clicked": clicked[pg, rk],
                         "p_click": uncond[back[pg], rk],
                         "p_observed": cond[back[pg], rk]}).reset_index(drop=True) \
        if n_pages else pd.DataFrame(columns=["serp_id", "query_id", "rank", "clicked",
                                              "p_click", "p_observed"])


@dataclass(frozen=True)
class ClickMetrics:
    """Held-out click metrics (PyClick's definitions, see the module docstring)."""

    log_likelihood: float            # nats per rank (conditional)
    perplexity: float                # mean over ranks 1..10
    conditional_perplexity: float
    perplexity_at_rank: np.ndarray   # (10,)
    conditional_perplexity_at_rank: np.ndarray
    pages: int

    def as_dict(self) -> dict:
        return {"log_likelihood": self.log_likelihood, "perplexity": self.perplexity,
                "conditional_perplexity": self.conditional_perplexity, "pages": self.pages}


def click_metrics(clicked, p_click, p_observed) -> ClickMetrics:
    """PyClick's metrics from per-page, per-rank arrays ``(pages, 10)``: the click vector,
    ``P(C_r = 1)`` and ``P(C_r = c_r | C_<r)`` (the same function scores every model of
    the benchmark)."""
    clicked, p_click, p_observed = _page_arrays(clicked, p_click=p_click,
                                                p_observed=p_observed)
    ppl_r = _perplexity_at_rank(_click_bits(clicked, p_click))
    conditional_bits = _bits(p_observed)
    cppl_r = _perplexity_at_rank(conditional_bits)
    ll = float(-conditional_bits.mean(axis=1).mean() * np.log(2.0))   # nats per rank
    return ClickMetrics(ll, float(ppl_r.mean()), float(cppl_r.mean()), ppl_r, cppl_r,
                        int(clicked.shape[0]))


#: how far outside [0, 1] a probability may fall by rounding (an inclusion-exclusion sum,
#: ``1 - q`` of a solve) and be clipped into it rather than refused
ROUNDING = 1e-9


def _page_arrays(clicked, **probabilities) -> list[np.ndarray]:
    """``clicked`` (booleans, or 0 and 1) and the named probabilities, each ``(pages,
    ranks)`` of one shape with at least one page.  Probabilities within :data:`ROUNDING`
    of [0, 1] are clipped into it; others, and NaN (which made every metric NaN without a
    word), are refused with the array, the page (1-based, in the arrays' order) and the
    rank."""
    names = ", ".join(["clicked", *probabilities])
    raw = np.asarray(clicked)
    probs = {name: np.asarray(p, dtype=float) for name, p in probabilities.items()}
    if raw.ndim != 2 or any(p.shape != raw.shape for p in probs.values()):
        raise ParameterError(f"{names} must be (pages, ranks) arrays of one shape")
    if not raw.shape[0]:
        raise ParameterError("no held-out pages to score")

    def refuse(name, bad, expected, values):
        page, rank = np.argwhere(bad)[0]
        raise ParameterError(f"{name} must be {expected}: page {page + 1} of {raw.shape[0]} "
                             f"(in the arrays' order), rank {rank + 1} holds "
                             f"{values[page, rank]}")

    if raw.dtype != bool:
        zero_one = (raw == 0) | (raw == 1)
        if not zero_one.all():
            refuse("clicked", ~zero_one, "0 or 1 (or booleans)", raw)
    out = [raw.astype(bool)]
    for name, p in probs.items():
        bad = ~((p >= -ROUNDING) & (p <= 1.0 + ROUNDING))
        if bad.any():
            refuse(name, bad, "probabilities in [0, 1]", p)
        out.append(np.clip(p, 0.0, 1.0))
    return out


def _bits(observed: np.ndarray) -> np.ndarray:
    """``-log2`` of the probabilities of what was observed, floored at the smallest
    positive float (PyClick's logarithm would fail at 0)."""
    return -np.log2(np.clip(observed, np.finfo(float).tiny, 1.0))


def _click_bits(clicked: np.ndarray, p_click: np.ndarray) -> np.ndarray:
    """The bits of each page's click or skip at each rank under ``P(C_r = 1)``."""
    return _bits(np.where(clicked, p_click, 1.0 - p_click))


def _perplexity_at_rank(bits: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """PyClick's perplexity at each rank, ``2^(mean over pages of the bits)``; with
    ``weights`` ``(draws, pages)``, each row summing to 1, one row of ranks per draw."""
    return 2.0 ** (bits.mean(axis=0) if weights is None else weights @ bits)


@dataclass(frozen=True)
class PerplexityDifference:
    """A model's held-out perplexity minus another's on the same pages, with the interval
    of a paired bootstrap over the pages (see :func:`perplexity_difference`)."""

    perplexity: float
    other: float
    difference: float
    low: float
    high: float
    level: float
    pages: int
    draws: int

    def __str__(self) -> str:
        return (f"{self.perplexity:.6f} against {self.other:.6f}: {self.difference:+.6f} "
                f"[{self.level:.0%}: {self.low:+.6f}, {self.high:+.6f}] (paired bootstrap "
                f"over the {self.pages:,} pages, {self.draws:,} draws)")


def perplexity_difference(clicked, p_click, p_other, *, draws: int = 1000,
                          level: float = 0.9, seed=None) -> PerplexityDifference:
    """Held-out perplexity (PyClick's, as :func:`click_metrics`) of a model's ``P(C_r =
    1)`` minus another model's on the same pages, ``(pages, ranks)`` arrays, and how much
    the pages can resolve: each of ``draws`` bootstrap draws resamples the pages with
    replacement (a multinomial count per page, the same for both models: a paired
    bootstrap) and recomputes both perplexities; the interval holds the central ``level``
    of the differences.  A difference whose interval holds 0 is one the pages cannot
    tell from chance."""
    clicked, p_click, p_other = _page_arrays(clicked, p_click=p_click, p_other=p_other)
    if not 0.0 < level < 1.0 or int(draws) < 1:
        raise ParameterError("level must be in (0, 1) and draws at least 1")
    ours = _click_bits(clicked, p_click)
    theirs = _click_bits(clicked, p_other)
    pages = clicked.shape[0]
    weights = np.random.default_rng(seed).multinomial(
        pages, np.full(pages, 1.0 / pages), size=int(draws)) / pages      # (draws, pages)
    gap = (_perplexity_at_rank(ours, weights).mean(1)
           - _perplexity_at_rank(theirs, weights).mean(1))
    mine = float(_perplexity_at_rank(ours).mean())
    other = float(_perplexity_at_rank(theirs).mean())
    low, high = np.quantile(gap, [(1 - level) / 2, (1 + level) / 2])
    return PerplexityDifference(mine, other, mine - other, float(low), float(high),
                                float(level), pages, int(draws))


def heldout_click_metrics(posterior, test, *, qrels=None, queries=None, pages=None,
                          ranks: int = METRIC_RANKS, max_draws: int | None = 200,
                          seed=None) -> ClickMetrics:
    """Log-likelihood and perplexities of held-out pages ``test`` (a ClickLog) under the
    posterior, on ranks ``1..ranks`` of pages with at least that many results;
    ``queries`` restricts them to pages of these queries (e.g. the training log's, as
    click-model evaluations do), ``pages`` to these ``serp_id`` (e.g. the pages another
    tool scored)."""
    return click_metrics(*heldout_click_arrays(
        posterior, test, qrels=qrels, queries=queries, pages=pages, ranks=ranks,
        max_draws=max_draws, seed=seed))


def heldout_click_arrays(posterior, test, *, qrels=None, queries=None, pages=None,
                         ranks: int = METRIC_RANKS, max_draws: int | None = 200,
                         seed=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`heldout_click_metrics` scores: ``(clicked, P(C_r = 1), P(C_r = c_r |
    C_<r))``, each ``(pages, ranks)``, the pages ordered by ``serp_id`` (for paired
    comparisons with another model's predictions on the same pages)."""
    pred = predict_clicks(posterior, test, qrels=qrels, ranks=ranks, max_draws=max_draws,
                          seed=seed)
    if queries is not None:
        pred = pred[pred["query_id"].isin({str(q) for q in queries})]
    if pages is not None:
        pred = pred[pred["serp_id"].isin(np.asarray(pages, dtype=np.int64))]
    pred = pred[pred["rank"] <= ranks]
    full = pred.groupby("serp_id")["rank"].transform("size") == ranks
    pred = pred[full].sort_values(["serp_id", "rank"])
    shape = (-1, ranks)
    return (pred["clicked"].to_numpy().reshape(shape),
            pred["p_click"].to_numpy().reshape(shape),
            pred["p_observed"].to_numpy().reshape(shape))
