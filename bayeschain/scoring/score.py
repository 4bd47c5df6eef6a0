r"""Posterior scoring: every posterior draw of the user model pushed through the solvers.

``score(runs, qrels, measure, posterior)`` returns an ``xarray.DataArray`` with dims
``(chain, draw, run, topic)``.  Which parameters come from the posterior:

* ``PatH(model='sfbm' | 'rwbm', order=1 | 2)``: forward ``p`` and (rwbm) backward ``q`` per
  rank.  From a hidden-examination posterior (``walk``) they are the walk's shared
  probabilities; from a click-transition posterior (``transition``) the per-rank
  probabilities of moving forward / backward after a click.  Ranks deeper than the
  posterior's take its last rank's values.
* ``PatH(model='drwbm', order=1 | 2)``: the relevance-dependent walk; ``p, q`` after
  non-relevant and ``p_rel, q_rel`` after relevant clicks, from a posterior fitted with
  ``by_relevance`` (spec ``rwbm-relevance``).  Every (list, draw) pair is its own chain:
  order 2 runs the compiled recurrences of :mod:`bayeschain.scoring.relevance_walk`.
* ``RBP``: the persistence ``p`` (shared forward probability; per-rank posteriors need
  ``PatH(model='sfbm', order=2)``).
* ``MP``: the jump kernel, from a posterior of jumps (specs ``jumps-id``, ``jumps-free``;
  :func:`~bayeschain.posterior.jumps.jump_kernel`).  An ID / LID exponent ``g``
  (``jump_exponent``) gives ``alpha(i, j) = w(|i - j|)^g``, still symmetric, so every
  model (GL / LO x AD / OR) keeps the reversible closed form ``pi_i`` proportional to the
  row sum of ``alpha`` over the states linked to ``i`` (Ferrante, Ferro & Maistro, SIGIR
  2014, Sec. 4.3): one ``(draws x distances)`` table times per-list distance sums, for
  lists of any length; the model's weight family must be the posterior's.  Free rows
  (``jump``, ``(R, R)``, not symmetric) are scored with the ``GL_AD`` models only, on
  lists of at most ``R`` ranks (cut the others off: ``MP@R``): for each list length the
  ``n x n`` block, rows renormalised, is solved by GTH for every draw at once; its
  invariant law restricted to the relevant ranks is the censored chain's (Eq. 8; Meyer,
  SIAM Review 31 (1989), Thm. 2.3), which ``method='chain'`` computes literally.  A
  posterior without jumps (a walk) leaves MP a measure with nothing learned: refused, or
  a fixed reference with ``fixed_reference=True``.
* ``MPcont``: the holding rates ``mu`` per rank, and the jump kernel as for MP when the
  posterior has one (otherwise the model's fixed ID / LID weights), paired by draw.

Static browsing models use the visit-vector path: for each list
length ``L`` the chain's expected visits ``v`` (order 2) or ratio weights ``w`` (order 1)
are solved once per draw, and the scores of all lists of that length are one matrix
product ``relevance @ v.T``.  A posterior with a single draw reproduces ``evaluate``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from .. import chains
from ..browsing import build_chain
from ..browsing.base import extend_ranks
from ..errors import ParameterError
from ..io.lists import RankedLists, ranked_lists
from ..measures import MEASURES, Measure, parse_measure
from ..measures.classical import cut
from ..measures.markov import parse_model
from ..measures.path import apply_gains
from ..posterior.draws import draw_slice
from ..posterior.dwell import document_rates, holding_rates, per_document, unseen_documents
from ..posterior.jumps import has_jumps, jump_kernel
from ..posterior.walk import relevance_level, relevance_walk_parameters, walk_parameters


def _lists(runs, qrels, level, depth, complete, docs=False) -> RankedLists:
    if isinstance(runs, RankedLists):
        if docs and runs.doc_ids is None:
            raise ParameterError("per-document holding rates look the documents up: build "
                                 "the ranked lists with ranked_lists(..., docs=True)")
        return runs
    return ranked_lists(runs, qrels, level=level, depth=depth, complete=complete, docs=docs)


#: ``attrs["uncertainty"]`` of scores whose measure learns nothing from clicks
NO_USER_MODEL = "no user-model uncertainty (fixed reference)"


def score(runs, qrels, measure, posterior, *, level: int = 1, depth: int | None = None,
          complete: bool = False, draw_block: int = 250, client=None,
          fixed_reference: bool = False) -> xr.DataArray:
    """Scores of every (run, topic) under every posterior draw.

    Parameters
    ----------
    runs : mapping name -> run DataFrame, a run DataFrame, or :class:`RankedLists`
    qrels : DataFrame (ignored when ``runs`` is already a RankedLists)
    measure : measure string (see the module docstring for what the posterior supplies)
    posterior : :class:`~bayeschain.inference.Posterior`
    draw_block : draws processed at a time (bounds the memory of intermediate arrays)
    client : a ``dask.distributed.Client``: run-topic blocks are scored on its workers
        (same numbers as the local path)
    fixed_reference : score a measure with no parameter learned from clicks (AP, P@k,
        nDCG..., MP under a posterior without jumps) as a fixed reference: the same value
        under every draw, and ``attrs["uncertainty"]`` says there is no user-model
        uncertainty (so do the reports of :func:`bayeschain.compare`).  Without it such a
        measure is refused.
    """
    m = parse_measure(measure)
    lists = _lists(runs, qrels, level, depth, complete,
                   docs=m.name == "MPcont" and per_document(posterior))
    if len(lists) == 0:
        raise ParameterError("nothing to score: no topic of the runs is in the qrels (check "
                             "that the runs and the qrels are of the same collection)")
    post = posterior.posterior
    if not _learned(MEASURES.get(m.name), posterior):
        if not fixed_reference:
            _no_posterior_parameter(m, posterior)
        from ..evaluation import evaluate_lists

        table = evaluate_lists([measure], lists)
        values = np.broadcast_to(table["value"].to_numpy(dtype=float, na_value=np.nan),
                                 (post.sizes["chain"] * post.sizes["draw"], len(lists)))
        grid = _to_grid(values.reshape(post.sizes["chain"], post.sizes["draw"], -1), lists, post)
        grid.attrs["uncertainty"] = NO_USER_MODEL
        return grid
    shape = (post.sizes["chain"], post.sizes["draw"])
    draw_block = _bounded_block(lists, m, draw_block)
    if client is None:
        values = _score_in_blocks(lists, m, posterior, draw_block)
    else:
        values = _score_on_cluster(lists, m, posterior, draw_block, client)
    grid = _to_grid(values.reshape(shape + (-1,)), lists, post)
    if lists.doc_ids is not None and m.name == "MPcont" and per_document(posterior):
        unseen, total = unseen_documents(posterior, lists, m.cutoff)
        grid.attrs["documents_without_own_rate"] = (
            f"{unseen} of {total} relevant documents retrieved were not in the fitted log: "
            f"their holding rates are drawn from the population of their rank and query")
    return grid


#: arrays of draws x lists x ranks floats that scoring holds at once (measured: 92 draws of
#: one 10^6-rank list peaked at 11 GB, 15 such arrays: the walk's bands, the Thomas
#: sweeps and their transposes, the visit weights)
SCORING_ARRAYS = 16
#: the fewest draws scored at a time (each block re-runs the solvers' loops over ranks)
MIN_DRAW_BLOCK = 25


def _bounded_block(lists: RankedLists, m, draw_block: int) -> int:
    """Draws scored at a time so that their working arrays (:data:`SCORING_ARRAYS` of
    draws x lists x ranks floats) take at most half of
    :func:`~bayeschain.chains.checks.memory_budget`: long rankings are streamed over
    fewer draws at a time; when even one draw cannot fit, refused up front."""
    from ..chains.checks import budget_origin, check_memory, memory_budget, size_text

    width = lists.relevance.shape[1] if m.cutoff is None else m.cutoff
    per_row = width * 8 * SCORING_ARRAYS
    rows = max(1, len(lists))
    budget = memory_budget() // 2
    if MIN_DRAW_BLOCK * per_row > budget:     # one long ranking: per-list solves cannot shrink
        raise ParameterError(
            f"a ranking of {width:,} documents needs {size_text(MIN_DRAW_BLOCK * per_row)} to "
            f"score under {MIN_DRAW_BLOCK} draws at a time, more than {size_text(budget)} (half "
            f"of {budget_origin()}); cut the rankings with the measure's "
            f"cut-off, e.g. {m.name}(...)@1000 (users of a walk seldom pass rank 1,000)")
    block = budget // (rows * per_row)
    if block < MIN_DRAW_BLOCK:                # many lists: fewer lists would help, not draws
        check_memory((rows, width, MIN_DRAW_BLOCK), f"scoring {rows:,} rankings of "
                     f"{width:,} ranks under {MIN_DRAW_BLOCK} draws at a time",
                     itemsize=8 * SCORING_ARRAYS, error=ParameterError)
    return int(max(1, min(draw_block, max(block, MIN_DRAW_BLOCK))))


def _score_in_blocks(lists, m, posterior, draw_block: int) -> np.ndarray:
    total = _n_draws(posterior)
    if total <= draw_block:
        return _score_rows(lists, m, posterior)
    blocks = [_score_rows(lists, m, draw_slice(posterior, lo, min(lo + draw_block, total)))
              for lo in range(0, total, draw_block)]
    return np.concatenate(blocks, axis=0)


def _subset(lists: RankedLists, rows: np.ndarray) -> RankedLists:
    return RankedLists(lists.run_ids[rows], lists.query_ids[rows], lists.relevance[rows],
                       lists.lengths[rows], lists.recall_base[rows], lists.ideal[rows],
                       lists.level,
                       None if lists.doc_ids is None else lists.doc_ids[rows])


def _score_on_cluster(lists, m, posterior, draw_block: int, client) -> np.ndarray:
    """Run-topic blocks scored on Dask workers; the posterior is scattered once."""
    n_rows = len(lists)
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    edges = np.linspace(0, n_rows, min(n_rows, 4 * workers) + 1).astype(int)
    post_future = client.scatter(posterior, broadcast=True)
    futures = [client.submit(_score_in_blocks, _subset(lists, np.arange(lo, hi)), m,
                             post_future, draw_block, pure=False)
               for lo, hi in zip(edges[:-1], edges[1:], strict=True) if hi > lo]
    return np.concatenate(client.gather(futures), axis=1)


def _score_rows(lists: RankedLists, m, posterior) -> np.ndarray:
    """``(draws, lists)`` scores: the posterior supplies the parameters the measure declares
    (``MeasureSpec.posterior``); the rest is the measure's own definition."""
    spec = MEASURES.get(m.name)
    if not spec.posterior:
        _no_posterior_parameter(m)
    kw = spec.arguments(m)
    clash = set(spec.posterior) & set(m.kwargs)
    if clash:
        raise ParameterError(f"{m!r}: {sorted(clash)} come from the posterior; remove them")
    rel = lists.relevance if m.cutoff is None else cut(lists.relevance, m.cutoff)
    lengths = lists.lengths if m.cutoff is None else np.minimum(lists.lengths, m.cutoff)
    ctx = {"recall_base": lists.recall_base, "ideal": lists.ideal, "lengths": lengths,
           "level": lists.level}
    if m.name == "PatH":
        return _path_scores(rel, lengths, m, kw, posterior)
    if m.name == "RBP":
        p, q = walk_parameters(posterior).arrays()
        _forward_only(q, f"{m!r}")
        if not np.allclose(p, p[:, :1]):
            raise ParameterError("RBP needs one persistence per draw; this posterior has "
                                 "per-rank forward probabilities: use "
                                 "PatH(model='sfbm', order=2)")
        unit = Measure(m.name, m.params)              # the cut-off is applied above
        return spec.compute(rel, unit, {**ctx, "params": {"p": p[:, :1]}})
    if m.name in ("MP", "MPcont"):
        return _markov_scores(rel, m, kw, ctx, posterior, lists)
    raise ParameterError(f"posterior scoring of {m.name} is not implemented")


