"""Held-out click prediction: the walk's exact click probabilities against simulated pages,
and the click-model metrics recomputed from their definitions."""

import numpy as np
import pandas as pd
import pytest

from bayeschain.errors import ParameterError
from bayeschain.inference import (
    click_metrics,
    heldout_click_arrays,
    heldout_click_metrics,
    perplexity_difference,
    posterior_from_parameters,
    predict_clicks,
)
from tests.reference.walk_clicks import pages_to_log, simulate_pages

N = 5
F = np.array([0.7, 0.5, 0.45, 0.5, 0.0])
B = np.array([0.0, 0.3, 0.3, 0.35, 0.5])
LEAVE = 1 - F - B
C = np.array([0.5, 0.35, 0.3, 0.25, 0.4])


#: moves after a click of the click-dependent user: leaving (satisfied) far more often
AFTER = np.array([[0.4, 0.0, 0.2, 0.4], [0.3, 0.1, 0.2, 0.4], [0.25, 0.15, 0.2, 0.4],
                  [0.3, 0.1, 0.2, 0.4], [0.0, 0.3, 0.3, 0.4]])


@pytest.fixture(scope="module")
def simulated():
    rng = np.random.default_rng(21)
    pages = simulate_pages(rng, 60_000, F, B, 0.4 * LEAVE, 0.6 * LEAVE, C)
    walk = np.stack([F, B, 0.4 * LEAVE, 0.6 * LEAVE], axis=1)[None]
    post = posterior_from_parameters({"walk": walk, "click": C[None]})
    return pages, pages_to_log(pages, N), post


@pytest.fixture(scope="module")
def simulated_click_dependent():
    rng = np.random.default_rng(22)
    pages = simulate_pages(rng, 60_000, F, B, 0.4 * LEAVE, 0.6 * LEAVE, C,
                           after_click=tuple(AFTER.T))
    skip = np.stack([F, B, 0.4 * LEAVE, 0.6 * LEAVE], axis=1)[None]
    post = posterior_from_parameters({"walk_skip": skip, "walk_click": AFTER[None],
                                      "click": C[None]})
    return pages, pages_to_log(pages, N), post


def _damped_user(seed, name, kappa):
    """Pages of users who click a result clicked before (``reclick``) or examined before
    (``second_look``) with ``kappa`` of its chance, and the posterior of that truth."""
    rng = np.random.default_rng(seed)
    pages = simulate_pages(rng, 60_000, F, B, 0.4 * LEAVE, 0.6 * LEAVE, C, **{name: kappa})
    walk = np.stack([F, B, 0.4 * LEAVE, 0.6 * LEAVE], axis=1)[None]
    post = posterior_from_parameters({"walk": walk, "click": C[None],
                                      name: np.array([kappa])})
    return pages, pages_to_log(pages, N), post


@pytest.fixture(scope="module")
def simulated_damped():
    return _damped_user(23, "reclick", 0.1)


@pytest.fixture(scope="module")
def simulated_once():
    return _damped_user(24, "second_look", 0.2)


@pytest.mark.parametrize("user", ["simulated", "simulated_click_dependent",
                                  "simulated_damped", "simulated_once"])
