r"""From a posterior to the parameters of the chain a measure scores (one home).

A posterior says which chain it parametrises (its ``parametrises`` attr, from its spec):

* ``"walk"`` (spec ``walk`` and its variants, :mod:`~bayeschain.inference.examination`):
  the per-step moves of the walk that examines every rank it visits: what P@H
  (``rwbm``, ``sfbm``), RBP, ``drwbm`` and MsM score;
* ``"click-to-click"`` (``clicks-*``, ``jumps-*``): where the *next click* lands after a
  click, the chain the walk becomes when it is watched at click times (Markov Precision's
  jumps).  Its forward / backward probabilities are not the walk's per-step moves: a walk
  moves one rank per examination, clicked or not, and reading click-to-click frequencies
  as per-step moves scores another chain (on TREC Session 2013 it visits rank 5 with
  probability 0.07 while 29.9% of the pages have a click at rank >= 5) and can reverse
  the ranking of two systems.  Walk measures refuse such a posterior.  A posterior of
  ``[jumps]`` gives Markov Precision its jump kernel (:func:`jump_kernel`): the exponent
  ``g`` of the ID / LID decay ``p_ij = w(|i - j|)^g / sum_k w(|i - k|)^g``, or free rows;
* ``"dwell"``: holding times only.

Every function returns arrays with the flattened posterior draws first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from ..errors import ParameterError

#: why a click-to-click posterior cannot parametrise a walk measure, and what to fit
CLICK_TO_CLICK = (
    "this posterior (spec {spec!r}) learned click-to-click transitions: after a click on "
    "rank i, where the next click lands.  P@H's walk moves one rank per examination, "
    "clicked or not, so those frequencies are not its per-step moves and scoring with them "
    "scores another chain (it can reverse system rankings).  Fit the walk itself: "
    "`bayeschain fit LOG -o post.nc` (spec 'walk'; 'walk-relevance' for drwbm, "
    "'walk-session' for MsM)")


def draws_of(posterior, name: str) -> np.ndarray:
    """A posterior variable flattened to ``(draws, ...)``."""
    da = posterior.posterior[name]
    return da.stack(sample=("chain", "draw")).transpose("sample", ...).values


def _walk(posterior, measure: str):
    """The ``walk`` variable of a posterior that parametrises the walk, or an error that
    says what the posterior is and what to fit."""
    attrs = posterior.attrs
    kind = attrs.get("parametrises")
    if kind == "click-to-click":
        raise ParameterError(f"{measure}: " + CLICK_TO_CLICK.format(
            spec=attrs.get("spec_name")))
    post = posterior.posterior
    if "walk" not in post:
        raise ParameterError(f"{measure}: the posterior (spec {attrs.get('spec_name')!r}) "
                             f"has no walk parameters; fit the walk with the spec 'walk'")
    return post["walk"]


def walk_parameters(posterior) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward probability of the walk at each rank, ``(draws, ranks)``.

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
    if posterior.attrs.get("boundary", "leave") != "leave":
        raise ParameterError("this posterior is MsM's session walk (its last rank's forward "
                             "mass is spread over the other moves, Algorithm 1 of the MsM "
                             "paper), not the walk P@H scores: fit the spec 'walk'")
    w = draws_of(posterior, "walk")                             # (draws, rank, move)
    moves = list(walk["move"].values)
    return w[..., moves.index("forward")], w[..., moves.index("backward")]


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
    level = int(posterior.attrs.get("relevance_level", -1))
    return default if level < 0 else level


def session_parameters(posterior) -> dict[str, np.ndarray]:
    """MsM's ``p, q, r, s``, each ``(draws,)``, from MsM's session walk (spec
    ``walk-session``: moves shared by all ranks, Algorithm 1's boundaries, fitted to a
    log that tells whether each session went on)."""
    walk = _walk(posterior, "MsM")
    attrs = posterior.attrs
    if "relevance" in walk.dims:
        raise ParameterError("MsM takes one p, q, r, s; this posterior's moves depend on "
                             "relevance (fit the spec 'walk-session')")
    if attrs.get("boundary", "leave") != "rescale":
        raise ParameterError("MsM scores its own session walk (rank 1's backward and the "
                             "last rank's forward mass spread over the other moves): fit "
                             "the spec 'walk-session'")
    if not int(attrs.get("sessions_observed", 1)):
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


def holding_rates(posterior, ranks: int | None = None) -> np.ndarray:
    """Exponential dwell rates ``mu`` per rank, ``(draws, ranks)`` (MPcont)."""
    from ..browsing.base import extend_ranks

    if "holding_rate" not in posterior.posterior:
        raise ParameterError(f"the posterior (spec {posterior.attrs.get('spec_name')!r}) has "
                             f"no holding rates; fit a spec with a [holding] section (e.g. "
                             f"'walk')")
    mu = draws_of(posterior, "holding_rate")
    return mu if ranks is None else extend_ranks(mu, ranks)


#: the posterior variables of a learned jump kernel (``[jumps]``, Markov Precision)
JUMP_VARIABLES = ("jump_exponent", "jump")


class JumpKernel(NamedTuple):
    """Where the next click lands, learned from a log (``[jumps]``):

    * ``kind="exponent"``: ``family`` ``"ID"`` or ``"LID"``, ``draws`` the exponents ``g``
      ``(draws,)`` of ``p_ij = w(|i - j|)^g / sum_k w(|i - k|)^g``;
    * ``kind="matrix"``: ``family="free"``, ``draws`` the jump rows ``(draws, R, R)``
      between ranks ``1..R`` (row-stochastic, zero diagonal).
    """

    kind: str
    family: str
    draws: np.ndarray


def has_jumps(posterior) -> bool:
    """Whether the posterior learned a jump kernel (``jump_exponent`` or ``jump``)."""
    return any(name in posterior.posterior for name in JUMP_VARIABLES)


def jump_family(posterior) -> str | None:
    """The ``[jumps]`` family (``"free"``, ``"ID"``, ``"LID"``) the posterior was fitted with:
    its attr ``jump_family`` (:func:`posterior_from_parameters`), else the ``family`` of the
    ``[jumps]`` table of its spec's TOML text; None when neither says."""
    attrs = posterior.attrs
    if attrs.get("jump_family"):
        return str(attrs["jump_family"])
    if not attrs.get("spec"):
        return None
    import tomllib

    try:
        table = tomllib.loads(str(attrs["spec"])).get("jumps", {})
    except tomllib.TOMLDecodeError:
        return None
    family = table.get("family") if isinstance(table, dict) else None
    return str(family) if family is not None else None