def _learned(spec, posterior) -> bool:
    """Whether the posterior supplies a parameter the measure declares: a jump kernel
    only when it has one (MP under a walk posterior has nothing learned)."""
    declared = set(spec.posterior)
    if "jumps" in declared and not has_jumps(posterior):
        declared.discard("jumps")
    return bool(declared)


def _no_posterior_parameter(m, posterior=None) -> None:
    fixed = ("evaluate it with 'bayeschain eval', or score it as a fixed reference "
             "(fixed_reference=True, --fixed-reference)")
    if "jumps" in MEASURES.get(m.name).posterior:
        spec = None if posterior is None else posterior.metadata.spec_name
        raise ParameterError(f"{m.name} learns only its jump kernel from clicks (where the "
                             f"next click lands), and this posterior (spec {spec!r}) has "
                             f"none: fit the spec 'jumps-id' (ID decay, learned exponent) or "
                             f"'jumps-free' (free rows) to score it under a posterior, or "
                             f"{fixed}")
    supported = sorted(n for n in MEASURES.names() if MEASURES.get(n).posterior)
    raise ParameterError(f"{m.name} has no parameter learned from clicks, so a posterior "
                         f"cannot change it: {fixed} (measures scored under a posterior: "
                         f"{', '.join(supported)})")


