r"""From a posterior to the parameters of the chain a measure scores (one home).

A posterior says which chain it parametrises (its ``parametrises`` attr, from its spec):

* ``"walk"`` (spec ``walk`` and its variants, :mod:`~bayeschain.inference.walk.model`):
  the per-step moves of the walk that examines every rank it visits: what P@H
  (``rwbm``, ``sfbm``), RBP, ``drwbm`` and MsM score;
* ``"click-to-click"`` (``clicks-*``, ``jumps-*``): where the *next click* lands after a
  click, the chain the walk becomes when it is watched at click times (Markov Precision's
  jumps).  Its forward / backward probabilities are not the walk's per-step moves: a walk
  moves one rank per examination, clicked or not, and reading click-to-click frequencies
  as per-step moves scores another chain (on TREC Session 2013 it visits rank 5 with
  probability 0.07 while 30.1% of the pages have a click at rank >= 5) and can reverse
  the ranking of two systems.  Walk measures refuse such a posterior.  A posterior of
  ``[jumps]`` gives Markov Precision its jump kernel (:func:`jump_kernel`): the exponent
  ``g`` of the ID / LID decay ``p_ij = w(|i - j|)^g / sum_k w(|i - k|)^g``, or free rows;
* ``"dwell"``: holding times only.

Every function returns the flattened posterior draws first: arrays, and for
:func:`walk_parameters` a typed pair of DataArrays with their coordinates.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import xarray as xr

from ..errors import ParameterError
from .draws import draws_of, stacked_draws

#: why a click-to-click posterior cannot parametrise a walk measure, and what to fit
CLICK_TO_CLICK = (
    "this posterior (spec {spec!r}) learned click-to-click transitions: after a click on "
    "rank i, where the next click lands.  P@H's walk moves one rank per examination, "
    "clicked or not, so those frequencies are not its per-step moves and scoring with them "
    "scores another chain (it can reverse system rankings).  Fit the walk itself: "
    "`bayeschain fit LOG -o post.nc` (spec 'walk'; 'walk-relevance' for drwbm, "
    "'walk-session' for MsM)")


def _walk(posterior, measure: str):
    """The ``walk`` variable of a posterior that parametrises the walk, or an error that
    says what the posterior is and what to fit."""
    meta = posterior.metadata
    if meta.parametrises == "click-to-click":
        raise ParameterError(f"{measure}: " + CLICK_TO_CLICK.format(spec=meta.spec_name))
    post = posterior.posterior
    if "walk" not in post:
        raise ParameterError(f"{measure}: the posterior (spec {meta.spec_name!r}) "
                             f"has no walk parameters; fit the walk with the spec 'walk'")
    return post["walk"]


class WalkParameters(NamedTuple):
    """The forward and backward probabilities of P@H's walk per draw and rank, as
    DataArrays with dims ``(sample, rank)`` (``sample`` the flattened ``(chain, draw)``,
    ``rank`` 1..R); :meth:`arrays` gives them as NumPy arrays ``(draws, ranks)``."""

    forward: xr.DataArray
    backward: xr.DataArray

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self.forward.values, self.backward.values


def walk_parameters(posterior) -> WalkParameters:
    """Forward and backward probability of the walk at each rank, ``(sample, rank)``.

    For any posterior that parametrises the walk (spec ``walk``, ``walk-shared``); ranks
    deeper than the longest page of the log take the last rank's values when a measure
    needs them (:func:`~bayeschain.browsing.base.extend_ranks`).  Rank 1 has no backward
    move (0).  Refuses click-to-click posteriors, walks by relevance (use ``drwbm``) and
    MsM's session walk (its boundaries are not P@H's).
    """
    walk = _walk(posterior, "the walk of P@H")
    if "relevance" in walk.dims:
        raise ParameterError("this posterior's moves depend on the relevance of the examined "
                             "document: score it with PatH(model='drwbm')")
    if posterior.metadata.boundary != "leave":
        raise ParameterError("this posterior is MsM's session walk (its last rank's forward "
                             "mass is spread over the other moves, Algorithm 1 of the MsM "
                             "paper), not the walk P@H scores: fit the spec 'walk'")
    w = stacked_draws(walk)                                      # (sample, rank, move)
    return WalkParameters(w.sel(move="forward", drop=True), w.sel(move="backward", drop=True))


def relevance_walk_parameters(posterior) -> dict[str, np.ndarray]:
    """``p, q`` (after examining a non-relevant document) and ``p_rel, q_rel`` (after a
    relevant one), each ``(draws, ranks)``, from a walk fitted by relevance (spec
    ``walk-relevance``): the parameters of ``PatH(model='drwbm')``."""
    walk = _walk(posterior, "PatH(model='drwbm')")
    if "relevance" not in walk.dims:
        raise ParameterError("PatH(model='drwbm') needs moves by relevance of the examined "
                             "document: fit the spec 'walk-relevance' with qrels")
    w = draws_of(posterior, "walk")                       # (draws, relevance, rank, move)
    moves = list(walk["move"].values)
    classes = list(walk["relevance"].values)
    out = {}
    for cls, suffix in (("non-relevant", ""), ("relevant", "_rel")):
        rows = w[:, classes.index(cls)]
        out["p" + suffix] = rows[..., moves.index("forward")]
        out["q" + suffix] = rows[..., moves.index("backward")]
    return out


def relevance_level(posterior, default: int = 1) -> int:
    """The lowest relevant grade the posterior's moves were fitted with (``drwbm``)."""
    level = posterior.metadata.relevance_level
    return default if level is None else level


