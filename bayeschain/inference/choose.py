"""Which walk a log supports: each walk spec fitted to the same training sessions, ranked
by PSIS-LOO (:mod:`bayeschain.inference.walk.choice`) beside the held-out click metrics of
the click-model field, ``E[H]`` and the sampler's diagnostics (``bayeschain choose``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import ParameterError

if TYPE_CHECKING:
    import pandas as pd


def documents_route(post) -> str:
    """How a walk's posterior got its documents: ``"Laplace"`` (integrated out: their
    draws are marked :data:`~bayeschain.posterior.container.LAPLACE_DRAWS`), ``"NUTS"``
    (sampled with the rest) or ``"-"`` (clicks per rank)."""
    from ..posterior.container import LAPLACE_DRAWS

    if "attractiveness" not in post.posterior:
        return "-"
    laplace = post.posterior["attractiveness"].attrs.get("draws") == LAPLACE_DRAWS
    return "Laplace" if laplace else "NUTS"


def choose_walks(log, specs, *, heldout: float = 0.25, seed: int = 0, draws=None,
                 known_queries: bool = True, progress: bool = False,
                 say=None) -> pd.DataFrame:
    """Fit each walk spec to the sessions of ``log`` outside a ``heldout`` share (split by
    session with ``seed``) and rank them: :func:`compare_walks`'s PSIS-LOO columns, the
    held-out click metrics on the other sessions' pages (``heldout_ll, perplexity,
    cond_perplexity``, on ``heldout_ranks`` ranks of ``heldout_pages`` pages; only pages
    whose query occurs in training with ``known_queries``, the click-model field's rule),
    ``E[H]`` on a 10-result page with its 95% interval, the fit's seconds, its
    diagnostics and how it got its documents (:func:`documents_route`); and each walk's
    held-out perplexity minus the lowest's, ``perplexity_gap``, with the 90% interval of a
    paired bootstrap over the held-out pages (``perplexity_gap_low``, ``_high``; the
    lowest's row has ``lowest_perplexity``;
    :func:`~bayeschain.inference.walk.prediction.perplexity_difference`): an interval
    that holds 0 is a difference those pages cannot resolve.  The lowest is chosen on
    those same pages, so the others' differences lean a little towards "worse".
    ``say(text)`` hears about each fit."""
    import time

    import pandas as pd

    from ..posterior.walk import expected_visits
    from .fit import fit
    from .walk.choice import compare_walks
    from .walk.prediction import (
        METRIC_RANKS,
        click_metrics,
        heldout_click_arrays,
        perplexity_difference,
    )

    for spec in specs:
        exam = spec.section("examination")
        if exam is None or exam["by_relevance"]:
            raise ParameterError(f"spec {spec.name!r} is not a walk fitted to clicks alone: "
                                 f"choose compares the walk specs (walk, walk-click, "
                                 f"walk-reclick, walk-once, walk-shared, or files like them)")
    if len({s.name for s in specs}) != len(specs):
        raise ParameterError("give each spec once")
    train, test = log.split(heldout, seed=seed)
    known = set(train.events["query_id"].astype(str)) if known_queries else None
    posts, extra, predicted = {}, {}, {}
    for spec in specs:
        if say is not None:
            say(f"fitting {spec.name} to {train!r}")
        start = time.perf_counter()
        post = fit(train, spec, draws=draws, progress=progress)
        seconds = time.perf_counter() - start
        posts[spec.name] = post
        ranks = min(METRIC_RANKS, int(post.attrs["longest_page"]))
        arrays = heldout_click_arrays(post, test, queries=known, ranks=ranks, seed=0)
        m = click_metrics(*arrays)
        predicted[spec.name] = arrays[:2]
        h = expected_visits(post, 10).sum(axis=1)
        diag = post.diagnostics(sampled_only=True)
        extra[spec.name] = {"heldout_ll": m.log_likelihood, "perplexity": m.perplexity,
                            "cond_perplexity": m.conditional_perplexity,
                            "heldout_ranks": ranks, "heldout_pages": m.pages,
                            "E[H]": f"{h.mean():.2f} [{np.quantile(h, 0.025):.2f}, "
                                    f"{np.quantile(h, 0.975):.2f}]",
                            "fit_seconds": seconds,
                            "documents": documents_route(post),
                            "max_rhat": float(diag["max_rhat"].max()),
                            "min_ess": float(diag["min_ess"].min()),
                            "divergences": int(post.divergences())}
    lowest = min(extra, key=lambda name: extra[name]["perplexity"])
    clicked, p_lowest = predicted[lowest]
    for name, (seen, p_click) in predicted.items():
        # every spec reads the same held-out pages (serp_id order) on the same ranks
        if seen.shape != clicked.shape or not np.array_equal(seen, clicked):
            raise RuntimeError(f"{name} and {lowest} were scored on different held-out pages")
        d = perplexity_difference(clicked, p_click, p_lowest, seed=0)
        extra[name].update(perplexity_gap=d.difference, perplexity_gap_low=d.low,
                           perplexity_gap_high=d.high, lowest_perplexity=name == lowest)
    return compare_walks(posts).join(pd.DataFrame(extra).T)
