"""``bayeschain.fit``: from a click log (or its statistics) and a spec to a posterior.

``method = "conjugate"`` draws from the exact Dirichlet / Gamma posteriors
(:mod:`bayeschain.inference.conjugate`); ``method = "nuts"`` builds the PyMC model of
:mod:`bayeschain.inference.models` and samples it with NUTS, then checks R-hat, ESS and
divergences and warns when they look bad.
"""

from __future__ import annotations

import dataclasses
import hashlib
import warnings

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import ParameterError
from ..io.clicklog import ClickLog
from ..io.clickstats import ClickStats, click_statistics
from .conjugate import dirichlet_parameters, gamma_parameters, sample_dirichlet, sample_gamma
from .data import ModelData, model_data
from .posterior import Posterior, make_posterior
from .specs import ModelSpec, load_spec

RHAT_LIMIT = 1.01
ESS_LIMIT = 400


def statistics_of(log_or_stats, backend: str = "duckdb") -> ClickStats:
    """Accept a ClickStats, a ClickLog, a canonical DataFrame or a path."""
    if isinstance(log_or_stats, ClickStats):
        return log_or_stats
    if isinstance(log_or_stats, ClickLog | pd.DataFrame):
        return click_statistics(log_or_stats, backend=backend)
    from ..io.clickformats import read_clicks

    return click_statistics(read_clicks(log_or_stats), backend=backend)


def fit(log_or_stats, spec="rwbm-conjugate", *, method: str | None = None,
        draws: int | None = None, chains: int | None = None, seed: int | None = None,
        tune: int | None = None, progress: bool = False, qrels=None,
        level: int = 1) -> Posterior:
    """Fit a user model to a click log.

    Parameters
    ----------
    log_or_stats : ClickLog, ClickStats, canonical DataFrame, or a click-log path
    spec : ModelSpec, path to a TOML spec, or the name of a built-in spec
    method, draws, chains, seed, tune : override the spec's sampler settings
    progress : show the sampler's progress bar (NUTS)
    qrels, level : relevance judgements (``query_id, doc_id, relevance``) and the lowest
        relevant grade, for specs whose transitions are ``by_relevance``
    """
    spec = spec if isinstance(spec, ModelSpec) else load_spec(spec)
    spec = spec.with_sampler(method=method, draws=draws, chains=chains, seed=seed, tune=tune)
    trans = spec.section("transitions")
    if trans is not None and trans["by_relevance"]:
        return _fit_by_relevance(log_or_stats, spec, qrels, level)
    stats = statistics_of(log_or_stats)
    cats = trans["categories"] if trans else ("forward", "backward", "stop", "reformulate")
    data = model_data(stats, spec.ranks, cats)
    if spec.sampler["method"] == "conjugate":
        if spec.section("examination") is not None:
            raise ParameterError("the hidden-examination walk has no conjugate posterior; "
                                 "use method='nuts'")
        jumps = spec.section("jumps")
        if jumps is not None and jumps["family"] != "free":
            raise ParameterError("distance-decay jumps (ID / LID) have no conjugate "
                                 "posterior; use method='nuts'")
        return _fit_conjugate(data, spec)
    from .models import fit_nuts

    posterior = fit_nuts(data, spec, progress=progress)
    check_diagnostics(posterior)
    return posterior


def _coords(data: ModelData) -> dict:
    return {"rank": np.arange(1, data.ranks + 1), "category": list(data.categories)}


