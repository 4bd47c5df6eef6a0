"""Bayesian calibration of browsing models from click logs.

``load_spec`` reads a model spec (TOML), ``fit`` turns a click log into a
:class:`Posterior`: the examination walk that P@H scores (spec ``walk``, NUTS by nutpie on
the exact page likelihood), or click-to-click transitions, jumps and dwell times (exact
conjugate draws, or NUTS through PyMC, imported only then).
"""

from __future__ import annotations

from ..lazy import lazy_names
from .fit import fit  # noqa: F401 - the function (a lazy name would give its module)

# names load on first use: the walk's likelihood and compiled kernels (imported alone by the
# demo's compile children) do not bring the fits, PyMC's specs or pandas with them
_HOMES = {
    "builtin_specs": ".specs",
    "check_diagnostics": ".sampling",
    "click_metrics": ".walk.prediction",
    "ClickMetrics": ".walk.prediction",
    "DistributionCheck": ".dwell.checks",
    "expected_visits": "bayeschain.posterior.walk",
    "heldout_click_arrays": ".walk.prediction",
    "heldout_click_metrics": ".walk.prediction",
    "load_spec": ".specs",
    "model_data": ".clicks.data",
    "ModelData": ".clicks.data",
    "ModelSpec": ".specs",
    "parse_spec": ".specs",
    "perplexity_difference": ".walk.prediction",
    "PerplexityDifference": ".walk.prediction",
    "Posterior": "bayeschain.posterior.container",
    "posterior_from_parameters": "bayeschain.posterior.construct",
    "predict_clicks": ".walk.prediction",
    "predictive_backward_share": ".clicks.checks",
    "predictive_dwell_distribution": ".dwell.checks",
    "predictive_dwell_means": ".clicks.checks",
    "predictive_walk_checks": ".walk.checks",
    "PredictiveCheck": ".clicks.checks",
    "session_parameters": "bayeschain.posterior.walk",
    "statistics_of": ".sampling",
    "walk_parameters": "bayeschain.posterior.walk",
    "walk_summary": "bayeschain.posterior.walk",
}

__all__ = sorted([*_HOMES, "fit"])

__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
