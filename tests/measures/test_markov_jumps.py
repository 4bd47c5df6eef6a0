"""Markov Precision under learned jump kernels: an exponent of the ID / LID decay (closed
form for every model) and free jump rows (GL_AD), against the dense definitions of
``tests/reference/markov_jumps.py`` and a simulated user."""

import numpy as np
import pytest

from bayeschain.errors import ParameterError
from bayeschain.measures import evaluate, markov_precision
from bayeschain.measures.markov import MODELS
from tests.reference.markov_jumps import dense_mp, jump_matrix, simulate_jumps

DECAY_MODELS = [m for m in MODELS if m != "CONST"]


def random_lists(seed: int, rows: int, width: int, share: float = 0.35):
    rng = np.random.default_rng(seed)
    rel = (rng.random((rows, width)) < share).astype(float)
    lengths = rng.integers(0, width + 1, rows)
    lengths[:3] = (1, 2, width)                    # one-rank, two-rank and full lists
    rel[0, 0], rel[1, :2] = 1.0, (1.0, 1.0)
    return rel, lengths


def free_rows(seed: int, draws: int, ranks: int, concentration: float = 1.0):
    rng = np.random.default_rng(seed)
    p = rng.gamma(concentration, size=(draws, ranks, ranks))
    p[:, np.arange(ranks), np.arange(ranks)] = 0.0
    return p / p.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("model", DECAY_MODELS)
def test_unit_exponent_is_the_papers_mp(model):
    rel, lengths = random_lists(1, 40, 25)
    today = markov_precision(rel, model, lengths=lengths)
    np.testing.assert_allclose(markov_precision(rel, model, lengths=lengths, exponent=1.0),
                               today, rtol=0, atol=1e-14)
    drawn = markov_precision(rel, model, lengths=lengths, exponent=np.ones(3))
    assert drawn.shape == (3, 40)
    np.testing.assert_allclose(drawn, np.broadcast_to(today, (3, 40)), rtol=0, atol=1e-14)


@pytest.mark.parametrize("model", DECAY_MODELS)
def test_exponent_closed_form_equals_the_dense_definition(model):
    """Every (draw, list): alpha = w^g, rows normalised, censored on the relevant ranks by
    a Schur complement and solved by least squares, in the test; to 1e-12."""
    rel, lengths = random_lists(2, 25, 14)
    g = np.array([0.0, 0.37, 1.0, 2.6, 7.5])
    got = markov_precision(rel, model, lengths=lengths, exponent=g)
    chain = markov_precision(rel, model, lengths=lengths, exponent=g, method="chain")
    mu = np.random.default_rng(3).uniform(0.05, 3.0, (g.size, 1, 14))
    cont = markov_precision(rel, model, mu, lengths=lengths, exponent=g)
    for d in range(g.size):
        for i in range(rel.shape[0]):
            row = rel[i, :lengths[i]]
            assert got[d, i] == pytest.approx(dense_mp(row, model, g[d]), abs=1e-12)
            assert chain[d, i] == pytest.approx(dense_mp(row, model, g[d]), abs=1e-12)
            assert cont[d, i] == pytest.approx(
                dense_mp(row, model, g[d], mu=mu[d, 0, :lengths[i]]), abs=1e-12)


def test_zero_exponent_jumps_uniformly():
    """g = 0: every other document equally likely, the CONST model (AD models)."""
    rel, lengths = random_lists(4, 30, 20)
    const = markov_precision(rel, "CONST", lengths=lengths)
    for model in ("GL_AD_ID", "GL_AD_LID"):
        np.testing.assert_allclose(markov_precision(rel, model, lengths=lengths, exponent=0.0),
                                   const, atol=1e-14)


def test_rescale_and_evaluate_with_drawn_exponents():
    rel, lengths = random_lists(5, 12, 10)
    g = np.array([0.5, 1.5])
    plain = markov_precision(rel, "GL_OR_LID", lengths=lengths, exponent=g)
    rescaled = markov_precision(rel, "GL_OR_LID", rescale="recall", recall_base=np.full(12, 9),
                                lengths=lengths, exponent=g)
    # rescale counts the relevant grades of the rows as given (padding is zero)
    retrieved = rel.sum(axis=1)
    np.testing.assert_allclose(rescaled, plain * retrieved / 9, atol=1e-15)
    got = evaluate("MP(model='GL_OR_LID')", rel, lengths=lengths,
                   params={"jump_exponent": g})
    np.testing.assert_array_equal(got, plain)


