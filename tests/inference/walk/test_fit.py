"""The examination walk fitted to clicks recovers the walk that simulated users walked
(an independent simulator, tests/reference/walk_clicks.py), and so the scores of P@H,
drwbm and MsM under it (with attractiveness per document: test_fit_documents.py)."""

import numpy as np
import pandas as pd
import pytest

import bayeschain as bc
from bayeschain.browsing import build_chain
from bayeschain.errors import ParameterError
from bayeschain.inference import expected_visits, fit, walk_parameters
from bayeschain.measures import msm, path_expectation
from bayeschain.scoring import score, score_sessions
from tests.reference.walk_clicks import pages_to_log, simulate_pages

pytest.importorskip("nutpie")

N = 10
P = np.linspace(0.78, 0.58, N)                 # forward
Q = np.r_[0.0, np.full(N - 1, 0.1)]            # backward (none at rank 1)
LEAVE = 1 - P - Q
R, S = 0.3 * LEAVE, 0.7 * LEAVE                 # next query / end of session
CLICK = np.linspace(0.45, 0.17, N)
LISTS = {"top": np.array([1, 1, 0, 0, 0, 0, 0, 0, 0, 0.0]),
         "middle": np.array([0, 0, 1, 1, 1, 0, 0, 0, 0, 0.0]),
         "graded": np.array([2, 0, 1, 0, 0, 3, 0, 0, 1, 0.0])}
TRUE_E_H = float(bc.chains.expected_stopping_time(build_chain("rwbm", N, p=P, q=Q)))


@pytest.fixture(scope="module")
def recovered():
    """30,000 pages of 10 results walked by users of a known per-rank walk; the default
    spec with a fixed number of draws (its default stops on the diagnostics, after a
    number of draws that depends on timing), so that the checks below see the same
    draws on every run."""
    rng = np.random.default_rng(2026)
    pages = simulate_pages(rng, 30_000, P, Q, R, S, CLICK)
    log = pages_to_log(pages, N)
    return log, fit(log, seed=7, draws=1000, min_ess=0)


def interval(draws, prob):
    """Equal-tailed ``prob`` interval of each column of ``draws``."""
    return np.quantile(draws, [(1 - prob) / 2, (1 + prob) / 2], axis=0)


def test_per_rank_moves_are_recovered(recovered):
    """At most 2 of the 18 free moves (p_1..p_9, q_2..q_10) outside their 99% intervals;
    the sampler converged (R-hat <= 1.01, bulk ESS >= 400, no divergence)."""
    _, post = recovered
    p, q = walk_parameters(post)
    lo_p, hi_p = interval(p[:, :N - 1], 0.99)
    lo_q, hi_q = interval(q[:, 1:N], 0.99)
    outside = int(np.sum((P[:N - 1] < lo_p) | (P[:N - 1] > hi_p))
                  + np.sum((Q[1:] < lo_q) | (Q[1:] > hi_q)))
    assert outside <= 2, (outside, lo_p, hi_p, lo_q, hi_q)
    diag = post.diagnostics()
    assert diag["max_rhat"].max() <= 1.01 and diag["min_ess"].min() >= 400
    assert post.divergences() == 0
    clicks = post.posterior["click"].stack(s=("chain", "draw")).transpose("s", ...).values
    lo, hi = interval(clicks, 0.99)
    assert np.sum((CLICK < lo) | (CLICK > hi)) <= 1


def test_stopping_time_and_scores_are_recovered(recovered):
    """E[H] and P@H (order 2) of fixed lists under the true walk inside the posterior's 99%
    intervals; the sign of the true difference between two lists held with posterior
    probability > 0.9."""
    _, post = recovered
    e_h = expected_visits(post, N).sum(axis=1)
    lo, hi = interval(e_h, 0.99)
    assert lo <= TRUE_E_H <= hi, (lo, TRUE_E_H, hi)
    runs, judgements = {}, []
    for name, rel in LISTS.items():
        docs = [f"{name}{i}" for i in range(N)]
        runs[name] = pd.DataFrame({"query_id": "t", "doc_id": docs,
                                   "score": np.arange(N, 0, -1.0), "run_id": name})
        judgements.append(pd.DataFrame({"query_id": "t", "doc_id": docs,
                                        "relevance": rel.astype(int)}))
    scores = score(runs, pd.concat(judgements), "PatH(model='rwbm', order=2)", post)
    truth = {}
    for name, rel in LISTS.items():
        truth[name] = float(path_expectation(rel, "rwbm", order=2, p=P, q=Q))
        draws = scores.sel(run=name, topic="t").values.ravel()
        lo, hi = interval(draws, 0.99)
        assert lo <= truth[name] <= hi, (name, lo, truth[name], hi)
    a = scores.sel(run="top", topic="t").values.ravel()
    b = scores.sel(run="middle", topic="t").values.ravel()
    sign = np.sign(truth["top"] - truth["middle"])
    assert sign != 0 and np.mean(np.sign(a - b) == sign) > 0.9


