"""The fit of the examination walk (``[examination]``): the log's pages
(:mod:`.data`), the walk's density (:mod:`.model`), sampled by :mod:`.sampler` (or the
sampler the caller passes; the posterior's attr ``resampled`` says when draws diverged and
were sampled again), then the spec's dwell rates drawn from their exact posterior
alongside."""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from ...errors import ParameterError
from ...posterior.container import LAPLACE_DRAWS, Posterior, make_posterior
from ...posterior.vocabulary import MOVES
from ..clicks.data import model_data
from ..dwell import holding
from ..dwell.spec import has_parameters
from ..sampling import as_log, check_complete, check_diagnostics, interrupt_watch, statistics_of
from ..specs import ModelSpec
from . import sampler as walk_sampler
from .choice import log_likelihood_groups

#: ``clicks = "auto"`` fits an attractiveness per (query, document) pair when at least this
#: share of the log's impressions are of pairs shown ``min_impressions`` times or more
#: (the rarer pairs share a click chance per rank): on the training splits of
#: ``benchmarks/bench_click_models.py`` at 10 impressions CLARA2 0.63, WSCD 0.997, TREC Session
#: 2013 0 (no pair on 5 pages)
AUTO_DOCUMENT_SHARE = 0.25

#: ``documents = "auto"`` integrates the documents out by Laplace (``"mode"``) when the
#: log's pages show at least this many impressions (every position, the rarer pairs'
#: included) per document with an attractiveness of its own, and samples them with the
#: rest otherwise.  The Laplace route keeps the log-determinant of the documents' precision
#: to first order along the moves; that determinant's curvature along them is of the order
#: of one unit per document, the likelihood's of the order of one per impression, so the
#: route is trusted where documents are few beside impressions.  Measured
#: (``benchmarks/bench_laplace_point.py``): WSCD, 864 impressions per document, its
#: density's curvature within 4% of the exact Laplace marginal's, the walk as full NUTS's
#: in 53 s against 62 s; simulated logs at 100 per document (10^4 and 10^5 pairs) recover
#: the walk; CLARA2, 34 per document, bends up at its point (not a peak).  The walk with
#: damped re-clicks and click offsets by rank (``walk-reclick``) is measured far above
#: the threshold only: on 30% of WSCD's sessions (about 330 impressions per document) its
#: posterior within 0.8 posterior sd of full NUTS's
#: (``benchmarks/bench_document_effects.py --spec walk-reclick``); on WSCD's training
#: split (``bench_click_models.py``'s) full NUTS's held-out clicks
AUTO_LAPLACE_IMPRESSIONS = 100

#: ``tune = "auto"`` (the specs ``walk`` and ``walk-document-mode``): NUTS's tuning steps
#: on the documents' Laplace route, whose coordinates are whitened by the density's
#: precision at its point (the mass matrix nutpie adapts starts near the identity), and on
#: every other route (documents sampled, clicks per rank).  Measured with
#: the stopping rule (R-hat <= 1.01, bulk ESS >= 400; ``benchmarks/bench_laplace_costs.py
#: --parts accept --seeds 2026 1 2 --settings 500/0.9 250/0.9 150/0.9``, 2026-12-01): WSCD
#: 38.0 / 46.0 / 31.9 s at 500 steps, 27.4 / 36.8 / 29.0 s at 250, 31.8 / 35.2 / 26.9 s at
#: 150, no divergence; six simulated logs of 24 queries x 10 documents (3,000 and 12,000
#: sessions) 107.5 s in all at 500 (one divergence, sampled again at 0.99) against 68.1 s
#: at 250 (none); ``bayeschain fit`` on WSCD as a fresh process, seeds 2026 / 1 / 2 / 3:
#: 81.7 / 60.1 / 54.3 / 65.2 s at 500, 78.1 / 60.8 / 43.2 / 58.7 s at 250
#: (``benchmarks/RESULTS.md``).  The walk's own coordinates keep 500 (fewer made the
#: sampled route's WSCD fit take more draws at the default seed, 2026-11-29).  Not for
#: ``walk-reclick``: with damped re-clicks 250 steps on the Laplace route diverged on two
#: of three simulated logs (2026-12-01); that spec says 500
AUTO_TUNE = {"whitened": 250, "walk": 500}


