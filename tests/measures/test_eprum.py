"""EPRUM: the key example of Section 4 (Table 1), Figure 3, the ideal-list example of
Section 5, classical precision at recall, the Poisson-binomial law against enumeration
and simulation."""

import itertools

import numpy as np
import pytest

from bayeschain.errors import ParameterError
from bayeschain.measures.eprum import (
    discovered_distribution,
    eprum_precision,
    expected_inverse_search_length,
    expected_minimum_length,
    pointer_navigation,
    seen_probabilities,
)

# Key example: the list points to (c, d, a); ideal elements a and b (columns 0 and 1)
KEY_NAV = np.array([[0.4, 0.4],    # rank 1 (c) -> a, b
                    [0.6, 0.4],    # rank 2 (d) -> a, b
                    [1.0, 0.0]])   # rank 3 (a) -> a
KEY_IDEAL = np.array([True, True])


def table1_scenarios():
    """Brute force over every navigation outcome: expected A/ML for recall 1 and 2."""
    out = {1: 0.0, 2: 0.0}
    for outcome in itertools.product([0, 1], repeat=6):
        o = np.array(outcome).reshape(3, 2)
        prob = np.prod(np.where(o == 1, KEY_NAV, 1 - KEY_NAV))
        seen = np.cumsum(o, axis=0) > 0
        for r in (1, 2):
            reached = np.flatnonzero(seen.sum(axis=1) >= r)
            out[r] += prob * (1.0 / (reached[0] + 1) if reached.size else 0.0)
    return out


def test_key_example_table_1():
    brute = table1_scenarios()
    for r, printed in ((1, 0.81), (2, 0.37)):
        value = expected_inverse_search_length(KEY_NAV, KEY_IDEAL, r)
        assert value == pytest.approx(brute[r], abs=1e-15)
        assert round(value, 2) == printed
    # precision at recall 1 and 2 with E[ML*] = 1 and 2 (Section 4)
    assert eprum_precision(KEY_NAV, KEY_IDEAL, recall=1) == pytest.approx(0.8056)
    # the paper prints 2 x 0.37 = 0.74 from the rounded expectation; unrounded 0.7488
    assert eprum_precision(KEY_NAV, KEY_IDEAL, recall=2) == pytest.approx(0.7488)
    assert eprum_precision(KEY_NAV, KEY_IDEAL, recall_level=1.0) == pytest.approx(0.7488)


def test_table_1_scenario_probabilities():
    """Columns of Table 1 (in %): first-seen ranks of a and b."""
    law = discovered_distribution(KEY_NAV, KEY_IDEAL)
    assert law[1, 2] == pytest.approx(0.16)                     # a, b both from rank 1
    assert law[2, 2] == pytest.approx(0.16 + 0.096 + 0.144 + 0.0864)
    assert law[3].sum() == pytest.approx(1.0)


def test_figure_3_seen_probabilities():
    nav = np.array([[0.4], [0.6], [1.0]])
    np.testing.assert_allclose(seen_probabilities(nav)[:, 0], [0.4, 0.76, 1.0])


