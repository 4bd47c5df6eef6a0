"""Access to posterior draws: flattened ``(draws, ...)`` arrays, draw subsets and blocks."""

from __future__ import annotations

import numpy as np


def stacked_draws(da):
    """A DataArray with dims ``(chain, draw, ...)`` (a posterior variable, or scores under
    posterior draws) with its draws flattened into a first dim ``sample``."""
    return da.stack(sample=("chain", "draw")).transpose("sample", ...)


def draws_of(posterior, name: str) -> np.ndarray:
    """A posterior variable flattened to ``(draws, ...)``."""
    return stacked_draws(posterior.posterior[name]).values


def draw_slice(posterior, lo: int, hi: int):
    """The posterior restricted to flattened draws ``lo:hi`` (as one chain); its
    ``draw_offset`` attr keeps where they start among all the draws (what per-draw random
    streams are keyed on, so that a score does not depend on how draws are blocked)."""
    import xarray as xr

    flat = posterior.posterior.stack(sample=("chain", "draw")).isel(sample=slice(lo, hi))
    ds = flat.drop_vars(["sample", "chain", "draw"]).rename(sample="draw") \
        .expand_dims("chain").transpose("chain", "draw", ...)
    tree = xr.DataTree.from_dict({"posterior": ds})
    tree.attrs.update(posterior.attrs)         # which chain it parametrises, its boundary
    tree.attrs["draw_offset"] = posterior.metadata.draw_offset + int(lo)
    return type(posterior)(tree)                # a Posterior (no import: container uses us)


def draw_indices(n_draws: int, max_draws: int | None, seed=None) -> np.ndarray:
    """The flattened draws to use: all, or ``max_draws`` of them at random (sorted)."""
    idx = np.arange(n_draws)
    if max_draws is not None and n_draws > max_draws:
        idx = np.sort(np.random.default_rng(seed).choice(idx, max_draws, replace=False))
    return idx