def test_fitted_walk_contradicts_no_page_of_its_log(recovered):
    """Replaying the fitted walk on its own log: of the 55 points of the six laws (clicks
    per page, deepest, every, first and last clicked rank, click-to-click distance), at
    most one outside its 99% band (0.55 expected under the true model), and every scalar
    statistic inside."""
    from bayeschain.inference import predictive_walk_checks

    log, post = recovered
    checks = predictive_walk_checks(post, log, max_draws=100, seed=1)
    outside = {check.label: check.outside(0.99) for check in checks.distributions()}
    assert sum(v.size for v in outside.values()) <= 1, outside
    for check in checks.distributions():
        for name, c in check.summaries.items():
            lo, hi = c.interval(0.99)
            assert lo <= c.observed <= hi, name


def test_click_to_click_posterior_is_refused_for_walk_measures(recovered):
    """Click-to-click frequencies are not the walk's per-step moves: scoring P@H, RBP or
    drwbm with them raises an error that says why and names the spec to fit."""
    log, _ = recovered
    cc = fit(log, "clicks-conjugate", draws=50, chains=1)
    assert cc.parametrises == "click-to-click"
    runs = {"a": pd.DataFrame({"query_id": "t", "doc_id": ["x", "y"], "score": [2.0, 1.0],
                               "run_id": "a"})}
    qrels = pd.DataFrame({"query_id": "t", "doc_id": ["x"], "relevance": [1]})
    for measure in ("PatH(model='rwbm', order=2)", "RBP", "PatH(model='drwbm', order=2)"):
        with pytest.raises(ParameterError, match="click-to-click.*Fit the walk"):
            score(runs, qrels, measure, cc)
    with pytest.raises(ParameterError, match="click-to-click"):
        walk_parameters(cc)


def test_moves_by_relevance_are_recovered():
    """Users move on from relevant documents differently: the walk fitted by relevance
    class recovers both classes' shared moves, and drwbm under it is drwbm of its draws."""
    rng = np.random.default_rng(11)
    n = 6
    move = {False: (0.7, 0.15), True: (0.45, 0.05)}      # (forward, backward)
    pages, docs, judged = [], [], []
    for k in range(8000):
        rel = rng.random(n) < 0.3
        f = np.array([move[bool(x)][0] for x in rel])
        b = np.array([move[bool(x)][1] for x in rel])
        leave = 1 - f - b
        f[0] /= 1 - b[0]                    # shared moves: rank 1 keeps the odds of
        leave[0] /= 1 - b[0]                # moving on against leaving
        b[0] = 0.0
        pages += simulate_pages(rng, 1, f, b, 0.3 * leave, 0.7 * leave, np.full(n, 0.35))
        names = [f"d{k}-{i}" for i in range(n)]
        docs.append(names)
        judged += [(f"q{k}", d, int(x)) for d, x in zip(names, rel, strict=True)]
    log = pages_to_log(pages, n, documents=docs)
    qrels = pd.DataFrame(judged, columns=["query_id", "doc_id", "relevance"])
    spec = bc.inference.parse_spec(bc.load_spec("walk-relevance").text
                                   .replace('moves = "pooled"', 'moves = "shared"'))
    post = fit(log, spec, qrels=qrels, seed=3)
    w = post.posterior["walk"].isel(rank=3)               # an interior rank
    for cls, (f, b) in (("non-relevant", move[False]), ("relevant", move[True])):
        for m, value in (("forward", f), ("backward", b)):
            draws = w.sel(relevance=cls, move=m).values.ravel()
            lo, hi = interval(draws, 0.99)
            assert lo <= value <= hi, (cls, m, lo, value, hi)
    runs = {"r": pd.DataFrame({"query_id": "q0", "doc_id": docs[0], "score": np.arange(n, 0, -1.0),
                               "run_id": "r"})}
    got = score(runs, qrels, "PatH(model='drwbm', order=2)", post).values.ravel()
    from bayeschain.posterior.walk import relevance_walk_parameters

    params = relevance_walk_parameters(post)
    rel0 = qrels[qrels["query_id"] == "q0"]["relevance"].to_numpy(dtype=float)
    for d in (0, 17, 400):
        want = path_expectation(rel0, "drwbm", order=2,
                                **{k: v[d, :n] for k, v in params.items()})
        assert got[d] == pytest.approx(float(want), rel=1e-12)


