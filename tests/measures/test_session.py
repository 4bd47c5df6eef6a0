"""MsM against a literal dense implementation of Algorithm 1 and against simulation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from bayeschain import chains
from bayeschain.errors import ChainError, ParameterError
from bayeschain.measures.session import msm, msm_pseudocode, session_quantities


def algorithm1(run, p, q, r, s, discount="linear", base=10.0, reference=True):
    """Algorithm 1 of the ECIR 2019 appendix, line by line with dense matrices
    (reference=True applies the (j - 1) e_Q time of the authors' implementation)."""
    n, k = run.shape
    big = np.zeros((n + 2, n + 2))
    f, qq = n, n + 1
    for i in range(n):
        fwd = p if i < n - 1 else 0.0
        bwd = q if i > 0 else 0.0
        tot = fwd + bwd + s + r
        if i < n - 1:
            big[i, i + 1] = fwd / tot
        if i > 0:
            big[i, i - 1] = bwd / tot
        big[i, f] = s / tot
        big[i, qq] = r / tot
    big[f, f] = big[qq, qq] = 1.0

    def normalise(m):
        sums = m.sum(axis=1, keepdims=True)
        return np.divide(m, sums, out=np.zeros_like(m), where=sums > 0)

    e = np.zeros(n)
    p1 = normalise(big[:n, :n]) if n > 1 else np.zeros((1, 1))
    for i in range(1, n):
        tmp = np.linalg.inv(np.eye(i) - p1[:i, :i]) @ np.ones(i)
        e[i] = tmp[0]
    idx = list(range(n)) + [qq]
    p2 = normalise(big[np.ix_(idx, idx)])
    e_q = (np.linalg.inv(np.eye(n) - p2[:n, :n]) @ np.ones(n))[0]
    h_f = (np.linalg.inv(np.eye(n) - big[:n, :n]) @ big[:n, f])[0]
    p3 = normalise(big[: n + 1, : n + 1])
    h_fk = (np.linalg.inv(np.eye(n) - p3[:n, :n]) @ p3[:n, n])[0]
    h = np.array([(1 - h_f) ** (j - 1) * h_f for j in range(1, k)] +
                 [(1 - h_f) ** (k - 1) * h_fk])
    pi = np.array([1.0] + [1 - h[:j].sum() for j in range(1, k)])
    total = 0.0
    for j in range(k):
        t = e + (j if reference else 1) * e_q
        d = 1 + t if discount == "linear" else 1 + np.log(1 + t) / np.log(base)
        total += pi[j] * np.sum(run[:, j] / d)
    return total, e, e_q, h_f, pi


@st.composite
def sessions_and_parameters(draw):
    n = draw(st.integers(1, 8))
    k = draw(st.integers(1, 5))
    run = draw(arrays(np.float64, (n, k), elements=st.sampled_from([0.0, 1, 2, 3])))
    w = np.array([draw(st.floats(0.05, 1.0)), draw(st.floats(0.0, 1.0)),
                  draw(st.floats(0.05, 1.0)), draw(st.floats(0.05, 1.0))])
    p, q, r, s = w / w.sum()
    return run, p, q, r, s


@settings(max_examples=80, deadline=None)
@given(sessions_and_parameters(), st.sampled_from(["linear", "log"]),
       st.sampled_from([10.0, np.e]))
def test_msm_matches_algorithm_1(case, discount, base):
    run, p, q, r, s = case
    ref, e, e_q, h_f, pi = algorithm1(run, p, q, r, s, discount, base)
    assert msm(run, p, q, r, s, discount, base) == pytest.approx(ref, rel=1e-10, abs=1e-12)
    quant = session_quantities(run.shape[0], p, q, r, s)
    # the dense reference inverts a matrix whose condition number grows like e(N): its
    # relative error is about e(N) * 1e-16 (e.g. 38177478.99 for the exact 38177479)
    np.testing.assert_allclose(quant["e"], e, rtol=max(1e-10, 1e-16 * float(np.max(e))),
                               atol=1e-12)
    assert quant["e_Q"] == pytest.approx(e_q, rel=1e-10)
    assert quant["h_F"] == pytest.approx(h_f, rel=1e-10)
    printed, *_ = algorithm1(run, p, q, r, s, discount, base, reference=False)
    assert msm_pseudocode(run, p, q, r, s, discount, base) == pytest.approx(printed, rel=1e-10,
                                                                             abs=1e-12)


def test_batched_over_draws():
    run = np.array([[1, 0, 2], [0, 1, 0], [3, 0, 1.0]])
    rng = np.random.default_rng(1)
    w = rng.dirichlet(np.ones(4), size=6) * 0.9 + 0.025
    w /= w.sum(1, keepdims=True)
    batched = msm(run, *w.T)
    for i in range(6):
        assert batched[i] == pytest.approx(msm(run, *w[i]), rel=1e-12)


def simulate_session(n, k, p, q, r, s, users, seed):
    """Users walking the whole session chain: returns the last query reached per user."""
    rng = np.random.default_rng(seed)
    reached = np.zeros(users, dtype=int)
    for u in range(users):
        j, i = 0, 0
        while True:
            fwd = p if i < n - 1 else 0.0
            bwd = q if i > 0 else 0.0
            ref = r if j < k - 1 else 0.0  # no next query after the last one
            x = rng.random() * (fwd + bwd + s + ref)
            if x < fwd:
                i += 1
            elif x < fwd + bwd:
                i -= 1
            elif x < fwd + bwd + ref:
                j, i = j + 1, 0
            else:
                break
        reached[u] = j
    return reached


def test_reach_probabilities_against_simulation():
    """pi(j) = P(the user reaches query j): 40,000 simulated sessions, 5 standard errors."""
    n, k, (p, q, r, s) = 4, 4, (0.45, 0.2, 0.2, 0.15)
    reached = simulate_session(n, k, p, q, r, s, 40_000, seed=3)
    h_f = session_quantities(n, p, q, r, s)["h_F"]
    pi = (1 - h_f) ** np.arange(k)
    for j in range(k):
        freq = (reached >= j).mean()
        assert abs(freq - pi[j]) < 5 * np.sqrt(pi[j] * (1 - pi[j]) / reached.size) + 1e-9


def test_expected_times_against_simulation():
    """e(i) and e_Q by simulating the conditioned walks (200,000 users each)."""
    n, (p, q, r, s) = 6, (0.4, 0.3, 0.1, 0.2)
    quant = session_quantities(n, p, q, r, s)
    fwd = np.r_[[p / (p + 0 + r + s)], np.full(n - 2, p / (p + q + r + s)), [0.0]]
    bwd = np.r_[[0.0], np.full(n - 2, q / (p + q + r + s)), [q / (q + r + s)]]
    # e(i): walk conditioned on moving (no stop, no reformulation): hitting time of i
    moves = fwd + bwd
    walk = chains.Tridiagonal(bwd / moves, np.zeros(n), fwd / moves)
    dense = walk.to_dense()
    rng = np.random.default_rng(4)
    users = 200_000
    for target in (2, 5):
        sub = dense[:target, :target]  # leaving the prefix = hitting `target`
        sim = chains.Tridiagonal.from_dense(sub)
        from bayeschain.simulate import simulate_users
        h = simulate_users(sim, users, seed=rng).stopping_time
        assert abs(h.mean() - quant["e"][target]) < 5 * h.std() / np.sqrt(users)
    stop = np.r_[s / (p + r + s), np.full(n - 2, s / (p + q + r + s)), s / (q + r + s)]
    walk_q = chains.Tridiagonal(bwd / (1 - stop), np.zeros(n), fwd / (1 - stop))
    from bayeschain.simulate import simulate_users
    h = simulate_users(walk_q, users, seed=5).stopping_time
    assert abs(h.mean() - quant["e_Q"]) < 5 * h.std() / np.sqrt(users)


@pytest.mark.parametrize(("params", "message"), [
    ((0.5, 0.2, 0.2, 0.2), "p \\+ q \\+ r \\+ s = 1"),
    ((0.6, 0.2, 0.0, 0.2), "r > 0 and s > 0"),
    ((0.6, 0.2, 0.2, 0.0), "r > 0 and s > 0"),
    ((1.2, -0.4, 0.1, 0.1), "must lie in \\[0, 1\\]"),
    ((0.0, 0.6, 0.2, 0.2), "p > 0"),
])
def test_invalid_parameters(params, message):
    with pytest.raises(ParameterError, match=message):
        msm(np.ones((3, 2)), *params)


def test_invalid_sessions():
    with pytest.raises(ParameterError, match="non-negative"):
        msm(np.array([[1, -1.0]]), 0.4, 0.2, 0.2, 0.2)
    with pytest.raises(ParameterError, match="N x K"):
        msm(np.ones(3), 0.4, 0.2, 0.2, 0.2)
    with pytest.raises(ParameterError, match="log_base"):
        msm(np.ones((2, 2)), 0.4, 0.2, 0.2, 0.2, discount="log", log_base=1)
    with pytest.raises(ChainError):
        chains.forward_passage_times(np.array([1.0, 0.0, 0.5]))
