"""Bayesian calibration of browsing models from click logs.

``load_spec`` reads a model spec (TOML), ``fit`` turns a click log into a
:class:`Posterior`: the examination walk that P@H scores (spec ``walk``, NUTS by nutpie on
the exact page likelihood), or click-to-click transitions, jumps and dwell times (exact
conjugate draws, or NUTS through PyMC, imported only then).
"""

from ..posterior.construct import posterior_from_parameters
from ..posterior.container import Posterior
from ..posterior.walk import expected_visits, session_parameters, walk_parameters, walk_summary
from .clicks.checks import PredictiveCheck, predictive_backward_share, predictive_dwell_means
from .clicks.data import ModelData, model_data
from .dwell.checks import DistributionCheck, predictive_dwell_distribution
from .fit import fit
from .sampling import check_diagnostics, statistics_of
from .specs import ModelSpec, builtin_specs, load_spec, parse_spec
from .walk.checks import predictive_walk_checks
from .walk.prediction import (
    ClickMetrics,
    PerplexityDifference,
    click_metrics,
    heldout_click_arrays,
    heldout_click_metrics,
    perplexity_difference,
    predict_clicks,
)

__all__ = ["ClickMetrics", "DistributionCheck", "ModelData", "ModelSpec",
           "PerplexityDifference", "Posterior", "PredictiveCheck", "builtin_specs",
           "check_diagnostics", "click_metrics",
           "expected_visits", "fit", "heldout_click_arrays", "heldout_click_metrics",
           "load_spec", "model_data",
           "parse_spec", "perplexity_difference", "posterior_from_parameters",
           "predict_clicks",
           "predictive_backward_share", "predictive_dwell_distribution",
           "predictive_dwell_means", "predictive_walk_checks", "session_parameters",
           "statistics_of", "walk_parameters", "walk_summary"]