def session_parameters(posterior) -> dict[str, np.ndarray]:
    """MsM's ``p, q, r, s``, each ``(draws,)``, from MsM's session walk (spec
    ``walk-session``: moves shared by all ranks, Algorithm 1's boundaries, fitted to a
    log that tells whether each session went on)."""
    walk = _walk(posterior, "MsM")
    if "relevance" in walk.dims:
        raise ParameterError("MsM takes one p, q, r, s; this posterior's moves depend on "
                             "relevance (fit the spec 'walk-session')")
    if posterior.metadata.boundary != "rescale":
        raise ParameterError("MsM scores its own session walk (rank 1's backward and the "
                             "last rank's forward mass spread over the other moves): fit "
                             "the spec 'walk-session'")
    if not posterior.metadata.sessions_observed:
        raise ParameterError("MsM needs r (next query) and s (end of session) apart, but "
                             "the log this posterior was fitted to has no sessions")
    w = draws_of(posterior, "walk")                             # (draws, rank, move)
    row = w[:, min(1, w.shape[1] - 1)]                          # an interior rank
    if not np.allclose(w[:, 1:], row[:, None, :]):
        raise ParameterError("MsM takes one p, q, r, s for every rank; this posterior's "
                             "moves are per rank (fit the spec 'walk-session')")
    moves = list(walk["move"].values)
    names = {"forward": "p", "backward": "q", "reformulate": "r", "stop": "s"}
    return {names[m]: row[:, moves.index(m)] for m in names}


def marginal_moves(skip, after_click, click):
    r"""The walk over ranks of a walk whose moves depend on the click, clicks marginalised.

    On every arrival at rank ``i`` the user clicks with ``c_i``, then moves with the moves
    after a click ``m^c_i`` or, without a click, ``m^s_i`` (each a row forward, backward,
    reformulate, stop).  The click is drawn afresh at every arrival and nothing else
    carries over, so the rank process is itself a Markov chain with the moves

    .. math::  m_i = c_i \, m^c_i + (1 - c_i) \, m^s_i

    (the law of the next rank given the current one, summed over the click).  P@H's
    ``rwbm`` (and RBP, the examination profile, ``E[H]``) score exactly this chain;
    ``drwbm`` the same per relevance class of the examined document.  Repeats (a click
    on the same result at once) do not move the walk.  Applied before the page's
    boundary rule, which for ``boundary = "leave"`` leaves the forward and backward
    probabilities as they are.

    ``skip``, ``after_click``: ``(..., [classes,] ranks, 4)``; ``click``: ``(..., ranks)``
    per draw (or one draw).
    """
    c = np.asarray(click, dtype=float)
    skip = np.asarray(skip, dtype=float)
    shape = c.shape[:-1] + (1,) * (skip.ndim - c.ndim - 1) + (c.shape[-1], 1)
    c = c.reshape(shape)
    return c * np.asarray(after_click, dtype=float) + (1.0 - c) * skip