def tuning_steps(tune: int | str, whitened: bool) -> int:
    """The spec's ``tune``, with ``"auto"`` read as :data:`AUTO_TUNE` says."""
    if tune != "auto":
        return int(tune)
    return AUTO_TUNE["whitened" if whitened else "walk"]


def auto_clicks(share: float, reclicks: str = "fresh") -> str:
    """What ``clicks = "auto"`` fits on a log whose pairs shown ``min_impressions`` times or
    more hold ``share`` of its impressions: ``"document"`` from :data:`AUTO_DOCUMENT_SHARE`
    on (but for the walk that decides once, ``reclicks = "once"``: clicks per rank),
    ``"pooled"`` otherwise."""
    return "document" if share >= AUTO_DOCUMENT_SHARE and reclicks != "once" else "pooled"


def auto_documents(documents, exam: dict) -> tuple[str, str]:
    """What ``documents = "auto"`` does with the documents table of a per-document fit
    (``impressions``, ``pooled_rank`` 0 for the pairs with an attractiveness of their
    own, the rarer pairs' pseudo-documents after them) and the spec's ``[examination]``:
    ``("mode", why)`` where the impressions of the table (every position of the fitted
    pages) are at least :data:`AUTO_LAPLACE_IMPRESSIONS` per pair of its own, for the walks
    the route is measured on (moves that do not depend on the click; fresh or damped
    re-clicks, with or without click offsets by rank: ``walk`` and ``walk-reclick`` on
    WSCD, the latter far above the threshold only); ``("sampled", why)`` otherwise or
    when no pair has one.  ``why`` says so, with the counts."""
    own = int((documents["pooled_rank"] == 0).sum())
    if not own:
        return "sampled", "documents = 'auto': no pair has an attractiveness of its own"
    if exam["click_moves"]:
        return "sampled", ("documents = 'auto': the Laplace route is not measured on the "
                           "walk with moves that depend on the click")
    shown = int(documents["impressions"].sum())
    per = shown / own
    counts = (f"{own:,} document{'s' if own > 1 else ''} of {'their' if own > 1 else 'its'}"
              f" own in {shown:,} impressions, {per:,.0f} per document")
    if per >= AUTO_LAPLACE_IMPRESSIONS:
        return "mode", (f"documents = 'auto' chose the Laplace route: {counts}, at least "
                        f"{AUTO_LAPLACE_IMPRESSIONS}")
    return "sampled", f"documents = 'auto': {counts}, fewer than {AUTO_LAPLACE_IMPRESSIONS}"


def _import_in_background(module: str) -> None:
    """Start importing ``module`` in a daemon thread (DuckDB releases the GIL while it
    reads a log out of core: nutpie's imports, 5 s here, then cost nothing)."""
    import importlib
    import threading

    def load():
        try:
            importlib.import_module(module)
        except Exception:     # noqa: BLE001 - the sampler's own import will say why
            pass

    threading.Thread(target=load, name=f"import {module}", daemon=True).start()


