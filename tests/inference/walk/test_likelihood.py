"""The examination walk's page likelihood: against its dense definition, finite
differences and the frequencies of pages walked by an independent simulator."""

import numpy as np
import pytest

from bayeschain.inference.walk.data import page_data
from bayeschain.inference.walk.likelihood import (
    LANES,
    NARROW_LANES,
    ClickCounts,
    block_lanes,
    blocks,
    table_log_likelihood,
    walk_log_likelihood,
)
from bayeschain.inference.walk.model import WalkModel
from tests.reference.walk_clicks import (
    damped_page_counts,
    damped_page_log_likelihood,
    dense_log_likelihood,
    dense_page_counts,
    page_counts,
    pages_to_log,
    simulate_document_pages,
    simulate_pages,
)


def random_configs(rng, n_cfg=9, width=7):
    lengths = rng.integers(1, width + 1, n_cfg)
    lengths[0] = width
    raw = rng.dirichlet(np.ones(4), size=(n_cfg, width))
    f, b, r, s = (raw[..., k].copy() for k in range(4))
    c = rng.uniform(0.05, 0.9, (n_cfg, width))
    q = rng.uniform(0.0, 0.5, (n_cfg, width))
    first = rng.integers(0, 4, (n_cfg, width)).astype(float)
    none = rng.integers(0, 4, (n_cfg, 3)).astype(float)
    moves = rng.integers(0, 3, (n_cfg, width, width)).astype(float)
    ends = rng.integers(0, 3, (n_cfg, width, 3)).astype(float)
    for g, n in enumerate(lengths):
        first[g, n:] = 0
        moves[g, n:] = 0
        moves[g, :, n:] = 0
        ends[g, n:] = 0
        b[g, 0] = 0.0
        f[g, n - 1] = 0.0
        if n == 1:
            moves[g] = 0                 # one rank: no move can reach another click
    return lengths, (f, b, r, s, c), (first, none, moves, ends), q


@pytest.fixture(params=["narrow", "wide"])
def width(request, monkeypatch):
    """Blocks of :data:`NARROW_LANES` or of :data:`LANES` items, the other width priced
    out of :func:`blocks`' choice: the lanes the drivers run."""
    from bayeschain.inference.walk import likelihood

    wide = request.param == "wide"
    monkeypatch.setattr(likelihood, "NARROW_PENALTY", np.inf if wide else 0.0)
    return LANES if wide else NARROW_LANES


def test_kernel_equals_the_dense_definition(width):
    rng = np.random.default_rng(0)
    for k in range(6):
        lengths, rows, dense, q = random_configs(rng)
        q = q if k % 2 else None                      # with and without repeats
        counts = ClickCounts.from_dense(*dense)
        assert block_lanes(blocks(lengths, counts.state_ptr)[1]) == width
        got = walk_log_likelihood(lengths, *rows, counts, q, gradient=False)
        want = dense_log_likelihood(lengths, *rows, *dense, q)
        assert got == pytest.approx(want, rel=1e-12)


