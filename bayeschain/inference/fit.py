"""``bayeschain.fit``: from a click log (or its statistics) and a spec to a posterior.

``method = "conjugate"`` draws from the exact Dirichlet / Gamma posteriors of the spec's
sections (:mod:`bayeschain.inference.sections`); ``method = "nuts"`` builds the PyMC model
of :mod:`bayeschain.inference.models` and samples it with NUTS, then checks R-hat, ESS and
divergences and warns when they look bad.  The walk (``[examination]``) is fitted by
nutpie on its page likelihood (:mod:`bayeschain.inference.examination`).

A log with nothing to learn from (no clicks; no dwell times for a dwell model) is refused
before sampling: its posterior would be the prior.  Interrupting a fit (Ctrl-C) raises
:class:`SamplingInterrupted` (a ``KeyboardInterrupt``): nutpie and PyMC catch the interrupt
and return the draws made so far, which ``fit`` refuses to pass off as a posterior; so is
any fit that returns fewer draws than asked or non-finite ones.
"""

from __future__ import annotations

import signal
import threading
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import ParameterError
from ..io.clicklog import ClickLog
from ..io.clickstats import click_statistics
from ..io.clickstats_tables import ClickStats
from .data import ModelData, model_data
from .examination import MOVES
from .posterior import Posterior, make_posterior
from .sections import holding, sections_of, transitions
from .specs import ModelSpec, load_spec

RHAT_LIMIT = 1.01
ESS_LIMIT = 400


class SamplingInterrupted(KeyboardInterrupt):
    """A NUTS fit was interrupted (or stopped short): no posterior is returned."""


@contextmanager
def _interrupt_watch():
    """While sampling, note a SIGINT (and still raise ``KeyboardInterrupt`` as Python
    does): nutpie and PyMC catch it and return a partial trace, so the note is the only
    trace of the user's Ctrl-C.  Yields a dict whose ``"interrupted"`` says if one came."""
    seen = {"interrupted": False}
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous in (signal.SIG_IGN, None):
        yield seen
        return

    def handler(signum, frame):
        seen["interrupted"] = True
        if callable(previous):
            previous(signum, frame)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)


def _check_complete(seen: dict, arrays, chains: int, draws: int) -> None:
    """Refuse a partial trace: an interrupt during sampling, fewer (chain, draw) cells than
    asked, or non-finite draws (nutpie pads the chains it stopped with NaN)."""
    if seen["interrupted"]:
        raise SamplingInterrupted("sampling was interrupted")
    for values in arrays:
        values = np.asarray(values)
        got = tuple(values.shape[:2])
        if got != (chains, draws):
            raise SamplingInterrupted(f"sampling stopped short: {got[0]} chains x "
                                      f"{got[1] if len(got) > 1 else 0} draws of "
                                      f"{chains} x {draws}")
        if values.dtype.kind == "f" and not np.isfinite(values).all():
            missing = int((~np.isfinite(values)).reshape(chains, draws, -1).any(axis=2).sum())
            raise SamplingInterrupted(f"sampling stopped short: {missing} of "
                                      f"{chains * draws} draws missing")


def statistics_of(log_or_stats, backend: str = "duckdb") -> ClickStats:
    """Accept a ClickStats, a ClickLog, a canonical DataFrame or a path."""
    if isinstance(log_or_stats, ClickStats):
        return log_or_stats
    if isinstance(log_or_stats, ClickLog | pd.DataFrame):
        return click_statistics(log_or_stats, backend=backend)
    from ..io.clickformats import read_clicks

    return click_statistics(read_clicks(log_or_stats), backend=backend)


#: ``clicks = "auto"`` fits an attractiveness per (query, document) pair when the log shows
#: each pair on at least this many pages on average
AUTO_DOCUMENT_RECURRENCE = 20.0