def test_click_probabilities_match_simulated_pages(user, request):
    """P(C_r = 1) and P(C_r = c_r | C_1..C_{r-1}) of the exact walk against the
    frequencies among 60,000 pages walked by the independent simulator (5 standard
    errors; conditionals on every prefix seen 2,000 times or more), for users whose
    moves do not and do depend on the click, who click a result again less often, and
    who decide once (a result examined before clicks with 0.2 of its chance)."""
    pages, log, post = request.getfixturevalue(user)
    pred = predict_clicks(post, log)
    clicked = np.zeros((len(pages), N), dtype=bool)
    for k, (clicks, _) in enumerate(pages):
        clicked[k, np.array(clicks, dtype=int) - 1] = True
    assert np.array_equal(pred["clicked"].to_numpy().reshape(-1, N), clicked)
    p = pred["p_click"].to_numpy().reshape(-1, N)[0]
    freq = clicked.mean(axis=0)
    se = np.sqrt(p * (1 - p) / len(pages))
    assert np.all(np.abs(freq - p) < 5 * se), (freq, p)
    # conditionals: for each rank and observed prefix, the share of pages continuing so
    p_obs = pred["p_observed"].to_numpy().reshape(-1, N)
    checked = 0
    for r in range(N):
        prefixes, inverse = np.unique(clicked[:, :r], axis=0, return_inverse=True)
        for k in range(prefixes.shape[0]):
            rows = np.flatnonzero(inverse.ravel() == k)
            if rows.size < 2000:
                continue
            q = p_obs[rows[clicked[rows, r]][:1], r] if clicked[rows, r].any() else None
            share = clicked[rows, r].mean()
            want = q[0] if q is not None else 1 - p_obs[rows[0], r]
            se = np.sqrt(want * (1 - want) / rows.size)
            assert abs(share - want) < 5 * se + 1e-12, (r, prefixes[k], share, want)
            checked += 1
    assert checked >= 8


def test_metrics_are_pyclicks_definitions():
    """Log-likelihood: mean over pages of the mean over ranks of ln P(C_r = c_r | C_<r);
    perplexity at rank r: 2^(-mean over pages of log2 P(C_r = c_r)), averaged over ranks."""
    rng = np.random.default_rng(5)
    clicked = rng.random((40, 10)) < 0.3
    p_click = rng.uniform(0.05, 0.9, (40, 10))
    p_obs = rng.uniform(0.05, 0.95, (40, 10))
    m = click_metrics(clicked, p_click, p_obs)
    ll = sum(sum(np.log(p_obs[s, r]) for r in range(10)) / 10 for s in range(40)) / 40
    ppl_r = [2 ** (-sum(np.log2(p_click[s, r] if clicked[s, r] else 1 - p_click[s, r])
                        for s in range(40)) / 40) for r in range(10)]
    cppl_r = [2 ** (-sum(np.log2(p_obs[s, r]) for s in range(40)) / 40) for r in range(10)]
    assert m.log_likelihood == pytest.approx(ll, rel=1e-12)
    assert m.perplexity == pytest.approx(np.mean(ppl_r), rel=1e-12)
    assert m.conditional_perplexity == pytest.approx(np.mean(cppl_r), rel=1e-12)
    np.testing.assert_allclose(m.perplexity_at_rank, ppl_r, rtol=1e-12)
    with pytest.raises(ParameterError, match="no held-out pages"):
        click_metrics(clicked[:0], p_click[:0], p_obs[:0])


