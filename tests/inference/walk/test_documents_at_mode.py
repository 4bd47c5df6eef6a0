"""Attractiveness per document by its mode (``documents = "mode"``: the documents at their
mode, their spread by empirical Bayes, NUTS on the rest): on a log simulated with a
population of documents of known spread, the walk that made it is recovered, the spread
too, and the sampler sees only the walk's and the trend's coordinates."""

from pathlib import Path

import numpy as np
import pytest

import bayeschain as bc
from bayeschain.inference.walk.data import page_data
from bayeschain.inference.walk.documents import DocumentsAtMode, posterior_mode
from bayeschain.inference.walk.model import WalkModel
from bayeschain.simulate import simulate_click_log

SPREAD = 1.0


@pytest.fixture(scope="module")
def log():
    # 24 queries x 10 documents, each query on about 150 pages
    return simulate_click_log(3_000, attractiveness_sd=SPREAD, topics=24, max_queries=1,
                              reformulate=0.0, seed=21)


def test_the_walk_and_the_spread_of_documents_are_recovered(log, tmp_path):
    import bayeschain.models

    walk = Path(bayeschain.models.__file__).parent / "walk.toml"
    spec = tmp_path / "walk-mode.toml"
    spec.write_text(walk.read_text().replace('clicks = "auto"', 'clicks = "auto"\n'
                                             'documents = "mode"'))
    post = bc.fit(log, str(spec))
    assert post.metadata.click_level == "document"
    assert "joint posterior mode" in post.attrs["document_effects"]
    walk = post.posterior["walk"]
    lo = walk.quantile(0.0005, ("chain", "draw"))
    hi = walk.quantile(0.9995, ("chain", "draw"))
    for move, value in (("forward", 0.6), ("backward", 0.15)):
        ranks = slice(1, 6)
        inside = (lo.sel(move=move).isel(rank=ranks) <= value) & \
            (value <= hi.sel(move=move).isel(rank=ranks))
        assert bool(inside.all()), (move, lo.sel(move=move).values, hi.sel(move=move).values)
    sd = float(post.posterior["click_trend"].sel(trend="sd").mean())
    assert 0.6 * SPREAD < sd < 1.6 * SPREAD
    d = post.diagnostics()
    assert float(d["max_rhat"].max()) <= 1.01 and post.divergences() == 0


def test_the_sampler_sees_the_walk_and_the_trend_not_the_documents(log):
    data = page_data(log, clicks="document")
    model = WalkModel(data, clicks="document", centred_documents=False)
    mode, info = posterior_mode(model, seed=0)
    target = DocumentsAtMode(model, mode)
    n_docs = len(data.documents)
    assert target.ndim == model.ndim - n_docs - 1            # the z and the spread held
    theta = target.initial_point(np.random.default_rng(0))
    lp, grad = target.logp(theta)
    full = target.full(theta)
    want, want_grad = model.logp(full)
    assert lp == want and np.array_equal(grad, want_grad[target.free])
    # the gradient is the density's: central differences on the free coordinates
    for k in (0, target.ndim // 2, target.ndim - 1):
        e = np.zeros(target.ndim)
        e[k] = 1e-6
        numeric = (target.logp(theta + e)[0] - target.logp(theta - e)[0]) / 2e-6
        assert numeric == pytest.approx(grad[k], rel=1e-5, abs=1e-5)
    assert len(info["spreads"]) == 3 and all(s > 0 for s in info["spreads"])