def test_session_moves_give_msm():
    """MsM's shared p, q, r, s (Algorithm 1's boundaries) from pages walked by users of
    that chain, whose sessions go on when they reformulate; MsM under the posterior is
    MsM of each draw."""
    rng = np.random.default_rng(12)
    n = 8
    p, q, r, s = 0.55, 0.2, 0.1, 0.15
    f = np.full(n, p)
    b = np.full(n, q)
    rr, ss = np.full(n, r), np.full(n, s)
    # Algorithm 1: rank 1 has no backward move, the last rank no forward move; the missing
    # mass is spread over the other moves in proportion
    f[0], rr[0], ss[0] = (x / (p + r + s) for x in (p, r, s))
    b[0] = 0.0
    b[-1], rr[-1], ss[-1] = (x / (q + r + s) for x in (q, r, s))
    f[-1] = 0.0
    pages = simulate_pages(rng, 12_000, f, b, rr, ss, np.full(n, 0.3))
    post = fit(pages_to_log(pages, n), "walk-session", seed=4)
    from bayeschain.posterior.walk import session_parameters

    params = session_parameters(post)
    for name, value in zip("pqrs", (p, q, r, s), strict=True):
        lo, hi = interval(params[name], 0.99)
        assert lo <= value <= hi, (name, lo, value, hi)
    session = {"s": np.array([[1, 0], [0, 2], [1, 1.0]])}
    got = score_sessions(session, post, discount="log").values.ravel()
    for d in (0, 999):
        want = msm(session["s"], *(params[k][d] for k in "pqrs"), "log")
        assert got[d] == pytest.approx(float(want), rel=1e-12)
    with pytest.raises(ParameterError, match="walk-session"):
        score_sessions(session, fit(pages_to_log(pages[:500], n), "walk-shared", seed=1))


def test_damped_reclicks_are_recovered_with_the_walk():
    """Users (15,000 pages) who click a result again at a later arrival with a fifth of
    its click probability (kappa = 0.2; immediate repeats apart): the walk fitted with
    ``reclicks = "damped"`` recovers kappa, the moves, the clicks and E[H] (99%
    intervals), and its replay of the log passes the predictive checks.  The first
    sampling does not diverge: with the moves' logits centred only at ranks of 500 clicks
    or more, rank 9's non-centred backward deviation (374 clicks) made an inverted funnel
    with its spread, and this fit drew a divergent transition and was sampled again."""
    from bayeschain.inference import predictive_walk_checks

    rng = np.random.default_rng(1)
    kappa = 0.2
    pages = simulate_pages(rng, 15_000, P, Q, R, S, CLICK, np.full(N, 0.1), reclick=kappa)
    log = pages_to_log(pages, N)
    spec = bc.load_spec("walk").with_keys("examination", reclicks="damped")
    post = fit(log, spec, seed=3)
    assert "resampled" not in post.attrs and post.divergences() == 0
    lo, hi = np.quantile(post.posterior["reclick"].values.ravel(), [0.005, 0.995])
    assert lo <= kappa <= hi and hi - lo < 0.15
    p_hat, q_hat = walk_parameters(post)
    lo, hi = interval(p_hat[:, :N - 1], 0.99)
    assert np.sum((P[:N - 1] < lo) | (P[:N - 1] > hi)) <= 1
    clicks = post.posterior["click"].stack(s=("chain", "draw")).transpose("s", ...).values
    lo, hi = interval(clicks, 0.99)
    assert np.sum((CLICK < lo) | (CLICK > hi)) <= 1
    lo, hi = np.quantile(expected_visits(post, N).sum(axis=1), [0.005, 0.995])
    assert lo <= TRUE_E_H <= hi
    checks = predictive_walk_checks(post, log, seed=0)
    for name in ("click_less_pages", "backward_share", "mean_clicks_per_page"):
        check = getattr(checks, name)
        lo, hi = check.interval(0.99)
        assert lo <= check.observed <= hi, name
