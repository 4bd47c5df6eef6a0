"""Classical measures against their definitions where floating point is at its edges:
ERR with grades of 1024 and more (issue 16, d3)."""

from fractions import Fraction

import numpy as np
import pytest

from bayeschain.measures import evaluate, expected_reciprocal_rank


def err_definition(grades: list[int], gmax: int | None = None) -> float:
    """ERR = sum_i (1/i) R_i prod_{j<i} (1 - R_j), R = (2^g - 1) / 2^g_max, in exact
    arithmetic (Python integers and fractions), rounded once at the end."""
    gmax = max(max(grades), 1) if gmax is None else gmax
    total, reach = Fraction(0), Fraction(1)
    for i, g in enumerate(grades, start=1):
        r = Fraction(2 ** max(g, 0) - 1, 2**gmax)
        total += reach * r / i
        reach *= 1 - r
    return float(total)


@pytest.mark.parametrize("grades", [
    [1024, 0, 1], [0, 1024, 1023, 3], [5000, 0, 1], [1, 0, 5000, 4999], [3, 1, 0, 2],
    [1023, 1022, 0, 1], [0, 0, 0, 1025]])
def test_err_with_grades_from_1024_up_is_the_definition(grades):
    """2^1024 overflowed: R was NaN and the topic's ERR NaN.  Now it is the definition."""
    got = evaluate("ERR", np.array(grades, dtype=float))
    assert got == pytest.approx(err_definition(grades), rel=1e-15, abs=1e-300)


def test_a_topic_with_huge_grades_stays_in_the_mean():
    """The topic with grade 5000 no longer turns into NaN and vanishes from the mean."""
    rel = np.array([[5000.0, 0, 1], [1.0, 0, 0], [0.0, 2, 1]])
    values = evaluate("ERR", rel)
    expected = [err_definition([5000, 0, 1]), err_definition([1, 0, 0]),
                err_definition([0, 2, 1])]
    np.testing.assert_allclose(values, expected, rtol=1e-15)
    assert np.mean(values) == pytest.approx(np.mean(expected), rel=1e-15)


@pytest.mark.parametrize(("grades", "gmax", "limit"), [
    ([10**6, 10**6 - 1, 0], 10**6, 1.0),            # R = 1 - 2^-1e6 ~ 1: the user stops at 1
    ([0, 10**6 - 1, 10**6], 10**6, 0.5 / 2 + 0.5 * 1 / 3),
    ([1e300, 0, 1e300], 1e300, 1.0),
    ([3, 0, 1], 10**6, 0.0),                        # R = 2^-999997 ~ 0 everywhere
])
def test_err_of_astronomical_grades_is_its_limit(grades, gmax, limit):
    """Grades too large for exact integers: R = 2^(g - g_max) - 2^(-g_max) tends to
    2^(g - g_max), 1 at the top grade and 0 far below it."""
    got = expected_reciprocal_rank(np.array(grades, dtype=float), max_grade=gmax)
    assert got == pytest.approx(limit, rel=1e-15, abs=1e-300)
