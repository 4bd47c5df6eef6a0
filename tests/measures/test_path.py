"""P@H: the paper's Section 5.2 numbers, orders 1-3 against simulation, dominance."""

import numpy as np
import pytest

from bayeschain.browsing import build_chain
from bayeschain.measures import evaluate, path_distribution, path_expectation, stochastic_dominance
from bayeschain.simulate import simulate_users

R = np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1.0])
S = np.array([0, 1, 1, 1, 1, 0, 0, 0, 0, 0.0])
FIG1D = dict(p=0.5, q=0.25, p1=0.75)


def test_section_5_2_numbers_from_the_path_machinery():
    """P@10 = 0.4 for both runs (DFBM), AP = 0.58 / 0.68 (dynamic AP chain, order 1),
    RBP(p = 0.5) = 0.57 / 0.47 (SFBM, order 2), as printed in Section 5.2."""
    for run in (R, S):
        assert path_expectation(run, "dfbm") == pytest.approx(0.4, abs=1e-12)
    assert round(float(path_expectation(R, "ap")), 2) == 0.58
    assert round(float(path_expectation(S, "ap")), 2) == 0.68
    assert round(float(path_expectation(R, "sfbm", order=2, p=0.5)), 2) == 0.57
    assert round(float(path_expectation(S, "sfbm", order=2, p=0.5)), 2) == 0.47


def test_figure_1_orders_3_claims():
    """Fig. 1b: AP-model CDFs cross; Fig. 1c: under RBP r dominates s; Fig. 1d: the
    random-walk CDFs cross several times and orders 1 and 2 disagree."""
    ap = stochastic_dominance(path_distribution(R, "ap"), path_distribution(S, "ap"))
    assert not ap.a_dominates and not ap.b_dominates and ap.crossings >= 1
    rbp = stochastic_dominance(path_distribution(R, "sfbm", p=0.5),
                               path_distribution(S, "sfbm", p=0.5))
    assert rbp.a_dominates and not rbp.b_dominates
    rw_r = path_distribution(R, "rwbm", loss=0.25, users=100_000, seed=1, **FIG1D)
    rw_s = path_distribution(S, "rwbm", loss=0.25, users=100_000, seed=2, **FIG1D)
    assert not rw_r.exact
    d = stochastic_dominance(rw_r, rw_s)
    assert d.crossings >= 2
    o1 = [rw_r.mean(), rw_s.mean()]
    o2 = [float(path_expectation(x, "rwbm", order=2, loss=0.25, **FIG1D)) for x in (R, S)]
    assert (o1[0] - o1[1]) * (o2[0] - o2[1]) < 0


USERS = 200_000


@pytest.mark.parametrize(("model", "params"), [("sfbm", {"p": 0.5}), ("rwbm", FIG1D),
                                               ("ap", {}), ("err", {}), ("dcg", {})])
def test_order_1_and_3_against_simulation(model, params):
    """Exact E[P@H] within 5 standard errors of 200,000 simulated users, and the exact CDF
    within 5/sqrt(U) of the empirical one everywhere."""
    rel = R if model != "err" else np.array([2, 0, 1, 0, 0, 3, 0, 1, 0, 0.0])
    chain = build_chain(model, rel.size, rel, **params)
    sim = simulate_users(chain, USERS, rewards=rel, seed=3).precision()
    exact = path_expectation(rel, model, **params)
    assert abs(sim.mean() - exact) < 5 * sim.std() / np.sqrt(USERS)
    law = path_distribution(rel, model, **params)
    assert law.exact and law.mean() == pytest.approx(float(exact), abs=1e-10)
    emp = np.searchsorted(np.sort(np.round(sim, 12)), law.values, side="right") / USERS
    assert np.max(np.abs(emp - np.cumsum(law.probabilities))) < 5 / np.sqrt(USERS)


def test_order_2_with_loss_against_simulation():
    sim = simulate_users(build_chain("rwbm", 10, **FIG1D), USERS, rewards=R, loss=0.25, seed=4)
    exact = path_expectation(R, "rwbm", order=2, loss=0.25, **FIG1D)
    ratio = sim.reward.mean() / sim.stopping_time.mean()
    # delta-method standard error of a ratio of means
    cov = np.cov(sim.reward, sim.stopping_time)
    m_t, m_h = sim.reward.mean(), sim.stopping_time.mean()
    se = np.sqrt((cov[0, 0] - 2 * ratio * cov[0, 1] + ratio**2 * cov[1, 1]) / USERS) / m_h
    assert abs(ratio - exact) < 5 * se and m_t > 0


def test_loss_on_a_forward_model_stays_exact():
    """No revisits, so the utility loss changes nothing and stays exact."""
    law = path_distribution(R, "sfbm", p=0.5, loss=0.3)
    assert law.exact
    assert path_expectation(R, "sfbm", p=0.5, loss=0.3) == pytest.approx(
        path_expectation(R, "sfbm", p=0.5))


def test_effort_one_gives_expected_gain_and_user_effort():
    assert path_expectation(S, "sfbm", p=0.5, effort="1") == pytest.approx(
        sum(S * 0.5 ** np.arange(10)))
    log_effort = path_expectation(R, "sfbm", p=0.5, effort=lambda h: np.log2(h + 1))
    sim = simulate_users(build_chain("sfbm", 10, p=0.5), USERS, rewards=R, seed=5)
    est = sim.precision(lambda h: np.log2(h + 1))
    assert abs(est.mean() - log_effort) < 5 * est.std() / np.sqrt(USERS)


def test_draw_axes_in_parameters():
    p = np.array([0.3, 0.5, 0.8])
    batched = path_expectation(R, "sfbm", order=2, p=p[:, None])
    for i, pi in enumerate(p):
        assert batched[i] == pytest.approx(path_expectation(R, "sfbm", order=2, p=pi))


def test_graded_gains_map():
    g = np.array([2, 0, 1.0])
    value = evaluate("PatH(model='dfbm', gains={1: 1, 2: 3})", g)
    assert value == pytest.approx((3 + 0 + 1) / 3)


def test_dominance_against_brute_force_cdfs():
    rng = np.random.default_rng(7)
    for _ in range(200):
        av = np.sort(rng.choice(np.linspace(0, 1, 11), size=4, replace=False))
        bv = np.sort(rng.choice(np.linspace(0, 1, 11), size=4, replace=False))
        ap_, bp = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
        d = stochastic_dominance((av, ap_), (bv, bp))
        xs = np.linspace(-0.05, 1.05, 2001)
        fa = np.array([ap_[av <= x].sum() for x in xs])
        fb = np.array([bp[bv <= x].sum() for x in xs])
        assert d.a_dominates == bool(np.all(fa <= fb + 1e-12))
        assert d.b_dominates == bool(np.all(fb <= fa + 1e-12))
        assert d.area_a - d.area_b == pytest.approx(av @ ap_ - bv @ bp, abs=1e-12)
        assert d.max_gap_a == pytest.approx(max(0, np.max(fb - fa)), abs=1e-12)


def test_padded_rows_walk_only_their_own_list():
    """A list of 4 padded to 10 ranks scores as the list of 4 itself."""
    short = np.array([1, 0, 1, 1.0])
    padded = np.zeros((1, 10))
    padded[0, :4] = short
    for m in ["PatH(model='rwbm', p=0.5, q=0.3)", "PatH(model='sfbm', p=0.6, order=2)"]:
        alone = evaluate(m, short)
        assert evaluate(m, padded, lengths=np.array([4]))[0] == pytest.approx(alone, abs=1e-12)
        assert evaluate(m, padded)[0] != pytest.approx(alone, abs=1e-6)
