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
from ..inference.parameters import (
    holding_rates,
    relevance_level,
    relevance_walk_parameters,
    session_parameters,
    walk_parameters,
)
from ..io.lists import RankedLists, ranked_lists
from ..measures import parse_measure
from ..measures.classical import _check_persistence


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
    tree = xr.DataTree.from_dict({"posterior": ds})
    tree.attrs.update(posterior.attrs)         # which chain it parametrises, its boundary
    return Posterior(tree)


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
            return _dynamic_scores(rel >= relevance_level(posterior), gains, lengths,
                                   relevance_walk_parameters(posterior),
                                   int(kw.get("order", 1)))
        p, q = walk_parameters(posterior)
        if model == "sfbm":
            _forward_only(q, f"{m!r}")
        return _static_scores(gains, lengths, model, p, q, int(kw.get("order", 1)))
    if m.name == "RBP":
        p, q = walk_parameters(posterior)
        _forward_only(q, f"{m!r}")
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
            mu = holding_rates(posterior, rel.shape[1])[:, None, :]
        values = markov_precision(rel, kw.get("model", "GL_AD_ID"), mu, kw.get("rescale"),
                                  recall_base=lists.recall_base, lengths=lengths,
                                  level=lists.level)
        if mu is None:
            values = np.broadcast_to(values, (_n_draws(posterior),) + values.shape)
        return values
    raise ParameterError(f"posterior scoring supports PatH, RBP, MP and MPcont, not {m.name}")


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


def posterior_from_parameters(parameters: Mapping[str, np.ndarray], *,
                              boundary: str = "leave", relevance_level: int = 1):
    """A one-chain posterior of the walk from parameter arrays ``(draws, ...)`` (tests,
    what-if runs):

    * ``walk``: ``(draws, 4)`` moves shared by all ranks, or ``(draws, ranks, 4)``, in the
      order forward, backward, reformulate, stop;
    * ``walk_by_relevance``: ``(draws, 2, 4)`` or ``(draws, 2, ranks, 4)``: moves after
      examining a non-relevant (index 0) and a relevant (index 1) document
      (``PatH(model='drwbm')``);
    * ``click``: ``(draws, ranks)`` click probability per examination (click prediction,
      predictive checks);
    * ``holding_rate``: ``(draws, ranks)``.

    ``boundary`` is the walk's rule at a page's last rank (``"rescale"``: MsM's session
    walk), ``relevance_level`` the lowest relevant grade of ``walk_by_relevance``.
    """
    from ..inference.examination import MOVES
    from ..inference.pages import CLASSES
    from ..inference.posterior import Posterior

    variables = {}
    if "walk" in parameters and "walk_by_relevance" in parameters:
        raise ParameterError("give walk or walk_by_relevance, not both")
    mu = None
    if "holding_rate" in parameters:
        mu = np.asarray(parameters["holding_rate"], dtype=float)
        variables["holding_rate"] = xr.DataArray(
            mu[None], dims=("chain", "draw", "rank"),
            coords={"rank": np.arange(1, mu.shape[1] + 1)})
    for key, extra in (("walk", ()), ("walk_by_relevance", ("relevance",))):
        if key not in parameters:
            continue
        w = np.asarray(parameters[key], dtype=float)
        if w.ndim == 2 + len(extra):            # shared by all ranks
            ranks = 1 if mu is None else mu.shape[1]
            w = np.repeat(w[..., None, :], ranks, axis=-2)
        if w.ndim != 3 + len(extra) or w.shape[-1] != 4 or (extra and w.shape[1] != 2):
            raise ParameterError(f"{key} must be (draws, {'2, ' if extra else ''}[ranks,] 4)")
        if mu is not None and w.shape[-2] != mu.shape[1]:
            raise ParameterError(f"{key} and holding_rate must have the same ranks")
        if np.any(w < 0) or not np.allclose(w.sum(-1), 1.0):
            raise ParameterError(f"{key}: each row of moves must be probabilities summing "
                                 f"to 1")
        coords = {"rank": np.arange(1, w.shape[-2] + 1), "move": list(MOVES)}
        if extra:
            coords["relevance"] = list(CLASSES)
        variables["walk"] = xr.DataArray(w[None], dims=("chain", "draw") + extra +
                                         ("rank", "move"), coords=coords)
    if "click" in parameters:
        c = np.asarray(parameters["click"], dtype=float)
        variables["click"] = xr.DataArray(c[None], dims=("chain", "draw", "rank"),
                                          coords={"rank": np.arange(1, c.shape[1] + 1)})
    tree = xr.DataTree.from_dict({"posterior": xr.Dataset(variables)})
    tree.attrs.update({"parametrises": "walk" if "walk" in variables else "dwell",
                       "spec_name": "posterior_from_parameters", "boundary": boundary,
                       "relevance_level": int(relevance_level)})
    return Posterior(tree)


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