def jump_kernel(posterior) -> JumpKernel:
    """The learned jump kernel of Markov Precision, draws first (:class:`JumpKernel`).

    A posterior of a distance-decay family (spec ``jumps-id``, or ``family = "LID"``)
    gives its exponent ``jump_exponent`` (its ``jump`` matrix is that decay on the fitted
    ranks only): the kernel holds at every rank distance, so lists of any length are
    scored.  A free-rows posterior (spec ``jumps-free``) gives ``jump``.  Refuses a
    posterior without jumps (a walk, click-to-click transitions, dwell times).
    """
    post = posterior.posterior
    attrs = posterior.attrs
    if not has_jumps(posterior):
        raise ParameterError(f"the posterior (spec {attrs.get('spec_name')!r}) has no jump "
                             f"kernel (jump_exponent or jump): Markov Precision learns where "
                             f"the next click lands from the specs 'jumps-id' (ID decay, "
                             f"learned exponent) or 'jumps-free' (free rows)")
    if "jump_exponent" not in post:
        return JumpKernel("matrix", "free", draws_of(posterior, "jump"))
    family = jump_family(posterior)
    if family not in ("ID", "LID"):
        raise ParameterError(f"the posterior (spec {attrs.get('spec_name')!r}) has a jump "
                             f"exponent but its provenance names no ID or LID decay (family "
                             f"{family!r}), so the weights it raises to that power are "
                             f"unknown")
    return JumpKernel("exponent", family, draws_of(posterior, "jump_exponent"))


def draw_slice(posterior, lo: int, hi: int):
    """The posterior restricted to flattened draws ``lo:hi`` (as one chain); its
    ``draw_offset`` attr keeps where they start among all the draws (what per-draw random
    streams are keyed on, so that a score does not depend on how draws are blocked)."""
    import xarray as xr

    from .posterior import Posterior

    flat = posterior.posterior.stack(sample=("chain", "draw")).isel(sample=slice(lo, hi))
    ds = flat.drop_vars(["sample", "chain", "draw"]).rename(sample="draw") \
        .expand_dims("chain").transpose("chain", "draw", ...)
    tree = xr.DataTree.from_dict({"posterior": ds})
    tree.attrs.update(posterior.attrs)         # which chain it parametrises, its boundary
    tree.attrs["draw_offset"] = int(posterior.attrs.get("draw_offset", 0)) + int(lo)
    return Posterior(tree)