#: Gauss-Hermite nodes of the population mean of the attractiveness at a rank
_QUADRATURE = 40


def population_click(trend, ranks: int, offset=None) -> np.ndarray:
    """``(draws, ranks)``: the mean attractiveness of the documents the fitted population
    shows at each rank, ``E[logistic(a + b log i + delta_i + sd Z)]``, ``Z ~ N(0, 1)``
    (``trend`` ``(draws, 3)``: intercept, slope, sd; ``offset`` ``(draws, R)``: the click
    logit's offset ``delta_i`` by rank, 0 when None; Gauss-Hermite quadrature).  With
    attractiveness per document, this is what a run's document at rank ``i`` gets in the
    scored walk where the log shows no rarer pair at that rank (:func:`run_click`)."""
    from ..browsing.base import extend_ranks

    trend = np.atleast_2d(np.asarray(trend, dtype=float))
    z, wts = np.polynomial.hermite_e.hermegauss(_QUADRATURE)
    wts = wts / wts.sum()
    x = np.log(np.arange(1, int(ranks) + 1, dtype=float))
    shift = 0.0 if offset is None else \
        extend_ranks(np.atleast_2d(np.asarray(offset, dtype=float)), int(ranks))[:, :, None]
    eta = trend[:, :1, None] + trend[:, 1:2, None] * x[None, :, None] \
        + trend[:, 2:3, None] * z[None, None, :] + shift
    return (wts / (1.0 + np.exp(-eta))).sum(axis=-1)


def run_click(trend, ranks: int, offset=None, pooled=None, pooled_ranks=None) -> np.ndarray:
    """``(draws, ranks)``: the click chance a run's document gets at each rank in the walk
    scored with attractiveness per document (runs are scored on the walk over ranks, which
    does not know their documents: a plug-in, not the average of the walk over documents).
    At a rank where the log shows pairs rarer than ``min_impressions``, the chance they
    share there, ``logistic(logit pooled + delta_i)`` (``pooled (draws, P)`` the
    posterior's ``pooled_click`` before the rank's offset, at ``pooled_ranks (P,)``): what
    held-out pages give a pair the fit never saw, as runs' documents mostly are.  At the
    other ranks, the population's mean attractiveness (:func:`population_click`)."""
    out = population_click(trend, ranks, offset)
    if pooled is None or not np.size(pooled):
        return out
    from scipy.special import expit, logit

    from ..browsing.base import extend_ranks

    if pooled_ranks is None:
        raise ValueError("run_click: the ranks of the pooled chances are needed with them")
    at = np.asarray(pooled_ranks, dtype=int) - 1
    inside = at < int(ranks)
    eta = logit(np.atleast_2d(np.asarray(pooled, dtype=float))[:, inside])
    if offset is not None:
        eta = eta + extend_ranks(np.atleast_2d(np.asarray(offset, dtype=float)),
                                 int(ranks))[:, at[inside]]
    out[:, at[inside]] = expit(eta)
    return out


class PageTables(NamedTuple):
    """The walk's tables for a set of pages, per draw (see :func:`page_tables`)."""

    moves: np.ndarray           # (draws, classes * ranks, 4) after no click
    moves_click: np.ndarray     # (draws, classes * ranks, 4) after a click
    repeat: np.ndarray          # (draws, classes * ranks)
    click: np.ndarray           # (draws, C)
    click_index: np.ndarray     # (G, N) the entry of ``click`` at each position
    reclick: np.ndarray         # (draws,) kappa: a result clicked before clicks again
                                # with kappa times its probability (1: fresh chances)
    second_look: np.ndarray | None = None   # (draws,) a result examined before clicks
                                # with this times its probability (walk-once; 1 or None:
                                # fresh chances)


