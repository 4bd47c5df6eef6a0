"""Attractiveness per document integrated out by a Laplace approximation about the
documents' mode (``documents = "mode"``, spec ``walk-document-mode``: NUTS on the walk and
the trend of attractiveness, each draw's documents from their Laplace approximation given
the draw): its pieces against their definitions (the documents' mode found afresh, the
determinant of their Hessian by differences), and on logs simulated with documents of
known attractiveness the walk that made them, the spread and the documents recovered."""

import copy
import dataclasses

import numpy as np
import pytest

import bayeschain as bc
from bayeschain.inference import walk_parameters
from bayeschain.inference.walk.data import page_data
from bayeschain.inference.walk.documents import DocumentsAtMode, posterior_mode
from bayeschain.inference.walk.fit import AUTO_LAPLACE_IMPRESSIONS, auto_documents
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
    assert "Laplace approximation about their mode" in post.attrs["document_effects"]
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


@pytest.fixture(scope="module")
def at_mode(log):
    data = page_data(log, clicks="document")
    model = WalkModel(data, clicks="document", centred_documents=False)
    mode, info = posterior_mode(model, seed=0)
    return model, mode, info, DocumentsAtMode(model, mode)


@pytest.fixture(scope="module")
def at_mode_reclick(log):
    """The walk of ``walk-reclick`` (damped re-clicks, click offsets by rank) at its point:
    ``documents = "auto"`` takes the route for it too."""
    data = page_data(log, clicks="document", reclicks=True)
    model = WalkModel(data, clicks="document", centred_documents=False, rank_offsets=True,
                      reclicks="damped")
    mode, info = posterior_mode(model, seed=0)
    return model, mode, info, DocumentsAtMode(model, mode)


BOTH_WALKS = pytest.mark.parametrize("walk", ["at_mode", "at_mode_reclick"])


def _documents_mode(model, theta, docs):
    """The documents' mode given the other coordinates, by L-BFGS on the walk's density
    over the documents alone (the definition of ``z_hat(theta)``)."""
    from scipy.optimize import minimize

    def negative(z):
        x = theta.copy()
        x[docs] = z
        lp, grad = model.logp(x)
        return -lp, -grad[docs]

    found = minimize(negative, theta[docs], jac=True, method="L-BFGS-B",
                     options={"maxiter": 20_000, "gtol": 1e-12, "ftol": 1e-15})
    out = theta.copy()
    out[docs] = found.x
    return out


def _documents_hessian(model, theta, docs, h=1e-4):
    """``-d2 log p / dz dz'`` of every pair of documents, by central differences of the
    density's gradient along each document."""
    index = np.arange(docs.start, docs.stop)
    out = np.empty((index.size, index.size))
    for i, k in enumerate(index):
        e = np.zeros(theta.size)
        e[k] = h
        out[:, i] = -(model.logp(theta + e)[1][index] - model.logp(theta - e)[1][index]) / (2 * h)
    return 0.5 * (out + out.T)


