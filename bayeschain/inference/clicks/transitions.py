r"""``[transitions]``: what follows a click on rank ``i`` (forward, backward, stop,
reformulate), from the counts ``n_ic`` of :mod:`bayeschain.inference.clicks.data`.

The likelihood is ``n_i ~ Multinomial(N_i, theta_i)`` per rank.

* ``per-rank``: ``theta_i ~ Dirichlet(alpha)``; the posterior is ``Dirichlet(alpha + n_i)``,
  exact (conjugate).  Rank 1's backward move is a structural zero (nothing lies above rank
  1): its probability is exactly 0, in the conjugate draws and in the PyMC model alike
  (:func:`structural_zeros`).
* ``shared``: one ``theta ~ Dirichlet(alpha)`` for all ranks; the posterior is
  ``Dirichlet(alpha + sum_i n_i)``, exact.
* ``pooled`` (hierarchical, NUTS only): ``logit theta_ic = a_c + b_c log(i) + sigma_c z_ic``
  with ``z ~ N(0, 1)`` (non-centred), category 0 fixed at 0 for identifiability and rank
  1's backward move exactly 0; sparse deep ranks are pulled towards the trend.

These are the moves of the chain observed at click times, not the walk's per-step moves.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...errors import ParameterError
from ...posterior.container import INDEPENDENT_DRAWS
from .conjugate import sample_dirichlet
from .data import ModelData


def structural_zeros(data: ModelData) -> np.ndarray:
    """``(ranks, categories)``: which per-rank probabilities are 0 by construction (rank 1's
    backward move: nothing lies above rank 1).  Only rank 1 has any."""
    zero = np.zeros(data.transitions.shape, dtype=bool)
    if "backward" in data.categories:
        zero[0, list(data.categories).index("backward")] = True
    return zero


def dirichlet_parameters(data: ModelData, prior, shared: bool) -> np.ndarray:
    """Posterior Dirichlet concentration, ``(ranks, categories)`` or ``(categories,)``;
    per rank, the concentration of a structural zero is 0 (its draws are exactly 0)."""
    alpha = np.asarray(prior, dtype=float)
    if shared:
        return alpha + data.transitions.sum(axis=0)
    post = np.broadcast_to(alpha, data.transitions.shape) + data.transitions
    return np.where(structural_zeros(data), 0.0, post)


def conjugate_draws(data: ModelData, section: dict, chains: int, draws: int,
                    rng) -> dict[str, xr.DataArray]:
    """Exact posterior draws of ``transition`` (chain, draw, rank, category)."""
    kind = section["parametrisation"]
    if kind == "pooled":
        raise ParameterError("the pooled (hierarchical) transition model has no conjugate "
                             "posterior; use method='nuts'")
    shared = kind == "shared"
    probs = sample_dirichlet(dirichlet_parameters(data, section["prior"], shared), chains,
                             draws, rng)
    if shared:
        probs = np.broadcast_to(probs[:, :, None, :], (chains, draws, data.ranks,
                                                        len(data.categories)))
    coords = data.coords
    return {"transition": xr.DataArray(probs, dims=("chain", "draw", "rank", "category"),
                                       coords={"rank": coords["rank"],
                                               "category": coords["category"]},
                                       attrs={"draws": INDEPENDENT_DRAWS})}


def add_to_model(data: ModelData, section: dict) -> None:
    """``transition`` (rank, category) and the multinomial likelihood of the observed
    transitions, in the current PyMC model."""
    import pymc as pm
    import pytensor.tensor as pt

    alpha = np.asarray(section["prior"], dtype=float)
    counts = data.transitions
    totals = counts.sum(axis=1)
    kind = section["parametrisation"]
    if kind == "per-rank":
        theta = _per_rank_dirichlet(pm, pt, alpha, data)
    elif kind == "shared":
        shared = pm.Dirichlet("transition_shared", a=alpha, dims="category")
        theta = pm.Deterministic("transition", pt.broadcast_to(shared, counts.shape),
                                 dims=("rank", "category"))
    else:  # pooled
        k = len(data.categories)
        log_rank = np.log(np.arange(1, data.ranks + 1))
        a = pm.Normal("trend_intercept", 0.0, 2.0, shape=k - 1)
        b = pm.Normal("trend_slope", 0.0, 1.0, shape=k - 1)
        sigma = pm.HalfNormal("rank_sd", 1.0, shape=k - 1)
        z = pm.Normal("rank_offset", 0.0, 1.0, shape=(data.ranks, k - 1))
        eta = a + b * log_rank[:, None] + sigma * z
        logits = pt.concatenate([pt.zeros((data.ranks, 1)), eta], axis=1)
        # a structural zero is exactly 0, as in the per-rank and conjugate posteriors
        logits = pt.switch(structural_zeros(data), -np.inf, logits)
        theta = pm.Deterministic("transition", pm.math.softmax(logits, axis=1),
                                 dims=("rank", "category"))
    seen = totals > 0
    if seen.any():
        pm.Multinomial("transitions_observed", n=totals[seen], p=theta[seen],
                       observed=counts[seen])


def _per_rank_dirichlet(pm, pt, alpha: np.ndarray, data: ModelData):
    """Per-rank Dirichlet rows; rank 1's row leaves out its structural zeros."""
    zero = structural_zeros(data)
    k = len(data.categories)
    if not zero.any():
        return pm.Dirichlet("transition", a=np.broadcast_to(alpha, (data.ranks, k)),
                            dims=("rank", "category"))
    free = np.flatnonzero(~zero[0])
    first = pm.Dirichlet("transition_rank1", a=alpha[free])
    row1 = pt.set_subtensor(pt.zeros(k)[free], first)
    rows = [row1[None, :]]
    if data.ranks > 1:
        rows.append(pm.Dirichlet("transition_deeper",
                                 a=np.broadcast_to(alpha, (data.ranks - 1, k))))
    return pm.Deterministic("transition", pt.concatenate(rows, axis=0),
                            dims=("rank", "category"))
