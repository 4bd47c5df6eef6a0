"""Classical measures through the chains equal their direct formulas (to 1e-12)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from bayeschain.measures import chain_forms as cf
from bayeschain.measures import classical as cl

binary_lists = arrays(np.float64, st.integers(1, 30), elements=st.sampled_from([0.0, 1.0]))
graded_lists = arrays(np.float64, st.integers(1, 30), elements=st.sampled_from([0.0, 1, 2, 3, 4]))
TOL = 1e-12


@settings(max_examples=80, deadline=None)
@given(binary_lists, st.integers(1, 40))
def test_precision(r, k):
    assert cf.precision_via_chain(r, k) == pytest.approx(cl.precision_at(r, k), abs=TOL)


@settings(max_examples=80, deadline=None)
@given(binary_lists, st.integers(0, 50))
def test_average_precision(r, extra):
    rb = r.sum() + extra
    assert cf.average_precision_via_chain(r, rb) == pytest.approx(
        cl.average_precision(r, rb), abs=TOL)


@settings(max_examples=80, deadline=None)
@given(graded_lists, st.floats(0.0, 0.99))
def test_rbp_both_normalisations(g, p):
    assert cf.rbp_via_chain(g, p) == pytest.approx(cl.rank_biased_precision(g, p), abs=TOL)
    assert cf.rbp_finite_via_chain(g, p) == pytest.approx(
        cl.rank_biased_precision_finite(g, p), abs=TOL)


@settings(max_examples=80, deadline=None)
@given(graded_lists, st.sampled_from([None, 1, 5, 10]), st.sampled_from([2.0, 3.0, 10.0]),
       st.sampled_from(["trec", "jarvelin"]))
def test_dcg(g, k, base, variant):
    if variant == "trec":
        base = 2.0
    assert cf.dcg_via_chain(g, k, base, variant) == pytest.approx(
        cl.discounted_cumulative_gain(g, k, base, variant), abs=TOL, rel=TOL)


@settings(max_examples=80, deadline=None)
@given(graded_lists, st.sampled_from([None, 1, 5, 20]))
def test_err(g, k):
    assert cf.err_via_chain(g, k, 4) == pytest.approx(cl.expected_reciprocal_rank(g, k, 4), abs=TOL)
    assert cf.err_via_chain(g, k) == pytest.approx(cl.expected_reciprocal_rank(g, k), abs=TOL)


def test_batched_rows():
    rng = np.random.default_rng(1)
    rel = rng.integers(0, 2, (20, 15)).astype(float)
    np.testing.assert_allclose(cf.average_precision_via_chain(rel, rel.sum(1) + 2),
                               cl.average_precision(rel, rel.sum(1) + 2), atol=TOL)
    np.testing.assert_allclose(cf.err_via_chain(rel * 3, 10, 3),
                               cl.expected_reciprocal_rank(rel * 3, 10, 3), atol=TOL)


def test_direct_formulas_on_hand_examples():
    r = np.array([1, 0, 1, 0, 0.0])
    assert cl.average_precision(r, 3) == pytest.approx((1 + 2 / 3) / 3)
    assert cl.precision_at(r, 2) == 0.5
    assert cl.precision_at(r, 10) == 0.2
    assert cl.rank_biased_precision(r, 0.5) == pytest.approx(0.5 * (1 + 0.25))
    assert cl.discounted_cumulative_gain(np.array([3, 2, 0, 1.0]), 4) == pytest.approx(
        3 + 2 / np.log2(3) + 1 / np.log2(5))
    # ERR with grades (2, 1) and g_max = 2: R = (3/4, 1/4)
    assert cl.expected_reciprocal_rank(np.array([2, 1.0]), max_grade=2) == pytest.approx(
        0.75 + 0.5 * 0.25 * 0.25)
    assert cl.average_precision(np.zeros(4), 0) == 0.0
