"""Invariant distributions (GTH), censored chains and continuous-time weights."""

import numpy as np
import pytest

from bayeschain import chains as ch
from bayeschain.errors import ChainError


def random_stochastic(rng, shape, n):
    p = rng.random(tuple(shape) + (n, n))
    return p / p.sum(-1, keepdims=True)


def eigen_invariant(p):
    """Reference: left eigenvector of eigenvalue 1."""
    w, v = np.linalg.eig(p.T)
    x = np.real(v[:, np.argmin(np.abs(w - 1))])
    return x / x.sum()


def test_invariant_matches_eigenvector(rng):
    p = random_stochastic(rng, (4,), 9)
    pi = ch.invariant_distribution(p)
    for b in range(4):
        np.testing.assert_allclose(pi[b], eigen_invariant(p[b]), atol=1e-12)
    np.testing.assert_allclose(np.einsum("bi,bij->bj", pi, p), pi, atol=1e-14)


def test_invariant_of_nearly_decomposable_chain_is_accurate():
    eps = 1e-13
    p = np.array([[1 - eps, eps, 0], [0.5, 0, 0.5], [0, eps, 1 - eps]])
    pi = ch.invariant_distribution(p)
    # detailed balance gives pi exactly: pi_0 eps = pi_1 / 2, symmetric
    ref = np.array([1.0, 2 * eps, 1.0]) / (2 + 2 * eps)
    np.testing.assert_allclose(pi, ref, rtol=1e-10)


def test_censored_chain_invariant_is_restricted_invariant(rng):
    p = random_stochastic(rng, (3,), 8)
    watched = [1, 4, 6]
    pc = ch.censored_chain(p, watched)
    np.testing.assert_allclose(pc.sum(-1), 1.0, atol=1e-12)
    pi = ch.invariant_distribution(p)[:, watched]
    np.testing.assert_allclose(ch.invariant_distribution(pc), pi / pi.sum(-1, keepdims=True),
                               atol=1e-12)


def test_censored_chain_by_simulation(rng):
    """Watch a simulated trajectory on the subset and count its jumps (100,000 steps)."""
    p = random_stochastic(rng, (), 5)
    watched = np.array([0, 2, 3])
    cum = np.cumsum(p, axis=1)
    state, seen = 0, []
    u = np.random.default_rng(5).random(100_000)
    for x in u:
        state = min(int(np.searchsorted(cum[state], x, side="right")), 4)
        if state in watched:
            seen.append(int(np.flatnonzero(watched == state)[0]))
    seen = np.array(seen)
    counts = np.zeros((3, 3))
    np.add.at(counts, (seen[:-1], seen[1:]), 1)
    freq = counts / counts.sum(1, keepdims=True)
    exact = ch.censored_chain(p, watched)
    se = np.sqrt(exact * (1 - exact) / counts.sum(1, keepdims=True))
    assert np.all(np.abs(freq - exact) < 5 * se + 1e-9)


def test_chain_with_two_closed_classes_is_rejected():
    for p in (np.eye(2), np.array([[1.0, 0, 0], [0, 1.0, 0], [0.3, 0.3, 0.4]])):
        with pytest.raises(ChainError, match="not unique"):
            ch.invariant_distribution(p)


def test_single_closed_class_gives_its_unique_invariant():
    p = np.array([[1.0, 0.0], [0.5, 0.5]])  # state 1 is transient
    np.testing.assert_allclose(ch.invariant_distribution(p), [1.0, 0.0], atol=1e-15)


def test_non_stochastic_rows_are_rejected():
    with pytest.raises(ChainError, match="sum to 1"):
        ch.invariant_distribution(np.array([[0.5, 0.4], [0.5, 0.5]]))


def test_continuous_time_weights():
    pi = np.array([0.5, 0.25, 0.25])
    mu = np.array([1.0, 0.5, 2.0])
    w = ch.continuous_time_weights(pi, mu)
    np.testing.assert_allclose(w, np.array([0.5, 0.5, 0.125]) / 1.125)
    with pytest.raises(ChainError):
        ch.continuous_time_weights(pi, np.array([1.0, 0.0, 1.0]))


def test_continuous_time_weights_by_simulation(rng):
    """Time-average occupation of a simulated continuous-time chain (20,000 jumps)."""
    p = random_stochastic(rng, (), 4)
    np.fill_diagonal(p, 0)
    p /= p.sum(1, keepdims=True)
    mu = np.array([0.5, 1.0, 2.0, 4.0])
    gen = np.random.default_rng(9)
    cum = np.cumsum(p, axis=1)
    state, time_in = 0, np.zeros(4)
    for _ in range(20_000):
        time_in[state] += gen.exponential(1 / mu[state])
        state = min(int(np.searchsorted(cum[state], gen.random(), side="right")), 3)
    exact = ch.continuous_time_weights(ch.invariant_distribution(p), mu)
    np.testing.assert_allclose(time_in / time_in.sum(), exact, atol=0.02)