def page_tables(posterior, data, rows: np.ndarray, seed=None) -> PageTables:
    """The walk's move rows and click probabilities for the page configurations of
    ``data`` (:class:`~bayeschain.inference.walk.data.PageData`, built for *any* log: the
    fitted one, or held-out pages) under the posterior draws ``rows``.

    Returns :class:`PageTables`: ``moves (draws, classes * ranks, 4)`` after an
    examination without a click and ``moves_click`` after a click (the same array when the
    walk's moves do not depend on the click), ``repeat (draws, classes * ranks)``
    (clicking a result again right after clicking it; 0 when the posterior has none)
    indexed by ``data.move_index``, ``reclick (draws,)`` (``kappa`` of damped re-clicks,
    1 without), ``second_look (draws,)`` (``kappa`` of the decision made once, 1
    without), and ``click (draws, C)`` indexed by its
    ``click_index (G, N)`` (``data.click_index``; with click offsets by rank, one entry
    per (document, rank) shown, whose logit is the document's plus the rank's offset).
    Ranks deeper than the fitted ones take the last fitted rank's values.  With
    attractiveness per document, the pseudo-document of rank ``r`` (the pairs without an
    attractiveness of their own: ``data.documents["pooled_rank"]``) clicks with the
    posterior's ``pooled_click`` at ``r``, and a (query, document) pair the posterior never
    saw, or a rank without a pooled chance, gets a draw from the fitted population of
    documents (``logit = a + b log rbar + sd * N(0, 1)`` at its median rank ``rbar`` in
    ``data``, per draw).
    """
    from ..browsing.base import extend_ranks

    walk = _walk(posterior, "the walk's predictions")
    classes = 2 if "relevance" in walk.dims else 1
    if classes != data.classes:
        raise ParameterError("the posterior's moves depend on relevance: build the pages "
                             "with the qrels it was fitted with" if classes == 2 else
                             "the pages were built with qrels but the posterior's moves do "
                             "not depend on relevance")
    post = posterior.posterior

    def table(name):
        w = draws_of(posterior, name)[rows]
        return _stack_moves(w.reshape((len(rows), classes) + w.shape[-2:]), data.ranks)

    has_readers = "reader_effect" in post
    if has_readers != (data.readers is not None):
        raise ParameterError("the posterior has readers by query: build the pages with its "
                             "readers" if has_readers else "the pages were built with "
                             "readers by query but the posterior has none")
    if has_readers:
        effect = post["reader_effect"]
        if list(effect["reader"].values.astype(str)) != list(data.readers):
            raise ParameterError("the pages were built with other readers than the "
                                 "posterior's")
        walk, repeat = reader_tables(draws_of(posterior, "walk")[rows],
                                     draws_of(posterior, "repeat")[rows],
                                     draws_of(posterior, "reader_effect")[rows],
                                     tuple(effect["reader_logit"].values.astype(str)))
        moves = moves_click = _stack_moves(walk, data.ranks)
        repeat = np.ascontiguousarray(
            extend_ranks(repeat.reshape(-1, repeat.shape[-1]), data.ranks)
            .reshape(len(rows), -1))
    else:
        if "walk_click" in post:
            moves, moves_click = table("walk_skip"), table("walk_click")
        else:
            moves = moves_click = table("walk")
        repeat = np.tile(extend_ranks(draws_of(posterior, "repeat")[rows], data.ranks),
                         (1, classes)) if "repeat" in post else np.zeros(moves.shape[:2])
    reclick = draws_of(posterior, "reclick")[rows] if "reclick" in post else \
        np.ones(len(rows))
    second = draws_of(posterior, "second_look")[rows] if "second_look" in post else \
        np.ones(len(rows))
    if data.documents is None:
        if "click" not in post:
            raise ParameterError("the posterior has attractiveness per document: build the "
                                 "pages with clicks='document'")
        click = extend_ranks(draws_of(posterior, "click")[rows], data.ranks)
        return PageTables(moves, moves_click, repeat, click, data.click_index, reclick,
                          second)
    if "attractiveness" not in post:
        raise ParameterError("the posterior has click probabilities per rank: build the "
                             "pages with clicks='rank'")
    att = post["attractiveness"]
    known = pd_index(att["query_id"].values, att["doc_id"].values)
    docs = data.documents
    where = known.get_indexer(pd_index(docs["query_id"].astype(str).to_numpy(),
                                       docs["doc_id"].astype(str).to_numpy()))
    # no pair of its own (every one pooled): every ``where`` is -1, the column never read
    alpha = draws_of(posterior, "attractiveness")[rows] if att.sizes["document"] else \
        np.zeros((len(rows), 1))
    trend = draws_of(posterior, "click_trend")[rows]                 # (draws, 3)
    rng = np.random.default_rng(seed)
    x = np.log(docs["median_rank"].to_numpy(dtype=float, na_value=np.nan))
    new = trend[:, :1] + trend[:, 1:2] * x[None, :] + trend[:, 2:3] * rng.standard_normal(
        (len(rows), x.size))
    click = np.where(where[None, :] >= 0, alpha[:, np.maximum(where, 0)],
                     1.0 / (1.0 + np.exp(-new)))
    pooled = docs["pooled_rank"].to_numpy()
    if "pooled_click" in post and (pooled > 0).any():
        import pandas as pd

        fitted = pd.Index(post["pooled_click"]["pooled_rank"].values).get_indexer(pooled)
        hit = (pooled > 0) & (fitted >= 0)
        click[:, hit] = draws_of(posterior, "pooled_click")[rows][:, fitted[hit]]
    if "click_offset" not in post:
        return PageTables(moves, moves_click, repeat, click, data.click_index, reclick,
                          second)
    from ..browsing.page_walk import click_combinations

    index, doc, position = click_combinations(data.click_index, True, click.shape[1])
    offset = extend_ranks(draws_of(posterior, "click_offset")[rows], data.ranks)
    with np.errstate(divide="ignore"):
        logit = np.log(click[:, doc]) - np.log1p(-click[:, doc])
    shift = np.where(position >= 0, offset[:, np.maximum(position + 1, 0)], 0.0)
    return PageTables(moves, moves_click, repeat, 1.0 / (1.0 + np.exp(-(logit + shift))),
                      index, reclick, second)


