"""Independent references for Markov Precision under learned jump kernels (tests only).

Written from the definitions of Ferrante, Ferro & Maistro (SIGIR 2014), sharing no code
with bayeschain:

* :func:`jump_matrix`: the model's jump chain on one list: ``alpha(i, j) = w(|i - j|)^g``
  (``w(d) = 1 / (d + 1)`` ID, ``1 / log10(d + 2)`` LID) between the list's ranks (AD) or
  its relevant ranks (OR), every pair (GL) or neighbours in state order (LO), rows
  normalised (Eq. 10); or given free rows, the list's block with rows renormalised;
* :func:`censor`: the chain watched on a set of states, the Schur complement
  ``P_AA + P_AB (I - P_BB)^{-1} P_BA`` (Eq. 8) with ``numpy.linalg.solve``;
* :func:`stationary`: ``pi P = pi``, ``sum pi = 1`` by least squares;
* :func:`dense_mp`: MP (or MPcont) of one list from the three;
* :func:`simulate_jumps`: one user jumping on a chain, a plain Python loop.
"""

import numpy as np


def weights(family: str, distance: np.ndarray, exponent: float) -> np.ndarray:
    d = np.asarray(distance, dtype=float)
    w = 1.0 / (d + 1.0) if family == "ID" else 1.0 / np.log10(d + 2.0)
    return np.where(d > 0, w ** exponent, 0.0)


def jump_matrix(relevant: np.ndarray, model: str, exponent: float = 1.0,
                free: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(P, states)``: the jump chain of one list (``relevant``: booleans, one per rank of
    the list) and the ranks its states stand for."""
    n = relevant.size
    if free is not None:
        block = np.array(free[:n, :n], dtype=float)
        return block / block.sum(axis=1, keepdims=True), np.arange(n)
    conn, space, family = model.split("_")
    states = np.arange(n) if space == "AD" else np.flatnonzero(relevant)
    alpha = weights(family, np.abs(states[:, None] - states[None, :]), exponent)
    if conn == "LO":
        k = np.arange(states.size)
        alpha = np.where(np.abs(k[:, None] - k[None, :]) == 1, alpha, 0.0)
    return alpha / alpha.sum(axis=1, keepdims=True), states


def censor(p: np.ndarray, keep: np.ndarray) -> np.ndarray:
    a, b = np.flatnonzero(keep), np.flatnonzero(~keep)
    if b.size == 0:
        return p[np.ix_(a, a)]
    inner = np.linalg.solve(np.eye(b.size) - p[np.ix_(b, b)], p[np.ix_(b, a)])
    return p[np.ix_(a, a)] + p[np.ix_(a, b)] @ inner


def stationary(p: np.ndarray) -> np.ndarray:
    m = p.shape[0]
    system = np.vstack([p.T - np.eye(m), np.ones((1, m))])
    rhs = np.r_[np.zeros(m), 1.0]
    return np.linalg.lstsq(system, rhs, rcond=None)[0]


def dense_mp(rel: np.ndarray, model: str, exponent: float = 1.0,
             free: np.ndarray | None = None, mu: np.ndarray | None = None) -> float:
    """MP of one list of 0/1 relevance (MPcont with holding rates ``mu`` per rank)."""
    relevant = np.asarray(rel) > 0
    if not relevant.any():
        return 0.0
    prec = np.cumsum(relevant) / np.arange(1, relevant.size + 1)
    ranks = np.flatnonzero(relevant)
    if ranks.size == 1 or relevant.size == 1:
        pi = np.ones(1)
    else:
        p, states = jump_matrix(relevant, model, exponent, free)
        pi = stationary(censor(p, relevant[states]))
    if mu is not None:
        pi = pi / np.asarray(mu, dtype=float)[ranks]
    return float(pi @ prec[ranks] / pi.sum())


def simulate_jumps(p: np.ndarray, steps: int, seed: int) -> np.ndarray:
    """The states of one user jumping ``steps`` times on ``p``, from state 0."""
    cum = np.cumsum(p, axis=1)
    rng = np.random.default_rng(seed)
    states = np.empty(steps, dtype=np.int64)
    state = 0
    for k, u in enumerate(rng.random(steps)):
        state = min(int(np.searchsorted(cum[state], u, side="right")), p.shape[0] - 1)
        states[k] = state
    return states
