"""The walk whose click decision is made once (spec ``walk-once``): its exact likelihood
against users simulated one step at a time from its definition (the ranks examined kept
as a set), against the default walk's dense likelihood at ``kappa = 1``, its gradient
against finite differences, and its fit against the truth of simulated logs."""

import collections
import warnings

import numpy as np
import pytest

import bayeschain
from bayeschain.inference.walk.data import page_data
from bayeschain.inference.walk.model import WalkModel
from bayeschain.inference.walk.once import (
    ClickSequences,
    DecidedOnce,
    click_sequences,
    log_likelihood,
)
from bayeschain.posterior.walk import expected_visits
from tests.reference.walk_clicks import (
    dense_log_likelihood,
    dense_page_counts,
    once_sequence_probability,
    pages_to_log,
    simulate_pages,
)

OUTCOME = {"next_query": 0, "end": 1}
N = 4
F = np.array([0.6, 0.5, 0.45, 0.0])
B = np.array([0.0, 0.25, 0.3, 0.35])
LEAVE = 1 - F - B
FC = np.array([0.3, 0.35, 0.4, 0.0])
BC = np.array([0.0, 0.3, 0.2, 0.3])
LC = 1 - FC - BC
C = np.array([0.4, 0.3, 0.25, 0.2])
RHO = np.array([0.1, 0.05, 0.2, 0.1])
SKIP = np.c_[F, B, 0.4 * LEAVE, 0.6 * LEAVE]
AFTER = np.c_[FC, BC, 0.5 * LC, 0.5 * LC]


def _sequences(counter, n=N):
    keys = list(counter)
    return keys, ClickSequences.of([n] * len(keys), [OUTCOME[o] for _, o in keys],
                                   [len(cl) for cl, _ in keys],
                                   [r - 1 for cl, _ in keys for r in cl])


@pytest.mark.parametrize("after_click", [None, AFTER], ids=["moves", "moves-by-click"])
def test_sequence_probabilities_are_the_simulated_users_frequencies(after_click):
    """The 15 commonest (click sequence, outcome) pairs of 100,000 pages walked by users
    who click a result examined before with 0.3 of its chance: each within 4.5 standard
    errors of its exact probability; and the simulation rejects the fresh walk
    (``kappa = 1``) by more than 10 standard errors somewhere."""
    rng = np.random.default_rng(1)
    pages = simulate_pages(rng, 100_000, F, B, 0.4 * LEAVE, 0.6 * LEAVE, C, repeat=RHO,
                           after_click=None if after_click is None else tuple(after_click.T),
                           second_look=0.3)
    top = dict(collections.Counter((tuple(cl), o) for cl, o in pages).most_common(15))
    keys, seqs = _sequences(top)
    click_rows = SKIP if after_click is None else after_click
    freq = np.array([top[k] for k in keys]) / len(pages)
    z = {}
    for kappa in (0.3, 1.0):
        p = np.exp(log_likelihood(seqs, SKIP, click_rows, C, kappa, RHO, gradient=False)[1])
        z[kappa] = np.abs(freq - p) / np.sqrt(p * (1 - p) / len(pages))
    assert z[0.3].max() < 4.5, z[0.3]
    assert z[1.0].max() > 10, z[1.0]