def reader_tables(walk: np.ndarray, repeat: np.ndarray, effect: np.ndarray,
                  names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Every reader's moves and repeats from reader 0's (the posterior's ``walk (draws,
    R, 4)`` and ``repeat (draws, R)``) and the readers' effects ``(draws, readers,
    len(names))`` on the logits ``names`` (:data:`~.vocabulary.READER_LOGITS`): reader
    ``g``'s logits are reader 0's plus ``effect[g] - effect[0]``, where the forward and
    backward logits are against leaving the page (``log p / leave``, ``log q / leave``),
    ``continue`` is the next query's against the end (``log r / s``) and ``repeat`` the
    repeat's.  Returns ``(draws, readers, R, 4)`` and ``(draws, readers, R)``."""
    shift = effect - effect[:, :1]                                  # (draws, G, F)

    def of(name):
        return shift[:, :, names.index(name), None] if name in names else 0.0

    from scipy.special import expit, logit

    p, q, r, s = (walk[:, None, :, k] for k in range(4))            # (draws, 1, R)
    leave = r + s
    with np.errstate(divide="ignore", invalid="ignore"):
        ef = np.log(p) - np.log(leave) + of("forward")
        eb = np.log(q) - np.log(leave) + of("backward")       # -inf: no backward move
        ec = np.log(r) - np.log(s) + of("continue")           # -inf: no sessions
        top = np.maximum(np.maximum(ef, eb), 0.0)
        pf, pb, pl = np.exp(ef - top), np.exp(eb - top), np.exp(-top)
        total = pf + pb + pl
        share = np.nan_to_num(expit(ec))
        rep = expit(logit(repeat)[:, None, :] + of("repeat"))
    moves = np.stack([pf / total, pb / total, pl / total * share,
                      pl / total * (1.0 - share)], axis=-1)
    return moves, rep


