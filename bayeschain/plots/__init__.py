"""Figures (matplotlib, imported lazily).  Plotting only: no computation happens here."""

from .path import plot_path_cdfs

__all__ = ["plot_path_cdfs"]
