"""Choosing a walk: the pointwise log-likelihood per page pattern against each page's own
likelihood written from its definition; LOO weighted by the pages of each pattern against
ArviZ's LOO page by page (LOO preferring the walk that generated a log: tests/cli/
test_choose.py)."""

import numpy as np
import pytest
import xarray as xr

from bayeschain.inference.walk.choice import page_loo
from bayeschain.inference.walk.data import page_data
from bayeschain.inference.walk.model import WalkModel
from bayeschain.posterior.container import Posterior
from tests.reference.walk_clicks import (
    dense_log_likelihood,
    dense_page_counts,
    pages_to_log,
    simulate_pages,
)

N = 5
SKIP = np.array([[0.8, 0.0, 0.05, 0.15], [0.6, 0.25, 0.05, 0.1], [0.55, 0.3, 0.05, 0.1],
                 [0.5, 0.35, 0.05, 0.1], [0.0, 0.6, 0.15, 0.25]])
AFTER = np.array([[0.35, 0.0, 0.25, 0.4], [0.3, 0.05, 0.25, 0.4], [0.25, 0.1, 0.25, 0.4],
                  [0.2, 0.15, 0.25, 0.4], [0.0, 0.2, 0.3, 0.5]])
CLICK = np.array([0.55, 0.4, 0.3, 0.3, 0.25])
REPEAT = np.full(N, 0.1)


def _with_boundary(rows):
    """The walk's "leave" rule at the last rank, from its definition: the forward mass
    leaves, split between next query and end in their proportion."""
    rows = rows.copy()
    f, b, r, s = rows[-1]
    rows[-1] = [0.0, b, r * (r + s + f) / (r + s), s * (r + s + f) / (r + s)]
    return rows


def test_each_pages_log_likelihood_is_its_patterns():
    rng = np.random.default_rng(21)
    pages = simulate_pages(rng, 600, *SKIP.T, CLICK, REPEAT, after_click=tuple(AFTER.T))
    data = page_data(pages_to_log(pages, N))
    model = WalkModel(data, click_moves=True)
    theta = model.initial_point(rng) + rng.normal(0, 0.3, model.ndim)
    tables = model.move_tables(theta)[:, 0]                      # (2, ranks, 4)
    skip, after = _with_boundary(tables[0]), _with_boundary(tables[1])
    click, repeat = model.click_table(theta), model.repeat_table(theta)
    got = model.pattern_log_likelihood(theta)[data.patterns.page_pattern]
    assert data.patterns.size < len(pages)                       # pages share patterns
    for k, (clicks, outcome) in enumerate(pages):
        row = int(np.searchsorted(data.page_ids, k))
        want = dense_log_likelihood(np.array([N]), *(skip.T[j][None] for j in range(4)),
                                    click[None], *dense_page_counts(clicks, outcome, N),
                                    repeat[None],
                                    after_click=tuple(after.T[j][None] for j in range(4)))
        assert got[row] == pytest.approx(want, rel=1e-10)


def _posterior(values, pattern_pages, page_pattern):
    tree = xr.DataTree.from_dict({
        "posterior": xr.Dataset({"x": (("chain", "draw"), np.zeros(values.shape[:2]))}),
        "log_likelihood": xr.Dataset({"pages": (("chain", "draw", "pattern"), values)}),
        "constant_data": xr.Dataset({"pattern_pages": (("pattern",), pattern_pages),
                                     "page_pattern": (("page",), page_pattern)},
                                    coords={"serp_id": (("page",),
                                                        np.arange(page_pattern.size))})})
    return Posterior(tree)


def test_loo_weighted_by_pages_equals_arviz_page_by_page():
    import arviz as az

    rng = np.random.default_rng(22)
    patterns = 40
    pattern_pages = rng.integers(1, 30, patterns)
    page_pattern = rng.permutation(np.repeat(np.arange(patterns), pattern_pages))
    values = rng.normal(-2.0, 0.3, (2, 400, patterns)) \
        + rng.normal(0, 1, patterns)[None, None] * rng.gamma(2, 0.2, (2, 400, 1))
    got = page_loo(_posterior(values, pattern_pages, page_pattern))
    per_page = values[:, :, page_pattern]
    ds = xr.Dataset({"pages": (("chain", "draw", "page"), per_page)})
    post = xr.Dataset({"x": (("chain", "draw"), np.zeros((2, 400)))})
    data = xr.DataTree.from_dict({"posterior": post, "log_likelihood": ds}) \
        if int(az.__version__.split(".")[0]) >= 1 else \
        az.InferenceData(posterior=post, log_likelihood=ds)
    want = az.loo(data)
    elpd = getattr(want, "elpd", None)
    elpd = want["elpd_loo"] if elpd is None else elpd
    p_loo = getattr(want, "p", None)
    p_loo = want["p_loo"] if p_loo is None else p_loo
    assert got.pages == page_pattern.size and got.patterns == patterns
    assert got.elpd == pytest.approx(float(elpd), rel=1e-10)
    assert got.se == pytest.approx(float(want.se if hasattr(want, "se") else want["se"]),
                                   rel=1e-8)
    assert got.p_loo == pytest.approx(float(p_loo), rel=1e-8)

