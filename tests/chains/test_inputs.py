"""The public solvers refuse bad input with a ChainError that says what was expected (issue
16, d17): never a raw NumPy error, a silent NaN, a MemoryError or a spin."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeschain import chains as ch
from bayeschain.chains import checks
from bayeschain.chains.appendix import sfbm_expected_reward
from bayeschain.chains.recursion import ratio_laws
from bayeschain.chains.simulation import simulate_users
from bayeschain.errors import BayeschainError, ChainError

from ..conftest import brute_expected_ratio, random_substochastic

Q = np.array([[0.0, 0.5], [0.2, 0.0]])
WALK = ch.Tridiagonal([0.0, 0.2], [0.0, 0.0], [0.5, 0.0])

BAD_REWARDS = {
    "another length": np.ones(3),
    "batch that does not broadcast": np.ones((4, 2)),
    "strings": np.array(["1", "0"]),
    "NaN": np.array([np.nan, 1.0]),
    "infinity": np.array([np.inf, 1.0]),
    "ragged": [[1.0, 0.0], [1.0]],
    "mapping": {"a": 1},
    "None": None,
    "complex": np.array([1j, 0]),
}

REWARD_CALLS = {
    "expected_reward": lambda r, q: ch.expected_reward(q, r),
    "reward_variance": lambda r, q: ch.reward_variance(q, r),
    "expected_ratio": lambda r, q: ch.expected_ratio(q, r),
    "geometric_loss_reward": lambda r, q: ch.geometric_loss_reward(q, r, 0.5),
    "joint_distribution": lambda r, q: ch.joint_distribution(q, r),
}


@pytest.mark.parametrize("bad", sorted(BAD_REWARDS))
@pytest.mark.parametrize("name", sorted(REWARD_CALLS))
@pytest.mark.parametrize("block", ["dense", "walk", "batched"])
def test_bad_rewards_are_chain_errors(name, bad, block):
    """Rewards of another length or batch, strings, NaN (which returned NaN), ragged
    lists, maps, None, complex numbers."""
    if bad == "batch that does not broadcast" and block != "batched":
        pytest.skip("any leading axes of rewards broadcast against an unbatched chain")
    q = {"dense": Q, "walk": WALK, "batched": np.stack([Q, Q, Q])}[block]
    with pytest.raises(ChainError) as info:
        REWARD_CALLS[name](BAD_REWARDS[bad], q)
    assert "array(" not in str(info.value)


def test_nan_rewards_no_longer_return_nan():
    with pytest.raises(ChainError, match="rewards contains NaN"):
        ch.expected_reward(Q, [np.nan, 1.0])


@pytest.mark.parametrize("start", ["0", 0.0, True, [0.5, 0.5, 0.0], [[0.5, 0.5]] * 4,
                                   [np.nan, 1.0], None])
def test_bad_starts_are_chain_errors(start):
    with pytest.raises(ChainError, match="start"):
        ch.expected_visits(np.stack([Q, Q, Q]), start)


@pytest.mark.parametrize("bands", [("a", 0, 0), ([0, 0.1], [0, 0, 0], [0.1, 0]),
                                   ([[0, 1], [1]], 0, 0), (0.0, 0.0, 0.0), ([], [], [])])
def test_bad_tridiagonal_bands_are_chain_errors(bands):
    with pytest.raises(ChainError):
        ch.Tridiagonal(*bands)


@pytest.mark.parametrize("n_max", [10**9, 0, 2.5, True, "10", None])
def test_stopping_time_pmf_bounds_n_max(n_max):
    """n_max = 10^9 was a MemoryError; the limit is stated."""
    with pytest.raises(ChainError, match=f"from 1 to {checks.MAX_STEPS:,}"):
        ch.stopping_time_pmf(Q, n_max)


def test_stopping_time_pmf_is_the_definition_to_its_end():
    """P(H = n) = e_s Q^(n-1) (I - Q) e for n up to n_max, zeros once everyone stopped."""
    got = ch.stopping_time_pmf(Q, 50)
    exit_p = 1 - Q.sum(axis=1)
    ref = [np.linalg.matrix_power(Q, n - 1)[0] @ exit_p for n in range(1, 51)]
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-300)
    dfbm = ch.Tridiagonal([0, 0, 0], [0, 0, 0], [1.0, 1.0, 0])
    assert ch.stopping_time_pmf(dfbm, 6).tolist() == [0, 0, 1, 0, 0, 0]


class CountingEffort:
    """f(h) = h, counting its calls: the recursion calls it once or twice per step."""

    def __init__(self):
        self.calls = 0

    def __call__(self, h):
        self.calls += 1
        return np.asarray(h, dtype=float)


@pytest.mark.parametrize("exit_prob", [1e-13, 1e-9, 1e-6])
def test_expected_ratio_refuses_a_chain_that_almost_never_stops_before_the_first_step(
        exit_prob):
    """Such a chain ran its 10^6 steps (41 s) before raising; now it is refused before the
    first step: the effort function is evaluated a few times, not 2 x 10^6."""
    q = np.array([[0.0, 1.0], [1.0 - exit_prob, 0.0]])
    effort = CountingEffort()
    with pytest.raises(ChainError, match="stops too rarely"):
        ch.expected_ratio(q, np.ones(2), effort)
    assert effort.calls <= 3


def _steps_used(q, rho, tol, max_steps=checks.MAX_STEPS):
    effort = CountingEffort()
    value = ch.expected_ratio(q, rho, effort, tol=tol, max_steps=max_steps)
    return value, (effort.calls - 2) // 2          # one check call, two calls per step


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.1, 1e-2, 1e-3]),
       st.sampled_from([1e-6, 1e-12]))
def test_the_fail_fast_bound_never_refuses_a_recursion_that_succeeds(seed, min_exit, tol):
    """Run the recursion with max_steps equal to the steps it needs: it must succeed (the
    up-front bound is a lower bound on those steps), and agree with the matrix-power
    series of the definition."""
    rng = np.random.default_rng(seed)
    q = random_substochastic(rng, (), 3, min_exit=min_exit, max_exit=min_exit * 2,
                             density=0.7)
    rho = rng.integers(0, 3, 3).astype(float)
    value, steps = _steps_used(q, rho, tol)
    again, _ = _steps_used(q, rho, tol, max_steps=max(steps, 1))
    assert again == value
    if min_exit >= 0.1:                  # the series' terms beyond 300 are below 0.9^300
        ref = brute_expected_ratio(q, rho, lambda n: n, n_max=300)
        assert value == pytest.approx(ref, abs=tol + 1e-12)


def test_expected_ratio_of_rewards_near_the_largest_float():
    """Rewards of 1e300 are scaled, not overflowed: the value is the series of the
    definition (matrix powers), and an overflowing result is an error, not inf."""
    rho = np.array([1e300, 3e299])
    ref = brute_expected_ratio(Q, rho, lambda n: n, n_max=200)
    assert ch.expected_ratio(Q, rho) == pytest.approx(ref, rel=1e-12)
    slow = np.array([[0.0, 0.99], [0.99, 0.0]])
    with pytest.raises(ChainError, match="overflows"):
        ch.expected_ratio(slow, [1.7e308, 1.7e308], effort="1")
    with pytest.raises(ChainError, match="not finite"):
        ch.expected_reward(slow, [1.7e308, 1.7e308])


def test_a_singular_chain_passed_unchecked_is_a_chain_error():
    stuck = np.array([[0.0, 1.0], [1.0, 0.0]])
    for call in (lambda: ch.expected_reward(stuck, [1.0, 1.0], check=False),
                 lambda: ch.expected_ratio(stuck, [1.0, 1.0], check=False),
                 lambda: ch.fundamental_matrix(stuck, check=False)):
        with pytest.raises(ChainError, match="never stops"):
            call()


def test_memory_is_checked_before_allocating(monkeypatch):
    """Huge requests fail with the size and the limit instead of a MemoryError."""
    with pytest.raises(ChainError, match="limit is"):
        ch.joint_distribution(Q, [10**9, 10**9])             # a table of 10^9 columns a step
    with pytest.raises(ChainError, match="limit is"):
        simulate_users(Q, 10**12)
    with pytest.raises(ChainError, match="limit is"):
        ratio_laws(np.array([[0.5, 0.0]]), np.zeros((1, 2)), [[10**9, 1]])
    monkeypatch.setattr(checks, "memory_budget", lambda: 1 << 20)
    with pytest.raises(ChainError, match=r"1000 x 2000 .*limit is 1.0 MiB"):
        ch.expected_visits(ch.Tridiagonal(np.zeros((1000, 2000)), np.zeros(2000),
                                          np.zeros(2000)))


def test_exact_laws_refuse_moves_past_either_end_of_the_ranking():
    """A forward move from the last rank or a backward one from the first led nowhere: the
    recursion wrote outside its table (the process aborted) or into the last rank."""
    with pytest.raises(ChainError, match="no forward move from the last rank"):
        ratio_laws(np.full((2, 10), 0.6), np.zeros((2, 10)), [[1, 0] * 5])
    lower = np.full((2, 10), 0.1)
    upper = np.full((2, 10), 0.6)
    upper[:, -1] = 0.0
    with pytest.raises(ChainError, match=r"lower\[:, 0\] up to 0.1"):
        ratio_laws(upper, lower, [[1, 0] * 5])
    lower[:, 0] = 0.0
    values, laws = ratio_laws(upper, lower, [[1, 0] * 5], tol=1e-6)
    assert np.all(np.abs(laws.sum(axis=-1) - 1) <= 1e-6)


def test_simulation_that_cannot_finish_is_refused_up_front():
    """E[H] = 2e9 visits: some of 1000 users would still browse after max_steps."""
    q = np.array([[0.0, 1.0], [1.0 - 1e-9, 0.0]])
    with pytest.raises(ChainError, match="still be browsing|limit is"):
        simulate_users(q, 1000, rewards=[1.0, 0.0])
    with pytest.raises(ChainError, match="n_users"):
        simulate_users(Q, 0)
    with pytest.raises(ChainError, match="seed"):
        simulate_users(Q, 10, seed="x")


def test_joint_distribution_of_a_chain_that_never_stops_fails_fast():
    q = np.array([[0.0, 1.0], [1.0 - 1e-12, 0.0]])
    with pytest.raises(ChainError, match="expected stopping time"):
        ch.joint_distribution(q, [1, 0])


def test_messages_print_plain_numbers():
    """Issue 16 (d18): 'got array(1.5)'."""
    with pytest.raises(ChainError) as info:
        sfbm_expected_reward([1.0, 0.0], np.array(1.5))
    assert str(info.value) == "p must lie in [0, 1], got 1.5"
    with pytest.raises(ChainError) as info:
        ch.geometric_loss_reward(Q, [1.0, 0.0], np.array(1.5))
    assert str(info.value).endswith("got 1.5")


@pytest.mark.parametrize(("value", "text"), [
    (np.array(1.5), "1.5"), (np.float64(0.1), "0.1"), (np.array([0.5, 0.6]), "[0.5, 0.6]"),
    (np.int64(3), "3"), (np.array([True]), "[True]"), ("0.8", "'0.8'"),
    (np.arange(100.0), "an array of shape (100,) (values from 0 to 99)"),
    (np.array([np.nan] * 10), "an array of shape (10,) (no finite value, 10 not finite)"),
    (np.array(["a", "b"]), "['a', 'b']"), ({"a": 1}, "{'a': 1}"), (None, "None")])
def test_plain_numbers(value, text):
    assert checks.plain(value) == text


def test_every_public_solver_error_is_a_bayeschain_error():
    """The functions of bayeschain.chains on a string, each with the message of its kind."""
    calls = [lambda f=f: f("x") for f in (ch.expected_visits, ch.expected_stopping_time,
                                          ch.stopping_time_variance, ch.exit_probabilities,
                                          ch.fundamental_matrix, ch.hitting_probabilities,
                                          ch.return_probabilities, ch.as_block,
                                          ch.forward_passage_times, ch.invariant_distribution)]
    calls += [lambda: ch.censored_chain(np.eye(2), "x"),
              lambda: ch.continuous_time_weights([0.5, 0.5], "x"),
              lambda: ch.ratio_distribution("x"),
              lambda: ch.ratio_weights("x"),
              lambda: ch.effort_values("x", np.ones(2)),
              lambda: ch.effort_values(3, np.ones(2)),
              lambda: ch.expected_ratio(Q, [1.0, 0.0], effort=lambda h: "x")]
    for call in calls:
        with pytest.raises(BayeschainError):
            call()
