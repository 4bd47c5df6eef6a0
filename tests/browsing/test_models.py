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