def _stack_moves(w: np.ndarray, ranks: int) -> np.ndarray:
    """``(draws, classes, R, 4)`` -> ``(draws, classes * ranks, 4)`` with ranks extended."""
    draws, classes, fitted, _ = w.shape
    if fitted >= ranks:
        out = w[:, :, :ranks]
    else:
        out = np.concatenate([w, np.repeat(w[:, :, -1:], ranks - fitted, axis=2)], axis=2)
    return np.ascontiguousarray(out.reshape(draws, classes * ranks, 4))


def pd_index(queries, docs):
    """(query, document) pairs as a pandas MultiIndex of strings."""
    import pandas as pd

    return pd.MultiIndex.from_arrays([np.asarray(queries).astype(str),
                                      np.asarray(docs).astype(str)])


def expected_visits(posterior, length: int = 10) -> np.ndarray:
    """Expected examinations of each rank of a page of ``length`` results, per draw
    ``(draws, length)``: ``v = e_1^T (I - P)^{-1}`` of the fitted walk (P@H's chain; its
    sum is ``E[H]``)."""
    from .. import chains

    return chains.expected_visits(_page_chain(posterior, length), check=False)


def _page_chain(posterior, length: int):
    """P@H's chain of the fitted walk on a page of ``length`` results, one per draw."""
    from ..browsing import build_chain
    from ..browsing.base import extend_ranks

    p, q = walk_parameters(posterior).arrays()
    return build_chain("rwbm", int(length), p=extend_ranks(p, length),
                       q=extend_ranks(q, length))


def reader_depths(posterior, length: int = 10, prob: float = 0.95):
    """Readers by query (``[examination] readers = "query"``): per reader, its query
    (``(others)`` for reader 0, whose walk is the posterior's ``walk``), the
    fitted pages it reads, and the posterior mean and equal-tailed ``prob`` interval of
    ``E[H]`` on a page of ``length`` results under its walk (:func:`reader_tables`)."""
    import pandas as pd

    from .. import chains
    from ..browsing import build_chain
    from ..browsing.base import extend_ranks

    post = posterior.posterior
    if "reader_effect" not in post:
        raise ParameterError("the posterior has no readers by query (fit a spec with "
                             "[examination] readers = 'query', e.g. walk-query)")
    effect = post["reader_effect"]
    walk, repeat = draws_of(posterior, "walk"), draws_of(posterior, "repeat")
    effects = draws_of(posterior, "reader_effect")
    names = tuple(effect["reader_logit"].values.astype(str))
    rows = []
    for g, query in enumerate(effect["reader"].values.astype(str)):
        # one reader at a time: every reader's tables over every draw at once held
        # gigabytes at a thousand readers
        moves = reader_tables(walk, repeat, effects[:, [0, g]], names)[0][:, 1]
        chain = build_chain("rwbm", int(length), p=extend_ranks(moves[..., 0], length),
                            q=extend_ranks(moves[..., 1], length))
        h = chains.expected_visits(chain, check=False).sum(axis=1)
        lo, hi = np.quantile(h, [(1 - prob) / 2, (1 + prob) / 2])
        rows.append({"reader": query, "pages": int(effect["pages"].values[g]),
                     "E[H]": float(h.mean()), "lo": float(lo), "hi": float(hi)})
    return pd.DataFrame(rows)


