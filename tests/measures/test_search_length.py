"""Expected Search Length: the examples of Bollmann & Raghavan (SIGIR 1988) as exact
fractions, Cooper's closed form, simulation, convolution, weak orders from TREC runs."""

from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeschain.errors import ParameterError
from bayeschain.measures.search_length import (
    convolve_search_lengths,
    expected_search_length,
    levels_from_run,
    levels_from_scores,
    search_length_distribution,
)

EXAMPLE_2_1 = [(1, 1), (1, 2), (2, 3)]   # ranks: +- | +-- | ++---


def test_example_2_1():
    assert expected_search_length(EXAMPLE_2_1, 1, exact=True) == F(1, 2)


def test_example_2_2():
    law = search_length_distribution(EXAMPLE_2_1, 2, exact=True)
    assert law == [F(0), F(1, 3), F(1, 3), F(1, 3)]
    assert expected_search_length(EXAMPLE_2_1, 2, exact=True) == 2


def test_example_3_1():
    """The figure is lost in the text; its probabilities (2/5, 3/10, 1/5, 1/10 for one to
    four non-relevant documents) are those of a first rank with one non-relevant document
    followed by a rank of two relevant and three non-relevant ones."""
    law = search_length_distribution([(0, 1), (2, 3)], 1, exact=True)
    assert law == [F(0), F(2, 5), F(3, 10), F(1, 5), F(1, 10)]


def test_example_4_1_convolution():
    p = [F(1, 2), F(1, 4), F(1, 4)]
    q = [F(1, 3), F(1, 3), F(1, 3)]
    pq = convolve_search_lengths(p, q)
    assert pq[0] == F(1, 6) and pq[1] == F(1, 4)
    assert sum(pq) == 1
    mean = sum(k * x for k, x in enumerate(pq))
    assert mean == sum(k * x for k, x in enumerate(p)) + sum(k * x for k, x in enumerate(q))


levels_strategy = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 5)).filter(
    lambda t: t[0] + t[1] > 0), min_size=1, max_size=5)


@settings(max_examples=100, deadline=None)
@given(levels_strategy, st.integers(1, 8))
def test_cooper_closed_form_and_normalisation(levels, wanted):
    law = search_length_distribution(levels, wanted, exact=True)
    assert sum(law) == 1
    found, before = 0, 0
    for rel, non in levels:
        if found + rel >= wanted:
            cooper = before + F((wanted - found) * non, rel + 1)
            break
        found, before = found + rel, before + non
    else:
        cooper = F(before)
    assert expected_search_length(levels, wanted, exact=True) == cooper


def test_against_simulation():
    """Shuffle each level 100,000 times and count (5 standard errors per probability)."""
    levels, wanted = [(1, 2), (3, 4), (1, 5)], 3
    rng = np.random.default_rng(8)
    users = 100_000
    counts = np.zeros(12)
    for _ in range(users):
        docs = np.concatenate([rng.permutation([1] * r + [0] * n) for r, n in levels])
        pos = np.flatnonzero(docs)[wanted - 1]
        counts[int((docs[:pos] == 0).sum())] += 1
    law = search_length_distribution(levels, wanted)
    freq = counts[: law.size] / users
    assert np.all(np.abs(freq - law) < 5 * np.sqrt(law * (1 - law) / users) + 1e-9)


def test_not_enough_relevant_documents_reads_everything():
    assert search_length_distribution([(1, 2), (0, 3)], 2, exact=True)[-1] == 1
    assert expected_search_length([(1, 2), (0, 3)], 2) == 5.0


def test_levels_from_scores_and_runs():
    scores = np.array([3.0, 2.0, 2.0, 2.0, 1.0])
    rel = np.array([0, 1, 0, 1, 1])
    assert levels_from_scores(scores, rel) == [(0, 1), (2, 1), (1, 0)]
    run = pd.DataFrame({"query_id": ["1"] * 5, "doc_id": list("abcde"), "score": scores})
    qrels = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["b", "d", "e"],
                          "relevance": [1, 2, 1]})
    assert levels_from_run(run, qrels, "1") == [(0, 1), (2, 1), (1, 0)]
    assert levels_from_run(run, qrels, "1", level=2) == [(0, 1), (1, 2), (0, 1)]


@pytest.mark.parametrize(("levels", "wanted", "message"), [
    ([(1, -1)], 1, "non-negative"), ([(0, 0)], 1, "empty"), ([(1, 1)], 0, "positive"),
    ([(1.5, 1)], 1, "integers"), ([5], 1, "pair"),
])
def test_bad_input(levels, wanted, message):
    with pytest.raises(ParameterError, match=message):
        search_length_distribution(levels, wanted)
