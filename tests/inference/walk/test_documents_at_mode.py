"""Attractiveness per document by its mode (``documents = "mode"``, spec
``walk-document-mode``: the documents at their mode, their spread by empirical Bayes, NUTS
on the rest, each draw's documents from their Laplace approximation): on logs simulated
with documents of known attractiveness, the walk that made them is recovered, the spread
and the documents too, and the sampler sees only the walk's and the trend's coordinates."""

import numpy as np
import pytest

import bayeschain as bc
from bayeschain.inference import walk_parameters
from bayeschain.inference.walk.data import page_data
from bayeschain.inference.walk.documents import DocumentsAtMode, posterior_mode
from bayeschain.inference.walk.model import WalkModel
from bayeschain.simulate import simulate_click_log
from tests.inference.walk.test_fit import interval
from tests.reference.walk_clicks import documents_at_several_ranks

SPREAD = 1.0


@pytest.fixture(scope="module")
def log():
    # 24 queries x 10 documents, each query on about 150 pages
    return simulate_click_log(3_000, attractiveness_sd=SPREAD, topics=24, max_queries=1,
                              reformulate=0.0, seed=21)


def test_the_walk_and_the_spread_of_documents_are_recovered(log):
    pytest.importorskip("nutpie")
    post = bc.fit(log, "walk-document-mode")
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
    d = post.diagnostics(sampled_only=True)        # the documents' Laplace draws left out
    assert "attractiveness" not in set(d["parameter"]) and "click_trend" in set(d["parameter"])
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


def test_documents_drawn_at_the_mode_hold_their_true_attractiveness():
    """Users of an independent simulator on pages of 30 documents of known attractiveness
    shown at several ranks (the setting of full NUTS's test in test_fit_documents.py): the
    documents' 99% intervals hold the truth for at least 90% of them, as full NUTS's do
    (a document varying only with the trend held 57%), and the forward moves are
    recovered."""
    pytest.importorskip("nutpie")
    log, attractive, f, b = documents_at_several_ranks(13)
    n = f.size
    post = bc.fit(log, "walk-document-mode", seed=5)
    assert "Laplace" in post.attrs["document_effects"]
    att = post.posterior["attractiveness"]
    order = [int(d[3:]) for d in att["doc_id"].values]
    lo, hi = interval(att.stack(s=("chain", "draw")).transpose("s", ...).values, 0.99)
    truth = attractive[order]
    assert np.mean((lo <= truth) & (truth <= hi)) >= 0.9, (lo, truth, hi)
    p_hat, _ = walk_parameters(post)
    lo, hi = interval(p_hat[:, :n - 1], 0.99)
    assert np.sum((f[:n - 1] < lo) | (f[:n - 1] > hi)) <= 1


def test_a_draws_documents_are_its_own_laplace_draw(log):
    """Each draw's documents are the mode's plus noise of the Laplace scale
    ``1 / sqrt(-d2 log p / dz^2)`` (the curvature checked by central differences of the
    log density along single documents), the same for the same draw, and the pointwise
    log-likelihood reads the same documents."""
    data = page_data(log, clicks="document")
    model = WalkModel(data, clicks="document", centred_documents=False)
    mode, _ = posterior_mode(model, seed=0)
    target = DocumentsAtMode(model, mode)
    docs = target.documents
    for k in (docs.start, docs.start + 7, docs.stop - 1):
        h = 1e-3
        e = np.zeros(model.ndim)
        e[k] = h
        curvature = -(model.logp(mode + e)[0] - 2 * model.logp(mode)[0]
                      + model.logp(mode - e)[0]) / h**2
        assert 1.0 / np.sqrt(curvature) == pytest.approx(target.z_sd[k - docs.start],
                                                         rel=0.05)
    theta = target.initial_point(np.random.default_rng(1))
    one, again = target.drawn(theta), target.drawn(theta.copy())
    assert np.array_equal(one, again)
    other = target.drawn(target.initial_point(np.random.default_rng(2)))
    noise = np.stack([one[docs] - mode[docs], other[docs] - mode[docs]]) / target.z_sd
    assert not np.array_equal(noise[0], noise[1])
    assert abs(noise.std() - 1.0) < 0.25 and abs(noise.mean()) < 0.25
    assert np.array_equal(target.pattern_log_likelihood(theta),
                          model.pattern_log_likelihood(one))
    assert np.array_equal(target.expand(theta)["click"], model.expand(one)["click"])
    with pytest.raises(ValueError, match="one draw at a time"):
        target.drawn(np.stack([theta, theta]))