def test_kappa_one_is_the_default_walks_likelihood():
    """With every arrival a fresh chance the recursion over (rank, deepest rank) gives the
    per-term likelihood of the default walk (dense linear algebra, written apart)."""
    rng = np.random.default_rng(2)
    pages = simulate_pages(rng, 300, F, B, 0.4 * LEAVE, 0.6 * LEAVE, C, repeat=RHO,
                           after_click=tuple(AFTER.T))
    counter = collections.Counter((tuple(cl), o) for cl, o in pages)
    keys, seqs = _sequences(counter)
    ll, seq_ll, _ = log_likelihood(seqs, SKIP, AFTER, C, 1.0, RHO, gradient=False)
    rows = lambda m, k: m[None, :, k]          # noqa: E731
    for (clicks, outcome), mine in zip(keys[:20], seq_ll[:20], strict=False):
        counts = dense_page_counts(list(clicks), outcome, N)
        ref = dense_log_likelihood([N], rows(SKIP, 0), rows(SKIP, 1), rows(SKIP, 2),
                                   rows(SKIP, 3), C[None], *counts, repeat=RHO[None],
                                   after_click=tuple(rows(AFTER, k) for k in range(4)))
        assert mine == pytest.approx(ref, rel=1e-10, abs=1e-12)
    # every page counted: the pages themselves, grouped by the code into sequences
    every = ClickSequences.of([N] * len(pages), [OUTCOME[o] for _, o in pages],
                              [len(cl) for cl, _ in pages], [r - 1 for cl, _ in pages for r in cl])
    assert every.size == len(keys) and every.pages.sum() == len(pages)
    total = log_likelihood(every, SKIP, AFTER, C, 1.0, RHO, gradient=False)[0]
    assert total == pytest.approx(float(np.dot([counter[k] for k in keys], seq_ll)))
    assert ll == pytest.approx(seq_ll.sum())


@pytest.mark.parametrize("rescale", [False, True], ids=["leave", "rescale"])
def test_gradient_is_the_finite_difference_of_the_log_likelihood(rescale):
    """With respect to every move (before the boundary at the page's last rank, which
    ``rescale`` or ``leave`` redistributes), click, repeat and ``kappa``, on pages of two
    lengths."""
    rng = np.random.default_rng(3)
    pages = simulate_pages(rng, 500, F, B, 0.4 * LEAVE, 0.6 * LEAVE, C, repeat=RHO,
                           after_click=tuple(AFTER.T), second_look=0.4)
    short = simulate_pages(rng, 200, F[:3], B[:3], 0.4 * LEAVE[:3], 0.6 * LEAVE[:3], C[:3],
                           repeat=RHO[:3], second_look=0.4)
    keys = list(collections.Counter((tuple(cl), o) for cl, o in pages)) + \
        list(collections.Counter((tuple(cl), o) for cl, o in short))
    lengths = [N if k in {(tuple(cl), o) for cl, o in pages} else 3 for k in keys]
    seqs = ClickSequences.of(lengths, [OUTCOME[o] for _, o in keys],
                             [len(cl) for cl, _ in keys], [r - 1 for cl, _ in keys for r in cl])
    skip = SKIP.copy()
    skip[-1] = (0.2, 0.3, 0.2, 0.3)          # forward mass at the last rank: the boundary's
    x0 = np.r_[skip.ravel(), AFTER.ravel(), C, 0.4, RHO]

    def f(x):
        return log_likelihood(seqs, x[:16].reshape(4, 4), x[16:32].reshape(4, 4), x[32:36],
                              x[36], x[37:41], rescale=rescale)

    ll, _, g = f(x0)
    assert np.isfinite(ll)
    grad = np.r_[g[0].ravel(), g[1].ravel(), g[2], g[3], g[4]]
    h = 1e-6
    fd = np.array([(f(x0 + h * e)[0] - f(x0 - h * e)[0]) / (2 * h) for e in np.eye(x0.size)])
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-5 * np.abs(fd).max())


@pytest.fixture(scope="module")
def small_log():
    rng = np.random.default_rng(4)
    pages = simulate_pages(rng, 2_000, F, B, 0.4 * LEAVE, 0.6 * LEAVE, C, repeat=RHO,
                           second_look=0.3)
    return pages_to_log(pages, N), pages      # a page's serp_id is its index in pages


def _rows(rng, n):
    rows = rng.dirichlet(np.ones(4), size=n)
    rows[0, 1] = 0.0                       # no backward move from rank 1
    return rows / rows.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("n", [1, 2, 7, 30])
