"""Attractiveness per document fitted to clicks: documents shown at several ranks are told
apart from the walk that examines them, with and without click offsets by rank and damped
re-clicks (users simulated by an independent simulator, tests/reference/walk_clicks.py)."""

import numpy as np
import pytest

import bayeschain as bc
from bayeschain.browsing import build_chain
from bayeschain.inference import expected_visits, fit, walk_parameters
from bayeschain.inference.choose import documents_route
from tests.inference.walk.test_fit import interval
from tests.reference.walk_clicks import documents_at_several_ranks

pytest.importorskip("nutpie")


def sampler_seeing_its_steps(tuned: list):
    """The default sampler, the tuning steps it is handed appended to ``tuned``."""
    from bayeschain.inference.walk.sampler import sample

    def sampler(target, **options):
        tuned.append(options["tune"])
        return sample(target, **options)

    return sampler


def test_attractiveness_per_document_is_told_apart_from_examination():
    """Documents shown at several ranks: their attractiveness and the walk are both
    recovered (99% intervals; most documents inside), by the default route (the documents
    integrated out by Laplace, as they are few beside the impressions), NUTS tuned for
    the 250 steps of ``tune = "auto"`` on that route."""
    log, attractive, f, b = documents_at_several_ranks(13)
    n = f.size
    tuned = []
    post = fit(log, seed=5, sampler=sampler_seeing_its_steps(tuned))  # clicks: per document
    assert tuned == [250]
    assert post.attrs["click_level"] == "document"
    # documents = "auto": 30 documents shown about 2,400 times each, integrated out
    assert "Laplace" in post.attrs["document_effects"]
    assert post.attrs["document_effects"].endswith(
        "documents = 'auto' chose the Laplace route: 30 documents of their own in 72,000 "
        "impressions, 2,400 per document, at least 100")
    assert documents_route(post) == "Laplace"             # as bayeschain choose shows it
    assert "whitened by the density's precision at the point, 250 tuning steps" in \
        post.attrs["document_effects"]                    # tune = "auto" on this route
    att = post.posterior["attractiveness"]
    order = [int(d[3:]) for d in att["doc_id"].values]
    draws = att.stack(s=("chain", "draw")).transpose("s", ...).values
    lo, hi = interval(draws, 0.99)
    truth = attractive[order]
    assert np.mean((lo <= truth) & (truth <= hi)) >= 0.9
    p_hat, q_hat = walk_parameters(post)
    lo, hi = interval(p_hat[:, :n - 1], 0.99)
    assert np.sum((f[:n - 1] < lo) | (f[:n - 1] > hi)) <= 1


