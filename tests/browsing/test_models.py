"""Browsing models -> chains, entry by entry against their definitions (Ferrante & Ferro,
ICTIR 2020, Section 3 and 6), written out here by hand."""

import numpy as np
import pytest

from bayeschain.browsing import build_chain, err_satisfaction
from bayeschain.browsing.dynamic import top_grade
from bayeschain.errors import ParameterError


def test_rwbm_rows_are_the_papers_matrix():
    n, p, q = 5, 0.5, 0.25
    chain = build_chain("rwbm", n, p=p, q=q)
    np.testing.assert_allclose(chain.upper, [p, p, p, p, 0.0])
    np.testing.assert_allclose(chain.lower, [0.0, q, q, q, q])
    assert np.all(chain.diag == 0)


def test_sfbm_never_moves_back_and_dfbm_reads_to_the_cutoff():
    chain = build_chain("sfbm", 4, p=0.7)
    np.testing.assert_allclose(chain.upper, [0.7, 0.7, 0.7, 0.0])
    assert np.all(chain.lower == 0)
    full = build_chain("dfbm", 4)
    np.testing.assert_allclose(full.upper, [1, 1, 1, 0])


@pytest.mark.parametrize("level", [1, 2])
def test_drwbm_moves_by_relevance_at_the_level(level):
    rel = np.array([0.0, 1.0, 2.0, 0.0, 3.0])
    p, q, pr, qr = 0.6, 0.1, 0.3, 0.25
    chain = build_chain("drwbm", rel.size, rel, p=p, q=q, p_rel=pr, q_rel=qr, level=level)
    relevant = rel >= level
    fwd = np.where(relevant, pr, p)
    bwd = np.where(relevant, qr, q)
    fwd[-1] = 0.0
    bwd[0] = 0.0
    np.testing.assert_allclose(chain.upper, fwd)
    np.testing.assert_allclose(chain.lower, bwd)


def test_err_satisfaction_and_the_top_grade():
    grades = np.array([[0.0, 3.0, -1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(top_grade(grades), [3.0, 1.0])
    sat = err_satisfaction(grades)
    np.testing.assert_allclose(sat[0], [0.0, 7 / 8, 0.0, 1 / 8])
    np.testing.assert_allclose(sat[1], 0.0)
    with pytest.raises(ParameterError, match="max_grade"):
        err_satisfaction(grades, max_grade=2)


def test_ap_walk_stops_uniformly_over_the_relevant_documents():
    """P(stop at the k-th relevant document) = 1 / R for the R relevant ones retrieved."""
    rel = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    chain = build_chain("ap", rel.size, rel)
    reach = np.cumprod(np.concatenate([[1.0], chain.upper[:-1]]))
    stop = reach * (1 - chain.upper)
    np.testing.assert_allclose(stop[rel > 0], 1 / 3)
    np.testing.assert_allclose(stop[rel == 0], 0.0)


def _satisfaction(g: int, gmax: int) -> float:
    """ERR's R = (2^g - 1) / 2^g_max in exact arithmetic (Python integers), rounded once."""
    from fractions import Fraction

    return float(Fraction(2**g - 1, 2**gmax))


@pytest.mark.parametrize(("grades", "gmax"), [
    ([0, 1, 2, 3, 4], 4), ([0, 1, 52, 53, 60], 60), ([1, 1023, 1024], 1024),
    ([1024, 0, 1], 1024), ([5000, 4999, 1, 0], 5000), ([3, 0], 1024), ([1, 2], 5000)])
def test_err_satisfaction_of_grades_from_1024_up_is_the_exact_definition(grades, gmax):
    """Issue 16 (d3): 2^1024 overflowed to inf and R to NaN; R now equals the definition
    computed with Python integers (exactly, for integer grades), whatever the grade."""
    sat = err_satisfaction(np.array(grades, dtype=float), max_grade=gmax)
    assert np.all(np.isfinite(sat))
    assert sat.tolist() == [_satisfaction(g, gmax) for g in grades]
    assert err_satisfaction(np.array(grades, dtype=float)).tolist() == \
        [_satisfaction(g, max(max(grades), 1)) for g in grades]


@pytest.mark.parametrize("g", [1e-300, 1e-12, 0.25, 0.5, 0.999])
def test_err_satisfaction_of_fractional_grades_keeps_its_digits(g):
    """Below grade 1 the subtraction 2^(g - g_max) - 2^(-g_max) would cancel; the limit
    R ~ g log 2 / 2^g_max as g -> 0 and the closed form hold to a few ulps."""
    import math

    exact = (2.0**g - 1.0) / 2.0 if g > 1e-6 else g * math.log(2.0) / 2.0
    assert err_satisfaction(np.array([g, 1.0]))[0] == pytest.approx(exact, rel=1e-12)


def test_err_satisfaction_refuses_non_finite_and_mismatched_max_grades():
    with pytest.raises(ParameterError, match="max_grade"):
        err_satisfaction(np.array([1.0, 2.0]), max_grade=np.inf)
    with pytest.raises(ParameterError, match="broadcast"):
        err_satisfaction(np.ones((2, 3)), max_grade=np.ones(4))
    with pytest.raises(ParameterError, match="above max_grade=2$"):
        err_satisfaction(np.array([3.0]), max_grade=np.array(2.0))


def test_browsing_parameters_of_the_wrong_type_are_parameter_errors():
    """A string, a map or a ragged list as a probability; a float cut-off; a text base."""
    for bad in ("0.5", {"a": 1}, [[0.5], [0.5, 0.5]], None):
        with pytest.raises(ParameterError, match="p must be"):
            build_chain("sfbm", 3, p=bad)
    with pytest.raises(ParameterError, match="positive integer"):
        build_chain("dfbm", 3, cutoff=2.5)
    with pytest.raises(ParameterError, match="log base"):
        build_chain("dcg", 3, base="2")
    with pytest.raises(ParameterError, match=r"got \[0.5, 1.5, 0.5\]$"):
        build_chain("sfbm", 3, p=[0.5, 1.5, 0.5])