def test_band_solves_are_the_dense_systems_answer(n):
    """``I - Q_s`` over the states (rank, deepest rank), written densely from the walk's
    definition (a move to an examined rank clicks with ``kappa c``, the first arrival at a
    new one with ``c``), solved by NumPy: the kernels' band factors and solves, both
    ways, to rounding."""
    from bayeschain.inference.walk.once import lu_factor_kernel, lu_solve_kernel, state_layout

    rng = np.random.default_rng(n)
    lay = state_layout(n)
    skip, c, kappa = _rows(rng, n), rng.uniform(0.05, 0.9, n), 0.3
    dense = np.eye(lay.size)
    for a, b, fresh, forward in zip(lay.src, lay.tgt, lay.fresh, lay.forward, strict=True):
        click = c[lay.rank[b]] * (1.0 if fresh else kappa)
        dense[a, b] -= skip[lay.rank[a], 0 if forward else 1] * (1.0 - click)
    band = np.zeros((lay.size, n + 3))
    for i, j in zip(*np.nonzero(dense), strict=True):
        band[i, j - i + 1] = dense[i, j]
    lu_factor_kernel(band)
    rhs = rng.normal(size=(lay.size, 3))
    for trans, matrix in ((False, dense), (True, dense.T)):
        x = rhs.copy()
        lu_solve_kernel(band, x, trans)
        np.testing.assert_allclose(x, np.linalg.solve(matrix, rhs), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("rescale", [False, True], ids=["leave", "rescale"])
@pytest.mark.parametrize("n", [3, 5])
def test_sequence_probabilities_are_the_examined_sets_exact_answer(n, rescale):
    """Against a linear system over the *sets* of ranks examined (not the deepest rank),
    written from the definition: moves after a click apart, repeats, every outcome,
    ``kappa`` 0.37, to rounding."""
    rng = np.random.default_rng(n)
    skip, after = _rows(rng, n), _rows(rng, n)
    c, rho = rng.uniform(0.1, 0.7, n), rng.uniform(0.0, 0.3, n)
    cases = [((), 0), ((), 2), ((0,), 1), ((1,), 0), ((0, 0), 1), ((2, 0), 2),
             ((0, 2, 1), 0), ((n - 1,), 1), ((1, 1, 0, 1), 2), ((n - 1, 0, n - 1), 0)]
    seqs = ClickSequences.of([n] * len(cases), [o for _, o in cases],
                             [len(cl) for cl, _ in cases], [r for cl, _ in cases for r in cl])
    mine = log_likelihood(seqs, skip, after, c, 0.37, rho, rescale=rescale,
                          gradient=False)[1]
    exact = [np.log(once_sequence_probability(cl, o, skip, after, c, 0.37, rho, rescale))
             for cl, o in cases]
    np.testing.assert_allclose(mine, exact, rtol=1e-10)


def test_density_gradient_is_its_finite_difference(small_log):
    """The sampled density (priors, the walk's parametrisation, this likelihood) and its
    gradient with respect to every coordinate; each page's pointwise log-likelihood is
    its own clicks' exact probability (the pages as the simulator walked them)."""
    small_log, pages = small_log
    data = page_data(small_log, clicks="rank", default_length=N)
    target = DecidedOnce(WalkModel(data, reclicks="once"), click_sequences(small_log, data))
    theta = target.initial_point(np.random.default_rng(0))
    lp, grad = target.logp(theta)
    h = 1e-6
    fd = np.array([(target.logp(theta + h * e)[0] - target.logp(theta - h * e)[0]) / (2 * h)
                   for e in np.eye(theta.size)])
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5 * np.abs(fd).max())
    m = target.model
    rows = m.move_tables(theta)[0, 0]
    per_page = target.pattern_log_likelihood(theta)[target.sequences.page_sequence]
    for p in np.random.default_rng(1).choice(len(pages), 12, replace=False):
        clicks, outcome = pages[data.page_ids[p]]
        exact = once_sequence_probability([r - 1 for r in clicks], OUTCOME[outcome], rows,
                                          rows, m.click_table(theta), m.reclick_factor(theta),
                                          m.repeat_table(theta))
        assert per_page[p] == pytest.approx(np.log(exact), rel=1e-10)


