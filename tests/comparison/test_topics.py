"""The hierarchical topic x system model recovers system effects."""

import numpy as np
import pytest
import xarray as xr

from bayeschain.comparison import compare, topic_model


def test_topic_model_recovers_system_differences():
    pytest.importorskip("pymc")
    rng = np.random.default_rng(0)
    effects = np.array([0.05, 0.0, -0.05])
    topics = rng.normal(0, 0.15, size=40)
    y = 0.4 + effects[:, None] + topics[None, :] + rng.normal(0, 0.03, size=(3, 40))
    scores = xr.DataArray(y[None, None], dims=("chain", "draw", "run", "topic"),
                          coords={"run": ["A", "B", "C"], "topic": [str(i) for i in range(40)]})
    population = topic_model(scores, draws=500, tune=500)
    comp = compare(population, rope=0.0)
    assert "hierarchical" in comp.uncertainty
    rows = comp.pairs.set_index(["A", "B"])
    names = ["A", "B", "C"]
    for a, b in (("A", "B"), ("A", "C"), ("B", "C")):
        row = rows.loc[(a, b)]
        # topics are shared, so their effects cancel: the data determine the realised
        # difference of the mean scores, which the interval must cover
        realised = y[names.index(a)].mean() - y[names.index(b)].mean()
        assert row["hdi_0.95_low"] <= realised <= row["hdi_0.95_high"]
        assert abs(row["mean_diff"] - realised) < 0.01
        assert row["P(A>B)"] > 0.95
    assert comp.best.idxmax() == "A"