def draw_indices(n_draws: int, max_draws: int | None, seed=None) -> np.ndarray:
    """The flattened draws to use: all, or ``max_draws`` of them at random (sorted)."""
    idx = np.arange(n_draws)
    if max_draws is not None and n_draws > max_draws:
        idx = np.sort(np.random.default_rng(seed).choice(idx, max_draws, replace=False))
    return idx


def page_tables(posterior, data, rows: np.ndarray, seed=None):
    """The walk's move rows and click probabilities for the page configurations of
    ``data`` (:class:`~bayeschain.inference.pages.PageData`, built for *any* log: the
    fitted one, or held-out pages) under the posterior draws ``rows``.

    Returns ``moves (draws, classes * ranks, 4)`` and ``repeat (draws, classes * ranks)``
    (clicking a result again right after clicking it; 0 when the posterior has none)
    indexed by ``data.move_index``, and ``click (draws, C)`` indexed by
    ``data.click_index``.  Ranks deeper than the fitted
    ones take the last fitted rank's values.  With attractiveness per document, a
    (query, document) pair the posterior never saw gets a draw from the fitted population
    of documents at its rank (``logit = a + b log rank + sd * N(0, 1)``, per draw).
    """
    from ..browsing.base import extend_ranks

    walk = _walk(posterior, "the walk's predictions")
    w = draws_of(posterior, "walk")[rows]
    classes = 2 if "relevance" in walk.dims else 1
    if classes != data.classes:
        raise ParameterError("the posterior's moves depend on relevance: build the pages "
                             "with the qrels it was fitted with" if classes == 2 else
                             "the pages were built with qrels but the posterior's moves do "
                             "not depend on relevance")
    moves = _stack_moves(w.reshape((len(rows), classes) + w.shape[-2:]), data.ranks)
    post = posterior.posterior
    if "repeat" in post:
        repeat = np.tile(extend_ranks(draws_of(posterior, "repeat")[rows], data.ranks),
                         (1, classes))
    else:
        repeat = np.zeros(moves.shape[:2])
    if data.documents is None:
        if "click" not in post:
            raise ParameterError("the posterior has attractiveness per document: build the "
                                 "pages with clicks='document'")
        click = extend_ranks(draws_of(posterior, "click")[rows], data.ranks)
        return moves, repeat, click
    if "attractiveness" not in post:
        raise ParameterError("the posterior has click probabilities per rank: build the "
                             "pages with clicks='rank'")
    att = post["attractiveness"]
    known = pd_index(att["query_id"].values, att["doc_id"].values)
    docs = data.documents
    where = known.get_indexer(pd_index(docs["query_id"].astype(str).to_numpy(),
                                       docs["doc_id"].astype(str).to_numpy()))
    alpha = draws_of(posterior, "attractiveness")[rows]
    trend = draws_of(posterior, "click_trend")[rows]                 # (draws, 3)
    rng = np.random.default_rng(seed)
    x = np.log(docs["median_rank"].to_numpy(dtype=float, na_value=np.nan))
    new = trend[:, :1] + trend[:, 1:2] * x[None, :] + trend[:, 2:3] * rng.standard_normal(
        (len(rows), x.size))
    click = np.where(where[None, :] >= 0, alpha[:, np.maximum(where, 0)],
                     1.0 / (1.0 + np.exp(-new)))
    return moves, repeat, click


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
    from ..browsing import build_chain
    from ..browsing.base import extend_ranks

    p, q = walk_parameters(posterior)
    chain = build_chain("rwbm", int(length), p=extend_ranks(p, length),
                        q=extend_ranks(q, length))
    return chains.expected_visits(chain, check=False)


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
    if posterior.attrs.get("boundary", "leave") == "leave":
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


