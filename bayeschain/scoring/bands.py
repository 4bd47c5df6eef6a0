"""Credible bands of the law of P@H: each draw's exact CDF, quantiles across draws."""

from __future__ import annotations

import numpy as np
import xarray as xr

from ..browsing.base import extend_ranks
from ..errors import ParameterError
from ..posterior.draws import draw_indices
from ..posterior.walk import walk_parameters


def path_cdf_bands(relevance, model: str, posterior, *, grid=None, probs=(0.05, 0.5, 0.95),
                   max_draws: int | None = 200, seed=None) -> xr.DataArray:
    """Quantiles over posterior draws of the CDF of P@H for one list.

    The CDF is each draw's exact law (user-to-user variability within a user model); the
    band across draws is the user-model uncertainty.  Returns ``(quantile, x)``.
    """
    from ..measures import path_distribution
    from ..measures.path import apply_gains

    rel = apply_gains(relevance)
    if model not in ("sfbm", "rwbm"):
        raise ParameterError("CDF bands support the sfbm and rwbm browsing models")
    p, q = walk_parameters(posterior).arrays()
    idx = draw_indices(p.shape[0], max_draws, seed)
    x = np.linspace(0, 1, 201) if grid is None else np.asarray(grid, dtype=float)
    cdfs = []
    for d in idx:
        params = {"p": extend_ranks(p[d:d + 1], rel.size)[0]}
        if model == "rwbm":
            params["q"] = extend_ranks(q[d:d + 1], rel.size)[0]
        cdfs.append(path_distribution(rel, model, **params).cdf(x))
    bands = np.quantile(np.stack(cdfs), probs, axis=0)
    return xr.DataArray(bands, dims=("quantile", "x"), coords={"quantile": list(probs),
                                                               "x": x}, name="cdf")