def test_perplexity_difference_resamples_the_pages_of_both_models_together():
    """The difference is PyClick's perplexity of one model minus the other's; each
    bootstrap draw is that difference on the pages drawn with replacement (the same pages
    for both: a multinomial count per page from ``default_rng(seed)``, rebuilt here as a
    list of pages), and the interval holds the central 90% of the draws.  On many pages
    the true click probabilities beat blurred ones beyond the interval; identical models
    differ by exactly 0."""
    rng = np.random.default_rng(8)
    pages, ranks = 30, 10
    truth = rng.uniform(0.05, 0.6, (pages, ranks))
    clicked = rng.random((pages, ranks)) < truth
    blurred = np.clip(truth + rng.normal(0, 0.15, truth.shape), 0.01, 0.99)

    def perplexity(rows, p):          # PyClick's definition on the listed pages
        return np.mean([2 ** (-np.mean([np.log2(p[s, r] if clicked[s, r] else 1 - p[s, r])
                                          for s in rows])) for r in range(ranks)])

    got = perplexity_difference(clicked, truth, blurred, draws=40, seed=3)
    everything = range(pages)
    assert got.perplexity == pytest.approx(perplexity(everything, truth), rel=1e-12)
    assert got.other == pytest.approx(perplexity(everything, blurred), rel=1e-12)
    assert got.difference == pytest.approx(got.perplexity - got.other, rel=1e-12)
    counts = np.random.default_rng(3).multinomial(pages, np.full(pages, 1 / pages), size=40)
    gaps = []
    for c in counts:
        rows = np.repeat(np.arange(pages), c)
        gaps.append(perplexity(rows, truth) - perplexity(rows, blurred))
    assert (got.low, got.high) == pytest.approx(tuple(np.quantile(gaps, [0.05, 0.95])),
                                               rel=1e-10)
    assert got.pages == pages and got.draws == 40
    assert "[90%: " in str(got) and f"{got.difference:+.6f}" in str(got)
    many = rng.uniform(0.05, 0.6, (5000, ranks))
    seen = rng.random(many.shape) < many
    noisy = np.clip(many + rng.normal(0, 0.15, many.shape), 0.01, 0.99)
    resolved = perplexity_difference(seen, many, noisy, seed=1)
    assert resolved.high < 0
    same = perplexity_difference(seen, many, many, draws=50, seed=1)
    assert same.difference == same.low == same.high == 0.0
    with pytest.raises(ParameterError, match="must be \\(pages, ranks\\) arrays of one"):
        perplexity_difference(clicked, truth, blurred[:, :5])
    with pytest.raises(ParameterError, match="level must be in"):
        perplexity_difference(clicked, truth, blurred, level=1.0)
    # a probability off [0, 1] by rounding is clipped; NaN or beyond, refused: where, what
    rounded = blurred.copy()
    rounded[0, 0], rounded[1, 1] = -1e-15, 1 + 1e-13
    assert perplexity_difference(clicked, truth, rounded, seed=3) == perplexity_difference(
        clicked, truth, np.clip(rounded, 0, 1), seed=3)
    blurred[4, 2] = np.nan
    with pytest.raises(ParameterError, match="p_other must be probabilities in \\[0, 1\\]: "
                                             "page 5 of 30 .*, rank 3 holds nan"):
        perplexity_difference(clicked, truth, blurred)
    with pytest.raises(ParameterError, match="p_observed must be .* page 5 of 30 .*, rank 3 "
                                             "holds nan"):
        click_metrics(clicked, truth, blurred)
    below = truth.copy()
    below[2, 6] = -0.01
    with pytest.raises(ParameterError, match="p_click must be .* page 3 of 30 .*, rank 7 "
                                             "holds -0.01"):
        click_metrics(clicked, below, truth)
    flags = clicked.astype(float)
    flags[0, 9] = np.nan
    with pytest.raises(ParameterError, match="clicked must be 0 or 1 .* page 1 of 30 .*, "
                                             "rank 10 holds nan"):
        click_metrics(flags, truth, truth)


def test_heldout_metrics_prefer_the_true_walk(simulated):
    """On held-out pages, the walk that generated them predicts clicks better (higher
    log-likelihood, lower perplexity) than a wrong one."""
    _, log, post = simulated
    _, test = log.split(0.2, seed=3)
    wrong = posterior_from_parameters({"walk": np.tile([0.3, 0.1, 0.2, 0.4], (1, N, 1)),
                                       "click": np.full((1, N), 0.3)})
    good = heldout_click_metrics(post, test, ranks=N)
    bad = heldout_click_metrics(wrong, test, ranks=N)
    assert good.log_likelihood > bad.log_likelihood
    assert good.perplexity < bad.perplexity
    assert good.conditional_perplexity < bad.conditional_perplexity
    assert 1.0 < good.perplexity < 2.0 and good.pages == test.summary()["pages"]
    # restricted to given pages: the metrics of those pages alone
    serps = np.sort(test.events["serp_id"].dropna().unique().astype(np.int64))[::2]
    some = heldout_click_metrics(post, test, ranks=N, pages=serps)
    pred = predict_clicks(post, test, ranks=N)
    pred = pred[pred["serp_id"].isin(serps)].sort_values(["serp_id", "rank"])
    by_hand = click_metrics(pred["clicked"].to_numpy().reshape(-1, N),
                            pred["p_click"].to_numpy().reshape(-1, N),
                            pred["p_observed"].to_numpy().reshape(-1, N))
    assert some.pages == serps.size < good.pages
    assert some.log_likelihood == pytest.approx(by_hand.log_likelihood, rel=1e-12)