@pytest.mark.parametrize("spec, seed, kappa, route, size, steps", [
    (bc.load_spec("walk").with_keys("examination", rank_offsets=True, documents="sampled"),
     17, None, "NUTS", (12_000, 200), 500),
    (bc.load_spec("walk").with_keys("examination", rank_offsets=True), 17, None, "Laplace",
     (12_000, 200), 250),
    ("walk-reclick", 20, 0.25, "Laplace", (6_000, 100), 500),
], ids=["offsets-sampled", "offsets-auto", "walk-reclick-auto"])
def test_click_offsets_and_damped_reclicks_are_told_apart_from_documents_and_the_walk(
        spec, seed, kappa, route, size, steps):
    """Documents shown at several ranks, clicked less often lower down once examined (a
    logit offset by rank, trust bias): the offsets, the documents' attractiveness, the
    walk's forward moves and E[H] of a 6-result page are recovered (99% intervals), with
    every document sampled by NUTS and by the default route (30 documents shown 2,400
    times each: integrated out by Laplace, its point reached); and ``walk-reclick`` by
    its default route, its users clicking a result clicked before with a quarter of its
    chance at a later arrival (``kappa`` 0.25, recovered too; None: fresh re-clicks), on
    half the pages in 100 layouts (1,200 impressions a document, still the Laplace
    route: 13-14 s alone with its 500 tuning steps).  NUTS tunes for ``steps``: the walk
    spec's ``tune = "auto"`` gives 500 where the documents are sampled, 250 on the Laplace
    route; ``walk-reclick`` says 500.  ``walk-reclick``'s log is seed 20's: when the
    moves' logits were centred only at ranks of 500 clicks or more, the logs of seeds 19
    and 24 (not 20-23) drew one divergent transition at target_accept 0.95 and were
    sampled again at 0.99, 34-36 s alone instead of 14-18 s (the retry has its own test,
    test_stop_on_diagnostics.py); none did with the rule of 150 clicks."""

    offset = np.array([0.0, -0.4, -0.6, -0.7, -0.8, -0.9])
    log, attractive, f, b = documents_at_several_ranks(
        seed, low=0.15, offset=offset, reclick=1.0 if kappa is None else kappa,
        pages=size[0], layouts=size[1])
    n = f.size
    tuned = []
    post = fit(log, spec, seed=5, sampler=sampler_seeing_its_steps(tuned))
    assert tuned == [steps]
    assert post.attrs["click_level"] == "document"
    assert documents_route(post) == route
    assert "not converged" not in post.attrs["document_effects"]
    if kappa is not None:
        lo, hi = np.quantile(post.posterior["reclick"].values.ravel(), [0.005, 0.995])
        assert lo <= kappa <= hi and hi - lo < 0.2
    got = post.posterior["click_offset"].stack(s=("chain", "draw")).transpose("s", ...).values
    assert np.all(got[:, 0] == 0.0)
    lo, hi = interval(got[:, 1:], 0.99)
    assert np.sum((offset[1:] < lo) | (offset[1:] > hi)) <= 1
    att = post.posterior["attractiveness"]
    order = [int(d[3:]) for d in att["doc_id"].values]
    lo, hi = interval(att.stack(s=("chain", "draw")).transpose("s", ...).values, 0.99)
    assert np.mean((lo <= attractive[order]) & (attractive[order] <= hi)) >= 0.9
    p_hat, _ = walk_parameters(post)
    lo, hi = interval(p_hat[:, :n - 1], 0.99)
    assert np.sum((f[:n - 1] < lo) | (f[:n - 1] > hi)) <= 1
    true_e_h = float(bc.chains.expected_stopping_time(build_chain("rwbm", n, p=f, q=b)))
    lo, hi = np.quantile(expected_visits(post, n).sum(axis=1), [0.005, 0.995])
    assert lo <= true_e_h <= hi


