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
  order 2 runs the compiled recurrences of :mod:`bayeschain.compare.dynamic`.
* ``RBP``: the persistence ``p`` (shared forward probability; per-rank posteriors need
  ``PatH(model='sfbm', order=2)``).
* ``MPcont``: the holding rates ``mu`` per rank.

Static browsing models use the visit-vector path of DESIGN.md section 4: for each list
length ``L`` the chain's expected visits ``v`` (order 2) or ratio weights ``w`` (order 1)
are solved once per draw, and the scores of all lists of that length are one matrix
product ``relevance @ v.T``.  A posterior with a single draw reproduces ``evaluate``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from .. import chains
from ..browsing import build_chain
from ..browsing.base import extend_ranks
from ..errors import ParameterError
from ..io.lists import RankedLists, ranked_lists
from ..measures import parse_measure
from ..measures.classical import _check_persistence


def _draws(posterior, name: str) -> np.ndarray:
    """A posterior variable flattened to ``(draws, ...)``."""
    da = posterior.posterior[name]
    return da.stack(sample=("chain", "draw")).transpose("sample", ...).values


def relevance_walk_parameters(posterior) -> dict[str, np.ndarray]:
    """``p, q`` (after non-relevant clicks) and ``p_rel, q_rel`` (after relevant ones),
    each ``(draws, R)``, from a ``by_relevance`` click-transition posterior."""
    post = posterior.posterior
    if "transition_by_relevance" not in post:
        raise ParameterError("PatH(model='drwbm') needs transitions by relevance: fit a spec "
                             "with by_relevance = true (e.g. rwbm-relevance) with qrels")
    da = post["transition_by_relevance"]
    cats = list(da["category"].values)
    classes = list(da["relevance"].values)
    t = _draws(posterior, "transition_by_relevance")       # (draws, relevance, rank, cat)
    out = {}
    for cls, suffix in (("non-relevant", ""), ("relevant", "_rel")):
        rows = t[:, classes.index(cls)]
        out["p" + suffix] = rows[:, :, cats.index("forward")]
        out["q" + suffix] = rows[:, :, cats.index("backward")]
    return out


def walk_parameters(posterior) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward probabilities ``(draws, R)`` of the browsing walk."""
    post = posterior.posterior
    if "transition_by_relevance" in post and "transition" not in post:
        raise ParameterError("this posterior's transitions depend on relevance: score it "
                             "with PatH(model='drwbm')")
    if "walk" in post:
        walk = _draws(posterior, "walk")                       # (draws, move)
        moves = list(post["walk"]["move"].values)
        p = walk[:, moves.index("forward")][:, None]
        q = walk[:, moves.index("backward")][:, None]
        return p, q
    if "transition" in post:
        cats = list(post["transition"]["category"].values)
        t = _draws(posterior, "transition")                    # (draws, rank, category)
        return t[:, :, cats.index("forward")], t[:, :, cats.index("backward")]
    raise ParameterError("the posterior has no browsing parameters (walk or transition)")


def _lists(runs, qrels, level, depth, complete) -> RankedLists:
    if isinstance(runs, RankedLists):
        return runs
    return ranked_lists(runs, qrels, level=level, depth=depth, complete=complete)


def score(runs, qrels, measure, posterior, *, level: int = 1, depth: int | None = None,
          complete: bool = False, draw_block: int = 250, client=None) -> xr.DataArray:
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
    """
    lists = _lists(runs, qrels, level, depth, complete)
    m = parse_measure(measure)
    post = posterior.posterior
    shape = (post.sizes["chain"], post.sizes["draw"])
    if client is None:
        values = _score_in_blocks(lists, m, posterior, draw_block)
    else:
        values = _score_on_cluster(lists, m, posterior, draw_block, client)
    return _to_grid(values.reshape(shape + (-1,)), lists, post)


def _draw_slice(posterior, lo: int, hi: int):
    """The posterior restricted to flattened draws ``lo:hi`` (as one chain)."""
    from ..inference.posterior import Posterior

    flat = posterior.posterior.stack(sample=("chain", "draw")).isel(sample=slice(lo, hi))
    ds = flat.drop_vars(["sample", "chain", "draw"]).rename(sample="draw") \
        .expand_dims("chain").transpose("chain", "draw", ...)
    return Posterior(xr.DataTree.from_dict({"posterior": ds}))


def _score_in_blocks(lists, m, posterior, draw_block: int) -> np.ndarray:
    total = _n_draws(posterior)
    if total <= draw_block:
        return _score_rows(lists, m, posterior)
    blocks = [_score_rows(lists, m, _draw_slice(posterior, lo, min(lo + draw_block, total)))
              for lo in range(0, total, draw_block)]
    return np.concatenate(blocks, axis=0)