def test_heldout_arrays_are_the_pages_clicks_in_page_order(simulated):
    """The arrays held-out metrics score are the given pages in ``serp_id`` order, their
    click vectors those the log's click events show (read from the events here), with
    probabilities in [0, 1]: what a paired comparison with another model's predictions on
    the same pages needs."""
    _, log, post = simulated
    _, test = log.split(0.2, seed=3)
    serps = np.sort(test.events["serp_id"].dropna().unique().astype(np.int64))[1::3]
    clicked, p_click, p_obs = heldout_click_arrays(post, test, ranks=N, pages=serps[::-1],
                                                   seed=4)
    ev = test.events
    hits = ev[(ev["event"] == "click") & ev["serp_id"].isin(serps)]
    expected = np.zeros((serps.size, N), dtype=bool)
    expected[np.searchsorted(serps, hits["serp_id"].astype(np.int64)),
             hits["rank"].astype(np.int64) - 1] = True
    np.testing.assert_array_equal(clicked, expected)
    # the probabilities are each page's own rows of the per-(page, rank) predictions
    pred = predict_clicks(post, test, ranks=N, seed=4).set_index(["serp_id", "rank"])
    at = pd.MultiIndex.from_product([serps, np.arange(1, N + 1)])
    np.testing.assert_array_equal(p_click, pred.loc[at, "p_click"].to_numpy().reshape(-1, N))
    np.testing.assert_array_equal(p_obs, pred.loc[at, "p_observed"].to_numpy().reshape(-1, N))
    assert np.all((p_click > 0) & (p_click < 1) & (p_obs > 0) & (p_obs <= 1))


def test_the_observed_click_vector_is_not_predicted_past_the_ranks_asked(simulated):
    """``predict_clicks(..., ranks=2)``: ``p_observed`` is a probability on ranks 1-2 and
    NaN on ranks 3-5 (not computed), ``p_click`` a probability everywhere, the same as
    with every rank; and no floating-point warning."""
    import warnings

    _, log, post = simulated
    _, test = log.split(0.05, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        some = predict_clicks(post, test, ranks=2)
    every = predict_clicks(post, test)
    first = some["rank"] <= 2
    assert some["p_observed"][first].between(0, 1).all()
    assert some["p_observed"][~first].isna().all() and (~first).sum() > 0
    np.testing.assert_array_equal(some["p_click"], every["p_click"])
    np.testing.assert_array_equal(some["p_observed"][first], every["p_observed"][first])


def test_split_keeps_sessions_whole_and_is_seeded(simulated):
    _, log, _ = simulated
    train, test = log.split(0.25, seed=1)
    a, b = (set(x.events["session_id"]) for x in (train, test))
    assert not a & b and a | b == set(log.events["session_id"])
    assert abs(len(b) / len(a | b) - 0.25) < 0.01
    assert set(train.results["serp_id"]) == set(train.events["serp_id"].dropna())
    again, _ = log.split(0.25, seed=1)
    assert again.events.equals(train.events)


def test_a_damped_walk_predicts_pages_longer_than_the_clicked_positions_it_can_keep():
    """Prediction reads no clicked positions: a posterior with damped re-clicks predicts a
    log whose pages have 70 results (more than a fit could key by clicked positions), as
    the same walk with fresh re-clicks does, click vectors being unchanged by kappa."""
    n = 70
    f, b = np.full(n, 0.6), np.r_[0.0, np.full(n - 1, 0.2)]
    f[-1] = 0.0
    leave = 1 - f - b
    click = np.full(n, 0.2)
    pages = simulate_pages(np.random.default_rng(5), 50, f, b, 0.4 * leave, 0.6 * leave,
                           click)
    log = pages_to_log(pages, n)
    walk = np.stack([f, b, 0.4 * leave, 0.6 * leave], axis=-1)[None]
    damped = posterior_from_parameters({"walk": walk, "click": click[None],
                                        "reclick": np.array([0.2])})
    fresh = posterior_from_parameters({"walk": walk, "click": click[None]})
    got, want = predict_clicks(damped, log), predict_clicks(fresh, log)
    np.testing.assert_allclose(got["p_click"].to_numpy(), want["p_click"].to_numpy())
