"""The O(N) tridiagonal path against the dense reference (to 1e-10)."""

import numpy as np
import pytest

from bayeschain import chains as ch
from bayeschain.chains import tridiagonal as tri

from ..conftest import dense_fundamental, random_walk


@pytest.mark.parametrize("n", [1, 2, 3, 10, 200])
def test_thomas_solve_matches_dense(rng, n):
    walk = random_walk(rng, (5,), n)
    rhs = rng.normal(size=(5, n))
    x = tri.solve_identity_minus(walk, rhs)
    ref = np.linalg.solve(np.eye(n) - walk.to_dense(), rhs[..., None])[..., 0]
    np.testing.assert_allclose(x, ref, rtol=1e-10, atol=1e-10)


def test_inverse_diagonal_matches_dense(rng):
    walk = random_walk(rng, (3, 2), 50)
    ref = np.diagonal(dense_fundamental(walk.to_dense()), axis1=-2, axis2=-1)
    np.testing.assert_allclose(tri.inverse_diagonal(walk), ref, rtol=1e-10)


def test_dense_tridiagonal_input_takes_the_banded_path(rng):
    walk = random_walk(rng, (), 30)
    dense = walk.to_dense()
    block = ch.as_block(dense)
    assert isinstance(block, ch.blocks.TridiagonalBlock)
    rho = rng.random(30)
    assert ch.expected_reward(dense, rho) == pytest.approx(ch.expected_reward(walk, rho), rel=1e-12)
    np.testing.assert_allclose(ch.hitting_probabilities(walk),
                               ch.hitting_probabilities(ch.blocks.DenseBlock(dense)), atol=1e-12)


def test_bands_round_trip_and_transpose(rng):
    walk = random_walk(rng, (2,), 6)
    dense = walk.to_dense()
    np.testing.assert_array_equal(ch.Tridiagonal.from_dense(dense).to_dense(), dense)
    np.testing.assert_array_equal(walk.transpose().to_dense(), np.swapaxes(dense, -1, -2))
    x = rng.random((2, 6))
    np.testing.assert_allclose(walk.matvec(x), np.einsum("bij,bj->bi", dense, x))
    np.testing.assert_allclose(walk.rmatvec(x), np.einsum("bi,bij->bj", x, dense))


def test_reachability_sweeps_match_dense_reachability(rng):
    for _ in range(50):
        n = int(rng.integers(2, 9))
        lower = rng.choice([0.0, 0.3], size=n)
        upper = rng.choice([0.0, 0.3], size=n)
        diag = rng.choice([0.0, 0.4], size=n)
        lower[0] = upper[-1] = 0.0
        walk = ch.Tridiagonal(lower, diag, upper)
        exits = 1 - walk.row_sums()
        fast = tri.can_reach_exit(walk, exits, 1e-12)
        slow = ch.blocks.DenseBlock(walk.to_dense()).can_reach_exit(exits, 1e-12)
        np.testing.assert_array_equal(fast, slow)


def test_forward_only_walk_from_rank_one_is_the_dense_solve():
    """The cumulative-product path (no backward move, right-hand side at state 0 only)
    equals numpy.linalg.solve, batched and broadcast against an unbatched rhs."""
    from bayeschain.chains.tridiagonal import Tridiagonal, solve_identity_minus

    rng = np.random.default_rng(3)
    lower = rng.random((4, 6)) * 0.5
    lower[:, 0] = 0
    diag = rng.random((4, 6)) * 0.3
    for rhs in (np.eye(6)[0], np.eye(6)[0] * 2.5 + np.zeros((4, 6))):
        x = solve_identity_minus(Tridiagonal(lower, diag, np.zeros((4, 6))), rhs)
        for k in range(4):
            a = np.eye(6) - np.diag(diag[k]) - np.diag(lower[k, 1:], -1)
            np.testing.assert_allclose(x[k], np.linalg.solve(a, np.broadcast_to(
                rhs, (4, 6))[k]), rtol=1e-13, atol=1e-15)
