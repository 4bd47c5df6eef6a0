"""Click transitions by relevance of the clicked document (spec rwbm-relevance)."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayeschain.compare import posterior_from_parameters, score
from bayeschain.errors import ParameterError
from bayeschain.inference import fit, load_spec
from bayeschain.io.clickstats import click_statistics

from .logs import click_log as _log
from .logs import simulate_pages

CATS = ["forward", "backward", "stop"]


QRELS = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["d2", "d3", "d5"],
                      "relevance": [1, 2, 0]})


def _spec(ranks=5, parametrisation="shared"):
    text = f"""
[model]
name = "by-relevance"
ranks = {ranks}
[transitions]
categories = {CATS!r}
parametrisation = "{parametrisation}"
prior = [1.0, 1.0, 1.0]
by_relevance = true
[sampler]
method = "conjugate"
draws = 20000
chains = 1
"""
    from bayeschain.inference.specs import parse_spec

    return parse_spec(text.replace("'", '"'))


def test_posterior_is_the_dirichlet_of_hand_counted_moves():
    # relevant docs: d2, d3 (d5 judged 0, others unjudged = non-relevant)
    log = _log([[1, 2, 4], [3, 1], [2], [5, 3, 2], [4]])
    # after relevant clicks: 2->4 fwd, 3->1 back, 2 stop, 3->2 back, 2 stop
    # after non-relevant:    1->2 fwd, 4 stop, 1 stop, 5->3 back, 4 stop
    expected = {"relevant": [1, 2, 2], "non-relevant": [1, 1, 3]}
    post = fit(log, _spec(), qrels=QRELS, seed=3)
    t = post.posterior["transition_by_relevance"]
    assert t.dims == ("chain", "draw", "relevance", "rank", "category")
    for cls, counts in expected.items():
        alpha = 1.0 + np.array(counts)
        mean = t.sel(relevance=cls).mean(("chain", "draw")).values      # (rank, category)
        np.testing.assert_allclose(mean, np.broadcast_to(alpha / alpha.sum(), mean.shape),
                                   atol=0.01)
        var = alpha * (alpha.sum() - alpha) / (alpha.sum() ** 2 * (alpha.sum() + 1))
        np.testing.assert_allclose(t.sel(relevance=cls, rank=1).var(("chain", "draw")),
                                   var, rtol=0.05)


def test_recovers_the_two_classes_of_a_simulated_log():
    """Per-rank rows on the interior ranks 2..9 (rank 1 cannot move back and rank 10
    cannot move forward, so their rows differ from the simulated probabilities)."""
    rng = np.random.default_rng(5)
    truth = np.array([[0.5, 0.2, 0.3], [0.2, 0.3, 0.5]])        # non-relevant, relevant
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["d2", "d4", "d5", "d8"],
                          "relevance": 1})
    # document d{r} sits at rank r: each rank moves with its document's class
    rank_class = np.array([int(r in (2, 4, 5, 8)) for r in range(1, 11)])
    sessions = simulate_pages(rng, 20000, truth[rank_class], 10)
    post = fit(_log(sessions), _spec(10, "per-rank"), qrels=qrels, seed=1)
    t = post.posterior["transition_by_relevance"].sel(rank=slice(2, 9))
    lo = t.quantile(0.00005, ("chain", "draw")).transpose("rank", ...).values
    hi = t.quantile(0.99995, ("chain", "draw")).transpose("rank", ...).values
    # rank r shows document d{r}: only its class has data there, the other row is the prior
    cls = rank_class[1:9]                                       # ranks 2..9
    lo, hi = lo[np.arange(8), cls], hi[np.arange(8), cls]
    assert np.all((lo <= truth[cls]) & (truth[cls] <= hi)), (lo, hi)
    assert np.all(hi - lo < 0.2)
    prior_rows = t.isel(relevance=xr.DataArray(1 - cls, dims="rank")).mean(("chain", "draw"))
    np.testing.assert_allclose(prior_rows, 1 / 3, atol=0.01)


def test_score_of_a_fitted_posterior_is_the_drwbm_of_its_draws():
    log = _log([[1, 2, 4], [3, 1], [2], [5, 3, 2], [4]])
    post = fit(log, _spec(), qrels=QRELS, draws=5, seed=0)
    runs = pd.DataFrame({"query_id": "q", "doc_id": [f"d{i}" for i in range(1, 7)],
                         "score": np.arange(6, 0, -1.0), "run_id": "r"})
    got = score({"r": runs}, QRELS, "PatH(model='drwbm', order=2)", post)
    t = post.posterior["transition_by_relevance"].sel(rank=1).values[0]   # (draw, cls, cat)
    manual = posterior_from_parameters({"transition_by_relevance": t})
    ref = score({"r": runs}, QRELS, "PatH(model='drwbm', order=2)", manual)
    np.testing.assert_allclose(got.values, ref.values, rtol=1e-13)


def test_errors_name_what_is_missing():
    log = _log([[1, 2]])
    with pytest.raises(ParameterError, match="pass qrels"):
        fit(log, _spec())
    with pytest.raises(ParameterError, match="conjugate"):
        fit(log, _spec(), qrels=QRELS, method="nuts")
    with pytest.raises(ParameterError, match="click log itself"):
        fit(click_statistics(log, backend="pandas"), _spec(), qrels=QRELS)
    other = QRELS.assign(query_id="elsewhere")
    with pytest.raises(ParameterError, match="no clicked document is judged"):
        fit(log, _spec(), qrels=other)
    assert load_spec("rwbm-relevance").section("transitions")["by_relevance"] is True


def test_summary_lists_shared_parameters_once():
    post = fit(_log([[1, 2, 4], [3, 1], [2]]), _spec(), qrels=QRELS, draws=50)
    labels = post.summary()["parameter"].tolist()
    assert "transition_by_relevance[relevant, all, stop]" in labels
    assert len(labels) == 2 * 3                      # 2 classes x 3 categories, not x 5 ranks


def test_the_classes_partition_the_clicks():
    """Every click falls in one class: transitions and dwell statistics add up to the
    whole log's (what the holding-rate posterior of the by-relevance fit uses)."""
    from bayeschain.inference import model_data
    from bayeschain.inference.relevance import relevance_model_data

    rng = np.random.default_rng(2)
    sessions = [[int(r) for r in rng.integers(1, 6, rng.integers(1, 5))] for _ in range(300)]
    dwell = [[float(t) for t in rng.exponential(20, len(s))] for s in sessions]
    log = _log(sessions, dwell)
    cats = ("forward", "backward", "stop", "reformulate")
    parts = relevance_model_data(log, QRELS, 5, cats)
    whole = model_data(click_statistics(log, backend="pandas"), 5, cats)
    for field in ("transitions", "repeats", "dwell_n", "dwell_sum", "dwell_sum_log",
                  "dwell_censored"):
        np.testing.assert_allclose(sum(getattr(p, field) for p in parts.values()),
                                   getattr(whole, field), rtol=1e-12)
    assert parts["relevant"].transitions.sum() > 0 and parts["non-relevant"].dwell_n.sum() > 0
