"""The public functions of bayeschain.measures refuse bad input with a ParameterError that
says what was expected (issue 16, d17/d18): never a raw NumPy error, a NaN, or a number
printed as ``array(1.5)``."""

import numpy as np
import pytest

from bayeschain import measures as me
from bayeschain.errors import BayeschainError, ParameterError

REL = np.array([[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 0.0, 0.0], [3.0, 0.0, 0.0, 1.0]])
NAV = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])

BAD = {
    "strings": np.array(["1", "0"]),
    "nan": np.array([1.0, np.nan]),
    "inf": np.array([np.inf, 0.0]),
    "ragged": [[1.0, 0.0], [1.0]],
    "mapping": {"a": 1},
    "none": None,
    "text": "1 0 1",
    "complex": np.array([1j, 0]),
}

# one public function per row, called with a bad value in its main array argument
CALLS = {
    "evaluate": lambda x: me.evaluate("AP", x),
    "precision_at": lambda x: me.precision_at(x, 2),
    "average_precision": lambda x: me.average_precision(x),
    "rank_biased_precision": lambda x: me.rank_biased_precision(x, 0.5),
    "rank_biased_precision_finite": lambda x: me.rank_biased_precision_finite(x, 0.5),
    "discounted_cumulative_gain": lambda x: me.discounted_cumulative_gain(x, 3),
    "normalized_dcg": lambda x: me.normalized_dcg(x, x),
    "expected_reciprocal_rank": lambda x: me.expected_reciprocal_rank(x),
    "markov_precision": lambda x: me.markov_precision(x),
    "path_expectation": lambda x: me.path_expectation(x, "sfbm", p=0.5),
    "path_distribution": lambda x: me.path_distribution(x, "sfbm", p=0.5),
    "apply_gains": lambda x: me.apply_gains(x),
    "msm": lambda x: me.msm(x, 0.5, 0.1, 0.2, 0.2),
    "seen_probabilities": lambda x: me.seen_probabilities(x),
    "discovered_distribution": lambda x: me.discovered_distribution(x, [True, False]),
    "eprum_precision": lambda x: me.eprum_precision(x, [1.0, 0.0], recall=1),
    "pointer_navigation": lambda x: me.pointer_navigation(x, 3),
    "levels_from_scores": lambda x: me.levels_from_scores(x, [True, False]),
    "stochastic_dominance": lambda x: me.stochastic_dominance((x, [0.5, 0.5]),
                                                              ([0.0, 1.0], [0.5, 0.5])),
    "convolve_search_lengths": lambda x: me.convolve_search_lengths(x, [1.0]),
}


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("name", sorted(CALLS))
def test_bad_arrays_are_parameter_errors(name, bad):
    """Strings, NaN, infinities, ragged lists, maps, None, text and complex numbers."""
    with pytest.raises(BayeschainError) as info:
        CALLS[name](BAD[bad])
    assert "array(" not in str(info.value)


def test_evaluate_on_an_empty_list_says_what_to_pass():
    """evaluate('AP', []) raised NumPy's 'cannot reshape array of size 0'."""
    with pytest.raises(ParameterError, match=r"no ranks .* pass \[0\]"):
        me.evaluate("AP", [])
    with pytest.raises(ParameterError, match="no ranks"):
        me.evaluate("P@3", np.zeros((2, 0)))
    assert me.evaluate("AP", [0]) == 0.0


def test_evaluate_on_strings_names_them():
    with pytest.raises(ParameterError, match="relevance must be real numbers; got strings"):
        me.evaluate("AP", np.array(["a", "b"]))


@pytest.mark.parametrize(("call", "message"), [
    (lambda: me.average_precision(REL, recall_base=[1, 2]), "recall_base must have one"),
    (lambda: me.average_precision(REL, recall_base=[1, np.nan, 2]), "NaN"),
    (lambda: me.rank_biased_precision(REL, [0.5, 0.6]), r"p of shape \(2,\) does not match"),
    (lambda: me.rank_biased_precision_finite(REL, 0.5, lengths=[1, 2]), "lengths must have"),
    (lambda: me.normalized_dcg(REL, np.ones((2, 4))), "one row of judged grades per list"),
    (lambda: me.expected_reciprocal_rank(REL, max_grade=np.ones(5)), "does not broadcast"),
    (lambda: me.markov_precision(REL, holding_rates=np.ones((2, 4))), "do not match"),
    (lambda: me.markov_precision(REL, lengths=[1, 2.5, 3]), "integers"),
    (lambda: me.markov_precision(REL, rescale="recall", recall_base=[1, 2]),
     "one value per list"),
    (lambda: me.path_expectation(REL, "sfbm", p=0.5, lengths=[1, 2]), "do not match"),
    (lambda: me.path_expectation(REL, "sfbm", p=[0.5, 0.5]), "2 ranks on its last axis"),
    (lambda: me.msm(np.ones((3, 2)), [0.5, 0.4], 0.1, [0.2, 0.2, 0.2], 0.2), "broadcasting"),
    (lambda: me.precision_at(REL, 2.5), "integer from 1 to 1,000,000"),
    (lambda: me.precision_at(REL, 10**12), "integer from 1 to 1,000,000"),
    (lambda: me.search_length_distribution([(1, 2)], 1.5), "positive integer"),
    (lambda: me.search_length_distribution("12", 1), "sequence of"),
    (lambda: me.search_length_distribution([(10**4, 10**4)], 3), "limited to levels of"),
    (lambda: me.pointer_navigation([0, 1.5], 3), "integers"),
    (lambda: me.pointer_navigation([0, 1], 10**12), "limit is"),
    (lambda: me.eprum_precision(NAV, [1.0, 0.0], recall="1"), "recall must be a number"),
    (lambda: me.session_quantities(10**12, 0.5, 0.1, 0.2, 0.2), "limit is"),
    (lambda: me.markov_precision(np.ones((1, 3000)), method="chain"), "use method='closed'"),
])
def test_mismatched_and_oversized_inputs_are_parameter_errors(call, message):
    """Shapes that do not fit together, non-integers where counts are needed, and sizes
    beyond the stated limits."""
    with pytest.raises(ParameterError, match=message) as info:
        call()
    assert "array(" not in str(info.value)


def test_numbers_in_messages_are_plain():
    """Issue 16 (d18): messages said 'got array(1.5)'."""
    with pytest.raises(ParameterError) as info:
        me.rank_biased_precision(REL, np.array(1.5))
    assert str(info.value) == "RBP persistence p must lie in [0, 1), got 1.5"
    with pytest.raises(ParameterError) as info:
        me.rank_biased_precision(REL, np.array([0.5, 1.5, 0.2]))
    assert str(info.value).endswith("got [0.5, 1.5, 0.2]")
    with pytest.raises(ParameterError, match=r"got 1.5$"):
        me.msm(np.ones((3, 2)), 1.5, 0.1, 0.2, 0.2)