def _markov_scores(rel, m, kw, ctx, posterior, lists) -> np.ndarray:
    """MP / MPcont under every draw: the posterior's jump kernel (when it has one) and
    MPcont's holding rates, paired by draw (per document when the posterior has them)."""
    ctx = dict(ctx)
    if m.name == "MPcont" and per_document(posterior):
        ctx["holding_rates"] = document_rates(posterior, lists)
    elif m.name == "MPcont":
        ctx["holding_rates"] = holding_rates(posterior, rel.shape[1])[:, None, :]
    params = {}
    if has_jumps(posterior):
        kernel = jump_kernel(posterior)
        if kernel.kind == "exponent":
            weights = parse_model(kw["model"])[2]
            if weights != kernel.family:
                raise ParameterError(
                    f"{m!r}: the model {kw['model']!r} weighs jumps by "
                    f"{'uniform weights' if weights == 'CONST' else f'the {weights} decay'}, "
                    f"but the posterior learned the exponent of the {kernel.family} decay: "
                    f"score an {kernel.family} model (e.g. "
                    f"{m.name}(model='GL_AD_{kernel.family}'))")
            params["jump_exponent"] = kernel.draws
        else:
            params["jump"] = kernel.draws
    elif m.name == "MP":
        _no_posterior_parameter(m, posterior)
    return MEASURES.get(m.name).compute(rel, Measure(m.name, m.params), {**ctx, "params": params})