def fit_walk(log, spec: ModelSpec, *, qrels, level: int, progress: bool,
             report=None, sampler=None) -> Posterior:
    """The examination walk (:mod:`bayeschain.inference.walk.model`) by NUTS (nutpie),
    with the spec's dwell rates drawn from their exact posterior alongside."""
    from ...posterior.vocabulary import CLASSES
    from .data import page_data, recurring_share
    from .files import ClickLogFiles
    from .model import WalkModel

    exam = spec.section("examination")
    s = spec.sampler
    if s["method"] != "nuts":
        raise ParameterError("the examination walk has no conjugate posterior; use "
                             "method='nuts'")
    files = isinstance(log, ClickLogFiles)        # read out of core
    log = log if files else as_log(log)
    if exam["by_relevance"] and qrels is None:
        raise ParameterError(f"spec {spec.name!r} has moves by relevance: pass qrels")
    clicks = exam["clicks"]
    least = exam["min_impressions"]
    share = log.recurring_share(least) if files else recurring_share(log, least)
    once = exam["reclicks"] == "once"
    if clicks == "auto":
        clicks = auto_clicks(share, exam["reclicks"])
    damped = exam["reclicks"] == "damped"
    readers = exam["reader_pages"] if exam["readers"] != "one" else None
    if files:
        if readers is not None:
            raise ParameterError("readers by query or topic read the log's pages in memory: "
                                 "give the log as one file, without --out-of-core or "
                                 "--memory-limit")
        if clicks == "document" or exam["by_relevance"]:
            raise ParameterError("a log read out of core is fitted with clicks per rank and "
                                 "moves without relevance classes ("
                                 f"{share:.0%} of its impressions are of (query, "
                                 f"document) pairs shown {least} times or more: read "
                                 f"it into memory)")
        if once:
            raise ParameterError("the walk that decides once reads its pages' click "
                                 "sequences in memory: give the log as one file, without "
                                 "--out-of-core or --memory-limit")
        _import_in_background("nutpie")      # seconds of imports while DuckDB counts
        data = log.page_data(spec.ranks, reclicks=damped)
    else:
        data = page_data(log, clicks="document" if clicks == "document" else "rank",
                         qrels=qrels if exam["by_relevance"] else None, level=level,
                         default_length=spec.ranks, reclicks=damped, min_impressions=least,
                         readers=readers, readers_by=exam["readers"] if readers else "query")
    if data.report["clicks"] == 0:
        raise ParameterError("the click log has no clicks on its result pages: nothing to "
                             "learn (the posterior would be the prior)")
    # the documents integrated out by query, the rarer pairs' chances per rank sampled
    # with the walk (a log whose every pair is rare has no document to integrate out)
    documents, chosen = exam["documents"], ""
    if readers is not None and clicks == "document":
        if documents == "mode":
            raise ParameterError("readers by query or topic are fitted with the documents "
                                 "sampled by NUTS (documents = 'sampled' or 'auto'): the "
                                 "Laplace route is not built for them")
        if documents == "auto":
            documents, chosen = "sampled", (f"documents = 'auto': sampled with readers by "
                                            f"{exam['readers']} (the Laplace route is not "
                                            f"built for them)")
    if clicks == "document" and documents == "auto":
        documents, chosen = auto_documents(data.documents, exam)
    at_mode = (clicks == "document" and documents == "mode"
               and bool((data.documents["pooled_rank"] == 0).any()))

    def walk_model(centred_documents: bool) -> WalkModel:
        return WalkModel(data, moves=exam["moves"], clicks=clicks, backward=exam["backward"],
                         click_moves=exam["click_moves"], boundary=exam["boundary"],
                         prior_sd=exam["prior_sd"], deviation_sd=exam["deviation_sd"],
                         centred_documents=centred_documents,
                         rank_offsets=exam["rank_offsets"], reclicks=exam["reclicks"])

    model = walk_model(not at_mode)
    target, route, improper = model, {}, ""
    with interrupt_watch() as seen:
        if at_mode:
            from .documents import DocumentsAtMode, posterior_mode

            mode, info = posterior_mode(model, seed=s["seed"])
            target = DocumentsAtMode(model, mode, measured=info["second_order"])
            if target.bends_up:
                # not a peak: NUTS would run off (CLARA2: over 20 minutes, no end)
                improper = (f"bends up at its point in {target.bends_up} "
                            f"direction{'s' if target.bends_up > 1 else ''}")
                if not chosen:       # asked for: say so (chosen by 'auto': the route says)
                    warnings.warn(f"the documents' Laplace approximation is not proper "
                                  f"here (its density {improper}): the documents are "
                                  f"sampled by NUTS with the rest instead, as with "
                                  f"documents = 'sampled'", stacklevel=3)
                at_mode = False
                model = target = walk_model(True)
        # NUTS's tuning steps, once the route is settled (the whitened route's own)
        tune = tuning_steps(s["tune"], at_mode and not once)
        if at_mode:
            troubles = ([] if info["converged"] else
                        [f"its point did not converge ({info['message']})"])
            if target.laplace.floored:
                troubles.append(f"{target.laplace.floored} eigenvalues of the documents' "
                                f"precision were raised to a floor (not a mode there)")
            if troubles:
                warnings.warn(f"the documents' Laplace approximation: {'; '.join(troubles)}:"
                              f" the walk's posterior may be off" + (
                                  " (the route documents = 'auto' chose; documents = "
                                  "'sampled' samples every document)" if chosen else ""),
                              stacklevel=3)
            sampled_too = "".join(           # what NUTS samples beside the walk's
                part for part, on in ((", kappa of the damped re-clicks",
                                       model.reclicks == "damped"),
                                      (", the click offsets by rank", model.rank_offsets),
                                      (", and the rarer pairs' click chances per rank",
                                       target.pooled.size)) if on)
            steps, rounds = info["peak_steps"], len(info["gains"])
            point = (f"{rounds} rounds to the point" if info["rounds"] == "converged" else
                     f"{rounds} rounds ({info['rounds']})")
            if steps:
                point += (f", then {steps} Newton step{'s' if steps > 1 else ''} on the "
                          f"exact marginal" + (" to its maximum" if info["converged"]
                                               else ""))
            route = {"document_effects": (
                f"integrated out by a Laplace approximation about their mode ("
                f"{point}, its derivatives, up to "
                f"{target.layout.n_places} documents a query: "
                f"{info['evaluations'] + target.evaluations} evaluations of the density"
                f"{'' if info['converged'] else ', not converged: ' + info['message']}); "
                f"NUTS on the walk, the repeats and the trend of attractiveness{sampled_too}"
                f" (in coordinates whitened by the density's precision at the point, "
                f"{tune} tuning steps); "
                f"each draw's documents from their Laplace approximation given the draw"
                f"{'; ' + chosen if chosen else ''}")}
        elif clicks == "document":
            why = (f"{chosen}; its" if chosen else "documents = 'mode' asked, but its")
            route = {"document_effects": "sampled by NUTS with the rest" + (
                f" ({why} Laplace density {improper})" if improper else
                " (documents = 'mode' asked, but no pair has an attractiveness of its own "
                "to integrate out)" if documents == "mode" else f" ({chosen})" if chosen
                else "")}
        if once:
            from .once import DecidedOnce, click_sequences

            target = DecidedOnce(model, click_sequences(log, data))
            route["likelihood"] = (
                f"the click decision made once (a result examined before clicks with "
                f"second_look x its probability): a forward recursion over the "
                f"{target.sequences.size:,} distinct click sequences of the pages")
        run = sampler or walk_sampler.sample
        if at_mode and not once:   # the documents at their mode: NUTS's first tuning
            target = target.whitened()  # steps move in whitened coordinates
        draws, stats = run(target, draws=s["draws"], tune=tune, chains=s["chains"],
                           seed=s["seed"], progress=progress,
                           target_accept=s["target_accept"], min_ess=s["min_ess"],
                           report=report)
    if "resampled" in stats.attrs:
        route["resampled"] = stats.attrs["resampled"]
    # the sampler's coordinates (whitened on the Laplace route), which the target reads;
    # a stand-in sampler may give the quantities only
    theta = draws.pop("theta", None)
    # stopped on its diagnostics, a fit keeps the draws it checked; otherwise all it asked
    kept = next(iter(draws.values())).shape[1] if s["min_ess"] > 0 else s["draws"]
    check_complete(seen, draws.values(), s["chains"], kept)
    groups, ll_attrs = log_likelihood_groups(target, theta) if theta is not None else ({}, {})
    ranks = np.arange(1, data.ranks + 1)
    walk = draws["walk"]

    def moves(values):
        if data.classes == 1:
            return xr.DataArray(values[:, :, 0], dims=("chain", "draw", "rank", "move"),
                                coords={"rank": ranks, "move": list(MOVES)})
        return xr.DataArray(values, dims=("chain", "draw", "relevance", "rank", "move"),
                            coords={"relevance": list(CLASSES), "rank": ranks,
                                    "move": list(MOVES)})

    variables = {name: moves(draws[name]) for name in ("walk", "walk_skip", "walk_click")
                 if name in draws}
    if data.documents is None:
        variables["click"] = xr.DataArray(draws["click"], dims=("chain", "draw", "rank"),
                                          coords={"rank": ranks})
    else:
        docs = data.documents
        own = docs["pooled_rank"].to_numpy() == 0
        if not own.all():
            # the pseudo-documents of the rarer pairs: their click chance at each rank
            # where the log shows such pairs (before the rank's offset, as attractiveness);
            # a dim of its own, as those ranks may be only some of the walk's
            variables["pooled_click"] = xr.DataArray(
                draws["click"][:, :, ~own], dims=("chain", "draw", "pooled_rank"),
                coords={"pooled_rank": docs["pooled_rank"].to_numpy()[~own]},
                attrs={"min_impressions": least})
        docs = docs[own]
        variables["attractiveness"] = xr.DataArray(
            draws["click"][:, :, own], dims=("chain", "draw", "document"),
            # documents the sampler did not check are the route's Laplace draws
            attrs={"draws": LAPLACE_DRAWS} if "click" in getattr(target, "unchecked", ())
            else {},
            coords={"query_id": ("document", docs["query_id"].astype(str).to_numpy()),
                    "doc_id": ("document", docs["doc_id"].astype(str).to_numpy()),
                    "impressions": ("document", docs["impressions"].to_numpy()),
                    "median_rank": ("document", docs["median_rank"].to_numpy())})
    variables["repeat"] = xr.DataArray(draws["repeat"], dims=("chain", "draw", "rank"),
                                       coords={"rank": ranks})
    for name in ("reclick", "second_look"):
        if name in draws:
            variables[name] = xr.DataArray(draws[name], dims=("chain", "draw"))
    if "reader_effect" in draws:
        names = list(model.reader_logits)
        variables["reader_effect"] = xr.DataArray(
            draws["reader_effect"], dims=("chain", "draw", "reader", "reader_logit"),
            coords={"reader": data.readers.astype(str), "reader_logit": names,
                    "pages": ("reader", data.reader_pages)})
        variables["reader_spread"] = xr.DataArray(draws["reader_spread"],
                                                  dims=("chain", "draw", "reader_logit"),
                                                  coords={"reader_logit": names})
    if "click_offset" in draws:
        variables["click_offset"] = xr.DataArray(draws["click_offset"],
                                                 dims=("chain", "draw", "rank"),
                                                 coords={"rank": ranks})
    if "click_trend" in draws:
        variables["click_trend"] = xr.DataArray(
            draws["click_trend"], dims=("chain", "draw", "trend"),
            coords={"trend": ["intercept", "slope", "sd"]})
    hold = spec.section("holding")
    dwell_note = "no [holding] section"
    dwell_seen = {}
    if hold is not None and has_parameters(hold):
        dwell = model_data(log.statistics(spec.ranks) if files else      # its tables
                           statistics_of(log, backend="pandas"), data.ranks)
        dwell_seen = {"dwell_observed": int(dwell.dwell_n.sum())}
        if dwell.dwell_n.sum() > 0:    # the exact posterior, seeded as a conjugate fit
            rates = holding.conjugate_draws(dwell, hold, walk.shape[0], walk.shape[1],
                                            np.random.default_rng(s["seed"]))["holding_rate"]
            variables["holding_rate"] = rates.assign_coords(
                chain=np.arange(walk.shape[0]), draw=np.arange(walk.shape[1]))
            dwell_note = f"{int(dwell.dwell_n.sum())} dwell times"
        else:        # nothing learned: no holding rates rather than the prior's
            dwell_note = "the log has no dwell times: no holding rates"
    sample_stats = xr.Dataset({"diverging": (("chain", "draw"),
                                             stats["diverging"].values.astype(bool))})
    attrs = {"click_level": clicks if clicks != "pooled" else "rank",
             "boundary": exam["boundary"], "sessions_observed": int(data.sessions),
             "pages": data.report["pages"], "clicks": data.report["clicks"],
             "empty_pages": data.report["empty_pages"],
             "page_configurations": data.n_configs, "longest_page": data.ranks,
             "recurring_share": round(share, 4), "min_impressions": least,
             "holding": dwell_note,
             "relevance_level": level if exam["by_relevance"] else -1, **dwell_seen,
             **({"readers_by": exam["readers"]} if readers else {}),
             **ll_attrs, **route}
    posterior = make_posterior(variables, spec=spec, data_digest=data.digest,
                               seed=s["seed"], method="nuts (nutpie)",
                               sample_stats=sample_stats, extra_attrs=attrs,
                               extra_groups=groups)
    check_diagnostics(posterior)
    return posterior
