"""The topic model: recovery of systems' population mean scores from a collection simulated
by a NumPy zero-one-inflated Beta simulator (not the code under test), and its plumbing
into compare()."""

import numpy as np
import pytest
import xarray as xr

from bayeschain.comparison import compare, topic_model
from bayeschain.errors import ParameterError


def _expit(x):
    return 1 / (1 + np.exp(-x))


def test_topic_model_recovers_population_means_and_their_order():
    pytest.importorskip("nutpie")
    rng = np.random.default_rng(0)
    systems, topics, upper = 3, 60, 2.0
    a = np.array([0.5, 0.0, -0.5])
    b = rng.normal(0, 0.8, topics)
    c = rng.normal(0, 0.7, topics)
    mu = _expit(-0.3 + a[:, None] + b[None, :])
    pi0 = _expit(-1.5 + c[None, :] + np.zeros((systems, 1)))
    x = np.where(rng.random((systems, topics)) < pi0, 0.0,
                 rng.beta(mu * 12, (1 - mu) * 12))
    # truth: expectation over new topics of the same model (200,000 of them)
    bn, cn = rng.normal(0, 0.8, 200_000), rng.normal(0, 0.7, 200_000)
    truth = upper * np.mean((1 - _expit(-1.5 + cn))[None, :]
                            * _expit(-0.3 + a[:, None] + bn[None, :]), axis=1)
    # the user-model posterior: 40 draws of scores around the collection's scores
    noise = rng.normal(0, 0.01, (2, 20, systems, topics)) * (x > 0)
    draws = np.clip(x + noise, 0, 1) * upper
    scores = xr.DataArray(draws, dims=("chain", "draw", "run", "topic"),
                          coords={"run": ["A", "B", "C"],
                                  "topic": [f"t{i}" for i in range(topics)]})
    population = topic_model(scores, upper=upper, imputations=2, draws=500, tune=500)
    assert population.sizes["chain"] == 4 and population.sizes["topic"] == 1
    lo, hi = np.quantile(population.values[..., 0].reshape(-1, systems), [0.005, 0.995], axis=0)
    assert np.all((lo <= truth) & (truth <= hi)), (lo, truth, hi)
    comp = compare(population, rope=0.0)
    assert "zero-one-inflated Beta" in comp.uncertainty and "imputations" in comp.uncertainty
    assert "Bayesian bootstrap" not in comp.uncertainty
    rows = comp.pairs.set_index(["A", "B"])
    assert rows.loc[("A", "C"), "P(A>B)"] > 0.95
    assert comp.best.idxmax() == "A"


def test_bad_scores_are_refused():
    scores = xr.DataArray(np.full((1, 2, 2, 4), 0.5), dims=("chain", "draw", "run", "topic"))
    with pytest.raises(ParameterError, match="exceeds"):
        topic_model(scores, upper=0.4)
    with pytest.raises(ParameterError, match="three topics"):
        topic_model(scores.isel(topic=[0, 1]))