def fit(log_or_stats, spec="walk", *, method: str | None = None,
        draws: int | None = None, chains: int | None = None, seed: int | None = None,
        tune: int | None = None, progress: bool = False, qrels=None,
        level: int = 1, min_ess: int | None = None, target_accept: float | None = None,
        report=None) -> Posterior:
    """Fit a user model to a click log.

    Parameters
    ----------
    log_or_stats : ClickLog, canonical DataFrame, or a click-log path (ClickStats only for
        the click-to-click and dwell specs: the walk needs the pages themselves)
    spec : ModelSpec, path to a TOML spec, or the name of a built-in spec (default
        ``"walk"``: the examination walk that P@H scores)
    method, draws, chains, seed, tune, min_ess, target_accept : override the spec's sampler
        settings (``min_ess > 0``, walk specs: ``draws`` is the most per chain and sampling
        stops once every quantity has R-hat <= 1.01 and bulk ESS >= ``min_ess``)
    report : ``report(draws_done, draws_max)`` while a walk is sampled (a progress display)
    progress : show the sampler's progress bar (NUTS)
    qrels, level : relevance judgements (``query_id, doc_id, relevance``) and the lowest
        relevant grade, for specs whose moves are ``by_relevance``
    """
    spec = spec if isinstance(spec, ModelSpec) else load_spec(spec)
    spec = spec.with_sampler(method=method, draws=draws, chains=chains, seed=seed, tune=tune,
                             min_ess=min_ess, target_accept=target_accept)
    trans = spec.section("transitions")
    if trans is not None:
        transitions.check_fit(trans)
    if spec.section("examination") is not None:
        return _fit_walk(log_or_stats, spec, qrels=qrels, level=level, progress=progress,
                         report=report)
    hold = spec.section("holding")
    if hold is not None and holding.needs_observations(hold):
        data = _data_with_dwell(log_or_stats, spec, trans)
    else:
        stats = statistics_of(log_or_stats)
        data = model_data(stats, spec.ranks, transitions.categories(trans))
    _check_learnable(data, spec)
    if spec.sampler["method"] == "conjugate":
        return _fit_conjugate(data, spec)
    from .models import fit_nuts

    s = spec.sampler
    with _interrupt_watch() as seen:
        posterior = fit_nuts(data, spec, progress=progress)
    _check_complete(seen, [da.values for da in posterior.posterior.data_vars.values()],
                    s["chains"], s["draws"])
    check_diagnostics(posterior)
    return posterior


def _data_with_dwell(log, spec: ModelSpec, trans) -> ModelData:
    """Per-rank counts plus each click's dwell observation (a dwell model on the log's
    own times needs the log, not its statistics)."""
    from dataclasses import replace

    from .dwell_data import dwell_observations

    if isinstance(log, ClickStats):
        raise ParameterError("a dwell model with censoring = 'examination' is fitted to the "
                             "click log itself (each click's times), not to aggregated "
                             "statistics")
    log = _as_log(log)
    data = model_data(statistics_of(log), spec.ranks, transitions.categories(trans))
    return replace(data, dwell_obs=dwell_observations(log, spec.ranks))


def _check_learnable(data: ModelData, spec: ModelSpec) -> None:
    """Refuse a log with nothing for the spec to learn (before any sampling or writing):
    its posterior would be the prior."""
    names = {n for n in ("transitions", "jumps", "holding") if spec.section(n) is not None}
    if names & {"transitions", "jumps"} and data.transitions.sum() + data.repeats.sum() == 0:
        raise ParameterError("the click log has no clicks: nothing to learn (the posterior "
                             "would be the prior)")
    usable = data.dwell_n.sum() if data.dwell_obs is None else \
        sum(v for k, v in data.dwell_obs.counts().items() if k in ("exact", "gap", "query"))
    if names == {"holding"} and usable == 0:
        raise ParameterError("the click log has no dwell times: nothing to learn for a "
                             "dwell model (the posterior would be the prior)")


def _fit_conjugate(data: ModelData, spec: ModelSpec) -> Posterior:
    """Exact draws of every section's posterior, from one random stream seeded by the
    spec (sections in the order of :data:`~bayeschain.inference.sections.SECTIONS`)."""
    s = spec.sampler
    rng = np.random.default_rng(s["seed"])
    variables = {}
    for module, table in sections_of(spec):
        variables.update(module.conjugate_draws(data, table, s["chains"], s["draws"], rng))
    return make_posterior(variables, spec=spec, data_digest=data.digest, seed=s["seed"],
                          method="conjugate", extra_attrs=_data_attrs(data))


def _as_log(log) -> ClickLog:
    if isinstance(log, ClickLog):
        return log
    if isinstance(log, ClickStats):
        raise ParameterError("the examination walk is fitted to the click log itself (its "
                             "pages and their clicks), not to aggregated statistics")
    if isinstance(log, pd.DataFrame):
        return ClickLog(log)
    from ..io.clickformats import read_clicks

    return read_clicks(log)