def posterior_from_parameters(parameters: Mapping[str, np.ndarray], *,
                              boundary: str = "leave", relevance_level: int = 1,
                              jump_family: str | None = None):
    """A one-chain posterior of the walk from parameter arrays ``(draws, ...)`` (tests,
    what-if runs):

    * ``walk``: ``(draws, 4)`` moves shared by all ranks, or ``(draws, ranks, 4)``, in the
      order forward, backward, reformulate, stop;
    * ``walk_by_relevance``: ``(draws, 2, 4)`` or ``(draws, 2, ranks, 4)``: moves after
      examining a non-relevant (index 0) and a relevant (index 1) document
      (``PatH(model='drwbm')``);
    * ``click``: ``(draws, ranks)`` click probability per examination (click prediction,
      predictive checks);
    * ``holding_rate``: ``(draws, ranks)``;
    * ``jump_exponent``: ``(draws,)`` exponents ``g >= 0`` of the ``jump_family`` (``"ID"``,
      the default, or ``"LID"``) distance decay, as the spec ``jumps-id`` learns them;
    * ``jump``: ``(draws, R, R)`` free jump rows (row-stochastic, zero diagonal), as the
      spec ``jumps-free`` learns them (``jump_family`` ``"free"``).

    ``boundary`` is the walk's rule at a page's last rank (``"rescale"``: MsM's session
    walk), ``relevance_level`` the lowest relevant grade of ``walk_by_relevance``.  A
    posterior with jumps parametrises the click-to-click chain (Markov Precision's), so it
    cannot also hold a walk.
    """
    import xarray as xr

    from .examination import MOVES
    from .pages import CLASSES
    from .posterior import Posterior

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
            ranks = mu.shape[1] if mu is not None else (
                np.shape(parameters["click"])[1] if "click" in parameters else 1)
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
    family = _jump_variables(parameters, jump_family, variables)
    kind = "walk" if "walk" in variables else "click-to-click" if family else "dwell"
    tree = xr.DataTree.from_dict({"posterior": xr.Dataset(variables)})
    tree.attrs.update({"parametrises": kind,
                       "spec_name": "posterior_from_parameters", "boundary": boundary,
                       "relevance_level": int(relevance_level)})
    if family:
        tree.attrs["jump_family"] = family
    return Posterior(tree)


def _jump_variables(parameters: Mapping[str, np.ndarray], family: str | None,
                    variables: dict) -> str | None:
    """``jump_exponent`` / ``jump`` of :func:`posterior_from_parameters` into
    ``variables``; their family (None without jumps)."""
    import xarray as xr

    given = [k for k in JUMP_VARIABLES if k in parameters]
    if not given:
        if family is not None:
            raise ParameterError("jump_family without jump_exponent or jump")
        return None
    if "walk" in variables:
        raise ParameterError("a posterior of jumps parametrises the click-to-click chain, "
                             "not the walk: give walk or jump parameters, not both")
    if len(given) == 2:
        raise ParameterError("give jump_exponent (ID / LID decay) or jump (free rows), "
                             "not both")
    if given == ["jump_exponent"]:
        family = "ID" if family is None else family
        if family not in ("ID", "LID"):
            raise ParameterError(f"jump_family of a jump exponent must be 'ID' or 'LID', "
                                 f"got {family!r}")
        g = np.asarray(parameters["jump_exponent"], dtype=float)
        if g.ndim != 1 or g.size == 0 or not np.all(np.isfinite(g)) or np.any(g < 0):
            raise ParameterError("jump_exponent must be (draws,) finite numbers >= 0")
        variables["jump_exponent"] = xr.DataArray(g[None], dims=("chain", "draw"))
        return family
    if family not in (None, "free"):
        raise ParameterError(f"free jump rows are of the family 'free', not {family!r}")
    p = np.asarray(parameters["jump"], dtype=float)
    if p.ndim != 3 or p.shape[1] != p.shape[2] or p.shape[1] < 2:
        raise ParameterError("jump must be (draws, R, R) with R >= 2 ranks")
    ranks = np.arange(p.shape[1])
    if np.any(p < 0) or not np.allclose(p.sum(-1), 1.0, rtol=0, atol=1e-9) \
            or np.any(p[:, ranks, ranks] != 0):
        raise ParameterError("jump: each row must be probabilities over the other ranks "
                             "(zero diagonal) summing to 1")
    variables["jump"] = xr.DataArray(p[None], dims=("chain", "draw", "rank", "to_rank"),
                                     coords={"rank": ranks + 1, "to_rank": ranks + 1})
    return "free"
