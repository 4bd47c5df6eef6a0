"""Every closed form of the P@H Electronic Appendix against the solvers and simulation.

Simulation checks use 200,000 users and a 5-standard-error band."""

import numpy as np
import pytest

from bayeschain import chains as ch
from bayeschain.chains import appendix as ap
from bayeschain.simulate import simulate_users

from ..conftest import constant_walk

USERS = 200_000
R = np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1.0])
S = np.array([0, 1, 1, 1, 1, 0, 0, 0, 0, 0.0])


def sfbm(p, n):
    return constant_walk(p, 0.0, n)


@pytest.mark.parametrize("p", [0.3, 0.5, 0.8])
@pytest.mark.parametrize("run", [R, S])
def test_sfbm_closed_forms_against_solvers(p, run):
    walk = sfbm(p, run.size)
    reward, var = ch.expected_reward(walk, run), ch.reward_variance(walk, run)
    assert ap.sfbm_expected_reward(run, p) == pytest.approx(reward, rel=1e-12)
    assert ap.sfbm_reward_variance(run, p) == pytest.approx(var, rel=1e-10)
    assert ap.sfbm_expected_precision(run, p) == pytest.approx(ch.expected_ratio(walk, run),
                                                               abs=1e-12)


def test_sfbm_closed_forms_against_simulation():
    p = 0.5
    sim = simulate_users(sfbm(p, 10), USERS, rewards=R, seed=11)
    var = ap.sfbm_reward_variance(R, p)
    se = np.sqrt(var / USERS)
    assert abs(sim.reward.mean() - ap.sfbm_expected_reward(R, p)) < 5 * se
    assert abs(sim.reward.var() - var) < 5 * np.sqrt(np.var((sim.reward - sim.reward.mean()) ** 2)
                                                      / USERS)
    prec = sim.precision()
    assert abs(prec.mean() - ap.sfbm_expected_precision(R, p)) < 5 * prec.std() / np.sqrt(USERS)


def test_printed_appendix_a_exponent_is_a_typo():
    """The printed last term p^N (instead of p^(N-1)) does not give a probability law."""
    p, n = 0.5, 10
    ones = np.ones(n)
    printed = sum(p ** (h - 1) * (1 - p) for h in range(1, n)) + p**n
    assert printed != pytest.approx(1.0)
    assert ap.sfbm_expected_precision(ones, p) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize(("p", "q", "n"), [(0.5, 0.25, 10), (0.3, 0.2, 5), (0.6, 0.1, 20),
                                          (0.45, 0.45, 7)])
def test_k_p_q_n_against_solver(p, q, n):
    assert ap.rw_expected_stopping_time(p, q, n) == pytest.approx(
        ch.expected_stopping_time(constant_walk(p, q, n)), rel=1e-10)


def test_k_limits():
    assert ap.rw_expected_stopping_time(0.6, 0.0, 12) == pytest.approx((1 - 0.6**12) / 0.4)
    assert ap.rw_expected_stopping_time(0.5, 0.25, np.inf) == pytest.approx(
        ch.expected_stopping_time(constant_walk(0.5, 0.25, 400)), rel=1e-12)


def test_k_against_simulation():
    sim = simulate_users(constant_walk(0.5, 0.25, 10), USERS, seed=12)
    k = ap.rw_expected_stopping_time(0.5, 0.25, 10)
    assert abs(sim.stopping_time.mean() - k) < 5 * sim.stopping_time.std() / np.sqrt(USERS)


def test_appendix_c_rational_function_is_the_expected_reward():
    """The Appendix C example (N = 6, r = (1,0,0,1,0,1)) is labelled E_1[P@H], but the
    printed rational function is E_1[T(H)] (the numerator of order 2), as the surrounding
    text says; it matches the solver to machine precision for every (p, q)."""
    run = np.array([1, 0, 0, 1, 0, 1.0])
    for p, q in [(0.5, 0.25), (0.3, 0.6), (0.7, 0.1)]:
        printed = (1 - 4 * p * q + p**3 + 3 * p**2 * q**2 - p**4 * q + p**5) / (
            1 - 5 * p * q + 6 * p**2 * q**2 - p**3 * q**3)
        assert ch.expected_reward(constant_walk(p, q, 6), run) == pytest.approx(printed, rel=1e-12)
        assert ch.expected_ratio(constant_walk(p, q, 6), run) != pytest.approx(printed, rel=1e-3)


def test_appendix_b_variance_formula_is_wrong_and_ours_agrees_with_simulation():
    walk = constant_walk(0.5, 0.25, 10, p_first=0.75, q_last=0.25)
    dense = walk.to_dense()
    nm = np.linalg.inv(np.eye(10) - dense)
    printed = (nm @ np.diag(R) @ (np.eye(10) - 2 * dense @ nm) @ R)[0]
    sim = simulate_users(walk, USERS, rewards=R, seed=13)
    ours = ch.reward_variance(walk, R)
    band = 5 * np.sqrt(np.var((sim.reward - sim.reward.mean()) ** 2) / USERS)
    assert abs(sim.reward.var() - ours) < band
    assert abs(sim.reward.var() - printed) > 10 * band


def test_binary_reward_pmf_against_joint_law_and_simulation():
    walk = constant_walk(0.5, 0.25, 10, p_first=0.75, q_last=0.25)
    pmf = ap.binary_reward_pmf(walk, R.astype(int), 30)
    joint = ch.joint_distribution(walk, R.astype(int), tol=1e-15)
    np.testing.assert_allclose(pmf[: joint.shape[1]], joint.sum(0)[:31], atol=1e-13)
    sim = simulate_users(walk, USERS, rewards=R, seed=14)
    freq = np.bincount(sim.reward.astype(int), minlength=31)[:31] / USERS
    assert np.all(np.abs(freq - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / USERS) + 5 / USERS)


def test_stopping_time_law_is_the_binary_law_with_all_ones():
    walk = constant_walk(0.4, 0.3, 6)
    pmf = ap.binary_reward_pmf(walk, np.ones(6, dtype=int), 25)
    assert pmf[0] == 0.0
    np.testing.assert_allclose(pmf[1:], ch.stopping_time_pmf(walk, 25), atol=1e-14)
