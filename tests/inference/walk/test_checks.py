"""Posterior predictive checks replay the fitted walk from rank 1: they agree with the
independent simulator, accept the walk's own logs and reject the click-to-click
substitution."""

import numpy as np
import pytest

from bayeschain.inference import fit, posterior_from_parameters, predictive_walk_checks
from bayeschain.inference.walk.checks import SCALARS, LogSummary
from tests.reference.walk_clicks import pages_to_log, simulate_pages

N = 8
F = np.linspace(0.75, 0.6, N)
B = np.r_[0.0, np.full(N - 1, 0.15)]
LEAVE = 1 - F - B
C = np.linspace(0.45, 0.2, N)


def _posterior(walk_rows, draws=60, reclick=None):
    extra = {} if reclick is None else {"reclick": np.full(draws, reclick)}
    return posterior_from_parameters({"walk": np.repeat(walk_rows[None], draws, axis=0),
                                      "click": np.repeat(C[None], draws, axis=0), **extra})


@pytest.mark.parametrize("reclick", [None, 0.2])
def test_replays_match_the_independent_simulator(reclick):
    """Under a posterior whose every draw is the true walk, the replicated statistics
    average to what 40,000 pages of the independent simulator show (also for users who
    click a result again with a fifth of its click probability)."""
    rng = np.random.default_rng(31)
    truth = np.stack([F, B, 0.3 * LEAVE, 0.7 * LEAVE], axis=1)
    reference = simulate_pages(rng, 40_000, F, B, 0.3 * LEAVE, 0.7 * LEAVE, C,
                               reclick=1.0 if reclick is None else reclick)
    page = np.concatenate([[k] * len(c) for k, (c, _) in enumerate(reference)]).astype(int)
    rank = np.concatenate([c for c, _ in reference]).astype(int)
    next_query = np.array([o == "next_query" for _, o in reference])
    expected = LogSummary.from_clicks(len(reference), page, rank, next_query).statistics()
    log = pages_to_log(reference[:4000], N)
    checks = predictive_walk_checks(_posterior(truth, reclick=reclick), log, seed=2)
    for check in checks.distributions():
        name = check.label
        rep = check.replicated.mean(axis=0)
        # 60 replays of 4,000 pages: standard errors below 0.002
        np.testing.assert_allclose(rep, expected[name], atol=0.01)
    for field, name in SCALARS.items():
        check = getattr(checks, field)
        assert check.replicated.mean() == pytest.approx(expected[name], abs=0.01), name


def test_checks_reject_the_click_to_click_substitution():
    """Click-to-click frequencies read as the walk's per-step moves (the scoring error the
    walk replaces) contradict the log: pages with deep clicks, clicks per page and
    click-less pages fall far outside their bands; the walk fitted to the same log
    passes."""
    rng = np.random.default_rng(32)
    pages = simulate_pages(rng, 6000, F, B, 0.3 * LEAVE, 0.7 * LEAVE, C)
    log = pages_to_log(pages, N)
    walk = fit(log, seed=1)
    good = predictive_walk_checks(walk, log, seed=1).clicks_per_page.summaries
    for name, check in good.items():
        lo, hi = check.interval(0.99)
        assert lo <= check.observed <= hi, name
    cc = fit(log, "clicks-conjugate", draws=60, chains=1)
    t = cc.posterior["transition"].isel(chain=0)
    rows = np.stack([t.sel(category=c).values for c in ("forward", "backward",
                                                          "reformulate", "stop")], axis=-1)
    substituted = posterior_from_parameters({"walk": rows, "click": np.repeat(
        walk.posterior["click"].isel(chain=0, draw=slice(0, 60)).values, 1, axis=0)})
    bad = predictive_walk_checks(substituted, log, seed=1).clicks_per_page.summaries
    rejected = [name for name, check in bad.items()
                if not check.interval(0.99)[0] <= check.observed <= check.interval(0.99)[1]]
    assert {"pages with a click at rank >= 5", "mean clicks per page"} <= set(rejected)


def test_checks_export_the_arviz_layout_of_replications_and_observations():
    """``to_datatree``: the replications in ``posterior_predictive`` (one chain, a draw per
    replay), the log's own statistics in ``observed_data`` (the clicks-per-page pmf
    recounted here from the pages)."""
    rng = np.random.default_rng(5)
    pages = simulate_pages(rng, 500, F, B, 0.3 * LEAVE, 0.7 * LEAVE, C)
    truth = np.stack([F, B, 0.3 * LEAVE, 0.7 * LEAVE], axis=1)
    checks = predictive_walk_checks(_posterior(truth),
                                    pages_to_log(pages, N), max_draws=7, seed=3)
    tree = checks.to_datatree()
    predictive, observed = tree["posterior_predictive"], tree["observed_data"]
    assert predictive["clicks_per_page"].dims == ("chain", "draw", "clicks")
    assert predictive.sizes["chain"] == 1 and predictive.sizes["draw"] == 7
    clicks = np.array([len(c) for c, _ in pages])
    pmf = np.bincount(np.minimum(clicks, 5), minlength=6) / clicks.size
    np.testing.assert_allclose(observed["clicks_per_page"].values, pmf)
    assert float(observed["mean_clicks_per_page"]) == pytest.approx(clicks.mean())
    assert set(SCALARS) <= set(predictive.data_vars)
    clicked = [c for c, _ in pages if c]
    for name, ranks in (("first_clicked_rank", [c[0] for c in clicked]),
                        ("last_clicked_rank", [c[-1] for c in clicked])):
        want = np.bincount(np.minimum(ranks, 10) - 1, minlength=10) / len(ranks)
        np.testing.assert_allclose(observed[name].values, want)
    steps = np.concatenate([np.diff(c) for c in clicked])
    want = np.bincount(np.clip(steps, -9, 9) + 9, minlength=19) / steps.size
    np.testing.assert_allclose(observed["click_distance"].values, want)
    assert observed["click_distance"]["distance"].values[9] == 0          # repeats
    after = np.mean([o == "next_query" for c, o in pages if c])
    assert float(observed["next_query_after_last"]) == pytest.approx(after)


def test_later_reclicks_count_clicks_on_a_result_clicked_before_with_other_clicks_between():
    """A click on a result already clicked on its page counts unless it comes right after
    that result's own click (an immediate repeat)."""
    pages = [[1, 2, 1], [3, 3], [2, 4, 4, 2], [1, 1, 2, 1, 1], [5]]
    page = np.concatenate([[k] * len(c) for k, c in enumerate(pages)])
    rank = np.concatenate(pages)
    summary = LogSummary.from_clicks(len(pages) + 1, page, rank)
    assert summary.later_reclicks == 3
    assert summary.statistics()["re-clicks per page with other clicks between"] == 3 / 6