@pytest.mark.parametrize("method", ["closed", "chain"])
def test_free_rows_equal_the_dense_definition(method):
    rel, lengths = random_lists(6, 30, 8, share=0.45)
    p = free_rows(7, 4, 8)
    mu = np.random.default_rng(8).uniform(0.1, 2.0, (4, 8))
    got = markov_precision(rel, "GL_AD_ID", lengths=lengths, jumps=p, method=method)
    cont = markov_precision(rel, "GL_AD_LID", mu[:, None, :], lengths=lengths, jumps=p,
                            method=method)
    assert got.shape == cont.shape == (4, 30)
    for d in range(4):
        for i in range(30):
            row = rel[i, :lengths[i]]
            assert got[d, i] == pytest.approx(dense_mp(row, "GL_AD_ID", free=p[d]), abs=1e-12)
            assert cont[d, i] == pytest.approx(
                dense_mp(row, "GL_AD_ID", free=p[d], mu=mu[d]), abs=1e-12)
    one = markov_precision(rel, "GL_AD_ID", lengths=lengths, jumps=p[2], method=method)
    np.testing.assert_array_equal(one.shape, (30,))
    np.testing.assert_allclose(one, got[2], atol=1e-15)


def test_free_rows_of_the_id_decay_are_the_papers_mp():
    rel, lengths = random_lists(9, 20, 9)
    n = np.arange(9)
    alpha = 1.0 / (np.abs(n[:, None] - n[None, :]) + 1.0)
    np.fill_diagonal(alpha, 0.0)
    got = markov_precision(rel, "GL_AD_ID", lengths=lengths,
                           jumps=alpha / alpha.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(got, markov_precision(rel, "GL_AD_ID", lengths=lengths),
                               atol=1e-14)


def test_free_rows_simulated_user():
    """Theorem 1 of the paper for a non-reversible chain: the time average of Prec over
    the relevant ranks one simulated user visits converges to MP.  200,000 jumps on a
    7-rank list of a 9-rank free matrix; the standard error from 100 batch means, the
    estimate within 5 of them (and far from the reversible ID model's MP)."""
    p = free_rows(10, 1, 9, concentration=0.7)[0]
    run = np.array([0, 1, 1, 0, 0, 1, 1.0])
    chain, _ = jump_matrix(run > 0, "GL_AD_ID", free=p)
    states = simulate_jumps(chain, 200_000, seed=11)
    prec = np.cumsum(run) / np.arange(1, 8)
    visits = prec[states[run[states] > 0]]
    batches = np.array([b.mean() for b in np.array_split(visits, 100)])
    se = batches.std(ddof=1) / np.sqrt(batches.size)
    mp = markov_precision(run, "GL_AD_ID", jumps=p)
    assert se < 0.005
    assert abs(visits.mean() - mp) < 5 * se
    assert abs(mp - markov_precision(run, "GL_AD_ID")) > 10 * se
    assert mp == pytest.approx(markov_precision(run, "GL_AD_ID", jumps=p, method="chain"),
                               abs=1e-13)


def test_learned_kernels_refuse_what_they_cannot_score():
    rel = np.array([[1, 0, 1, 1, 0, 0.0]])
    p = free_rows(12, 2, 4)
    with pytest.raises(ParameterError, match="no distance weights"):
        markov_precision(rel, "CONST", exponent=1.5)
    for model in ("GL_OR_ID", "LO_AD_ID", "LO_OR_LID", "CONST"):
        with pytest.raises(ParameterError, match=f"GL_AD models.*{model}"):
            markov_precision(rel, model, jumps=np.eye(6)[::-1])
    with pytest.raises(ParameterError, match=r"covers ranks 1\.\.4, but a list has 6 ranks.*"
                                             r"MP@4"):
        markov_precision(rel, "GL_AD_ID", jumps=p)
    # the same lists cut off at 4 ranks are scored
    assert markov_precision(rel, "GL_AD_ID", jumps=p, lengths=[4]).shape == (2, 1)
    with pytest.raises(ParameterError, match="not both"):
        markov_precision(rel, "GL_AD_ID", exponent=1.0, jumps=p)
    with pytest.raises(ParameterError, match="jump exponent"):
        markov_precision(rel, "GL_AD_ID", exponent=[-0.5])
    bad = p.copy()
    bad[0, 0] = [0.1, 0.3, 0.3, 0.3]
    with pytest.raises(ParameterError, match="zero diagonal"):
        markov_precision(rel[:, :4], "GL_AD_ID", jumps=bad)
    bad[0, 0] = [0.0, 0.3, 0.3, 0.3]
    with pytest.raises(ParameterError, match="summing to 1"):
        markov_precision(rel[:, :4], "GL_AD_ID", jumps=bad)
    with pytest.raises(ParameterError, match="holding rates"):
        markov_precision(rel[:, :4], "GL_AD_ID", np.ones((3, 4)), jumps=p)
