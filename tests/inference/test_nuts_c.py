"""The C entry point nutpie calls equals the walk model's own log density and gradient
(which tests/inference/test_walk_likelihood.py checks against dense linear algebra and
finite differences), at random points and where the density is zero."""

import ctypes

import numpy as np
import pytest

from bayeschain.inference.examination import WalkModel
from bayeschain.inference.pages import page_data
from tests.reference.walk_clicks import pages_to_log, simulate_pages

pytest.importorskip("numba")


def _call(cfunc, table, theta):
    grad = np.zeros_like(theta)
    lp = np.zeros(1)
    dbl = ctypes.POINTER(ctypes.c_double)
    code = cfunc.ctypes(theta.size, theta.ctypes.data_as(dbl), grad.ctypes.data_as(dbl),
                        lp.ctypes.data_as(dbl), ctypes.c_void_p(table.ctypes.data))
    return code, lp[0], grad


def _simulated_model(rng, n: int, pages: int, **kwargs) -> WalkModel:
    """The walk model of ``pages`` pages of ``n`` results walked by simulated users."""
    p, q = np.linspace(0.8, 0.6, n), np.r_[0.0, np.full(n - 1, 0.1)]
    leave = 1 - p - q
    log = pages_to_log(simulate_pages(rng, pages, p, q, 0.4 * leave, 0.6 * leave,
                                      np.linspace(0.5, 0.2, n)), n)
    return WalkModel(page_data(log), **kwargs)


@pytest.mark.parametrize("boundary", ["leave", "rescale"])
def test_cfunc_equals_the_model(boundary):
    from bayeschain.inference.nuts_c import _table, expand_cfunc, logp_cfunc

    rng = np.random.default_rng(5)
    model = _simulated_model(rng, 8, 400, boundary=boundary)
    table, keep = _table(model)
    for _ in range(5):
        theta = model.initial_point(rng) + rng.normal(0, 0.5, model.ndim)
        code, lp, grad = _call(logp_cfunc, table, theta)
        want_lp, want_grad = model.logp(theta)
        assert code == 0
        assert lp == pytest.approx(want_lp, rel=1e-13)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=1e-12)
    out = np.zeros(model.ndim)
    dbl = ctypes.POINTER(ctypes.c_double)
    assert expand_cfunc.ctypes(model.ndim, model.ndim, theta.ctypes.data_as(dbl),
                               out.ctypes.data_as(dbl), None) == 0
    np.testing.assert_array_equal(out, theta)
    del keep


def test_zero_density_is_reported_not_returned_as_a_number():
    """A click the walk cannot make (click probability 0 where the log has clicks): the
    cfunc says 4 (non-finite log density) and zeroes the gradient."""
    from bayeschain.inference.nuts_c import _table, logp_cfunc

    rng = np.random.default_rng(6)
    n = 5
    p, q = np.full(n, 0.7), np.r_[0.0, np.full(n - 1, 0.1)]
    leave = 1 - p - q
    log = pages_to_log(simulate_pages(rng, 200, p, q, 0.5 * leave, 0.5 * leave,
                                      np.full(n, 0.4)), n)
    model = WalkModel(page_data(log), moves="shared", clicks="shared")
    table, keep = _table(model)
    theta = model.initial_point(rng)
    theta[-1] = -800.0                      # click logit: probability underflows to 0
    code, lp, grad = _call(logp_cfunc, table, theta)
    assert model.logp(theta)[0] == -np.inf
    assert code == 4 and not np.isfinite(lp) and not grad.any()
    del keep


def test_falls_back_to_a_python_callback(monkeypatch):
    """Without nutpie's lower-level classes (another nutpie version) the walk is sampled
    through ``from_pyfunc``: the same model, so the same posterior up to Monte-Carlo error
    (the shared click probability's posterior mean and sd)."""
    pytest.importorskip("nutpie")
    from nutpie import _lib

    from bayeschain.inference import walk_sampler
    from bayeschain.inference.nuts_c import c_model

    model = _simulated_model(np.random.default_rng(8), 6, 1500, moves="shared",
                             clicks="shared")
    fast, _ = walk_sampler.sample(model, draws=300, tune=200, seed=1)
    monkeypatch.delattr(_lib, "PyMcModel")
    assert c_model(model, lambda s: model.initial_point(np.random.default_rng(s))) is None
    slow, _ = walk_sampler.sample(model, draws=300, tune=200, seed=1)
    a, b = fast["click"][..., 0].ravel(), slow["click"][..., 0].ravel()
    se = np.sqrt(a.var() / 150 + b.var() / 150)        # ESS of 150 draws each, at least
    assert abs(a.mean() - b.mean()) < 4 * se
    assert 0.7 < a.std() / b.std() < 1.4
