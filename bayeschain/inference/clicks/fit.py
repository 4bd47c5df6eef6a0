"""The fit of a spec's sections (``[transitions]``, ``[jumps]``, ``[holding]``): exact
conjugate draws, or NUTS on the PyMC model of :mod:`bayeschain.inference.clicks.model`,
from the per-rank counts of the log's click tables (:mod:`.data`)."""

from __future__ import annotations

import numpy as np

from ...errors import ParameterError
from ...posterior.container import Posterior, make_posterior
from ..dwell.spec import needs_observations
from ..sampling import check_complete, check_diagnostics, interrupt_watch, statistics_of
from ..sections import sections_of
from ..specs import ModelSpec
from .data import ModelData, model_data
from .spec import categories, check_fit


def fit_sections(log_or_stats, spec: ModelSpec, *, progress: bool = False) -> Posterior:
    """A posterior of ``spec``'s sections from a log or its statistics (the spec's sampler
    settings already applied)."""
    trans = spec.section("transitions")
    if trans is not None:
        check_fit(trans)
    hold = spec.section("holding")
    if hold is not None and needs_observations(hold):
        from ..dwell.fit import dwell_model_data

        data = dwell_model_data(log_or_stats, spec, trans)
    else:
        stats = statistics_of(log_or_stats)
        data = model_data(stats, spec.ranks, categories(trans))
    check_learnable(data, spec)
    if spec.sampler["method"] == "conjugate":
        return fit_conjugate(data, spec)
    from .model import fit_nuts

    s = spec.sampler
    with interrupt_watch() as seen:
        posterior = fit_nuts(data, spec, progress=progress)
    check_complete(seen, [da.values for da in posterior.posterior.data_vars.values()],
                   s["chains"], s["draws"])
    check_diagnostics(posterior)
    return posterior


def check_learnable(data: ModelData, spec: ModelSpec) -> None:
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


def fit_conjugate(data: ModelData, spec: ModelSpec) -> Posterior:
    """Exact draws of every section's posterior, from one random stream seeded by the
    spec (sections in the order of :data:`~bayeschain.inference.sections.SECTIONS`)."""
    s = spec.sampler
    rng = np.random.default_rng(s["seed"])
    variables = {}
    for section, table in sections_of(spec):
        variables.update(section.conjugate_draws(data, table, s["chains"], s["draws"], rng))
    return make_posterior(variables, spec=spec, data_digest=data.digest, seed=s["seed"],
                          method="conjugate", extra_attrs=data_attrs(data))


def data_attrs(data: ModelData) -> dict:
    return {"transitions_observed": int(data.transitions.sum()),
            "repeats_left_out": int(data.repeats.sum()),
            "dwell_observed": int(data.dwell_n.sum()),
            "dwell_censored": int(data.dwell_censored.sum())}
