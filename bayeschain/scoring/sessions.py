"""MsM of whole sessions under every posterior draw of the session walk's p, q, r, s."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from ..posterior.walk import session_parameters


def score_sessions(sessions: Mapping[str, np.ndarray], posterior, *,
                   discount: str = "linear", log_base: float = 10) -> xr.DataArray:
    """MsM of each session (an ``N x K`` relevance matrix) under every posterior draw of
    ``p, q, r, s``; dims ``(chain, draw, session)``."""
    from ..measures.session import msm

    params = session_parameters(posterior)
    post = posterior.posterior
    names = list(sessions)
    values = np.stack([msm(np.asarray(sessions[n], dtype=float), params["p"], params["q"],
                           params["r"], params["s"], discount, log_base) for n in names],
                      axis=-1)
    shape = (post.sizes["chain"], post.sizes["draw"], len(names))
    return xr.DataArray(values.reshape(shape), dims=("chain", "draw", "session"),
                        coords={"chain": post["chain"].values, "draw": post["draw"].values,
                                "session": names}, name="msm")