def test_moves_after_a_click_are_refused_with_the_decision_made_once(small_log):
    """Whether an arrival clicks would then depend on the ranks examined before, so the
    walk over ranks with the clicks marginalised is not Markov: refused, not fitted."""
    small_log = small_log[0]
    data = page_data(small_log, clicks="rank", default_length=N)
    with pytest.raises(bayeschain.ParameterError, match="walk over ranks"):
        WalkModel(data, click_moves=True, reclicks="once")


def test_fit_recovers_the_simulated_reader():
    """8,000 pages of 10 results walked by users who click a result examined before with
    0.15 of its chance: ``bayeschain.fit(log, "walk-once")`` with its defaults, no
    warning; every true per-rank move and click inside its 99% interval but at most one
    (19 moves and 10 clicks: 0.3 expected outside), ``kappa`` and ``E[H]`` inside their
    95% intervals; the default walk (a fresh chance at every arrival) fitted to the same
    log puts E[H] outside its own 95% interval.  8,000 pages: 26.6 s alone against 31.4 s
    at 15,000; the pages of seeds 5-8 pass."""
    rng = np.random.default_rng(5)
    n = 10
    ranks = np.arange(1, n + 1)
    f = 0.75 - 0.03 * ranks
    f[-1] = 0.0
    b = np.r_[0.0, np.full(n - 1, 0.12)]
    leave = 1 - f - b
    c = 0.45 / np.sqrt(ranks)
    rho = np.full(n, 0.08)
    pages = simulate_pages(rng, 8_000, f, b, 0.6 * leave, 0.4 * leave, c, repeat=rho,
                           second_look=0.15)
    log = pages_to_log(pages, n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        post = bayeschain.fit(log, "walk-once")
    p = post.posterior

    def outside(name, truth, sel=None):
        q = p[name].quantile([0.005, 0.995], dim=("chain", "draw")).values
        q = q if sel is None else q[(slice(None),) + sel]
        return int(((truth < q[0]) | (truth > q[1])).sum())

    missed = (outside("walk", f[:-1], (slice(0, n - 1), 0))
              + outside("walk", b[1:], (slice(1, n), 1)) + outside("click", c))
    assert missed <= 1
    lo, hi = p["second_look"].quantile([0.025, 0.975]).values
    assert lo < 0.15 < hi
    truth = bayeschain.posterior_from_parameters(
        {"walk": np.c_[f, b, 0.6 * leave, 0.4 * leave][None]})
    true_h = expected_visits(truth, n)[0].sum()
    h = expected_visits(post, n).sum(axis=1)
    assert np.quantile(h, 0.025) < true_h < np.quantile(h, 0.975)
    fresh = expected_visits(bayeschain.fit(log, "walk"), n).sum(axis=1)
    assert not np.quantile(fresh, 0.025) < true_h < np.quantile(fresh, 0.975)


def test_pages_longer_than_twenty_results_are_refused_naming_the_walks_that_take_them():
    """The states grow with the square of the page's length: a log with a page of 21
    results meets an error that counts them and names the walks that take any length."""
    n = 21
    f = np.r_[np.full(n - 1, 0.5), 0.0]
    b = np.r_[0.0, np.full(n - 1, 0.2)]
    pages = simulate_pages(np.random.default_rng(6), 30, f, b, 0.5 * (1 - f - b),
                           0.5 * (1 - f - b), np.full(n, 0.3))
    with pytest.raises(bayeschain.ParameterError, match=r"at most 20 results.*30 pages.*walk"):
        bayeschain.fit(pages_to_log(pages, n), "walk-once")


def test_a_density_without_a_c_callback_is_sampled_through_the_python_one(small_log):
    """The sampler picks the Python callback for it by itself, and refuses to force C."""
    from bayeschain.inference.walk import sampler

    log = small_log[0]
    data = page_data(log, clicks="rank", default_length=N)
    target = DecidedOnce(WalkModel(data, reclicks="once"), click_sequences(log, data))

    def init(seed):
        return target.initial_point(np.random.default_rng(seed))

    assert sampler.compiled_model(target, init)[1] == sampler.PYTHON_PATH
    with pytest.raises(bayeschain.ParameterError, match="no C callback"):
        sampler.compiled_model(target, init, path="c")