@pytest.mark.parametrize("documents", ["sampled", "mode"])
def test_pairs_shown_on_few_pages_share_one_click_chance_per_rank(documents):
    """30 documents shown on about 450 pages each, and at each position but the first,
    with probability 0.3, instead a document shown on that page alone, attractiveness
    uniform in [0.05, 0.35] (so that, over pages, such a position clicks at an arrival
    with the mean, 0.2).  The fit keeps the 30 frequent documents (recovered: 99%
    intervals) and gives the rare ones one chance per rank 2-6, ``pooled_click``, whose
    99% intervals hold 0.2; the walk is recovered; pages of another log read an unseen
    pair at rank 3 with that chance, and one at rank 1 (no rare pair there) with a draw
    from the documents' population.  The same with the documents integrated out by
    Laplace (``documents = "mode"``), the rarer pairs' chances sampled with the walk.
    3,000 pages: both variants 42 s alone against 62 s at 6,000; the pages of seeds 23-27
    pass both."""
    from bayeschain.inference.walk.prediction import pages_for
    from bayeschain.posterior.walk import page_tables
    from tests.reference.walk_clicks import pages_to_log, simulate_document_pages

    rng = np.random.default_rng(23)
    n, n_docs, n_pages = 6, 30, 3_000
    frequent = rng.uniform(0.1, 0.8, n_docs)
    layouts = [rng.choice(n_docs, n, replace=False) for _ in range(100)]
    shown, names, rare = [], [], []
    for k in rng.integers(0, len(layouts), n_pages):
        page, labels = [], []
        for i, d in enumerate(layouts[k]):
            if i > 0 and rng.random() < 0.3:
                rare.append(rng.uniform(0.05, 0.35))
                page.append(n_docs + len(rare) - 1)
                labels.append(f"rare{len(rare)}")
            else:
                page.append(d)
                labels.append(f"doc{d}")
        shown.append(page)
        names.append(labels)
    f = np.linspace(0.75, 0.6, n)
    b = np.r_[0.0, np.full(n - 1, 0.1)]
    leave = 1 - f - b
    pages = simulate_document_pages(rng, n_pages, f, b, 0.3 * leave, 0.7 * leave,
                                    np.r_[frequent, rare], shown)
    log = pages_to_log(pages, n, documents=names, queries=["q"] * n_pages)
    spec = bc.load_spec("walk").with_keys("examination", documents=documents)
    post = fit(log, spec, seed=5)                         # clicks = "auto": per document
    assert post.attrs["click_level"] == "document"
    assert ("Laplace" in post.attrs["document_effects"]) == (documents == "mode")
    # the rarer pairs' chances are coordinates of the chain: the stopping rule checked them
    assert "pooled_click" in set(post.diagnostics(sampled_only=True)["parameter"])
    att = post.posterior["attractiveness"]
    assert sorted(att["doc_id"].values) == sorted(f"doc{d}" for d in range(n_docs))
    order = [int(d[3:]) for d in att["doc_id"].values]
    lo, hi = interval(att.stack(s=("chain", "draw")).transpose("s", ...).values, 0.99)
    assert np.mean((lo <= frequent[order]) & (frequent[order] <= hi)) >= 0.9
    pooled = post.posterior["pooled_click"]
    assert list(pooled["pooled_rank"].values) == list(range(2, n + 1))
    lo, hi = interval(pooled.stack(s=("chain", "draw")).transpose("s", ...).values, 0.99)
    assert np.sum((0.2 < lo) | (0.2 > hi)) <= 1
    p_hat, _ = walk_parameters(post)
    lo, hi = interval(p_hat[:, :n - 1], 0.99)
    assert np.sum((f[:n - 1] < lo) | (f[:n - 1] > hi)) <= 1
    # another log: unseen pairs at ranks 1 and 3, known ones elsewhere
    other = pages_to_log(simulate_document_pages(rng, 1, f, b, 0.3 * leave, 0.7 * leave,
                                                 np.r_[frequent, 0.5], [[30, 1, 30, 2, 3, 4]]),
                         n, documents=[["new1", "doc1", "new", "doc2", "doc3", "doc4"]],
                         queries=["q"])
    data = pages_for(post, other, None, 1)
    rows = np.arange(10)
    tables = page_tables(post, data, rows)
    at = tables.click_index[data.page_config[0]]
    want = pooled.stack(s=("chain", "draw")).transpose("s", ...).values[rows]
    np.testing.assert_array_equal(tables.click[:, at[2]], want[:, 1])     # rank 3
    second = att.stack(s=("chain", "draw")).transpose("s", ...).values[rows]
    np.testing.assert_array_equal(tables.click[:, at[1]], second[:, order.index(1)])
    unseen = tables.click[:, at[0]]
    assert np.all((unseen > 0) & (unseen < 1))
    assert not np.isin(unseen, want).any()


