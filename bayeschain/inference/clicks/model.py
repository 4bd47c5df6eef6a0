"""The PyMC model of a click-to-click or dwell spec, sampled with NUTS.

Each section of the spec adds its variables and likelihood
(:mod:`bayeschain.inference.sections`, where the formulas are).  The likelihoods use the
sufficient statistics of :mod:`bayeschain.inference.clicks.data`, so the cost of a gradient does
not grow with the size of the log, except the dwell model on each click's observation
(``[holding] censoring = "examination"``, :mod:`bayeschain.inference.dwell.model`), whose
cost grows with the number of timed clicks.
"""

from __future__ import annotations

from contextlib import contextmanager

import xarray as xr

from ...errors import ParameterError
from ...posterior.container import Posterior, make_posterior
from ..sections import sections_of
from ..specs import ModelSpec
from .data import ModelData


def build_model(data: ModelData, spec: ModelSpec):
    """The PyMC model for ``data`` under ``spec`` (returns ``pm.Model``)."""
    import pymc as pm

    with pm.Model(coords=data.coords) as model:
        for section, table in sections_of(spec):
            section.add_to_model(data, table)
    return model


def fit_nuts(data: ModelData, spec: ModelSpec, *, progress: bool = False) -> Posterior:
    """Sample the model with PyMC's NUTS and wrap the draws in a :class:`Posterior`.
    The sampler is named (PyMC 6 would otherwise take nutpie when it is installed, PyMC 5
    its own), so every supported PyMC samples these models the same way; the chains run
    side by side on as many processes as there are chains and cores this process may use
    (:func:`~bayeschain.chains.jit.usable_cores`: under ``taskset`` or a container's CPU
    set, one core samples the chains one after the other in this process)."""
    import pymc as pm

    from ...chains.jit import usable_cores

    s = spec.sampler
    model = build_model(data, spec)
    if not model.free_RVs:
        raise ParameterError("the spec defines no parameter to fit")
    with model, _quiet_pymc(not progress):
        idata = pm.sample(draws=s["draws"], tune=s["tune"], chains=s["chains"],
                          cores=min(s["chains"], usable_cores()), random_seed=s["seed"],
                          target_accept=s["target_accept"], progressbar=progress,
                          compute_convergence_checks=False, nuts_sampler="pymc")
    post = _group(idata, "posterior")
    keep = [v for section, _ in sections_of(spec) for v in section.variables if v in post]
    variables = {v: post[v] for v in keep}
    stats = _group(idata, "sample_stats")
    sample_stats = xr.Dataset({"diverging": stats["diverging"]}) if "diverging" in stats \
        else None
    return make_posterior(variables, spec=spec, data_digest=data.digest, seed=s["seed"],
                          method="nuts", sample_stats=sample_stats,
                          extra_attrs=_observed(data, spec))


@contextmanager
def _quiet_pymc(quiet: bool):
    """PyMC's INFO lines ("Initializing NUTS...", "Multiprocess sampling...", "Sampling 2
    chains ... took 31 seconds.") kept off standard error unless progress is asked for
    (``bayeschain fit --quiet`` printed them; its warnings still pass), and PyTensor's
    warning, on a pip install, that it "could not link to a BLAS installation" (at its
    first compile in a process: these models' tensors are vectors of counts and a
    rank-by-rank matrix at most, whose products BLAS does not speed up; PyTensor then
    calls NumPy's)."""
    import logging
    import warnings

    logger = logging.getLogger("pymc")
    level = logger.level
    if quiet:
        logger.setLevel(max(level, logging.WARNING))
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS",
                                    category=UserWarning)
            yield
    finally:
        logger.setLevel(level)


def _observed(data: ModelData, spec: ModelSpec) -> dict:
    """What the fit learned from: transitions and dwell times (per kind of dwell
    observation for a model on each click's times)."""
    attrs = {"transitions_observed": int(data.transitions.sum()),
             "dwell_observed": int(data.dwell_n.sum())}
    if data.dwell_obs is not None:
        spec_family = spec.section("holding")["likelihood"]
        counts = data.dwell_obs.counts()
        attrs["dwell_observed"] = sum(counts[k] for k in ("exact", "gap", "query"))
        attrs.update({f"dwell_{k}": v for k, v in counts.items()})
        attrs["dwell_family"] = spec_family
    return attrs


def _group(idata, name: str) -> xr.Dataset:
    """A group of PyMC's result as a Dataset (InferenceData or DataTree alike)."""
    group = idata[name] if not hasattr(idata, name) else getattr(idata, name)
    return group.to_dataset() if hasattr(group, "to_dataset") else group