def _fit_conjugate(data: ModelData, spec: ModelSpec) -> Posterior:
    s = spec.sampler
    rng = np.random.default_rng(s["seed"])
    chains, draws = s["chains"], s["draws"]
    coords = _coords(data)
    variables = {}
    trans = spec.section("transitions")
    if trans is not None:
        if trans["parametrisation"] == "pooled":
            raise ParameterError("the pooled (hierarchical) transition model has no conjugate "
                                 "posterior; use method='nuts'")
        shared = trans["parametrisation"] == "shared"
        conc = dirichlet_parameters(data, trans["prior"], shared)
        probs = sample_dirichlet(conc, chains, draws, rng)
        if shared:
            probs = np.broadcast_to(probs[:, :, None, :], (chains, draws, data.ranks,
                                                            len(data.categories)))
        variables["transition"] = xr.DataArray(
            probs, dims=("chain", "draw", "rank", "category"), coords=coords)
    jumps = spec.section("jumps")
    if jumps is not None:
        from .jumps import free_rows_posterior

        conc = free_rows_posterior(data.moves, float(jumps["prior"][0]))
        rows = sample_dirichlet(conc, chains, draws, rng)
        variables["jump"] = xr.DataArray(rows, dims=("chain", "draw", "rank", "to_rank"),
                                         coords={"rank": coords["rank"],
                                                 "to_rank": coords["rank"]})
    hold = spec.section("holding")
    if hold is not None and hold["likelihood"] != "none":
        if hold["likelihood"] != "exponential" or hold["parametrisation"] == "pooled":
            raise ParameterError(f"{hold['likelihood']} dwell times with "
                                 f"{hold['parametrisation']} rates have no conjugate "
                                 f"posterior; use method='nuts'")
        shared = hold["parametrisation"] == "shared"
        shape, rate = gamma_parameters(data, hold["prior"], shared)
        mu = sample_gamma(shape, rate, chains, draws, rng)
        if shared:
            mu = np.broadcast_to(mu[:, :, None], (chains, draws, data.ranks))
        variables["holding_rate"] = xr.DataArray(
            mu, dims=("chain", "draw", "rank"), coords={"rank": coords["rank"]})
    return make_posterior(variables, spec=spec, data_digest=data.digest, seed=s["seed"],
                          method="conjugate", extra_attrs=_data_attrs(data))


def _fit_by_relevance(log, spec: ModelSpec, qrels, level: int) -> Posterior:
    """Conjugate Dirichlet rows per relevance class of the clicked document; dwell rates
    from all clicks.  Variable ``transition_by_relevance (relevance, rank, category)``."""
    from ..io.clickformats import read_clicks
    from .relevance import CLASSES, relevance_model_data

    if qrels is None:
        raise ParameterError(f"spec {spec.name!r} has transitions by relevance: pass qrels")
    if spec.sampler["method"] != "conjugate":
        raise ParameterError("transitions by relevance are fitted with the exact conjugate "
                             "posterior; use method='conjugate'")
    if isinstance(log, ClickStats):
        raise ParameterError("transitions by relevance need the click log itself (its "
                             "clicked documents), not aggregated statistics")
    if isinstance(log, pd.DataFrame):
        log = ClickLog(log)
    elif not isinstance(log, ClickLog):
        log = read_clicks(log)
    trans = spec.section("transitions")
    per_class = relevance_model_data(log, qrels, spec.ranks, trans["categories"], level)
    posts = {}
    for i, name in enumerate(CLASSES):   # own random stream per class
        seeded = spec.with_sampler(seed=spec.sampler["seed"] + 1 + i)
        post = _fit_conjugate(per_class[name], seeded)
        posts[name] = post.posterior["transition"]
    variables = {"transition_by_relevance": xr.concat(
        [posts[c] for c in CLASSES], dim=pd.Index(list(CLASSES), name="relevance"))
        .transpose("chain", "draw", "relevance", "rank", "category")}
    # the classes partition the clicks: their dwell sums are the whole log's
    a, b = (per_class[c] for c in CLASSES)
    dwell = ("dwell_n", "dwell_sum", "dwell_sum_log", "dwell_sum_log2", "dwell_censored")
    every_click = dataclasses.replace(a, **{f: getattr(a, f) + getattr(b, f) for f in dwell})
    hold = _fit_conjugate(every_click, spec).posterior
    if "holding_rate" in hold:
        variables["holding_rate"] = hold["holding_rate"]
    attrs = {f"transitions_observed_{c.replace('-', '_')}":
             int(per_class[c].transitions.sum()) for c in CLASSES}
    digest = hashlib.sha256("".join(per_class[c].digest for c in CLASSES).encode()
                            ).hexdigest()[:16]
    return make_posterior(variables, spec=spec, data_digest=digest, seed=spec.sampler["seed"],
                          method="conjugate", extra_attrs=dict(attrs, relevance_level=level))


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