def test_kernel_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    lengths, rows, dense, q = random_configs(rng, n_cfg=4, width=5)
    counts = ClickCounts.from_dense(*dense)
    _, grads = walk_log_likelihood(lengths, *rows, counts, q)
    names = ("forward", "backward", "reformulate", "stop", "click", "repeat")
    params = list(rows) + [q]
    h = 1e-6
    for k, name in enumerate(names):
        for g, n in enumerate(lengths):
            for i in range(n):
                if (name == "backward" and i == 0) or (name == "forward" and i == n - 1):
                    assert grads[name][g, i] == 0.0          # the move does not exist
                    continue
                up = [x.copy() for x in params]
                dn = [x.copy() for x in params]
                up[k][g, i] += h
                dn[k][g, i] -= h
                fd = (dense_log_likelihood(lengths, *up[:5], *dense, up[5])
                      - dense_log_likelihood(lengths, *dn[:5], *dense, dn[5])) / (2 * h)
                assert grads[name][g, i] == pytest.approx(fd, rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("boundary", ["leave", "rescale"])
def test_tables_with_the_boundary_rule_equal_the_dense_definition(boundary):
    """Positions taking rows of a move table: at the last rank the forward mass leaves the
    page (split between next query and end in their proportion), or is spread over the
    other moves (MsM)."""
    rng = np.random.default_rng(2)
    lengths, _, dense, _ = random_configs(rng, n_cfg=6, width=6)
    table = rng.dirichlet(np.ones(4), size=6)             # one row per rank
    click = rng.uniform(0.1, 0.8, 6)
    repeat = rng.uniform(0.0, 0.4, 6)
    index = np.tile(np.arange(6), (6, 1))
    index = np.where(index < lengths[:, None], index, -1)
    got, _, _, _ = table_log_likelihood(lengths, index, index, table, click,
                                        ClickCounts.from_dense(*dense), repeat,
                                        boundary=boundary)
    f, b, r, s = (np.tile(table[:, k], (6, 1)) for k in range(4))
    c = np.tile(click, (6, 1))
    for g, n in enumerate(lengths):
        b[g, 0] = 0.0
        last = n - 1
        if boundary == "leave":
            share = r[g, last] / (r[g, last] + s[g, last])
            r[g, last] += f[g, last] * share
            s[g, last] += f[g, last] * (1 - share)
        else:
            rest = b[g, last] + r[g, last] + s[g, last]
            b[g, last], r[g, last], s[g, last] = (x / rest for x in (b[g, last], r[g, last],
                                                                     s[g, last]))
        f[g, last] = 0.0
    assert got == pytest.approx(dense_log_likelihood(lengths, f, b, r, s, c, *dense,
                                                     np.tile(repeat, (6, 1))), rel=1e-12)


def assert_gradient_is_central_differences(model, theta, rel=1e-5, h=1e-6):
    """The log density's gradient at ``theta`` against central differences in every
    direction."""
    lp, grad = model.logp(theta)
    assert np.isfinite(lp)
    for k in range(model.ndim):
        e = np.zeros(model.ndim)
        e[k] = h
        fd = (model.logp(theta + e)[0] - model.logp(theta - e)[0]) / (2 * h)
        assert grad[k] == pytest.approx(fd, rel=rel, abs=1e-5), k


def rows_with_the_boundary(model, theta):
    """The model's moves (forward, backward, reformulate, stop) per rank with the
    ``leave`` rule applied by hand: the last rank's forward mass leaves."""
    f, b, r, s = model.move_tables(theta)[0, 0].T.copy()
    share = r[-1] / (r[-1] + s[-1])
    r[-1], s[-1], f[-1] = r[-1] + f[-1] * share, s[-1] + f[-1] * (1 - share), 0.0
    return f, b, r, s


@pytest.mark.parametrize("variant", [dict(), dict(moves="shared", clicks="shared"),
                                     dict(boundary="rescale"), dict(backward=False),
                                     dict(click_moves=True)])
def test_model_log_density_gradient(variant):
    """The whole log posterior (trend, softmax and logistic links, priors, likelihood)
    against central differences in every direction."""
    rng = np.random.default_rng(3)
    forward, backward = np.linspace(0.75, 0.55, 6), np.full(6, 0.1)
    if variant.get("backward") is False:
        backward = np.zeros(6)
    leave = 1 - forward - backward
    pages = simulate_pages(rng, 300, forward, backward, 0.3 * leave, 0.7 * leave,
                           np.linspace(0.5, 0.2, 6))
    model = WalkModel(page_data(pages_to_log(pages, 6)), **variant)
    theta = model.initial_point(rng) + rng.normal(0, 0.3, model.ndim)
    assert_gradient_is_central_differences(model, theta)


def _document_pages(rng, n=5, n_docs=8, n_pages=300, n_layouts=6, reclicks=False):
    """Pages of ``n`` results showing ``n_docs`` documents of one query in ``n_layouts``
    layouts."""
    att = rng.uniform(0.2, 0.7, n_docs)
    layouts = [rng.choice(n_docs, n, replace=False) for _ in range(n_layouts)]
    shown = [layouts[k] for k in rng.integers(0, len(layouts), n_pages)]
    f, b = np.linspace(0.75, 0.6, n), np.r_[0.0, np.full(n - 1, 0.1)]
    leave = 1 - f - b
    pages = simulate_document_pages(rng, n_pages, f, b, 0.3 * leave, 0.7 * leave, att,
                                    shown, offset=np.linspace(0.0, -0.8, n))
    log = pages_to_log(pages, n, documents=[[f"doc{d}" for d in s] for s in shown],
                       queries=["q"] * n_pages)
    return pages, shown, page_data(log, clicks="document", reclicks=reclicks)


def test_click_offsets_by_rank_give_the_dense_likelihood_and_its_gradient():
    """Attractiveness per document with a click offset by rank: a document at rank ``i``
    clicks with ``logistic(logit alpha_d + delta_i)``.  The model's log-likelihood equals
    the dense definition page by page (each page's own click probabilities built from
    the document it shows), and the log density's gradient equals central differences."""
    rng = np.random.default_rng(8)
    n = 5
    pages, shown, data = _document_pages(rng, n)
    model = WalkModel(data, clicks="document", rank_offsets=True)
    theta = model.initial_point(rng) + rng.normal(0, 0.3, model.ndim)
    offset = model.offset_table(theta)
    assert offset[0] == 0.0 and np.all(offset[1:] != 0.0)
    alpha = model.click_table(theta)
    code = {d: k for k, d in enumerate(data.documents["doc_id"])}
    f, b, r, s = rows_with_the_boundary(model, theta)
    want = 0.0
    for (clicks, outcome), docs in zip(pages, shown, strict=True):
        a = np.array([alpha[code[f"doc{d}"]] for d in docs])
        c = 1 / (1 + np.exp(-(np.log(a / (1 - a)) + offset)))
        want += dense_log_likelihood([n], f[None], b[None], r[None], s[None], c[None],
                                     *dense_page_counts(clicks, outcome, n),
                                     model.repeat_table(theta)[None])
    got = model.pattern_log_likelihood(theta) @ data.patterns.pages
    assert got == pytest.approx(want, rel=1e-12)
    assert_gradient_is_central_differences(model, theta, rel=1e-4)


@pytest.mark.parametrize("lanes", [LANES, NARROW_LANES])
def test_many_page_layouts_side_by_side_give_the_dense_likelihood_and_its_gradient(lanes):
    """A log of many configurations runs them in full blocks of :data:`LANES` lanes (a
    lane holding up to 16 left states, configurations of different numbers of states side
    by side, some with positions clicked before): the model's log-likelihood still equals
    the dense definition page by page (damped re-clicks, the clicked set carried along
    each page), and its gradient equals central differences; and so it does with the
    same items in blocks of :data:`NARROW_LANES`, the narrow kernel's."""
    rng = np.random.default_rng(11)
    n = 5
    pages, shown, data = _document_pages(rng, n, n_docs=40, n_pages=3000, n_layouts=400,
                                         reclicks=True)
    items, starts = blocks(data.lengths, data.counts.state_ptr)
    assert np.diff(starts).max() == LANES and len(starts) > 4
    assert data.counts.clicked.any()
    model = WalkModel(data, clicks="document", reclicks="damped")
    starts = np.r_[np.arange(0, len(items), lanes), len(items)].astype(np.int64)
    assert block_lanes(starts) == lanes
    model._blocks, model._arguments = (items, starts), None    # the kernel reads them
    theta = model.initial_point(rng) + rng.normal(0, 0.3, model.ndim)
    kappa = model.reclick_factor(theta)
    alpha = model.click_table(theta)
    code = {d: k for k, d in enumerate(data.documents["doc_id"])}
    f, b, r, s = rows_with_the_boundary(model, theta)
    rho = model.repeat_table(theta)
    want = sum(damped_page_log_likelihood(clicks, outcome, f, b, r, s,
                                          np.array([alpha[code[f"doc{d}"]] for d in docs]),
                                          rho, kappa)
               for (clicks, outcome), docs in zip(pages, shown, strict=True))
    got = model.pattern_log_likelihood(theta) @ data.patterns.pages
    assert got == pytest.approx(want, rel=1e-12)
    assert_gradient_is_central_differences(model, theta, rel=1e-4)


def test_a_log_of_few_work_items_runs_narrow_blocks_and_many_run_wide():
    """The blocks' width is chosen by their modelled work: one configuration of ten
    results (every page the same layout: most simulated logs) runs blocks of
    :data:`NARROW_LANES`, whose one block at :data:`LANES` would leave most lanes empty;
    400 layouts run blocks of :data:`LANES`."""
    rng = np.random.default_rng(3)
    n = 10
    f = np.r_[np.full(n - 1, 0.6), 0.0]
    b = np.r_[0.0, np.full(n - 1, 0.15)]
    pages = simulate_pages(rng, 2000, f, b, 0.3 * (1 - f - b), 0.7 * (1 - f - b),
                           np.full(n, 0.3))
    data = page_data(pages_to_log(pages, n), clicks="rank", default_length=n)
    items, starts = blocks(data.lengths, data.counts.state_ptr)
    assert np.diff(starts).max() <= NARROW_LANES and block_lanes(starts) == NARROW_LANES
    _, _, many = _document_pages(rng, 5, n_docs=40, n_pages=3000, n_layouts=400)
    assert block_lanes(blocks(many.lengths, many.counts.state_ptr)[1]) == LANES


def test_page_probabilities_match_the_frequencies_of_simulated_pages():
    """The likelihood of one page is the probability of exactly what the log shows: its
    ordered clicks (immediate repeats and revisits included) and what followed.  200,000
    pages from the
    independent simulator: every page pattern seen 500 times or more has a frequency
    within 5 standard errors of exp(log-likelihood of that page)."""
    rng = np.random.default_rng(4)
    n = 4
    forward = np.array([0.7, 0.5, 0.45, 0.0])
    backward = np.array([0.0, 0.25, 0.3, 0.4])
    leave = 1 - forward - backward
    reformulate, stop = 0.4 * leave, 0.6 * leave
    click = np.array([0.5, 0.3, 0.25, 0.4])
    repeat = np.array([0.3, 0.2, 0.1, 0.25])
    pages = simulate_pages(rng, 200_000, forward, backward, reformulate, stop, click, repeat)
    table = np.stack([forward, backward, reformulate, stop], axis=1)
    seen = _frequencies_match(pages, n, lambda counts: table_log_likelihood(
        np.array([n]), *[np.arange(n)[None, :]] * 2, table, click, counts, repeat)[0])
    assert any(len(c) >= 2 and c[1] < c[0] for c in seen)    # backward moves are checked,
    assert any(len(c) >= 2 and c[1] == c[0] for c in seen)   # and repeats


def click_moves(rng, lengths, width):
    """Moves after a click, with the boundary applied as in :func:`random_configs`."""
    raw = rng.dirichlet(np.ones(4), size=(lengths.size, width))
    fc, bc, rc, sc = (raw[..., k].copy() for k in range(4))
    for g, n in enumerate(lengths):
        bc[g, 0] = 0.0
        fc[g, n - 1] = 0.0
    return fc, bc, rc, sc


def test_moves_after_a_click_equal_the_dense_definition(width):
    """The walk whose moves after a click differ from those after a skipped snippet:
    ``K = P_c M diag(c)``, ``e = o_c + P_c M (a o)``, with ``M`` built from the moves
    after no click (blocks of either width)."""
    rng = np.random.default_rng(5)
    for k in range(4):
        lengths, rows, dense, q = random_configs(rng)
        after = click_moves(rng, lengths, rows[0].shape[1])
        q = q if k % 2 else None
        counts = ClickCounts.from_dense(*dense)
        assert block_lanes(blocks(lengths, counts.state_ptr)[1]) == width
        got = walk_log_likelihood(lengths, *rows, counts, q, after_click=after,
                                  gradient=False)
        want = dense_log_likelihood(lengths, *rows, *dense, q, after_click=after)
        assert got == pytest.approx(want, rel=1e-12)
        same = dense_log_likelihood(lengths, *rows, *dense, q)
        assert abs(got - same) > 1e-3                 # the moves after a click matter


def test_gradient_of_the_moves_after_a_click_matches_finite_differences():
    rng = np.random.default_rng(6)
    lengths, rows, dense, q = random_configs(rng, n_cfg=4, width=5)
    after = click_moves(rng, lengths, 5)
    counts = ClickCounts.from_dense(*dense)
    _, grads = walk_log_likelihood(lengths, *rows, counts, q, after_click=after)
    names = ("forward", "backward", "reformulate", "stop", "click", "repeat",
             "forward_click", "backward_click", "reformulate_click", "stop_click")
    params = list(rows) + [q] + list(after)
    h = 1e-6

    def ll(p):
        return dense_log_likelihood(lengths, *p[:5], *dense, p[5], after_click=p[6:])

    for k, name in enumerate(names):
        for g, n in enumerate(lengths):
            for i in range(n):
                if (name.startswith("backward") and i == 0) or \
                        (name.startswith("forward") and i == n - 1):
                    assert grads[name][g, i] == 0.0
                    continue
                up = [x.copy() for x in params]
                dn = [x.copy() for x in params]
                up[k][g, i] += h
                dn[k][g, i] -= h
                fd = (ll(up) - ll(dn)) / (2 * h)
                assert grads[name][g, i] == pytest.approx(fd, rel=1e-5, abs=1e-5), name


def test_pages_of_a_walk_whose_moves_depend_on_the_click_match_simulated_frequencies():
    """200,000 pages from the independent simulator of the click-dependent walk (users
    who, after a click, mostly leave satisfied or go on, and after a skipped snippet go
    on or back): every page pattern seen 500 times or more has a frequency within 5
    standard errors of exp(log-likelihood)."""
    rng = np.random.default_rng(7)
    n = 4
    skip = np.array([[0.75, 0.0, 0.1, 0.15], [0.6, 0.2, 0.08, 0.12],
                     [0.5, 0.3, 0.08, 0.12], [0.0, 0.5, 0.2, 0.3]])
    after = np.array([[0.45, 0.0, 0.2, 0.35], [0.35, 0.05, 0.2, 0.4],
                      [0.3, 0.1, 0.2, 0.4], [0.0, 0.15, 0.35, 0.5]])
    click = np.array([0.5, 0.35, 0.3, 0.4])
    repeat = np.array([0.2, 0.1, 0.1, 0.15])
    pages = simulate_pages(rng, 200_000, *skip.T, click, repeat, after_click=tuple(after.T))
    _frequencies_match(pages, n, lambda counts: table_log_likelihood(
        np.array([n]), *[np.arange(n)[None, :]] * 2, skip, click, counts, repeat,
        moves_click=after)[0])


def _frequencies_match(pages, n, loglik, least=500):
    """Every page pattern (clicks in order, outcome) seen ``least`` times or more has a
    frequency within 5 standard errors of ``exp(loglik(its counts))``; at least 15 are
    checked.  Returns the click sequences checked."""
    patterns, freq = np.unique(np.array([repr((tuple(c), o)) for c, o in pages]),
                               return_counts=True)
    checked = []
    for pattern, count in zip(patterns, freq, strict=True):
        if count < least:
            continue
        clicks, outcome = eval(pattern)                      # noqa: S307 (our own repr)
        p = np.exp(loglik(page_counts(clicks, outcome, n)))
        se = np.sqrt(p * (1 - p) / len(pages))
        assert abs(count / len(pages) - p) < 5 * se, (pattern, count / len(pages), p)
        checked.append(clicks)
    assert len(checked) >= 15
    return checked


def _damped_walk(n=4):
    forward = np.array([0.7, 0.5, 0.45, 0.0])[:n]
    backward = np.array([0.0, 0.35, 0.3, 0.4])[:n]
    leave = 1 - forward - backward
    return (forward, backward, 0.4 * leave, 0.6 * leave, np.array([0.5, 0.3, 0.25, 0.4]),
            np.array([0.3, 0.2, 0.1, 0.25]))


def test_damped_reclicks_match_the_frequencies_of_simulated_pages():
    """A result clicked before clicks again at a later arrival with ``kappa c_i``: the
    likelihood of a page (its terms keyed by the positions clicked so far) is the
    probability of exactly what it shows.  200,000 pages from the independent simulator
    with kappa = 0.2: every pattern seen 500 times or more within 5 standard errors; and
    every page's log-likelihood equals the dense definition."""
    rng = np.random.default_rng(9)
    n, kappa = 4, 0.2
    f, b, r, s, c, rho = _damped_walk(n)
    pages = simulate_pages(rng, 200_000, f, b, r, s, c, rho, reclick=kappa)
    rows = [x[None, :] for x in (f, b, r, s, c)]

    def loglik(clicks, outcome):
        return walk_log_likelihood(np.array([n]), *rows, damped_page_counts(clicks, outcome),
                                   rho[None, :], reclick=kappa, gradient=False)

    seen = []
    for pattern in {repr((tuple(c_), o)) for c_, o in pages[:20_000]}:
        clicks, outcome = eval(pattern)                      # noqa: S307 (our own repr)
        assert loglik(list(clicks), outcome) == pytest.approx(damped_page_log_likelihood(
            list(clicks), outcome, f, b, r, s, c, rho, kappa), rel=1e-10)
    patterns, freq = np.unique(np.array([repr((tuple(c_), o)) for c_, o in pages]),
                               return_counts=True)
    for pattern, count in zip(patterns, freq, strict=True):
        if count < 500:
            continue
        clicks, outcome = eval(pattern)                      # noqa: S307 (our own repr)
        p = np.exp(loglik(list(clicks), outcome))
        se = np.sqrt(p * (1 - p) / len(pages))
        assert abs(count / len(pages) - p) < 5 * se, (pattern, count / len(pages), p)
        seen.append(clicks)
    assert len(seen) >= 15
    # a result clicked again after another click is among the checked patterns
    assert any(len(set(cl)) < len(cl) and any(x != y for x, y in zip(cl, cl[1:], strict=False))
               for cl in seen)


def test_damped_reclicks_model_density_and_gradient():
    """The fitted model with damped re-clicks: its log-likelihood from the log's pages
    (the masks of the positions clicked so far built by the page data) equals the sum of
    the dense definition over the pages, and its gradient (kappa's logit included) equals
    central differences."""
    rng = np.random.default_rng(10)
    n = 4
    f, b, r, s, c, rho = _damped_walk(n)
    pages = simulate_pages(rng, 400, f, b, r, s, c, rho, reclick=0.3)
    data = page_data(pages_to_log(pages, n), reclicks=True)
    model = WalkModel(data, reclicks="damped")
    theta = model.initial_point(rng) + rng.normal(0, 0.3, model.ndim)
    kappa = model.reclick_factor(theta)
    assert 0 < kappa < 1
    mf, mb, mr, ms = rows_with_the_boundary(model, theta)
    want = sum(damped_page_log_likelihood(clicks, outcome, mf, mb, mr, ms,
                                          model.click_table(theta), model.repeat_table(theta),
                                          kappa) for clicks, outcome in pages)
    got = model.pattern_log_likelihood(theta) @ data.patterns.pages
    assert got == pytest.approx(want, rel=1e-12)
    assert_gradient_is_central_differences(model, theta, rel=1e-4)


def _log_prior_by_hand(model, theta):
    """The walk's log prior written from the module's docstring with SciPy's densities,
    family by family: a shared logit ``a ~ N(m, prior_sd)`` (``m`` 0 for the moves, -1 for
    the clicks, -2 for the repeats); a pooled family's ``a`` the same, ``b ~ N(0, 1)``,
    ``log sigma ~ N(log deviation_sd, 0.5)``, then each rank's logit ``eta ~ N(a + b x,
    sigma)`` (centred) or its ``z ~ N(0, 1)`` (non-centred, ``eta = a + b x + sigma z``)."""
    from scipy.stats import norm

    means = {"click": -1.0, "repeat": -2.0}
    lp, at = 0.0, 0
    for fam in model.families:
        assert not fam.effect
        a = theta[at]
        lp += norm.logpdf(a, means.get(fam.name, 0.0), model.prior_sd)
        if not fam.pooled:
            at += 1
            continue
        b, log_sd = theta[at + 1], theta[at + 2]
        lp += norm.logpdf(b) + norm.logpdf(log_sd, np.log(model.deviation_sd), 0.5)
        for j in range(fam.size):
            v = theta[at + 3 + j]
            if fam.mode[j] == 1:
                lp += norm.logpdf(v, a + b * fam.x[j], np.exp(log_sd))
            else:
                assert fam.mode[j] == 0
                lp += norm.logpdf(v)
        at += fam.n_params
    assert at == model.ndim
    return lp


def test_the_log_density_is_the_likelihood_plus_the_priors_the_docstring_writes():
    """A log with ranks of many clicks (centred logits) and of few (non-centred): the
    model's log density minus its log-likelihood changes between two points as the priors
    written out with SciPy do (the kernel leaves out their constants)."""
    rng = np.random.default_rng(11)
    n = 6
    forward, backward = np.linspace(0.8, 0.5, n), np.r_[0.0, np.full(n - 1, 0.1)]
    leave = 1 - forward - backward
    pages = simulate_pages(rng, 2_500, forward, backward, 0.3 * leave, 0.7 * leave,
                           np.linspace(0.5, 0.05, n))
    data = page_data(pages_to_log(pages, n))
    model = WalkModel(data)
    modes = {f.name: set(f.mode.tolist()) for f in model.families if f.pooled}
    assert all(m == {0, 1} for m in modes.values()), modes    # both in every family
    prior = []
    for _ in range(2):
        theta = model.initial_point(rng) + rng.normal(0, 0.5, model.ndim)
        loglik = model.pattern_log_likelihood(theta) @ data.patterns.pages
        prior.append((model.logp(theta)[0] - loglik, _log_prior_by_hand(model, theta)))
    (got0, want0), (got1, want1) = prior
    assert got1 - got0 == pytest.approx(want1 - want0, rel=1e-10, abs=1e-8)