def test_the_sampler_sees_the_walk_and_the_trend_not_the_documents(at_mode):
    model, mode, info, target = at_mode
    n_docs = len(model.data.documents)
    assert target.ndim == model.ndim - n_docs                # every z held, the spread not
    theta = target.initial_point(np.random.default_rng(0))
    lp, grad = target.logp(theta)
    # the gradient is the density's: central differences on the free coordinates
    for k in (0, target.ndim // 2, target.ndim - 1):
        e = np.zeros(target.ndim)
        e[k] = 1e-6
        numeric = (target.logp(theta + e)[0] - target.logp(theta - e)[0]) / 2e-6
        assert numeric == pytest.approx(grad[k], rel=1e-5, abs=1e-5)
    # the point is the documents' mode given the rest, reached in a few rounds
    assert info["converged"] and info["gains"][-1] < info["gains"][0]
    assert np.abs(model.logp(mode)[1][target.documents]).max() < 1e-4


@BOTH_WALKS
def test_the_documents_follow_the_walk_as_their_mode_does(walk, request):
    """``z_hat + R delta`` against the documents' mode found afresh given ``theta_hat +
    delta``: the error is of second order in ``delta`` (the linear response of the
    Laplace approximation, Rue, Martino & Chopin 2009); for the default walk and for
    ``walk-reclick``'s."""
    model, _, _, target = request.getfixturevalue(walk)
    docs = target.documents
    direction = np.random.default_rng(4).normal(0.0, 1.0, target.ndim)
    errors = []
    for scale in (0.02, 0.002):
        theta = target.mode.copy()
        theta[target.free] += scale * direction
        found = _documents_mode(model, theta, docs)[docs]
        linear = target.full(theta[target.free])[docs]
        moved = np.abs(found - target.mode[docs]).max()
        errors.append(np.abs(found - linear).max())
        assert errors[-1] < 0.05 * moved, (scale, moved, errors[-1])
    assert errors[1] < errors[0] / 20                  # second order: / 100 for / 10


def _exact_laplace(model, target, step):
    """The Laplace approximation of the marginal density at the expansion point moved by
    ``step`` (a vector over the sampled coordinates), from its definition: the documents'
    mode found afresh there, the log density at it, minus half the log-determinants of
    the documents' Hessian (central differences of the gradient), one query's block at a
    time."""
    import pandas as pd

    docs = target.documents
    query = pd.factorize(model.data.documents["query_id"])[0]
    theta = target.mode.copy()
    theta[target.free] += step
    at = _documents_mode(model, theta, docs)
    hess = _documents_hessian(model, at, docs)
    logdet = sum(np.linalg.slogdet(hess[np.ix_(query == q, query == q)])[1]
                 for q in np.unique(query))
    return model.logp(at)[0] - 0.5 * logdet, logdet


def _trend(model, target):
    """Positions of the trend's intercept, slope and log spread among the sampled
    coordinates."""
    from bayeschain.inference.walk.documents import document_coordinates

    start = document_coordinates(model)[0]
    return np.searchsorted(target.free, [start, start + 1, start + 2])


@BOTH_WALKS
def test_the_determinants_slope_is_that_of_the_documents_hessian(walk, request):
    """The total derivative of ``log det A_zz`` along the trend's intercept (every
    document's mode follows it), its log spread and a random direction of the sampled
    coordinates, against the log-determinants of the documents' Hessian at their mode
    found afresh on either side; for the default walk and for ``walk-reclick``'s."""
    model, _, _, target = request.getfixturevalue(walk)
    eps = 1e-3
    random = np.random.default_rng(7).normal(0.0, 1.0, target.ndim)
    directions = [np.eye(target.ndim)[k] for k in _trend(model, target)[[0, 2]]]
    for v in [*directions, random / np.linalg.norm(random)]:
        numeric = (_exact_laplace(model, target, eps * v)[1]
                   - _exact_laplace(model, target, -eps * v)[1]) / (2 * eps)
        assert target.laplace.logdet_slope @ v == pytest.approx(numeric, rel=0.01)
    assert target.laplace.floored == 0


def test_the_approximate_marginal_bends_as_the_laplace_marginal_along_the_spread(at_mode):
    """Along the documents' log spread, where the determinant curves most, the
    determinant's second derivative and that of the sampled density equal those of the
    Laplace marginal computed from its definition (without the determinant's curvature
    the density was 1.45 times flatter there)."""
    model, _, _, target = at_mode
    k = _trend(model, target)[2]
    h = 2e-2
    e = np.zeros(target.ndim)
    e[k] = h
    exact = [_exact_laplace(model, target, s * e) for s in (1.0, 0.0, -1.0)]
    bend = (exact[0][1] - 2 * exact[1][1] + exact[2][1]) / h**2
    assert target.curvature[k, k] == pytest.approx(bend, rel=0.01)
    want = (exact[0][0] - 2 * exact[1][0] + exact[2][0]) / h**2
    x = target.mode[target.free]
    got = (target.logp(x + e)[0] - 2 * target.logp(x)[0] + target.logp(x - e)[0]) / h**2
    assert got == pytest.approx(want, rel=0.02)


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


def test_a_draws_documents_are_its_own_laplace_draw(at_mode):
    """Each draw's documents are their mode given the draw plus noise of covariance
    ``A_zz^{-1}`` (the inverse of the documents' Hessian, by central differences of the
    density's gradient: one query's block checked), the same for the same draw, and the
    pointwise log-likelihood reads the same documents."""
    import pandas as pd

    model, mode, _, target = at_mode
    docs = target.documents
    query = pd.factorize(model.data.documents["query_id"])[0]
    block = query == query[0]
    hess = _documents_hessian(model, target.mode, docs)[np.ix_(block, block)]
    want = np.sqrt(np.diag(np.linalg.inv(hess)))
    assert target.z_sd[block] == pytest.approx(want, rel=0.02)
    cov = (target.laplace.noise @ target.laplace.noise.T).toarray()[np.ix_(block, block)]
    assert cov == pytest.approx(np.linalg.inv(hess), abs=0.02 * want.max() ** 2)
    theta = target.initial_point(np.random.default_rng(1))
    one, again = target.drawn(theta), target.drawn(theta.copy())
    assert np.array_equal(one, again)
    theta2 = target.initial_point(np.random.default_rng(2))
    other = target.drawn(theta2)
    noise = np.stack([one[docs] - target.full(theta)[docs],
                      other[docs] - target.full(theta2)[docs]]) / target.z_sd
    assert not np.array_equal(noise[0], noise[1])
    assert abs(noise.std() - 1.0) < 0.25 and abs(noise.mean()) < 0.25
    assert np.array_equal(target.pattern_log_likelihood(theta),
                          model.pattern_log_likelihood(one))
    assert np.array_equal(target.expand(theta)["click"], model.expand(one)["click"])
    with pytest.raises(ValueError, match="one draw at a time"):
        target.drawn(np.stack([theta, theta]))


def test_the_rarer_pairs_chances_are_sampled_with_the_walk_not_integrated_out(log):
    """With a threshold that pools the rarer pairs (one pseudo-document per rank, shown by
    every query), only the pairs of their own are integrated out: the pseudo-documents
    are coordinates the sampler draws, the density's gradient is exact along them, and a
    draw hands them to the stopping rule as ``pooled_click``."""
    from bayeschain.inference.walk.documents import document_coordinates

    impressions = page_data(log, clicks="document").documents["impressions"]
    least = int(np.quantile(impressions, 0.3)) + 1
    data = page_data(log, clicks="document", min_impressions=least)
    pooled = data.documents["pooled_rank"].to_numpy() > 0
    assert pooled.any() and not pooled.all()
    model = WalkModel(data, clicks="document", centred_documents=False)
    mode, _ = posterior_mode(model, seed=0)
    target = DocumentsAtMode(model, mode, curvature=False)
    assert target.ndim == model.ndim - int((~pooled).sum())
    start = document_coordinates(model)[0]
    at = np.searchsorted(target.free, start + 3 + np.flatnonzero(pooled))
    np.testing.assert_array_equal(target.free[at], start + 3 + np.flatnonzero(pooled))
    theta = target.initial_point(np.random.default_rng(1))
    _, grad = target.logp(theta)
    for k in at:
        e = np.zeros(target.ndim)
        e[k] = 1e-6
        numeric = (target.logp(theta + e)[0] - target.logp(theta - e)[0]) / 2e-6
        assert numeric == pytest.approx(grad[k], rel=1e-5, abs=1e-5)
    out = target.expand(theta)
    np.testing.assert_array_equal(out["pooled_click"], out["click"][pooled])


def test_the_sampled_densitys_precision_at_its_point_is_the_schur_complement(at_mode):
    """The precision of the density the route samples, at its point: the Hessian of
    :meth:`DocumentsAtMode.logp` by central differences of its exact gradient equals
    ``A_tt + A_tz R`` (measured from the walk's own density) plus half the determinant's
    curvature; where that has no eigenvalue <= 0 the density is a peak there and
    ``bends_up`` is 0."""
    _, _, _, target = at_mode
    x = target.mode[target.free]
    h = 1e-4
    numeric = np.empty((target.ndim, target.ndim))
    for k in range(target.ndim):
        e = np.zeros(target.ndim)
        e[k] = h
        numeric[:, k] = -(target.logp(x + e)[1] - target.logp(x - e)[1]) / (2 * h)
    numeric = 0.5 * (numeric + numeric.T)
    claimed = target.laplace.schur + 0.5 * target.curvature
    scale = np.sqrt(np.outer(np.diag(numeric), np.diag(numeric)))
    assert np.max(np.abs(claimed - numeric) / scale) < 0.01
    assert np.linalg.eigvalsh(numeric).min() > 0 and target.bends_up == 0
    # two directions made to bend up: counted
    vals, vecs = np.linalg.eigh(claimed)
    bent = copy.copy(target)
    bent.laplace = dataclasses.replace(
        target.laplace,
        schur=target.laplace.schur - (vecs[:, :2] * (vals[:2] + 1.0)) @ vecs[:, :2].T)
    assert bent.bends_up == 2


def test_a_laplace_density_that_bends_up_at_its_point_is_not_sampled(log, monkeypatch):
    """Where the density the route would sample bends up at its point (CLARA2: NUTS ran
    for over 20 minutes), the fit says so and samples the documents with the rest: the
    same draws as ``documents = "sampled"``, the route's text saying why."""
    import warnings

    pytest.importorskip("nutpie")
    spec = bc.load_spec("walk-document-mode")
    sampled = spec.with_keys("examination", documents="sampled")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # a short fit: its diagnostics may warn
        want = bc.fit(log, sampled, seed=3, draws=150, tune=150)
    monkeypatch.setattr(DocumentsAtMode, "bends_up", property(lambda self: 2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")          # (and the short fit's diagnostics)
        got = bc.fit(log, spec, seed=3, draws=150, tune=150)
    said = [str(w.message) for w in caught if "Laplace" in str(w.message)]
    assert len(said) == 1 and "not proper here (its density bends up at its point in 2 " \
        "directions)" in said[0], said
    assert got.attrs["document_effects"] == (
        "sampled by NUTS with the rest (documents = 'mode' asked, but its Laplace density "
        "bends up at its point in 2 directions)")
    np.testing.assert_array_equal(got.posterior["walk"].values, want.posterior["walk"].values)
    np.testing.assert_array_equal(got.posterior["attractiveness"].values,
                                  want.posterior["attractiveness"].values)
    # chosen by documents = "auto" (125 impressions per document), not asked: the same
    # fallback, said by the route alone
    auto = spec.with_keys("examination", documents="auto")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = bc.fit(log, auto, seed=3, draws=150, tune=150)
    assert not [w for w in caught if "Laplace" in str(w.message)]
    assert chosen.attrs["document_effects"] == (
        "sampled by NUTS with the rest (documents = 'auto' chose the Laplace route: 240 "
        "documents of their own in 30,000 impressions, 125 per document, at least "
        f"{AUTO_LAPLACE_IMPRESSIONS}; its Laplace density bends up at its point in 2 "
        "directions)")
    np.testing.assert_array_equal(chosen.posterior["walk"].values,
                                  want.posterior["walk"].values)
    # and with fewer impressions per document than the threshold, sampled from the start
    monkeypatch.setattr("bayeschain.inference.walk.fit.AUTO_LAPLACE_IMPRESSIONS", 126)
    monkeypatch.setattr(DocumentsAtMode, "__init__", None)         # not reached
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # a short fit: its diagnostics may warn
        fewer = bc.fit(log, auto, seed=3, draws=150, tune=150)
    assert fewer.attrs["document_effects"] == (
        "sampled by NUTS with the rest (documents = 'auto': 240 documents of their own in "
        "30,000 impressions, 125 per document, fewer than 126)")
    np.testing.assert_array_equal(fewer.posterior["walk"].values,
                                  want.posterior["walk"].values)


def test_each_round_to_the_point_raises_the_exact_laplace_marginal(at_mode, monkeypatch):
    """``posterior_mode``'s rounds step towards the maximum of the linearised density only
    as far as the exact Laplace marginal rises (no fixed damping, no cycling): with each
    round's maximum thrown three times as far (as on CLARA2, where the linearisation
    held only near the point), the marginal from its definition at the point each round
    starts from rises round by round, and the rounds converge."""
    import types

    import scipy.optimize

    import bayeschain.inference.walk.documents as documents

    model, _, _, target = at_mode
    starts = []
    real, lbfgs = documents.DocumentsAtMode.__init__, scipy.optimize.minimize

    def spy(self, model, mode, **kw):
        if kw.get("curvature", True) is False:          # a round's start
            starts.append(np.array(mode, dtype=float))
        real(self, model, mode, **kw)

    def overshoot(fun, x0, **kw):
        found = lbfgs(fun, x0, **kw)
        found.x = x0 + 3.0 * (found.x - x0)
        starts.append(None)                              # thrown: counted below
        return found

    with monkeypatch.context() as patch:
        patch.setattr(documents.DocumentsAtMode, "__init__", spy)
        patch.setattr(scipy.optimize, "minimize", overshoot)
        _, info = posterior_mode(model, seed=11)
    thrown = [x for x in starts if x is None]
    starts = [x for x in starts if x is not None]
    assert info["message"] == info["rounds"] == "converged"     # by the rounds themselves
    assert len(starts) == len(thrown) == len(info["gains"]) >= 3
    exact = [_exact_laplace(model, types.SimpleNamespace(
        documents=target.documents, free=target.free, mode=x), 0.0)[0] for x in starts]
    assert np.all(np.diff(exact) > -1e-3), np.diff(exact)
    assert exact[-1] > exact[0] + 1.0


def test_newton_steps_on_the_exact_laplace_marginal_reach_its_maximum(at_mode):
    """From a point moved off the mode, Newton steps on the exact Laplace marginal
    (``laplace.newton_step``) raise it at every step, the value they report is the
    marginal from its definition (the documents' mode found afresh by L-BFGS, the
    determinant of their Hessian by differences), and they end where its slope along
    the trend and a random direction is 0."""
    from bayeschain.inference.walk import laplace

    model, _, _, target = at_mode
    rng = np.random.default_rng(4)
    theta = target.mode.copy()
    theta[target.free] += rng.normal(0.0, 0.3, target.ndim)
    value, theta, _ = laplace.marginal(model, theta, target.layout)
    x0 = theta[target.free] - target.mode[target.free]
    for _ in range(30):
        moved, value, _, decrement, _ = laplace.newton_step(model, theta, value,
                                                            target.layout, target.free)
        if moved is theta or decrement < 1e-6:
            break
        theta = moved
    x = theta[target.free] - target.mode[target.free]
    end = _exact_laplace(model, target, x)[0]
    assert value == pytest.approx(end, abs=1e-3)
    assert end > _exact_laplace(model, target, x0)[0] + 1.0
    eps = 1e-3
    random = rng.normal(0.0, 1.0, target.ndim)
    directions = [np.eye(target.ndim)[k] for k in _trend(model, target)]
    for v in [*directions, random / np.linalg.norm(random)]:
        slope = (_exact_laplace(model, target, x + eps * v)[0]
                 - _exact_laplace(model, target, x - eps * v)[0]) / (2 * eps)
        assert abs(slope) < 0.05, (v, slope)


def test_a_point_short_of_a_peak_is_stepped_to_one(at_mode):
    """Where the rounds stop short (here: the mode's sampled coordinates moved by 0.3,
    where the Schur complement has negative eigenvalues), ``posterior_mode``'s last stage
    takes Newton steps until the density the route samples is a peak: the Laplace
    marginal, from its definition, rises, and the route built there bends up nowhere."""
    from bayeschain.inference.walk import laplace
    from bayeschain.inference.walk.documents import PEAK_STEPS, _to_a_peak

    model, _, _, target = at_mode
    theta = target.mode.copy()
    theta[target.free] += np.random.default_rng(0).normal(0.0, 0.3, target.ndim)
    theta, _ = laplace.documents_mode(model, theta, target.layout)
    start = laplace.second_order(model, theta, target.layout, target.free)
    assert np.linalg.eigvalsh(start.schur).min() < 0
    peak, steps, _, _, _ = _to_a_peak(model, theta, target.layout)
    assert 1 <= steps < PEAK_STEPS
    assert DocumentsAtMode(model, peak, curvature=False).bends_up == 0

    def exact(point):
        return _exact_laplace(model, target, point[target.free] - target.mode[target.free])[0]

    assert exact(peak) > exact(theta) + 1.0


@pytest.mark.parametrize("own, per, pooled, route, says", [
    (40, AUTO_LAPLACE_IMPRESSIONS, 0, "mode", "at least"),
    (40, AUTO_LAPLACE_IMPRESSIONS - 1, 0, "sampled", "fewer than"),
    # the rarer pairs' impressions count: 99 per document of its own, 4,000 pooled
    (40, AUTO_LAPLACE_IMPRESSIONS - 1, 40 * AUTO_LAPLACE_IMPRESSIONS, "mode", "at least"),
    (0, 0, 5_000, "sampled", "no pair has an attractiveness of its own"),
])
def test_auto_integrates_the_documents_out_where_the_log_has_many_impressions_per_document(
        own, per, pooled, route, says):
    """``documents = "auto"``: the Laplace route where the fitted pages' impressions (the
    rarer pairs' included) are at least ``AUTO_LAPLACE_IMPRESSIONS`` per document of its
    own, NUTS on every document otherwise or when no pair has one; the reason names the
    counts and the threshold."""
    import pandas as pd

    docs = pd.DataFrame({"impressions": [per] * own + ([pooled] if pooled else []),
                         "pooled_rank": [0] * own + ([2] if pooled else [])})
    got, why = auto_documents(docs, {"click_moves": False, "reclicks": "fresh",
                                     "rank_offsets": False})
    assert got == route
    assert says in why and why.startswith("documents = 'auto'")
    if own:
        assert f"40 documents of their own in {own * per + pooled:,} impressions" in why
        assert f"{AUTO_LAPLACE_IMPRESSIONS}" in why


@pytest.mark.parametrize("keys", [{"rank_offsets": True}, {"reclicks": "damped"},
                                  {"reclicks": "damped", "rank_offsets": True}])
def test_auto_takes_the_laplace_route_for_damped_reclicks_and_offsets_not_moves_after_a_click(
        keys):
    """The route is measured on walks whose moves do not depend on the click (``walk``
    and ``walk-reclick``, damped re-clicks and click offsets by rank, on WSCD): those take
    it over the threshold; the walk with moves after a click apart (fresh re-clicks, as
    the model requires) samples every document, however many impressions each has."""
    import pandas as pd

    docs = pd.DataFrame({"impressions": [10_000] * 5, "pooled_rank": [0] * 5})
    exam = {"click_moves": False, "reclicks": "fresh", "rank_offsets": False}
    got, why = auto_documents(docs, {**exam, **keys})
    assert got == "mode" and "chose the Laplace route" in why
    assert auto_documents(docs, {**exam, "click_moves": True}) == (
        "sampled", "documents = 'auto': the Laplace route is not measured on the walk "
                   "with moves that depend on the click")


@pytest.mark.parametrize("stiffness, floor", [(1e4, 1e-6), (1e2, 1e-4)],
                         ids=["decrement", "stalled"])
def test_the_documents_newton_search_stops_at_the_gradients_rounding_floor(stiffness,
                                                                          floor):
    """A concave quadratic in two queries' documents whose gradient carries an error of
    ``floor`` to 3 ``floor`` that changes with every point, above the search's tolerance
    of 1e-6 on ``max |g_z|`` (as a sum over 10^5 pages rounds), and ``|g_z|^2`` above
    the decrement's threshold (1e-12).  With stiff blocks (eigenvalues about 1e4) the
    Newton decrement on blocks measured at the point (about ``|g_z|^2 / 1e4``) says the
    mode is reached; with an error of 1e-4 (and eigenvalues about 100, so that the
    blocks' differences of the gradient over steps of 1e-4 stay accurate) no step
    brings the decrement below the threshold, and the search stops once it no longer
    falls.  Either way at the exact mode to within the error's step (``3 floor /
    smallest eigenvalue`` per document), instead of running to its cap of 30 steps."""
    from bayeschain.inference.walk.laplace import Layout, documents_mode

    rng = np.random.default_rng(3)
    places, queries = np.array([0, 1, 2, 0, 1]), np.array([0, 0, 0, 1, 1])
    precision = np.zeros((5, 5))
    for q in (0, 1):
        rows = np.flatnonzero(queries == q)
        m = rng.normal(size=(rows.size, rows.size))
        precision[np.ix_(rows, rows)] = stiffness * (m @ m.T + 2.0 * np.eye(rows.size))
    target = rng.normal(size=5)

    class Quadratic:
        calls = 0

        def logp(self, theta):
            self.calls += 1
            z = theta[1:6] - target
            grad = np.zeros_like(theta)
            noise = np.random.default_rng(list(theta.view(np.uint32)))
            grad[1:6] = -precision @ z + noise.choice([-1.0, 1.0], 5) * noise.uniform(
                floor, 3 * floor, 5)
            return -1e5 - 0.5 * float(z @ precision @ z), grad

    model = Quadratic()
    layout = Layout.of(slice(1, 6), places, queries)
    theta, calls = documents_mode(model, np.zeros(7), layout)
    assert calls == model.calls
    error = 3 * floor * np.sqrt(5) / np.linalg.eigvalsh(precision).min()
    assert np.max(np.abs(theta[1:6] - target)) < 10 * error
    assert theta[0] == 0.0 and theta[6] == 0.0
    full_steps = (calls - 1) / (layout.n_places + 1)     # gradients, in Newton steps
    assert full_steps <= 5, f"{calls} gradients: the search ran on past the rounding floor"


def test_the_documents_mode_of_a_logistic_density_is_found_with_its_blocks_reused():
    """The documents' logits in two queries' pages, clicked or not (a logistic likelihood,
    whose Hessian changes from point to point), N(0, 1) priors, started far from the mode:
    the search reaches the mode that SciPy's optimiser finds on the same function, and
    measures its blocks at most once for every two points it tries (the chord method; a
    block at every step measured them 7 times for 8 points here)."""
    from scipy.optimize import minimize

    from bayeschain.inference.walk.laplace import Layout, documents_mode

    rng = np.random.default_rng(8)
    places, queries = np.array([0, 1, 2, 0, 1]), np.array([0, 0, 0, 1, 1])
    design = np.zeros((400, 5))
    for q, rows in ((0, slice(0, 250)), (1, slice(250, 400))):
        cols = np.flatnonzero(queries == q)
        design[rows, cols] = rng.normal(size=(design[rows].shape[0], cols.size))
    truth = rng.normal(size=5)
    clicked = rng.random(400) < 1.0 / (1.0 + np.exp(-design @ truth))

    def density(z):
        eta = design @ z
        lp = float(np.sum(clicked * eta - np.logaddexp(0.0, eta)) - 0.5 * z @ z)
        return lp, design.T @ (clicked - 1.0 / (1.0 + np.exp(-eta))) - z

    class Logistic:
        calls = 0

        def logp(self, theta):
            self.calls += 1
            lp, gz = density(theta[1:6])
            grad = np.zeros_like(theta)
            grad[1:6] = gz
            return lp, grad

    found = minimize(lambda z: tuple(-x for x in density(z)), np.zeros(5), jac=True,
                     method="BFGS", options={"gtol": 1e-10})
    model = Logistic()
    layout = Layout.of(slice(1, 6), places, queries)
    measured = []
    blocks = Layout.blocks

    def counted(self, *args):
        measured.append(1)
        return blocks(self, *args)

    start = np.r_[0.0, np.full(5, 3.0), 0.0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Layout, "blocks", counted)
        theta, calls = documents_mode(model, start, layout)
    assert calls == model.calls
    np.testing.assert_allclose(theta[1:6], found.x, atol=1e-5)
    steps = calls - 1 - len(measured) * layout.n_places      # the points tried
    assert 2 * len(measured) <= steps, (len(measured), steps)   # 7 and 8 with no reuse


class _Gaussian:
    """log N(theta; mean, precision^-1) up to a constant, with the interface the sampler
    reads (a stand-in for the Laplace density)."""

    unchecked = ()
    data = None

    def __init__(self, mean, precision):
        self.mean, self.precision, self.ndim = mean, precision, mean.size

    def logp(self, theta):
        d = theta - self.mean
        return -0.5 * float(d @ self.precision @ d), -self.precision @ d

    def initial_point(self, rng):
        return self.mean + rng.normal(0.0, 0.05, self.ndim)

    def expand(self, theta):
        return {"x": np.array(theta, dtype=float)}

    def pattern_log_likelihood(self, theta):
        return np.array([self.logp(theta)[0]])


def test_whitened_coordinates_are_standard_normal_for_a_gaussian_at_its_precision():
    """``theta = center + L u`` with ``L L^T`` the inverse of the density's precision: the
    density of ``u`` is ``-|u|^2 / 2 + const`` with gradient ``-u``, whatever the
    precision's scales (here 1e-2 to 1e4); the quantities are the target's, read through
    the map."""
    from bayeschain.inference.walk.documents import Whitened

    rng = np.random.default_rng(7)
    q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    precision = q @ np.diag([1e-2, 1.0, 30.0, 1e4]) @ q.T
    mean = rng.normal(size=4)
    target = _Gaussian(mean, precision)
    white = Whitened(target, mean, precision)
    lp0 = white.logp(np.zeros(4))[0]
    for _ in range(5):
        u = rng.normal(size=4)
        lp, grad = white.logp(u)
        assert lp - lp0 == pytest.approx(-0.5 * float(u @ u), rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(grad, -u, rtol=1e-7, atol=1e-7)
        x = white.expand(u)["x"]             # the target's point: |u| is its distance
        assert (x - mean) @ precision @ (x - mean) == pytest.approx(float(u @ u), rel=1e-9)
    with pytest.raises(ValueError, match="not positive definite"):
        Whitened(target, mean, -precision)


def test_chains_start_from_draws_of_the_gaussian_approximation_where_the_density_is_finite():
    """The whitened density's initial points, read back through the map, are draws of
    ``N(center, precision^-1)`` (their mean and covariance within Monte-Carlo error of
    the approximation's); where the target's density is not finite at a draw, the point is
    drawn in towards the center until it is."""
    from bayeschain.inference.walk.documents import Whitened

    rng = np.random.default_rng(5)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    precision = q @ np.diag([0.04, 1.0, 400.0]) @ q.T
    center = np.array([0.5, -1.0, 2.0])
    white = Whitened(_Gaussian(center, precision), center, precision)
    n = 4000
    points = np.array([white.theta(white.initial_point(np.random.default_rng(seed)))
                       for seed in range(n)])
    cov = np.linalg.inv(precision)
    se = np.sqrt(np.diag(cov) / n)
    assert np.all(np.abs(points.mean(axis=0) - center) < 4 * se)
    # each entry of the sample covariance within 4 of its standard errors (Wishart)
    found = np.cov(points.T)
    se_cov = np.sqrt((cov ** 2 + np.outer(np.diag(cov), np.diag(cov))) / n)
    assert np.all(np.abs(found - cov) < 4 * se_cov)

    class Bounded(_Gaussian):          # no density beyond Mahalanobis distance 0.5
        def logp(self, theta):
            d = theta - self.mean
            if d @ self.precision @ d > 0.25:
                return -np.inf, np.zeros_like(d)
            return super().logp(theta)

    bounded = Whitened(Bounded(center, precision), center, precision)
    for seed in range(50):
        u = bounded.initial_point(np.random.default_rng(seed))
        assert np.isfinite(bounded.logp(u)[0]) and u @ u <= 0.25


def test_nuts_in_whitened_coordinates_draws_the_targets_law():
    """NUTS on the whitened density of a correlated Gaussian (whitened by a precision that
    is not its own), its draws read back through the map: their mean and covariance are
    the Gaussian's, within their Monte-Carlo error."""
    from bayeschain.inference.walk.documents import Whitened
    from bayeschain.inference.walk.sampler import sample

    rng = np.random.default_rng(11)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    cov = q @ np.diag([0.01, 1.0, 25.0]) @ q.T
    mean = np.array([1.0, -2.0, 0.5])
    target = _Gaussian(mean, np.linalg.inv(cov))
    white = Whitened(target, mean + 0.3, np.diag(1.0 / np.diag(cov)))
    draws, _ = sample(white, draws=2000, tune=500, chains=2, seed=5)
    x = draws["x"].reshape(-1, 3)
    se = np.sqrt(np.diag(cov) / 1000)            # at least 1,000 effective draws of 4,000
    assert np.all(np.abs(x.mean(0) - mean) < 4 * se)
    # the variances along the Gaussian's axes, 0.01 to 25 (a relative error of about
    # sqrt(2 / 1,000) = 4.5% each)
    np.testing.assert_allclose(np.diag(q.T @ np.cov(x.T) @ q), [0.01, 1.0, 25.0], rtol=0.15)
    # the sampler's coordinates are the whitened ones: their squared length is each
    # draw's distance from the centre under the precision whitened by
    u, d = draws["theta"].reshape(-1, 3), x - (mean + 0.3)
    np.testing.assert_allclose(np.sum(u**2, axis=1),
                               np.einsum("ij,j,ij->i", d, 1.0 / np.diag(cov), d), rtol=1e-8)