def _fit_walk(log, spec: ModelSpec, *, qrels, level: int, progress: bool,
              report=None) -> Posterior:
    """The examination walk (:mod:`bayeschain.inference.examination`) by NUTS (nutpie),
    with the spec's dwell rates drawn from their exact posterior alongside."""
    from .examination import WalkModel
    from .pages import CLASSES, document_recurrence, page_data
    from .walk_sampler import sample

    exam = spec.section("examination")
    s = spec.sampler
    if s["method"] != "nuts":
        raise ParameterError("the examination walk has no conjugate posterior; use "
                             "method='nuts'")
    log = _as_log(log)
    if exam["by_relevance"] and qrels is None:
        raise ParameterError(f"spec {spec.name!r} has moves by relevance: pass qrels")
    clicks = exam["clicks"]
    recurrence = document_recurrence(log)
    if clicks == "auto":
        clicks = "document" if recurrence >= AUTO_DOCUMENT_RECURRENCE else "pooled"
    data = page_data(log, clicks="document" if clicks == "document" else "rank",
                     qrels=qrels if exam["by_relevance"] else None, level=level,
                     default_length=spec.ranks)
    if data.report["clicks"] == 0:
        raise ParameterError("the click log has no clicks on its result pages: nothing to "
                             "learn (the posterior would be the prior)")
    model = WalkModel(data, moves=exam["moves"], clicks=clicks, backward=exam["backward"],
                      boundary=exam["boundary"], prior_sd=exam["prior_sd"],
                      deviation_sd=exam["deviation_sd"])
    with _interrupt_watch() as seen:
        draws, stats = sample(model, draws=s["draws"], tune=s["tune"], chains=s["chains"],
                              seed=s["seed"], progress=progress,
                              target_accept=s["target_accept"], min_ess=s["min_ess"],
                              report=report)
    # stopped on its diagnostics, a fit keeps the draws it checked; otherwise all it asked
    kept = next(iter(draws.values())).shape[1] if s["min_ess"] > 0 else s["draws"]
    _check_complete(seen, draws.values(), s["chains"], kept)
    ranks = np.arange(1, data.ranks + 1)
    walk = draws["walk"]
    if data.classes == 1:
        variables = {"walk": xr.DataArray(walk[:, :, 0], dims=("chain", "draw", "rank", "move"),
                                          coords={"rank": ranks, "move": list(MOVES)})}
    else:
        variables = {"walk": xr.DataArray(
            walk, dims=("chain", "draw", "relevance", "rank", "move"),
            coords={"relevance": list(CLASSES), "rank": ranks, "move": list(MOVES)})}
    if data.documents is None:
        variables["click"] = xr.DataArray(draws["click"], dims=("chain", "draw", "rank"),
                                          coords={"rank": ranks})
    else:
        docs = data.documents
        variables["attractiveness"] = xr.DataArray(
            draws["click"], dims=("chain", "draw", "document"),
            coords={"query_id": ("document", docs["query_id"].astype(str).to_numpy()),
                    "doc_id": ("document", docs["doc_id"].astype(str).to_numpy()),
                    "impressions": ("document", docs["impressions"].to_numpy()),
                    "median_rank": ("document", docs["median_rank"].to_numpy())})
    variables["repeat"] = xr.DataArray(draws["repeat"], dims=("chain", "draw", "rank"),
                                       coords={"rank": ranks})
    if "click_trend" in draws:
        variables["click_trend"] = xr.DataArray(
            draws["click_trend"], dims=("chain", "draw", "trend"),
            coords={"trend": ["intercept", "slope", "sd"]})
    hold = spec.section("holding")
    dwell_note = "no [holding] section"
    if hold is not None and holding.has_parameters(hold):
        dwell = model_data(statistics_of(log), data.ranks)
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
             "document_recurrence": round(recurrence, 3), "holding": dwell_note,
             "relevance_level": level if exam["by_relevance"] else -1}
    posterior = make_posterior(variables, spec=spec, data_digest=data.digest,
                               seed=s["seed"], method="nuts (nutpie)",
                               sample_stats=sample_stats, extra_attrs=attrs)
    check_diagnostics(posterior)
    return posterior


def _data_attrs(data: ModelData) -> dict:
    return {"transitions_observed": int(data.transitions.sum()),
            "repeats_left_out": int(data.repeats.sum()),
            "dwell_observed": int(data.dwell_n.sum()),
            "dwell_censored": int(data.dwell_censored.sum())}


def check_diagnostics(posterior: Posterior) -> pd.DataFrame:
    """R-hat, ESS and divergences of a NUTS fit, with a warning when any is off."""
    table = posterior.diagnostics()
    problems = []
    if (table["max_rhat"] > RHAT_LIMIT).any():
        problems.append(f"R-hat up to {table['max_rhat'].max():.3f} (> {RHAT_LIMIT})")
    if (table["min_ess"] < ESS_LIMIT).any():
        problems.append(f"bulk ESS down to {table['min_ess'].min():.0f} (< {ESS_LIMIT})")
    if posterior.divergences():
        problems.append(f"{posterior.divergences()} divergent transitions")
    if problems:
        warnings.warn("NUTS diagnostics: " + "; ".join(problems) + ". Run more tuning or "
                      "draws, raise target_accept, or simplify the model.", stacklevel=2)
    return table