def _subset(lists: RankedLists, rows: np.ndarray) -> RankedLists:
    return RankedLists(lists.run_ids[rows], lists.query_ids[rows], lists.relevance[rows],
                       lists.lengths[rows], lists.recall_base[rows], lists.ideal[rows],
                       lists.level)


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
    kw = m.kwargs
    rel = lists.relevance if m.cutoff is None else lists.relevance[:, : m.cutoff]
    lengths = lists.lengths if m.cutoff is None else np.minimum(lists.lengths, m.cutoff)
    if m.name == "PatH":
        model = kw.get("model", "sfbm")
        if model not in ("sfbm", "rwbm", "drwbm"):
            raise ParameterError(f"posterior scoring supports PatH with model 'sfbm', "
                                 f"'rwbm' or 'drwbm', not {model!r}")
        clash = {"p", "q", "p1", "qN", "p_rel", "q_rel"} & set(kw)
        if clash:
            raise ParameterError(f"{m!r}: {sorted(clash)} come from the posterior; remove them")
        if kw.get("loss", 0) or kw.get("gains") is not None or kw.get("effort", "h") != "h":
            raise ParameterError("posterior scoring of PatH supports plain gains, no utility "
                                 "loss and effort 'h' (the visit-vector path)")
        gains = np.clip(rel, 0, None)
        if model == "drwbm":
            return _dynamic_scores(rel >= lists.level, gains, lengths,
                                   relevance_walk_parameters(posterior),
                                   int(kw.get("order", 1)))
        p, q = walk_parameters(posterior)
        return _static_scores(gains, lengths, model, p, q, int(kw.get("order", 1)))
    if m.name == "RBP":
        p, _ = walk_parameters(posterior)
        if not np.allclose(p, p[:, :1]):
            raise ParameterError("RBP needs one persistence per draw; this posterior has "
                                 "per-rank forward probabilities: use "
                                 "PatH(model='sfbm', order=2)")
        persistence = _check_persistence(p[:, 0])
        gains = (rel >= lists.level).astype(float)
        powers = persistence[:, None] ** np.arange(rel.shape[1])
        return (1 - persistence)[:, None] * (powers @ gains.T)
    if m.name in ("MPcont", "MP"):
        from ..measures.markov import markov_precision

        mu = None
        if m.name == "MPcont":
            mu = extend_ranks(_draws(posterior, "holding_rate"), rel.shape[1])[:, None, :]
        values = markov_precision(rel, kw.get("model", "GL_AD_ID"), mu, kw.get("rescale"),
                                  recall_base=lists.recall_base, lengths=lengths,
                                  level=lists.level)
        if mu is None:
            values = np.broadcast_to(values, (_n_draws(posterior),) + values.shape)
        return values
    raise ParameterError(f"posterior scoring supports PatH, RBP, MP and MPcont, not {m.name}")


def _n_draws(posterior) -> int:
    post = posterior.posterior
    return int(post.sizes["chain"] * post.sizes["draw"])


def _static_scores(gains: np.ndarray, lengths: np.ndarray, model: str, p: np.ndarray,
                   q: np.ndarray, order: int) -> np.ndarray:
    """Visit-vector path: one chain solve per (draw, list length), then matrix products."""
    draws = p.shape[0]
    out = np.zeros((draws, gains.shape[0]))
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)
        n = max(int(length), 1)
        params = {"p": extend_ranks(p, n)}
        if model == "rwbm":
            params["q"] = extend_ranks(q, n)
        chain = build_chain(model, n, **params)
        sub = gains[rows, :n]
        if order == 2:
            visits = chains.expected_visits(chain, check=False)           # (draws, n)
            out[:, rows] = (visits @ sub.T) / visits.sum(axis=1, keepdims=True)
        elif order == 1:
            weights = chains.ratio_weights(chain, check=False)            # (draws, n)
            out[:, rows] = weights @ sub.T
        else:
            raise ParameterError(f"order must be 1 or 2, got {order}")
    return out


def _dynamic_scores(relevant: np.ndarray, gains: np.ndarray, lengths: np.ndarray,
                    params: dict[str, np.ndarray], order: int) -> np.ndarray:
    """Relevance-dependent walk: one solve per (draw, list).  Order 2 runs the compiled
    recurrences of :mod:`bayeschain.compare.dynamic`; order 1 the general forward
    recursion (:func:`~bayeschain.chains.expected_ratio`) on the batched chains, slower."""
    if order == 2:
        from .dynamic import relevance_walk_scores

        return relevance_walk_scores(relevant.astype(float), gains, lengths, **params)
    if order != 1:
        raise ParameterError(f"order must be 1 or 2, got {order}")
    from ..measures.path import list_chain

    width = gains.shape[1]
    per_rank = {k: extend_ranks(v, width)[:, None, :] for k, v in params.items()}
    chain = list_chain(relevant.astype(float), "drwbm", per_rank, lengths)
    return chains.expected_ratio(chain, gains)


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


