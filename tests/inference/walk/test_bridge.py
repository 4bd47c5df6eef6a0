"""The C entry point nutpie calls equals the walk model's own log density and gradient
(which tests/inference/walk/test_likelihood.py checks against dense linear algebra and
finite differences), at random points and where the density is zero."""

import ctypes

import numpy as np
import pytest

from bayeschain.inference.walk.data import page_data
from bayeschain.inference.walk.model import WalkModel
from tests.reference.walk_clicks import pages_to_log, simulate_document_pages, simulate_pages

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


def _cfunc_equals_the_model(model, rng, times: int):
    """At ``times`` random points the cfunc's log density and gradient are the model's;
    returns the last point and the table's arrays (kept alive by the caller)."""
    from bayeschain.inference.walk.bridge import _table, logp_cfunc

    table, keep = _table(model)
    for _ in range(times):
        theta = model.initial_point(rng) + rng.normal(0, 0.5, model.ndim)
        code, lp, grad = _call(logp_cfunc, table, theta)
        want_lp, want_grad = model.logp(theta)
        assert code == 0
        assert lp == pytest.approx(want_lp, rel=1e-13)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-12, atol=1e-12)
    return theta, keep


@pytest.mark.parametrize("boundary", ["leave", "rescale"])
def test_cfunc_equals_the_model(boundary):
    from bayeschain.inference.walk.bridge import expand_cfunc

    rng = np.random.default_rng(5)
    model = _simulated_model(rng, 8, 400, boundary=boundary)
    theta, keep = _cfunc_equals_the_model(model, rng, 5)
    out = np.zeros(model.ndim)
    dbl = ctypes.POINTER(ctypes.c_double)
    assert expand_cfunc.ctypes(model.ndim, model.ndim, theta.ctypes.data_as(dbl),
                               out.ctypes.data_as(dbl), None) == 0
    np.testing.assert_array_equal(out, theta)
    del keep


def test_cfunc_equals_the_model_with_documents_and_click_offsets_by_rank():
    """The address table carries the (document, rank) click combinations."""
    rng = np.random.default_rng(6)
    n, docs = 6, 9
    layouts = [rng.choice(docs, n, replace=False) for _ in range(5)]
    shown = [layouts[k] for k in rng.integers(0, 5, 300)]
    f, b = np.linspace(0.8, 0.6, n), np.r_[0.0, np.full(n - 1, 0.1)]
    pages = simulate_document_pages(rng, 300, f, b, 0.4 * (1 - f - b), 0.6 * (1 - f - b),
                                    rng.uniform(0.2, 0.7, docs), shown,
                                    offset=np.linspace(0, -1, n))
    log = pages_to_log(pages, n, documents=[[f"d{d}" for d in s] for s in shown],
                       queries=["q"] * 300)
    model = WalkModel(page_data(log, clicks="document"), clicks="document",
                      rank_offsets=True)
    _cfunc_equals_the_model(model, rng, 3)


def test_cfunc_equals_the_model_with_damped_reclicks():
    """The address table carries the positions clicked so far and kappa's coordinate."""
    rng = np.random.default_rng(7)
    n = 6
    p, q = np.linspace(0.8, 0.6, n), np.r_[0.0, np.full(n - 1, 0.15)]
    pages = simulate_pages(rng, 400, p, q, 0.4 * (1 - p - q), 0.6 * (1 - p - q),
                           np.linspace(0.5, 0.3, n), reclick=0.3)
    model = WalkModel(page_data(pages_to_log(pages, n), reclicks=True), reclicks="damped")
    assert model.data.counts.clicked.any()
    _cfunc_equals_the_model(model, rng, 3)


def test_zero_density_is_reported_not_returned_as_a_number():
    """A click the walk cannot make (click probability 0 where the log has clicks): the
    cfunc says 4 (non-finite log density) and zeroes the gradient."""
    from bayeschain.inference.walk.bridge import _table, logp_cfunc

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


def _click_mean_and_sd_agree(a: np.ndarray, b: np.ndarray) -> None:
    """Two posteriors of the same model, up to Monte-Carlo error (300 draws in each of
    two chains: an ESS of 150 at least)."""
    a, b = a[..., 0].ravel(), b[..., 0].ravel()
    se = np.sqrt(a.var() / 150 + b.var() / 150)
    assert abs(a.mean() - b.mean()) < 4 * se
    assert 0.7 < a.std() / b.std() < 1.4


@pytest.fixture
def fresh_path_state(monkeypatch):
    """A process in which the C path has not been tried yet."""
    from bayeschain.inference.walk import sampler as walk_sampler

    monkeypatch.setitem(walk_sampler._C_PATH_STATE, "state", None)
    return walk_sampler


