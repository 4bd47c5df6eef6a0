"""Figures (matplotlib, imported lazily).  Plotting only: no computation happens here."""

from .clicks import plot_clicks_per_rank, plot_dwell_histogram, plot_transition_matrix
from .comparison import plot_cdf_bands, plot_difference, plot_forest, plot_pairwise
from .path import plot_path_cdfs
from .posterior import plot_distribution_check, plot_predictive_check

__all__ = ["plot_cdf_bands", "plot_clicks_per_rank", "plot_difference",
           "plot_distribution_check", "plot_dwell_histogram",
           "plot_forest", "plot_pairwise", "plot_path_cdfs", "plot_predictive_check",
           "plot_transition_matrix"]