def _path_scores(rel, lengths, m, kw, posterior) -> np.ndarray:
    """P@H under every draw: the visit-vector path for the static walks, the compiled
    recurrences (order 2) or the general forward recursion (order 1) for ``drwbm``."""
    model = kw["model"]
    if model not in ("sfbm", "rwbm", "drwbm"):
        raise ParameterError(f"posterior scoring supports PatH with model 'sfbm', "
                             f"'rwbm' or 'drwbm', not {model!r}")
    if kw["loss"] or kw["effort"] != "h":
        raise ParameterError("posterior scoring of PatH supports no utility loss and effort "
                             "'h' (the visit-vector path)")
    order = int(kw["order"])
    if order not in (1, 2):
        raise ParameterError(f"order must be 1 or 2, got {order}")
    gains = apply_gains(rel, kw["gains"])
    if model == "drwbm":
        return _dynamic_scores(rel >= relevance_level(posterior), gains, lengths,
                               relevance_walk_parameters(posterior), order)
    p, q = walk_parameters(posterior).arrays()
    if model == "sfbm":
        _forward_only(q, f"{m!r}")
    return _static_scores(gains, lengths, model, p, q, order)


def _forward_only(backward: np.ndarray, measure: str) -> None:
    """SFBM and RBP walk forward only: refuse a fitted walk that moves backward."""
    if np.any(backward > 0):
        raise ParameterError(f"{measure} scores a walk that only moves forward, but the walk "
                             f"fitted to this log moves backward (up to "
                             f"{float(backward.max()):.3f} per step): score "
                             f"PatH(model='rwbm') with this posterior, or give the "
                             f"persistence yourself without --posterior")


def _n_draws(posterior) -> int:
    post = posterior.posterior
    return int(post.sizes["chain"] * post.sizes["draw"])