def expected_clicks(posterior, length: int = 10) -> np.ndarray:
    r"""Expected clicks on each rank of a page of ``length`` results, per draw
    ``(draws, length)``: every arrival clicks, repeats of a click right after it included.

    The walk over ranks does not depend on the clicks (moves after a click marginalised
    as :func:`walk_parameters` does), so the arrivals ``N_i`` at rank ``i`` are those of
    P@H's chain: ``P(N_i >= 1) = h_i`` (reached from rank 1) and ``P(N_i >= k | N_i >= 1)
    = f_i^{k-1}`` (``f_i`` the return probability), ``E[N_i] = h_i / (1 - f_i)`` (the
    expected visits).  The first arrival clicks with ``c_i``; with damped re-clicks an
    arrival after a click on ``i`` clicks with ``kappa c_i`` (``kappa = 1`` without), so

    .. math:: E[\text{arrivals that click } i] = h_i \sum_{k \ge 1} f_i^{k-1}
       \big[(1-c_i)^{k-1} c_i + (1 - (1-c_i)^{k-1}) \kappa c_i\big]
       = h_i \Big[\frac{\kappa c_i}{1 - f_i} + \frac{(1 - \kappa) c_i}{1 - f_i (1 - c_i)}\Big],

    and each such click is followed by repeats of the same result with probability
    ``rho_i`` each (geometric: ``1 / (1 - rho_i)`` clicks per clicking arrival).  With
    ``kappa = 1`` and no repeats this is ``E[N_i] c_i``.  When the click decision is made
    once (``second_look``, spec ``walk-once``) the first arrival clicks with ``c_i`` and
    every later one with ``kappa c_i``, clicked before or not, so the clicking arrivals are
    ``c_i (h_i + kappa (E[N_i] - h_i))``.  ``c_i`` is the posterior's
    ``click`` per rank; with attractiveness per document the clicks depend on the
    documents a page shows, and :func:`~bayeschain.inference.predict_clicks` gives them
    per page.  Tested against the frequencies of pages simulated from the walk's
    definition.
    """
    from .. import chains
    from ..browsing.base import extend_ranks

    walk = posterior.posterior["walk"] if "walk" in posterior.posterior else None
    if walk is not None and "relevance" in walk.dims:
        raise ParameterError("expected clicks per rank of a walk by relevance depend on "
                             "the relevance of the documents shown: predict_clicks("
                             "posterior, log, qrels=...) gives them page by page")
    if "click" not in posterior.posterior:
        raise ParameterError("expected clicks per rank need click probabilities per rank; "
                             "this posterior's clicks depend on the documents shown "
                             "(attractiveness per document): predict_clicks(posterior, "
                             "log) gives them page by page")
    chain = _page_chain(posterior, length)
    visits = chains.expected_visits(chain, check=False)             # h_i / (1 - f_i)
    back = chains.return_probabilities(chain, check=False)          # f_i
    c = extend_ranks(draws_of(posterior, "click"), length)
    post = posterior.posterior
    kappa = draws_of(posterior, "reclick")[:, None] if "reclick" in post else 1.0
    repeat = extend_ranks(draws_of(posterior, "repeat"), length) if "repeat" in post \
        else 0.0
    reached = visits * (1.0 - back)                                 # h_i
    if "second_look" in post:    # the first arrival clicks with c_i, every later one kappa c_i
        look = draws_of(posterior, "second_look")[:, None]
        return c * (reached + look * (visits - reached)) / (1.0 - repeat)
    arrivals = kappa * c * visits + (1.0 - kappa) * c * reached / (1.0 - back * (1.0 - c))
    return arrivals / (1.0 - repeat)


def walk_summary(posterior, ranks: int = 10, prob: float = 0.95):
    """Per rank (first ``ranks``): the posterior mean and equal-tailed ``prob`` interval of
    the forward, backward and leave probabilities, the click probability (rank-level
    clicks) and the expected examinations of a page of ``ranks`` results."""
    import pandas as pd

    from ..browsing.base import extend_ranks

    walk = _walk(posterior, "walk summary")
    if "relevance" in walk.dims:
        raise ParameterError("walk summary of a walk by relevance: summarise each class "
                             "with posterior.summary()")
    w = draws_of(posterior, "walk")
    moves = list(walk["move"].values)
    cols = {"forward": w[..., moves.index("forward")],
            "backward": w[..., moves.index("backward")],
            "leave": w[..., moves.index("reformulate")] + w[..., moves.index("stop")]}
    if "click" in posterior.posterior:
        cols["click"] = draws_of(posterior, "click")
    if posterior.metadata.boundary == "leave":
        cols["visits"] = expected_visits(posterior, ranks)
    lo, hi = (1 - prob) / 2, (1 + prob) / 2
    rows = []
    for i in range(ranks):
        row = {"rank": i + 1}
        for name, x in cols.items():
            v = extend_ranks(x, ranks)[:, i]
            row[name] = float(v.mean())
            row[f"{name}_lo"], row[f"{name}_hi"] = (float(t) for t in np.quantile(v, [lo, hi]))
        rows.append(row)
    return pd.DataFrame(rows)