def test_the_c_path_is_verified_and_named(fresh_path_state, capsys):
    """On a tested nutpie the walk samples through the C callback, checked once against
    the model's own density; the statistics name the path; nothing on standard error."""
    pytest.importorskip("nutpie")
    walk_sampler = fresh_path_state
    model = _simulated_model(np.random.default_rng(8), 6, 1500, moves="shared",
                             clicks="shared")
    _, stats = walk_sampler.sample(model, draws=50, tune=50, seed=1)
    assert stats.attrs["nutpie_path"].endswith(walk_sampler.C_PATH)
    assert walk_sampler._C_PATH_STATE["state"] == ""
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("failure", ["sampler", "verification", "version"])
def test_any_failure_of_the_c_path_falls_back_to_a_python_callback(
        fresh_path_state, monkeypatch, capsys, failure):
    """Whatever breaks the C bridge (nutpie's classes refusing their arguments when the
    sampler starts, a density that disagrees with the model's, a nutpie release outside
    the tested ones) the walk is sampled through ``from_pyfunc``: the same posterior up
    to Monte-Carlo error, the statistics naming the Python path, and one line on standard
    error saying why, once per process."""
    pytest.importorskip("nutpie")
    from nutpie import _lib

    from bayeschain.inference.walk import bridge as nuts_c

    walk_sampler = fresh_path_state
    model = _simulated_model(np.random.default_rng(8), 6, 1500, moves="shared",
                             clicks="shared")
    fast, _ = walk_sampler.sample(model, draws=300, tune=200, seed=1, path="c")
    monkeypatch.setitem(walk_sampler._C_PATH_STATE, "state", None)
    if failure == "sampler":
        class Refusing:                    # nutpie's sampler class, its C entry changed
            from_pyfunc = staticmethod(_lib.PySampler.from_pyfunc)

            @staticmethod
            def from_pymc(*args):
                raise TypeError(f"from_pymc() takes 5 arguments but {len(args)} were given")

        monkeypatch.setattr(_lib, "PySampler", Refusing)
        monkeypatch.setitem(walk_sampler._C_PATH_STATE, "state", "")   # verified before
    elif failure == "verification":
        original = nuts_c._table

        def wrong_table(m):                 # the address table with another prior scale
            table, keep = original(m)
            keep[nuts_c.ARRAYS.index("scalars")] *= 3.0
            return table, keep

        monkeypatch.setattr(nuts_c, "_table", wrong_table)
    else:
        monkeypatch.setattr(nuts_c, "TESTED", ((0, 0, 1), (0, 0, 2)))
    slow, stats = walk_sampler.sample(model, draws=300, tune=200, seed=1)
    assert stats.attrs["nutpie_path"].endswith(walk_sampler.PYTHON_PATH)
    _click_mean_and_sd_agree(fast["click"], slow["click"])
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "Python callback" in err[0]
    walk_sampler.sample(model, draws=20, tune=20, seed=2)          # said once per process
    assert capsys.readouterr().err == ""


def test_the_python_path_passes_the_arrays_the_cfunc_builds():
    """The C callback hands the kernel C-contiguous arrays (``numba.carray``); the Python
    path must pass the same array types, or Numba compiles the kernel a second time (12 s
    on a cold cache) instead of loading the specialisation the callback compiled.  The
    bundled TREC Session log's counts come from a table whose target column is strided."""
    import numba

    from bayeschain.io import read_clicks
    from bayeschain.recipes import bundled_data_dir

    log = read_clicks(bundled_data_dir() / "trec_session_2013" / "sessiontrack2013.xml.gz")
    for model in (WalkModel(page_data(log)),
                  _simulated_model(np.random.default_rng(1), 6, 50, click_moves=True)):
        for name, value in model.kernel_arguments()._asdict().items():
            if isinstance(value, np.ndarray):
                assert numba.typeof(value).layout == "C", name


def test_a_read_only_draw_reuses_the_kernel_the_c_path_compiled():
    """A posterior's draws are read-only arrays; passed as they are, Numba typed them
    apart and compiled ``logp_kernel`` a second time (seconds on a cold cache)."""
    from bayeschain.inference.walk.model import compiled

    model = _simulated_model(np.random.default_rng(3), 5, 30)
    theta = model.initial_point(np.random.default_rng(4))
    model.logp(theta)
    kernel = compiled("logp_kernel")
    before = set(kernel.signatures)
    frozen = theta.copy()
    frozen.flags.writeable = False
    lp, grad = model.logp(frozen)
    model.pattern_log_likelihood(frozen)
    assert set(kernel.signatures) == before
    assert (lp, grad.tolist()) == (model.logp(theta)[0], model.logp(theta)[1].tolist())
    assert all(sig[0].mutable for sig in kernel.signatures)