def posterior_from_parameters(parameters: Mapping[str, np.ndarray]):
    """A one-chain posterior from parameter arrays ``(draws, ...)`` (tests, what-if runs):
    ``walk`` (draws, 4) in the order forward, backward, reformulate, stop, and/or
    ``holding_rate`` (draws, ranks), and/or ``transition_by_relevance`` (draws, 2, 3) or
    (draws, 2, ranks, 3): forward, backward, stop after non-relevant (index 0) and relevant
    (index 1) documents, for ``PatH(model='drwbm')``."""
    from ..inference.posterior import Posterior

    variables = {}
    if "walk" in parameters:
        walk = np.asarray(parameters["walk"], dtype=float)
        variables["walk"] = xr.DataArray(walk[None], dims=("chain", "draw", "move"),
                                         coords={"move": ["forward", "backward",
                                                          "reformulate", "stop"]})
    if "transition_by_relevance" in parameters:
        t = np.asarray(parameters["transition_by_relevance"], dtype=float)
        if t.ndim == 3:
            t = t[:, :, None, :]
        if t.ndim != 4 or t.shape[1] != 2 or t.shape[3] != 3:
            raise ParameterError("transition_by_relevance must be (draws, 2, [ranks,] 3)")
        variables["transition_by_relevance"] = xr.DataArray(
            t[None], dims=("chain", "draw", "relevance", "rank", "category"),
            coords={"relevance": ["non-relevant", "relevant"],
                    "rank": np.arange(1, t.shape[2] + 1),
                    "category": ["forward", "backward", "stop"]})
    if "holding_rate" in parameters:
        mu = np.asarray(parameters["holding_rate"], dtype=float)
        variables["holding_rate"] = xr.DataArray(
            mu[None], dims=("chain", "draw", "rank"),
            coords={"rank": np.arange(1, mu.shape[1] + 1)})
    return Posterior(xr.DataTree.from_dict({"posterior": xr.Dataset(variables)}))


def session_parameters(posterior) -> dict[str, np.ndarray]:
    """MsM's ``p, q, r, s`` per draw ``(draws,)``: a hidden walk's moves, or shared
    click-transition probabilities (spec ``msm-session``)."""
    post = posterior.posterior
    names = {"forward": "p", "backward": "q", "reformulate": "r", "stop": "s"}
    if "walk" in post:
        walk = _draws(posterior, "walk")
        moves = list(post["walk"]["move"].values)
        return {names[c]: walk[:, moves.index(c)] for c in names}
    if "transition" in post:
        t = _draws(posterior, "transition")                    # (draws, rank, category)
        cats = list(post["transition"]["category"].values)
        if set(names) - set(cats):
            raise ParameterError("MsM needs forward, backward, reformulate and stop "
                                 "probabilities; fit a spec with all four (msm-session)")
        if not np.allclose(t, t[:, :1, :]):
            raise ParameterError("MsM takes shared p, q, r, s; this posterior is per rank "
                                 "(fit the msm-session spec)")
        return {names[c]: t[:, 0, cats.index(c)] for c in names}
    raise ParameterError("the posterior has no session parameters (walk or transition)")


def score_sessions(sessions: Mapping[str, np.ndarray], posterior, *,
                   discount: str = "linear", log_base: float = 10) -> xr.DataArray:
    """MsM of each session (an ``N x K`` relevance matrix) under every posterior draw of
    ``p, q, r, s``; dims ``(chain, draw, session)``."""
    from ..measures.session import msm

    params = session_parameters(posterior)
    post = posterior.posterior
    names = list(sessions)
    values = np.stack([msm(np.asarray(sessions[n], dtype=float), params["p"], params["q"],
                           params["r"], params["s"], discount, log_base) for n in names],
                      axis=-1)
    shape = (post.sizes["chain"], post.sizes["draw"], len(names))
    return xr.DataArray(values.reshape(shape), dims=("chain", "draw", "session"),
                        coords={"chain": post["chain"].values, "draw": post["draw"].values,
                                "session": names}, name="msm")


def path_cdf_bands(relevance, model: str, posterior, *, grid=None, probs=(0.05, 0.5, 0.95),
                   max_draws: int | None = 200, seed=None) -> xr.DataArray:
    """Quantiles over posterior draws of the CDF of P@H for one list.

    The CDF is each draw's exact law (user-to-user variability within a user model); the
    band across draws is the user-model uncertainty.  Returns ``(quantile, x)``.
    """
    from ..measures import path_distribution

    rel = np.clip(np.asarray(relevance, dtype=float), 0, None)
    if model not in ("sfbm", "rwbm"):
        raise ParameterError("CDF bands support the sfbm and rwbm browsing models")
    p, q = walk_parameters(posterior)
    idx = np.arange(p.shape[0])
    if max_draws is not None and idx.size > max_draws:
        idx = np.sort(np.random.default_rng(seed).choice(idx, max_draws, replace=False))
    x = np.linspace(0, 1, 201) if grid is None else np.asarray(grid, dtype=float)
    cdfs = []
    for d in idx:
        params = {"p": extend_ranks(p[d:d + 1], rel.size)[0]}
        if model == "rwbm":
            params["q"] = extend_ranks(q[d:d + 1], rel.size)[0]
        cdfs.append(path_distribution(rel, model, **params).cdf(x))
    bands = np.quantile(np.stack(cdfs), probs, axis=0)
    return xr.DataArray(bands, dims=("quantile", "x"), coords={"quantile": list(probs),
                                                               "x": x}, name="cdf")