def test_a_log_whose_every_pair_is_rare_predicts_with_the_pooled_chances():
    """Clicks per document asked of a log whose every pair is shown once: no document has
    its own attractiveness, the pooled chances carry every rank, and held-out prediction
    reads them (finite probabilities, no error).  The route that integrates documents out
    by query has none to integrate out: it samples as the default does."""
    import warnings

    from bayeschain.inference.walk.prediction import predict_clicks
    from tests.reference.walk_clicks import pages_to_log, simulate_document_pages

    rng = np.random.default_rng(3)
    n, n_pages = 4, 600
    f, b = np.full(n, 0.6), np.r_[0.0, np.full(n - 1, 0.1)]
    leave = 1 - f - b
    shown = [list(range(k * n, (k + 1) * n)) for k in range(n_pages)]
    pages = simulate_document_pages(rng, n_pages, f, b, 0.3 * leave, 0.7 * leave,
                                    np.full(n * n_pages, 0.3), shown)
    log = pages_to_log(pages, n, documents=[[f"d{d}" for d in s] for s in shown],
                       queries=["q"] * n_pages)
    spec = bc.load_spec("walk").with_keys("examination", clicks="document")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # a short fit: its diagnostics may warn
        post = fit(log, spec, seed=1, draws=200, tune=200)
    assert post.posterior.sizes["document"] == 0
    assert list(post.posterior["pooled_click"]["pooled_rank"].values) == [1, 2, 3, 4]
    pred = predict_clicks(post, log, max_draws=20, seed=0)
    assert np.isfinite(pred["p_click"]).all() and (pred["p_click"] > 0).all()
    # with no document of its own to integrate out, the Laplace route is the sampled one
    mode = spec.with_keys("examination", documents="mode")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = fit(log, mode, seed=1, draws=200, tune=200)
    assert again.attrs["document_effects"].startswith("sampled by NUTS with the rest (")
    np.testing.assert_array_equal(again.posterior["pooled_click"].values,
                                  post.posterior["pooled_click"].values)


def test_the_scored_click_walk_gives_a_runs_document_the_rarer_pairs_chance():
    """The walk with moves after a click (walk-click), attractiveness per document and
    click offsets by rank, on a log whose rank 1 shows 5 documents of its own (hundreds
    of impressions each) and whose ranks 2-4 show pairs seen once: the walk it scores is
    the click walk with the clicks marginalised, m_i = c_i m^c_i + (1 - c_i) m^s_i, with
    c_i at ranks 2-4 the chance the rarer pairs share there after its offset,
    logistic(logit pooled_i + delta_i) (what held-out pages give a pair never seen), and
    at rank 1, where no pair is rare, the population's mean attractiveness; recomputed
    here from the posterior's own draws."""
    import warnings

    from bayeschain.posterior.walk import population_click
    from tests.reference.walk_clicks import pages_to_log, simulate_document_pages

    rng = np.random.default_rng(4)
    n, n_pages = 4, 800
    f, b = np.full(n, 0.6), np.r_[0.0, np.full(n - 1, 0.1)]
    leave = 1 - f - b
    shown = [[int(rng.integers(5))] + list(range(5 + k * n, 5 + k * n + n - 1))
             for k in range(n_pages)]
    attractive = np.r_[np.linspace(0.2, 0.6, 5), np.full(n * n_pages, 0.3)]
    pages = simulate_document_pages(rng, n_pages, f, b, 0.3 * leave, 0.7 * leave,
                                    attractive, shown)
    log = pages_to_log(pages, n, documents=[[f"d{d}" for d in s] for s in shown],
                       queries=["q"] * n_pages)
    spec = bc.load_spec("walk-click").with_keys("examination", clicks="document",
                                                rank_offsets=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # a short fit: its diagnostics may warn
        post = fit(log, spec, seed=1, draws=100, tune=100)
    p = post.posterior
    assert p.sizes["document"] == 5
    assert list(p["pooled_click"]["pooled_rank"].values) == [2, 3, 4]
    pooled, delta = p["pooled_click"].values, p["click_offset"].values
    assert np.all(delta[..., 0] == 0) and np.ptp(delta[..., 1:]) > 0
    chance = np.empty(delta.shape)                                        # (chain, draw, 4)
    chance[..., 1:] = 1.0 / (1.0 + (1.0 - pooled) / pooled * np.exp(-delta[..., 1:]))
    trend = p["click_trend"].values.reshape(-1, 3)
    chance[..., 0] = population_click(trend, n, delta.reshape(-1, n))[:, 0].reshape(
        delta.shape[:2])
    want = chance[..., None] * p["walk_click"].values \
        + (1.0 - chance[..., None]) * p["walk_skip"].values
    np.testing.assert_allclose(p["walk"].values, want, rtol=0, atol=1e-12)
