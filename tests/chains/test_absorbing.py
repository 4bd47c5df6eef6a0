"""Absorbing-chain solvers against dense brute force, hypothesis and simulation."""

import numpy as np
import pytest
from hypothesis import given, settings

from bayeschain import chains as ch
from bayeschain.simulate import simulate_users

from ..conftest import (
    constant_walk,
    dense_fundamental,
    random_substochastic,
    random_walk,
    substochastic_matrices,
)


def brute_moments(q, rho, start):
    """Reference moments from the dense fundamental matrix and E[T^2] by first-step analysis
    solved as a linear system written out separately."""
    nm = dense_fundamental(q)
    m = nm @ rho
    n = len(rho)
    # E_i[T^2] = rho_i^2 + 2 rho_i sum_j q_ij m_j + sum_j q_ij E_j[T^2]
    second = np.linalg.solve(np.eye(n) - q, rho**2 + 2 * rho * (q @ m))
    return m[start], second[start] - m[start] ** 2, nm[start]


@settings(max_examples=60, deadline=None)
@given(substochastic_matrices())
def test_moments_match_dense_reference(q):
    rng = np.random.default_rng(q.size)
    rho = rng.integers(0, 3, size=q.shape[0]).astype(float)
    for start in range(q.shape[0]):
        mean, var, visits = brute_moments(q, rho, start)
        np.testing.assert_allclose(ch.expected_reward(q, rho, start), mean, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(ch.reward_variance(q, rho, start), var, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(ch.expected_visits(q, start), visits, rtol=1e-10, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(substochastic_matrices())
def test_hitting_and_return_probabilities_by_first_step_analysis(q):
    """h_ij solves h_ij = sum_k q_ik h_kj for i != j, h_jj = 1; f_jj = sum_k q_jk h_kj."""
    n = q.shape[0]
    h = ch.hitting_probabilities(q)
    f = ch.return_probabilities(q)
    for j in range(n):
        others = [i for i in range(n) if i != j]
        ref = np.ones(n)
        if others:
            a = np.eye(len(others)) - q[np.ix_(others, others)]
            ref[others] = np.linalg.solve(a, q[others, j])
        np.testing.assert_allclose(h[:, j], ref, atol=1e-10)
        np.testing.assert_allclose(f[j], q[j] @ ref, atol=1e-10)


def test_batched_equals_unbatched(rng):
    q = random_substochastic(rng, (4, 3), 7, density=0.6)
    rho = rng.random((3, 7))
    batched = ch.expected_reward(q, rho)
    var = ch.reward_variance(q, rho, start=2)
    pmf = ch.stopping_time_pmf(q, 15)
    for a in range(4):
        for b in range(3):
            assert batched[a, b] == pytest.approx(ch.expected_reward(q[a, b], rho[b]), rel=1e-12)
            assert var[a, b] == pytest.approx(ch.reward_variance(q[a, b], rho[b], 2), rel=1e-10)
            np.testing.assert_allclose(pmf[a, b], ch.stopping_time_pmf(q[a, b], 15), rtol=1e-12)


def test_start_distribution_is_the_mixture_of_start_states(rng):
    q = random_substochastic(rng, (), 5)
    rho = rng.random(5)
    p0 = rng.dirichlet(np.ones(5))
    per_state = ch.expected_reward(q, rho, start=None)
    assert ch.expected_reward(q, rho, start=p0) == pytest.approx(p0 @ per_state, rel=1e-12)


def test_stopping_time_pmf_matches_matrix_powers(rng):
    q = random_substochastic(rng, (), 6, max_exit=0.3)
    s = 1 - q.sum(axis=1)
    pmf = ch.stopping_time_pmf(q, 30, start=3)
    ref = [(np.linalg.matrix_power(q, n - 1) @ s)[3] for n in range(1, 31)]
    np.testing.assert_allclose(pmf, ref, rtol=1e-12, atol=1e-15)
    mean_from_pmf = np.sum(np.arange(1, 2001) * ch.stopping_time_pmf(q, 2000, start=3))
    assert mean_from_pmf == pytest.approx(ch.expected_stopping_time(q, start=3), rel=1e-9)


def test_geometric_loss_reduces_to_plain_and_first_visit_gains(rng):
    walk = random_walk(rng, (), 8)
    rho = rng.random(8)
    assert ch.geometric_loss_reward(walk, rho, 0.0) == pytest.approx(
        ch.expected_reward(walk, rho), rel=1e-12)
    h = ch.hitting_probabilities(walk)[0]
    assert ch.geometric_loss_reward(walk, rho, 1.0) == pytest.approx(h @ rho, rel=1e-12)


def test_geometric_loss_batched_over_lambda(rng):
    walk = random_walk(rng, (), 6)
    rho = rng.random(6)
    lams = np.array([0.0, 0.3, 1.0])
    batched = ch.geometric_loss_reward(walk, rho, lams)
    for lam, value in zip(lams, batched, strict=True):
        assert value == pytest.approx(ch.geometric_loss_reward(walk, rho, float(lam)))


# --- Monte Carlo ---------------------------------------------------------------------------
# 200,000 users per check; an exact mean must lie within 5 standard errors of the simulated
# mean (a false alarm has probability < 1e-6 per check; the seeds are fixed anyway).
USERS = 200_000


def _within(sim_values, exact_mean, exact_var, k=5.0):
    se = np.sqrt(exact_var / sim_values.size)
    assert abs(sim_values.mean() - exact_mean) < k * se, (sim_values.mean(), exact_mean, se)


def test_reward_and_stopping_time_against_simulation():
    walk = constant_walk(0.5, 0.25, 10, p_first=0.75, q_last=0.25)  # P@H Figure 1d
    rho = np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1.0])
    sim = simulate_users(walk, USERS, rewards=rho, seed=1)
    _within(sim.reward, ch.expected_reward(walk, rho), ch.reward_variance(walk, rho))
    _within(sim.stopping_time, ch.expected_stopping_time(walk), ch.stopping_time_variance(walk))
    # variances: compare with the sampling distribution of the sample variance (4th moment)
    for values, exact in ((sim.reward, ch.reward_variance(walk, rho)),
                          (sim.stopping_time, ch.stopping_time_variance(walk))):
        centred = values - values.mean()
        se_var = np.sqrt(np.var(centred**2) / values.size)
        assert abs(values.var() - exact) < 5 * se_var
    counts = np.bincount(sim.stopping_time, minlength=41)[1:41] / USERS
    pmf = ch.stopping_time_pmf(walk, 40)
    se = np.sqrt(pmf * (1 - pmf) / USERS) + 1e-12
    assert np.all(np.abs(counts - pmf) < 5 * se + 5 / USERS)
    mean_visits = sim.visits.mean(axis=0)
    exact_visits = ch.expected_visits(walk)
    assert np.all(np.abs(mean_visits - exact_visits) < 5 * sim.visits.std(axis=0) / np.sqrt(USERS))


def test_hitting_return_and_loss_against_simulation():
    walk = constant_walk(0.5, 0.25, 10, p_first=0.75, q_last=0.25)
    rho = np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1.0])
    sim = simulate_users(walk, USERS, rewards=rho, seed=2, loss=0.25)
    visited = (sim.visits > 0).mean(axis=0)
    h = ch.hitting_probabilities(walk)[0]
    assert np.all(np.abs(visited - h) < 5 * np.sqrt(h * (1 - h) / USERS) + 1e-9)
    # P(at least 2 visits to j | visited j) = f_jj
    f = ch.return_probabilities(walk)
    for j in range(10):
        seen = sim.visits[:, j] > 0
        again = (sim.visits[seen, j] > 1).mean()
        assert abs(again - f[j]) < 5 * np.sqrt(f[j] * (1 - f[j]) / seen.sum())
    exact = ch.geometric_loss_reward(walk, rho, 0.25)
    assert abs(sim.reward.mean() - exact) < 5 * sim.reward.std() / np.sqrt(USERS)


def test_dense_general_chain_against_simulation(rng):
    q = random_substochastic(rng, (), 12, max_exit=0.3, density=0.4)
    assert isinstance(ch.as_block(q), ch.blocks.DenseBlock)
    rho = rng.integers(0, 4, 12).astype(float)
    sim = simulate_users(q, USERS, rewards=rho, start=5, seed=3)
    _within(sim.reward, ch.expected_reward(q, rho, 5), ch.reward_variance(q, rho, 5))
    _within(sim.stopping_time, ch.expected_stopping_time(q, 5), ch.stopping_time_variance(q, 5))
