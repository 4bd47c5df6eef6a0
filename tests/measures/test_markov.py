"""Markov Precision: Table 4 of the SIGIR 2014 paper, AP as a special case, the two
computations against each other, simulation of the user's long-run behaviour."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from bayeschain import chains
from bayeschain.errors import ParameterError
from bayeschain.measures import average_precision, evaluate, markov_precision
from bayeschain.measures.markov import MODELS, transition_matrix

TABLE4_RUNS = np.array([(1, 1, 1, 1, 0, 0, 0, 1, 0, 0), (1, 1, 1, 0, 1, 0, 0, 0, 1, 0),
                        (1, 1, 0, 1, 1, 0, 0, 0, 0, 1)], dtype=float)
TABLE4_MU = [["0.2000", "0.0357", "0.2000", "0.0400", "0.0056", "0.0005", "0.0035", "0.0017",
              "0.0034", "0.0024"],
             ["0.0177", "0.0047", "0.0037", "0.0015", "0.0041", "0.0031", "0.0057", "0.0022",
              "0.0061", "0.0045"],
             ["0.0056", "0.0051", "0.0062", "0.0031", "0.0046", "0.0025", "0.005", "0.0022",
              "0.007", "0.005"]]
TABLE4_MP = [0.9205, 0.8668, 0.8120]
TABLE4_MPCONT = [0.6603, 0.8710, 0.8001]


def test_table4_discrete_mp_to_four_decimals():
    got = markov_precision(TABLE4_RUNS, "GL_AD_ID")
    np.testing.assert_array_equal(np.round(got, 4), TABLE4_MP)


def test_table4_continuous_mp_within_the_rounding_of_the_printed_mu():
    """The paper prints mu rounded (to 4 decimals, some to 3); MPcont computed from the
    printed values is off by up to 4e-4.  Tolerance: each printed MPcont must lie in the
    exact range MPcont takes when every mu_i of a relevant rank varies within half a unit of
    its last printed digit (a ratio of linear forms: extremes at the corners of the box,
    all enumerated), widened by the 5e-5 rounding of the printed MPcont itself."""
    for run, mu_text, printed in zip(TABLE4_RUNS, TABLE4_MU, TABLE4_MPCONT, strict=True):
        mu = np.array([float(x) for x in mu_text])
        half = np.array([0.5 * 10.0 ** -len(x.split(".")[1]) for x in mu_text])
        point = markov_precision(run, "GL_AD_ID", holding_rates=mu)
        assert abs(point - printed) < 5e-4
        rel = np.flatnonzero(run)
        corners = []
        for signs in itertools.product((-1, 1), repeat=rel.size):
            m = mu.copy()
            m[rel] += np.array(signs) * half[rel]
            corners.append(markov_precision(run, "GL_AD_ID", holding_rates=m))
        assert min(corners) - 5e-5 <= printed <= max(corners) + 5e-5


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(1, 25), elements=st.sampled_from([0.0, 1.0])),
       st.integers(0, 20))
def test_const_model_times_recall_is_ap(r, missing):
    rb = r.sum() + missing
    mp = markov_precision(r, "CONST", rescale="recall", recall_base=rb)
    assert mp == pytest.approx(average_precision(r, rb), abs=1e-14)


def test_lo_ad_id_equals_lo_ad_lid():
    rng = np.random.default_rng(4)
    rel = (rng.random((50, 30)) < 0.3).astype(float)
    np.testing.assert_allclose(markov_precision(rel, "LO_AD_ID"),
                               markov_precision(rel, "LO_AD_LID"), atol=1e-15)
    # but the OR variants differ: consecutive relevant documents lie at various distances
    assert not np.allclose(markov_precision(rel, "LO_OR_ID"), markov_precision(rel, "LO_OR_LID"))


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.integers(1, 20), elements=st.sampled_from([0.0, 1.0])),
       st.sampled_from(MODELS))
def test_closed_form_equals_censored_chain(r, model):
    closed = markov_precision(r, model)
    chain = markov_precision(r, model, method="chain")
    assert closed == pytest.approx(chain, abs=1e-12)


def test_closed_form_equals_chain_with_padding_and_rates():
    rng = np.random.default_rng(5)
    rel = (rng.random((12, 40)) < 0.25).astype(float)
    lengths = rng.integers(0, 41, 12)
    mu = rng.uniform(0.1, 2.0, (3, 1, 40))
    for model in MODELS:
        a = markov_precision(rel, model, mu, lengths=lengths)
        b = markov_precision(rel, model, mu, lengths=lengths, method="chain")
        assert a.shape == (3, 12)
        np.testing.assert_allclose(a, b, atol=1e-12)
        # a padded row scores as its unpadded list
        i = int(np.argmax(lengths))
        np.testing.assert_allclose(
            a[:, i], markov_precision(rel[i, :lengths[i]], model, mu[:, 0, :lengths[i]]),
            atol=1e-12)


def test_edge_cases():
    assert markov_precision(np.zeros(6), "GL_AD_ID") == 0.0
    # one relevant document: the chain on R has one state; MP = Prec(i)
    for model in MODELS:
        assert markov_precision(np.array([0, 0, 1, 0.0]), model) == pytest.approx(1 / 3)
        assert markov_precision(np.array([1.0]), model) == 1.0
    with pytest.raises(ParameterError, match="valid: GL_AD_ID"):
        markov_precision(np.ones(3), "GL_XX_ID")
    with pytest.raises(ParameterError, match="holding rates"):
        markov_precision(np.ones(3), holding_rates=np.array([1.0, 0.0, 1.0]))
    with pytest.raises(ParameterError, match="recall base"):
        markov_precision(np.ones(3), rescale="recall", recall_base=2)


def simulated_visits(run, jumps: int, seed: int):
    """States of one user jumping on the GL_AD_ID chain of a 10-document run, and the
    generator (for holding times)."""
    p = transition_matrix(run.size, "GL_AD_ID")
    cum = np.cumsum(p, axis=1)
    gen = np.random.default_rng(seed)
    states = np.empty(jumps, dtype=int)
    state = 0
    for k, u in enumerate(gen.random(jumps)):
        state = min(int(np.searchsorted(cum[state], u, side="right")), run.size - 1)
        states[k] = state
    return states, gen


def test_ergodic_average_of_a_simulated_user_is_mp():
    """Theorem 1: the time average of Prec over the relevant states a simulated user visits
    converges to MP.  One user, 400,000 jumps of the GL_AD_ID chain on Table 4's first run;
    tolerance 0.01 (the standard error of such a time average is about 1e-3 here)."""
    run = TABLE4_RUNS[0]
    prec = np.cumsum(run) / np.arange(1, 11)
    states, _ = simulated_visits(run, 400_000, seed=6)
    relevant = states[run[states] > 0]
    assert abs(prec[relevant].mean() - markov_precision(run, "GL_AD_ID")) < 0.01


def test_mpcont_is_the_time_average_with_exponential_holding_times():
    """Continuous time: weight each relevant visit by its exponential holding time
    (rates from Table 4, run 3); 200,000 jumps; tolerance 0.01."""
    run, mu = TABLE4_RUNS[2], np.array([float(x) for x in TABLE4_MU[2]])
    prec = np.cumsum(run) / np.arange(1, 11)
    states, gen = simulated_visits(run, 200_000, seed=7)
    relevant = states[run[states] > 0]
    held = gen.exponential(1 / mu[relevant])
    mpcont = markov_precision(run, "GL_AD_ID", holding_rates=mu)
    assert abs((held * prec[relevant]).sum() / held.sum() - mpcont) < 0.01


def test_censored_chain_route_matches_reversible_invariant():
    p = transition_matrix(8, "GL_AD_LID")
    pi = chains.invariant_distribution(p)
    alpha_rows = 1.0 / np.log10(np.abs(np.subtract.outer(np.arange(8), np.arange(8))) + 2.0)
    np.fill_diagonal(alpha_rows, 0)
    np.testing.assert_allclose(pi, alpha_rows.sum(1) / alpha_rows.sum(), atol=1e-15)


def test_measure_strings():
    got = evaluate("MP(model='GL_AD_ID')", TABLE4_RUNS)
    np.testing.assert_array_equal(np.round(got, 4), TABLE4_MP)
    mu = np.array([float(x) for x in TABLE4_MU[1]])
    assert evaluate("MPcont(model='GL_AD_ID')", TABLE4_RUNS[1], holding_rates=mu) == \
        pytest.approx(markov_precision(TABLE4_RUNS[1], holding_rates=mu))
    r = np.array([1, 0, 1, 0, 0, 1.0])
    assert evaluate("MP(model='CONST', rescale='recall')", r, recall_base=5) == pytest.approx(
        evaluate("AP", r, recall_base=5))
    with pytest.raises(ParameterError, match="holding rates"):
        evaluate("MPcont", r)
