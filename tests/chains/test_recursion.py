"""Order-1 recursion and the exact joint law of (T(H), H)."""

import numpy as np
import pytest
from hypothesis import given, settings

from bayeschain import chains as ch
from bayeschain.simulate import simulate_users

from ..conftest import (
    brute_expected_ratio,
    constant_walk,
    enumerate_paths,
    random_walk,
    substochastic_matrices,
)


@settings(max_examples=25, deadline=None)
@given(substochastic_matrices(max_n=4))
def test_expected_ratio_matches_matrix_power_series(q):
    rho = (np.arange(q.shape[0]) % 2).astype(float)
    ref = brute_expected_ratio(q, rho, lambda n: n, n_max=250)
    # the series is cut after 250 steps: the terms left out sum to at most
    # P(H > 250) * max(rho) (a slowly absorbing state can leave more than 1e-9 there)
    tail = np.linalg.matrix_power(q, 250)[0].sum()
    assert ch.expected_ratio(q, rho, tol=1e-13) == pytest.approx(ref, abs=1e-9 + tail)
    assert ch.expected_ratio(q, rho, tol=1e-13) >= ref - 1e-12     # the cut only removes


def test_expected_ratio_effort_one_is_expected_reward(rng):
    walk = random_walk(rng, (3,), 9)
    rho = rng.random(9)
    np.testing.assert_allclose(ch.expected_ratio(walk, rho, effort="1"),
                               ch.expected_reward(walk, rho), rtol=1e-10)


def test_expected_ratio_respects_tolerance(rng):
    walk = constant_walk(0.5, 0.45, 10)  # slow absorption: many steps needed
    rho = np.ones(10) * (np.arange(10) % 3 == 0)
    exact = ch.expected_ratio(walk, rho, tol=1e-14)
    for tol in (1e-3, 1e-6, 1e-9):
        assert abs(ch.expected_ratio(walk, rho, tol=tol) - exact) <= tol


def test_joint_distribution_matches_path_enumeration(rng):
    q = np.array([[0.0, 0.5, 0.1], [0.3, 0.0, 0.4], [0.2, 0.2, 0.1]])
    rho = np.array([1, 0, 2])
    depth = 9
    paths = enumerate_paths(q, rho, 0, depth)
    joint = ch.joint_distribution(q, rho, tol=1e-14)
    for (h, t), p in paths.items():
        if h <= depth:
            assert joint[h - 1, t] == pytest.approx(p, abs=1e-14)
    assert joint.sum() == pytest.approx(1.0, abs=1e-13)


def test_joint_marginals_are_the_stopping_time_pmf_and_reward_mean(rng):
    walk = random_walk(rng, (2,), 7)
    rho = rng.integers(0, 3, 7)
    joint = ch.joint_distribution(walk, rho, tol=1e-14)
    n_max = joint.shape[-2]
    np.testing.assert_allclose(joint.sum(-1), ch.stopping_time_pmf(walk, n_max), atol=1e-14)
    t = np.arange(joint.shape[-1])
    np.testing.assert_allclose((joint.sum(-2) * t).sum(-1), ch.expected_reward(walk, rho),
                               rtol=1e-9)


def test_ratio_distribution_mean_is_order_one(rng):
    walk = constant_walk(0.5, 0.25, 10, p_first=0.75, q_last=0.25)
    rho = np.array([0, 1, 1, 1, 1, 0, 0, 0, 0, 0])
    values, probs = ch.ratio_distribution(ch.joint_distribution(walk, rho, tol=1e-15))
    assert np.all(np.diff(values) > 0)
    assert values @ probs == pytest.approx(ch.expected_ratio(walk, rho), abs=1e-12)


def test_ratio_law_against_simulation():
    """CDF of P@H: 200,000 users; Kolmogorov-Smirnov-style band of 5/sqrt(U) (exact pointwise
    standard error <= 0.5/sqrt(U), so the band is 10 standard errors at worst)."""
    walk = constant_walk(0.5, 0.25, 10, p_first=0.75, q_last=0.25)
    rho = np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1])
    values, probs = ch.ratio_distribution(ch.joint_distribution(walk, rho))
    sim = simulate_users(walk, 200_000, rewards=rho, seed=7).precision()
    sim_cdf = np.searchsorted(np.sort(np.round(sim, 12)), values, side="right") / sim.size
    assert np.max(np.abs(sim_cdf - np.cumsum(probs))) < 5 / np.sqrt(sim.size)
    assert abs(sim.mean() - ch.expected_ratio(walk, rho)) < 5 * sim.std() / np.sqrt(sim.size)


def test_user_effort_function(rng):
    walk = random_walk(rng, (), 5)
    rho = rng.random(5)
    ref = brute_expected_ratio(walk.to_dense(), rho, lambda n: np.log2(n + 1), n_max=300)
    got = ch.expected_ratio(walk, rho, effort=lambda h: np.log2(h + 1), tol=1e-13)
    assert got == pytest.approx(ref, abs=1e-9)


def _dense_joint_law(moves, rewards, steps):
    """``P(H = n, T(H) = t)`` by a dense NumPy recursion over (rank, reward so far), written
    from the definition and independent of the solver's compiled kernel."""
    n = moves.shape[0]
    exits = 1.0 - moves.sum(axis=1)
    top = int(rewards.max())
    a = np.zeros((n, top * (steps + 1) + 1))
    a[0, rewards[0]] = 1.0
    law = np.zeros((steps, a.shape[1]))
    for step in range(steps):
        law[step] = exits @ a
        nxt = np.zeros_like(a)
        for j in range(n):
            shifted = moves[:, j] @ a
            nxt[j, rewards[j]:] += shifted[:a.shape[1] - rewards[j]]
        a = nxt
    return law


@pytest.mark.parametrize("rewards", [[1, 1, 1, 1, 1], [2, 1, 2, 2, 2], [1, 0, 0, 0, 2]])
def test_joint_law_of_walks_longer_than_the_first_buffer_matches_a_dense_recursion(rewards):
    """Walks alive for hundreds of steps: the compiled recursion grows its buffers as it
    goes, and every cell must stay where the definition puts it, including the largest
    reward totals (every visit at the top reward), which sit at the buffers' edge."""
    from bayeschain.chains.recursion import ratio_laws

    up = np.array([[0.9, 0.8, 0.8, 0.8, 0.0]])
    lo = np.array([[0.0, 0.19, 0.19, 0.19, 0.9]])
    rewards = np.array(rewards)
    moves = np.diag(up[0, :-1], 1) + np.diag(lo[0, 1:], -1)
    joint = ch.joint_distribution(moves, rewards, tol=1e-10)
    steps = joint.shape[0]
    assert steps > 200
    reference = _dense_joint_law(moves, rewards, steps)
    width = min(joint.shape[1], reference.shape[1])
    np.testing.assert_allclose(joint[:, :width], reference[:, :width], atol=1e-15, rtol=1e-9)
    assert joint[:, width:].sum() == 0 and reference[:, width:].sum() < 1e-15
    # the ratio laws, from the same reference law
    values, probs = ratio_laws(up, lo, rewards[None], tol=1e-10)
    h = np.arange(1, steps + 1)[:, None]
    t = np.arange(reference.shape[1])[None, :]
    ratio = np.round(t / h, 12)
    expected = np.zeros(values.size)
    cells = reference > 0
    position = np.searchsorted(values, ratio[cells])
    assert np.array_equal(values[position], ratio[cells])
    np.add.at(expected, position, reference[cells])
    np.testing.assert_allclose(probs[0, 0], expected, atol=1e-14)