def test_ideal_list_example_of_section_5():
    """Elements a, b, c; b and c ideal; the ideal list (a^, b^, c^) for recall 2 has an
    expected search length of 1.29 (81% after rank 1, 9% after rank 2, 10% after rank 3)."""
    nav = np.array([[1.0, 0.9, 0.9], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    ideal = np.array([False, True, True])
    assert expected_minimum_length(nav, ideal, 2) == pytest.approx(1.29)
    assert expected_minimum_length(nav[1:2], ideal, 1) == 1.0
    with pytest.raises(ParameterError, match="does not reach"):
        expected_minimum_length(nav[:1], ideal, 2)


def test_classical_case_is_standard_precision_at_recall():
    """P(k ~> x) = 1 iff rank k points to x: EPRUM = r / (rank of the r-th relevant)."""
    rng = np.random.default_rng(9)
    for _ in range(50):
        n = int(rng.integers(1, 15))
        relevant = rng.random(n) < 0.4
        elements = n + 3                   # 3 ideal elements never retrieved
        ideal = np.r_[relevant, [True, True, True]]
        nav = pointer_navigation(np.arange(n), elements)
        ranks = np.flatnonzero(relevant) + 1
        for r in range(1, int(ideal.sum()) + 1):
            expected = r / ranks[r - 1] if r <= ranks.size else 0.0
            assert eprum_precision(nav, ideal, recall=r) == pytest.approx(expected, abs=1e-15)


def test_section_2_example():
    """Relevant units at ranks 1 and 4: precision 1, 0.5, 0 at recall 1, 2, 3."""
    nav = pointer_navigation([0, 1, 2, 3, 4], 6)
    ideal = np.array([True, False, False, True, False, True])
    got = [eprum_precision(nav, ideal, recall=r) for r in (1, 2, 3)]
    np.testing.assert_allclose(got, [1.0, 0.5, 0.0])


def test_poisson_binomial_against_enumeration_and_normal():
    rng = np.random.default_rng(10)
    nav = rng.random((4, 6)) * 0.5
    ideal = np.array([True, True, False, True, True, True])
    law = discovered_distribution(nav, ideal)
    seen = seen_probabilities(nav)[-1, ideal]
    brute = np.zeros(ideal.sum() + 1)
    for bits in itertools.product([0, 1], repeat=int(ideal.sum())):
        brute[sum(bits)] += np.prod(np.where(np.array(bits) == 1, seen, 1 - seen))
    np.testing.assert_allclose(law[-1], brute, atol=1e-15)
    approx = discovered_distribution(nav, ideal, method="normal")
    assert np.max(np.abs(approx[-1] - law[-1])) < 0.1
    # with many uncertain elements the approximation is close
    big = rng.random((3, 60)) * 0.3
    flags = np.ones(60, dtype=bool)
    exact = discovered_distribution(big, flags)[-1]
    normal = discovered_distribution(big, flags, method="normal")[-1]
    assert np.max(np.abs(np.cumsum(exact) - np.cumsum(normal))) < 0.02


def test_discovered_law_against_simulation():
    """100,000 simulated users navigating independently (5 standard errors)."""
    nav, ideal = KEY_NAV, KEY_IDEAL
    rng = np.random.default_rng(11)
    draws = rng.random((100_000,) + nav.shape) < nav
    f = (np.cumsum(draws, axis=1) > 0).sum(axis=2)        # (users, ranks)
    law = discovered_distribution(nav, ideal)
    for k in range(3):
        freq = np.bincount(f[:, k], minlength=3) / f.shape[0]
        exact = law[k + 1]
        assert np.all(np.abs(freq - exact) < 5 * np.sqrt(exact * (1 - exact) / f.shape[0])
                      + 1e-9)


def test_graded_idealism_integrates_over_satisfaction_levels():
    """Element 0 is ideal for 80% of users, element 1 for 30%: precision is the average
    over S ~ U[0, 1] of the binary precision with the ideal set {x: P(x in I) >= S}."""
    nav = pointer_navigation([1, 0, 2], 3)
    grade = np.array([0.8, 0.3, 0.0])
    both = eprum_precision(nav, np.array([True, True, False]), recall_level=1.0)
    first = eprum_precision(nav, np.array([True, False, False]), recall_level=1.0)
    expected = 0.3 * both + 0.5 * first
    assert eprum_precision(nav, grade, recall_level=1.0) == pytest.approx(expected)
    s = np.random.default_rng(12).random(20_000)
    mc = np.mean([both if x <= 0.3 else first if x <= 0.8 else 0.0 for x in s])
    assert abs(mc - expected) < 0.02


def test_bad_input():
    with pytest.raises(ParameterError, match="exactly one"):
        eprum_precision(KEY_NAV, KEY_IDEAL)
    with pytest.raises(ParameterError, match=r"\[0, 1\]"):
        seen_probabilities(np.array([[1.5]]))
    with pytest.raises(ParameterError, match="recall_level"):
        eprum_precision(KEY_NAV, KEY_IDEAL, recall_level=1.5)
    with pytest.raises(ParameterError, match="method"):
        discovered_distribution(KEY_NAV, KEY_IDEAL, method="poisson")
