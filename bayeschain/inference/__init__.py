"""Bayesian calibration of browsing models from click logs.

``load_spec`` reads a model spec (TOML), ``fit`` turns a click log into a
:class:`Posterior` (exact conjugate draws, or NUTS through PyMC, imported only then).
"""

from .checks import (
                     PredictiveCheck,
                     heldout_log_likelihood,
                     predictive_backward_share,
                     predictive_dwell_means,
)
from .data import ModelData, model_data
from .fit import check_diagnostics, fit, statistics_of
from .log_checks import (
                     DistributionCheck,
                     predictive_click_depth,
                     predictive_dwell_distribution,
)
from .posterior import Posterior
from .specs import ModelSpec, builtin_specs, load_spec, parse_spec

__all__ = ["DistributionCheck", "ModelData", "ModelSpec", "Posterior", "PredictiveCheck",
           "builtin_specs", "check_diagnostics", "fit", "heldout_log_likelihood", "load_spec",
           "model_data", "parse_spec", "predictive_backward_share",
           "predictive_click_depth", "predictive_dwell_distribution",
           "predictive_dwell_means", "statistics_of"]
