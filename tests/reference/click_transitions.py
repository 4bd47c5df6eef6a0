"""Exact click-to-click transition laws of the simulated logs, from the chain engine.

After a click on rank i the hidden user moves (forward p, backward q, reformulate r, stop
the rest; rank 1 has no backward move, and at the last rank the forward mass leaves the
page, split between reformulate and stop in their proportion); on each rank reached they
click with probability c, else move on.  With ``P`` the move matrix between ranks and
``v = P[i] (I - diag(1 - c) P)^{-1}`` the expected arrivals without a click, the next click
is on rank j with probability ``v_j c_j``; the user reformulates before any click with
``r_i + sum_k v_k (1 - c_k) r_k``.  A repeat (the next click on rank i again) is left out of
the fitted categories, which are therefore conditioned on "not a repeat".
"""

import numpy as np

from bayeschain import chains


def click_transition_truth(n, p, q, r, c):
    p = np.full(n, p, dtype=float)
    q = np.full(n, q, dtype=float)
    r = np.full(n, r, dtype=float)
    c = np.full(n, c, dtype=float)
    q[0] = 0.0
    s = 1.0 - p - q - r
    r[-1] *= (r[-1] + s[-1] + p[-1]) / (r[-1] + s[-1])   # the last rank's forward mass
    p[-1] = 0.0
    moves = chains.Tridiagonal(q, np.zeros(n), p).to_dense()
    fundamental = chains.fundamental_matrix((1 - c)[:, None] * moves)
    truth = np.zeros((n, 4))           # forward, backward, stop, reformulate
    for i in range(n):
        v = moves[i] @ fundamental
        nxt = v * c
        reform = r[i] + v @ ((1 - c) * r)
        repeat = nxt[i]
        fwd, bwd = nxt[i + 1:].sum(), nxt[:i].sum()
        stop = 1 - nxt.sum() - reform
        truth[i] = np.array([fwd, bwd, stop, reform]) / (1 - repeat)
    return truth
