"""Bad chains raise a ChainError that names the problem, never LinAlgError or inf/NaN."""

import numpy as np
import pytest

from bayeschain import chains as ch
from bayeschain.errors import BayeschainError, ChainError


@pytest.mark.parametrize(("matrix", "message"), [
    (np.ones((2, 3)) * 0.1, "square"),
    (np.array([[0.2, -0.1], [0.1, 0.1]]), ">= 0"),
    (np.array([[0.7, 0.6], [0.1, 0.1]]), "sums to"),
    (np.array([[np.nan, 0.1], [0.1, 0.1]]), "NaN"),
    (np.array([[0.5, 0.5], [0.5, 0.5]]), "absorption is impossible"),
    (np.zeros((0, 0)), "no states"),
])
def test_bad_blocks(matrix, message):
    with pytest.raises(ChainError, match=message):
        ch.expected_reward(matrix, np.ones(matrix.shape[-1]))


def test_closed_class_in_a_walk_is_named():
    walk = ch.Tridiagonal([0, 0.5, 0.5, 0.2], [0, 0, 0, 0], [0.5, 0.5, 0.5, 0])
    # states 0..2 exit nowhere and cannot move right past... state 2 moves to 3 which exits
    ch.expected_stopping_time(walk)  # fine: every state reaches state 3
    trapped = ch.Tridiagonal([0, 1.0, 0, 0], [0, 0, 0, 0], [1.0, 0, 0, 0])
    with pytest.raises(ChainError, match=r"states \[0, 1\]"):
        ch.expected_stopping_time(trapped)


def test_dense_closed_class_in_one_batch_element():
    q = np.stack([np.array([[0.0, 0.5], [0.5, 0.0]]), np.array([[0.0, 1.0], [1.0, 0.0]])])
    with pytest.raises(ChainError, match="batch index"):
        ch.expected_reward(q, np.ones(2))


def test_errors_are_bayeschain_errors_and_value_errors():
    with pytest.raises(BayeschainError):
        ch.expected_visits(np.array([[2.0]]))
    with pytest.raises(ValueError):
        ch.expected_visits(np.array([[2.0]]))


def test_bad_start_and_loss():
    q = np.array([[0.0, 0.5], [0.2, 0.0]])
    with pytest.raises(ChainError, match="start state"):
        ch.expected_reward(q, np.ones(2), start=2)
    with pytest.raises(ChainError, match="start distribution"):
        ch.expected_reward(q, np.ones(2), start=[0.5, 0.6])
    with pytest.raises(ChainError, match="lambda"):
        ch.geometric_loss_reward(q, np.ones(2), 1.5)
    with pytest.raises(ChainError, match="integer"):
        ch.joint_distribution(q, np.array([0.5, 1.0]))
    with pytest.raises(ChainError, match="effort"):
        ch.expected_ratio(q, np.ones(2), effort="log")


def test_tridiagonal_with_out_of_range_bands():
    with pytest.raises(ChainError, match="lower"):
        ch.expected_reward(ch.Tridiagonal([0.1, 0.1], [0, 0], [0.1, 0.0]), np.ones(2))


def test_no_silent_nan_for_near_singular_walk():
    """A walk that stops with tiny probability still gives finite, huge expectations."""
    walk = ch.Tridiagonal([0, 1.0], [0, 0], [1.0 - 1e-9, 0])
    value = ch.expected_stopping_time(walk)
    assert np.isfinite(value) and value == pytest.approx(2e9, rel=1e-6)
    with pytest.raises(ChainError, match="impossible"):
        ch.expected_stopping_time(ch.Tridiagonal([0, 1.0], [0, 0], [1.0, 0]))