def _static_scores(gains: np.ndarray, lengths: np.ndarray, model: str, p: np.ndarray,
                   q: np.ndarray, order: int) -> np.ndarray:
    """Visit-vector path: one chain solve per (draw, list length), then matrix products.

    The product runs on the distinct gain vectors of each length only, so that lists with
    the same gains get bit-identical scores (BLAS may sum a row of a matrix product in
    another order depending on where the row lies, and two identical runs would then
    differ in the last bit: a comparison must see them tied)."""
    draws = p.shape[0]
    out = np.empty((draws, gains.shape[0]))
    for length in np.unique(lengths):
        every = bool(np.all(lengths == length))
        rows = slice(None) if every else np.flatnonzero(lengths == length)
        n = max(int(length), 1)
        params = {"p": extend_ranks(p, n)}
        if model == "rwbm":
            params["q"] = extend_ranks(q, n)
        chain = build_chain(model, n, **params)
        if order == 2:
            visits = chains.expected_visits(chain, check=False)           # (draws, n)
            weights = visits / visits.sum(axis=1, keepdims=True)
        elif order == 1:
            weights = chains.ratio_weights(chain, check=False)            # (draws, n)
        else:
            raise ParameterError(f"order must be 1 or 2, got {order}")
        sub = gains[rows, :n]                 # a view when every list has this length
        distinct, inverse = distinct_rows(sub)
        if distinct.shape[0] < sub.shape[0]:
            out[:, rows] = (weights @ distinct.T)[:, inverse]
        elif every:                           # no two alike: one product in place
            np.matmul(weights, sub.T, out=out)
        else:
            out[:, rows] = weights @ sub.T
    return out


def distinct_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a 2-D float array and, for every row, the index of its
    distinct row (rows equal byte for byte).  Rows are told apart by an exact integer hash
    of their bytes (a sum of products modulo 2^64 of each 64-bit word with its high half
    folded in: the same for a row wherever it lies),
    checked against the rows themselves; ``np.unique`` sorts whole rows only when two
    different rows share a hash."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.shape[0] <= 1 or a.shape[1] == 0:
        return a[:1] if a.shape[1] else a[:min(a.shape[0], 1)], np.zeros(a.shape[0], np.intp)
    multipliers = np.random.default_rng(0).integers(1, 2**63, size=a.shape[1],
                                                    dtype=np.uint64) | np.uint64(1)
    bits = a.view(np.uint64)
    # the high half folded into the low one first (small integers as floats differ only
    # in their high bits), then integer arithmetic: exact, modulo 2^64
    keys = (bits ^ (bits >> np.uint64(32))) @ multipliers
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    same = first[inverse]                           # each row's representative
    moved = np.flatnonzero(same != np.arange(a.shape[0]))
    if np.array_equal(bits[moved], bits[same[moved]]):
        return a[first], inverse
    distinct, inverse = np.unique(a, axis=0, return_inverse=True)
    return distinct, inverse.ravel()


def _dynamic_scores(relevant: np.ndarray, gains: np.ndarray, lengths: np.ndarray,
                    params: dict[str, np.ndarray], order: int) -> np.ndarray:
    """Relevance-dependent walk: one solve per (draw, list).  Order 2 runs the compiled
    recurrences of :mod:`bayeschain.scoring.relevance_walk` when Numba is installed;
    otherwise (and for order 1) the general solvers of :mod:`bayeschain.chains` run on the
    batched chains of :func:`bayeschain.browsing.relevance_walk` (slower)."""
    from .relevance_walk import compiled_kernel, relevance_walk_scores

    if order == 2 and compiled_kernel() is not None:
        return relevance_walk_scores(relevant.astype(float), gains, lengths, **params)
    from ..measures.path import list_chain

    width = gains.shape[1]
    per_rank = {k: extend_ranks(v, width)[:, None, :] for k, v in params.items()}
    chain = list_chain(relevant.astype(float), "drwbm", per_rank, lengths)
    if order == 1:
        return chains.expected_ratio(chain, gains)
    visits = chains.expected_visits(chain)
    return np.sum(visits * gains, axis=-1) / visits.sum(axis=-1)


def _to_grid(values: np.ndarray, lists: RankedLists, post: xr.Dataset) -> xr.DataArray:
    """(chain, draw, rows) -> (chain, draw, run, topic), NaN where a run lacks a topic."""
    runs = pd.unique(lists.run_ids)
    topics = pd.unique(lists.query_ids)
    r = pd.Index(runs).get_indexer(lists.run_ids)
    t = pd.Index(topics).get_indexer(lists.query_ids)
    grid = np.full(values.shape[:2] + (runs.size, topics.size), np.nan)
    grid[..., r, t] = values
    return xr.DataArray(grid, dims=("chain", "draw", "run", "topic"),
                        coords={"chain": post["chain"].values, "draw": post["draw"].values,
                                "run": list(runs), "topic": list(topics)},
                        name="score")
