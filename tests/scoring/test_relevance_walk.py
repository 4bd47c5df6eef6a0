"""The relevance-dependent walk (drwbm): the compiled kernel, and the general solvers that
replace it without Numba, against a dense solve written from the model's definition, and
against simulated users."""

import numpy as np
import pytest

from bayeschain.errors import ParameterError
from bayeschain.scoring.relevance_walk import relevance_walk_scores


@pytest.fixture(params=["kernel", "general solvers"])
def drwbm_scores(request, monkeypatch):
    """Order-2 drwbm scores through ``bayeschain.score``'s path: the compiled kernel, or
    (Numba made unavailable) the general batched solvers on the browsing model's chains."""
    import importlib

    relevance_walk = importlib.import_module("bayeschain.scoring.relevance_walk")
    scoring = importlib.import_module("bayeschain.scoring.score")
    if request.param == "general solvers":
        monkeypatch.setattr(relevance_walk, "compiled_kernel", lambda: None)

    def run(rel, gains, lengths, p, q, pr, qr):
        draws = np.shape(p)[0]
        params = {k: np.asarray(v, dtype=float).reshape(draws, -1)
                  for k, v in (("p", p), ("q", q), ("p_rel", pr), ("q_rel", qr))}
        return scoring._dynamic_scores(np.asarray(rel) > 0, np.asarray(gains, dtype=float),
                                       np.asarray(lengths), params, 2)

    return run


def _dense_reference(rel, gains, n, p, q, pr, qr):
    """E[T(H)] / E[H] from the dense fundamental matrix of one list and one draw."""
    n = max(n, 1)
    relevant = rel[:n] > 0
    fwd = np.where(relevant, pr[:n], p[:n])
    bwd = np.where(relevant, qr[:n], q[:n])
    P = np.zeros((n, n))
    for i in range(n):
        if i + 1 < n:
            P[i, i + 1] = fwd[i]
        if i > 0:
            P[i, i - 1] = bwd[i]
    visits = np.linalg.solve((np.eye(n) - P).T, np.eye(n)[0])
    return visits @ gains[:n] / visits.sum()


def _random_case(rng, lists=9, width=15, draws=11):
    rel = rng.integers(0, 3, (lists, width)).astype(float)
    lengths = rng.integers(0, width + 1, lists)
    lengths[:3] = [0, 1, width]
    for i, n in enumerate(lengths):
        rel[i, n:] = 0
    p = rng.uniform(0.2, 0.7, (draws, width))
    q = rng.uniform(0.0, 0.3, (draws, width))
    pr = rng.uniform(0.1, 0.6, draws)
    qr = rng.uniform(0.0, 0.4, draws)
    return rel, np.clip(rel, 0, None), lengths, p, q, pr, qr


def test_both_paths_equal_the_dense_solve(drwbm_scores):
    rng = np.random.default_rng(7)
    rel, gains, lengths, p, q, pr, qr = _random_case(rng)
    got = drwbm_scores(rel, gains, lengths, p, q, pr[:, None], qr[:, None])
    assert got.shape == (p.shape[0], rel.shape[0])
    width = rel.shape[1]
    for d in range(p.shape[0]):
        for i in range(rel.shape[0]):
            ref = _dense_reference(rel[i], gains[i], lengths[i], p[d], q[d],
                                   np.full(width, pr[d]), np.full(width, qr[d]))
            assert got[d, i] == pytest.approx(ref, rel=1e-12, abs=1e-15)


def test_more_draws_than_lanes_match_the_dense_solve():
    rng = np.random.default_rng(8)
    rel, gains, lengths, p, q, pr, qr = _random_case(rng, lists=30, width=40, draws=37)
    got = relevance_walk_scores(rel, gains, lengths, p, q, pr, qr)
    for d in (0, 7, 8, 36):                       # lanes 0, last of a block, next block, tail
        for i in range(rel.shape[0]):
            ref = _dense_reference(rel[i], gains[i], lengths[i], p[d], q[d],
                                   np.full(rel.shape[1], pr[d]), np.full(rel.shape[1], qr[d]))
            assert got[d, i] == pytest.approx(ref, rel=1e-12, abs=1e-15)


def test_simulated_users_agree():
    """Users walk the list with the drwbm moves; sum T / sum H converges to the score."""
    rng = np.random.default_rng(11)
    rel = np.array([0, 2, 0, 1, 1, 0, 0, 3, 0, 0], dtype=float)
    p, q, pr, qr = 0.65, 0.15, 0.35, 0.3
    score = relevance_walk_scores(rel[None], rel[None], [rel.size], [p], [q], [pr], [qr])[0, 0]
    users = 200_000
    state = np.zeros(users, dtype=int)
    alive = np.ones(users, dtype=bool)
    reward = np.zeros(users)
    steps = np.zeros(users)
    while alive.any():
        idx = np.flatnonzero(alive)
        s = state[idx]
        reward[idx] += rel[s]
        steps[idx] += 1
        relevant = rel[s] > 0
        f = np.where(relevant, pr, p) * (s < rel.size - 1)
        b = np.where(relevant, qr, q) * (s > 0)
        u = rng.random(idx.size)
        forward, backward = u < f, (u >= f) & (u < f + b)
        state[idx[forward]] += 1
        state[idx[backward]] -= 1
        alive[idx[~(forward | backward)]] = False
    ratio = reward.sum() / steps.sum()
    # delta-method standard error of a ratio of means
    m_t, m_h = reward.mean(), steps.mean()
    var = np.var(reward - ratio * steps) / m_h**2 / users
    assert abs(ratio - score) < 5 * np.sqrt(var)
    assert m_t > 0 and m_h > 1


def test_a_walk_that_never_stops_is_an_error():
    rel = np.array([[0.0, 1.0]])
    with pytest.raises(ParameterError, match="never stops"):
        relevance_walk_scores(rel, rel, [2], [1.0], [0.0], [0.0], [1.0])


def test_impossible_parameters_are_errors():
    rel = np.array([[0.0, 1.0]])
    with pytest.raises(ParameterError, match="exceeds 1"):
        relevance_walk_scores(rel, rel, [2], [0.8], [0.3], [0.1], [0.1])
    with pytest.raises(ParameterError, match=r"\[0, 1\]"):
        relevance_walk_scores(rel, rel, [2], [-0.1], [0.3], [0.1], [0.1])
    with pytest.raises(ParameterError, match="lengths"):
        relevance_walk_scores(rel, rel, [3], [0.5], [0.3], [0.1], [0.1])
    with pytest.raises(ParameterError, match="ranks >= 1"):
        relevance_walk_scores(np.zeros((2, 0)), np.zeros((2, 0)), [0, 0], [0.5], [0.3], [0.1],
                              [0.1])


def test_concurrent_callers_get_their_own_numbers():
    """Threads calling at once (Dask workers with several threads) each get the numbers of
    their own call."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(9)
    cases = [_random_case(rng, lists=20, width=30, draws=9) for _ in range(6)]
    alone = [relevance_walk_scores(*c) for c in cases]
    with ThreadPoolExecutor(max_workers=3) as pool:
        together = list(pool.map(lambda c: relevance_walk_scores(*c), cases))
    for a, b in zip(alone, together, strict=True):
        np.testing.assert_array_equal(a, b)
