"""The simulator itself: reproducible, correct on chains with known answers."""

import numpy as np
import pytest

from bayeschain.chains.simulation import simulate_users
from bayeschain.errors import ChainError

from ..conftest import constant_walk


def test_seeded_runs_are_reproducible():
    walk = constant_walk(0.5, 0.25, 10)
    a = simulate_users(walk, 1000, rewards=np.ones(10), seed=3)
    b = simulate_users(walk, 1000, rewards=np.ones(10), seed=3)
    np.testing.assert_array_equal(a.stopping_time, b.stopping_time)
    np.testing.assert_array_equal(a.visits, b.visits)


def test_deterministic_forward_user_visits_everything_once():
    walk = constant_walk(1.0, 0.0, 7)
    sim = simulate_users(walk, 50, rewards=np.arange(7.0), seed=0)
    assert np.all(sim.stopping_time == 7)
    assert np.all(sim.visits == 1)
    assert np.all(sim.reward == 21)


def test_geometric_stopping_time_of_a_constant_forward_walk():
    """H is geometric (truncated at N) under SFBM: P(H = h) = p^(h-1)(1-p)."""
    p, n, users = 0.6, 50, 100_000
    sim = simulate_users(constant_walk(p, 0.0, n), users, seed=4)
    freq = np.bincount(sim.stopping_time, minlength=6)[1:6] / users
    exact = p ** np.arange(5) * (1 - p)
    assert np.all(np.abs(freq - exact) < 5 * np.sqrt(exact * (1 - exact) / users))


def test_visit_dependent_gain_is_applied_per_visit():
    # state 0 -> state 1 w.p. 1, state 1 -> state 0 w.p. 1/2, stops w.p. 1/2
    q = np.array([[0.0, 1.0], [0.5, 0.0]])
    sim = simulate_users(q, 20_000, rewards=np.array([1.0, 0.0]), loss=0.5, seed=5)
    visits0 = sim.visits[:, 0]
    np.testing.assert_allclose(sim.reward, 2 * (1 - 0.5**visits0))


def test_start_distribution_and_errors():
    walk = constant_walk(0.5, 0.25, 4)
    sim = simulate_users(walk, 40_000, start=[0.25, 0.25, 0.5, 0.0], seed=6)
    assert abs((sim.first_state == 2).mean() - 0.5) < 0.02
    with pytest.raises(ChainError):
        simulate_users(walk, 10, rewards=np.ones(3))
    with pytest.raises(ChainError):
        simulate_users(walk, 10, loss=0.2, gain=lambda k, y: y)
