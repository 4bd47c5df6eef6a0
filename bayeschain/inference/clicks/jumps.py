r"""``[jumps]``: where the next click lands, for Markov-Precision chains.

Markov Precision (Ferrante, Ferro & Maistro, SIGIR 2014) needs the transition matrix
between the ranks a user visits.  Observed click-to-click moves ``n_ij`` (``i != j``;
repeats carry no information about jumps, so the diagonal is a structural zero) give it two
ways:

* ``family = "free"``: each row is ``Dirichlet(alpha + n_i.)`` over the other ranks: exact
  and conjugate (``method = "conjugate"``);
* ``family = "ID"`` / ``"LID"``: the paper's distance-decay weights with a learned
  exponent ``g``: ``p_ij = w(|i - j|)^g / sum_k w(|i - k|)^g`` with
  ``w(d) = 1 / (d + 1)`` (ID) or ``1 / log10(d + 2)`` (LID); ``g = 1`` gives the paper's
  models, ``g = 0`` uniform jumps.  ``g ~ Gamma(shape, rate)``; the log likelihood
  ``sum_ij n_ij log p_ij`` has one parameter, sampled with NUTS.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...errors import ParameterError
from ...posterior.container import INDEPENDENT_DRAWS
from .conjugate import sample_dirichlet
from .data import ModelData


def decay_weights(family: str, n: int) -> np.ndarray:
    """``log w(|i - j|)`` for ``i != j`` (``-inf`` on the diagonal)."""
    d = np.abs(np.subtract.outer(np.arange(n), np.arange(n))).astype(float)
    with np.errstate(divide="ignore"):
        logw = -np.log(d + 1.0) if family == "ID" else -np.log(np.log10(d + 2.0))
    logw[np.eye(n, dtype=bool)] = -np.inf
    return logw


def decay_matrix(family: str, exponent, n: int, xp=np) -> np.ndarray:
    """Row-stochastic jump matrix ``w^g / row sums`` (NumPy or PyTensor ``xp``)."""
    logw = decay_weights(family, n)
    finite = np.where(np.isfinite(logw), logw, 0.0)
    mask = (~np.eye(n, dtype=bool)).astype(float)
    weights = xp.exp(exponent * finite) * mask
    return weights / weights.sum(axis=1)[:, None]


def free_rows_posterior(moves: np.ndarray, alpha: float) -> np.ndarray:
    """Dirichlet concentration of each row over the other ranks (diagonal 0)."""
    n = moves.shape[0]
    off = ~np.eye(n, dtype=bool)
    return np.where(off, alpha + moves, 0.0)


def conjugate_draws(data: ModelData, section: dict, chains: int, draws: int,
                    rng) -> dict[str, xr.DataArray]:
    """Exact posterior draws of the free rows, ``jump`` (chain, draw, rank, to_rank)."""
    if section["family"] != "free":
        raise ParameterError("distance-decay jumps (ID / LID) have no conjugate "
                             "posterior; use method='nuts'")
    conc = free_rows_posterior(data.moves, float(section["prior"][0]))
    rows = sample_dirichlet(conc, chains, draws, rng)
    coords = data.coords
    return {"jump": xr.DataArray(rows, dims=("chain", "draw", "rank", "to_rank"),
                                 coords={"rank": coords["rank"],
                                         "to_rank": coords["to_rank"]},
                                 attrs={"draws": INDEPENDENT_DRAWS})}


def add_to_model(data: ModelData, section: dict) -> None:
    """The decay exponent ``jump_exponent``, the matrix ``jump`` and the likelihood of the
    observed moves, in the current PyMC model."""
    if section["family"] == "free":
        raise ParameterError("free jump rows are conjugate: use method='conjugate'")
    import pymc as pm
    import pytensor.tensor as pt

    shape, rate = (float(x) for x in section["prior"])
    g = pm.Gamma("jump_exponent", alpha=shape, beta=rate)
    moves = np.where(np.eye(data.ranks, dtype=bool), 0.0, data.moves)
    p = decay_matrix(section["family"], g, data.ranks, pt)
    pm.Deterministic("jump", p, dims=("rank", "to_rank"))
    safe = pt.switch(pt.eq(p, 0), 1.0, p)
    pm.Potential("jumps_likelihood", pt.sum(moves * pt.log(safe)))
