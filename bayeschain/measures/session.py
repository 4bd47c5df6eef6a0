r"""MsM: the Markovian session measure (van Dijk, Ferrante, Ferro & Kanoulas, ECIR 2019).

A session is ``K`` queries with ``N`` ranked documents each (the ``N x K`` relevance
matrix ``session``).  Within a query the user moves forward with ``p``, backward with
``q``, jumps to the first document of the next query with ``r`` and ends the session with
``s`` (``p + q + r + s = 1``); the first document has no backward move and the last no
forward move, their probabilities rescaled (Algorithm 1):
``p_1, s_1, r_1 = (p, s, r) / (p + s + r)``, ``q_N, s_N, r_N = (q, s, r) / (q + s + r)``.

Algorithm 1 of the electronic appendix computes

* ``e(i)``: expected steps from document 1 to document ``i`` in the walk conditioned on
  neither stopping nor reformulating (the within-query rows renormalised);
* ``e_Q``: expected steps from document 1 to the next query in the walk conditioned on not
  stopping (the ``F`` column removed and rows renormalised);
* ``h_F``: probability of ending the session before reformulating, from document 1;
  ``h_FK = 1`` in the last query (there is no next query, so its ``Q`` column is removed
  and the session ends there for sure);
* ``pi(j)``: probability of reaching query ``j``: ``pi(1) = 1``,
  ``pi(j) = 1 - sum_{l<j} h(l)`` with ``h(l) = (1 - h_F)^(l-1) h_F``, i.e.
  ``pi(j) = (1 - h_F)^(j-1)``;
* ``MsM = sum_j pi(j) sum_i run(i, j) / D(t_ij)`` with the time to reach document ``i`` of
  query ``j``: ``t_ij = e(i) + (j - 1) e_Q``, and the discount ``D(t) = 1 + t`` (linear) or
  ``1 + log_b(1 + t)`` (logarithmic).

**Pseudo-code vs reference implementation.**  The printed pseudo-code discounts every
document by ``1 + e(i) + e_Q`` (the same ``e_Q`` for every query, including the first)
and sums ``g(j) = pi(j) sum_i E(i)`` without the query index.  The authors' reference
implementation, which this module follows, uses the time
``e(i) + (j - 1) e_Q`` and weights each query's own gain by ``pi(j)``.
:func:`msm_pseudocode` implements the printed version for comparison.  The seed's
logarithmic discount uses base 10; the reference MATLAB uses the natural logarithm, hence
the ``log_base`` parameter (default 10, as in the seed).

All quantities come from the chain engine in O(N): ``e(i)`` from the birth-death passage
times of :func:`bayeschain.chains.forward_passage_times`, ``e_Q`` and ``h_F`` from
tridiagonal solves.  Parameters may carry leading draw axes (posterior draws).
"""

from __future__ import annotations

import numpy as np

from .. import chains
from ..browsing.base import number
from ..chains.checks import check_memory, float_array, plain
from ..errors import ParameterError

_SUM_TOL = 1e-9


def _check_parameters(p, q, r, s):
    arrays = [float_array(x, f"MsM probability {name}", finite=False, error=ParameterError)
              for name, x in zip("pqrs", (p, q, r, s), strict=True)]
    for name, x in zip("pqrs", arrays, strict=True):
        if not np.all(np.isfinite(x)) or np.any((x < 0) | (x > 1)):
            raise ParameterError(f"MsM probability {name} must lie in [0, 1]; got {plain(x)}")
    try:
        p, q, r, s = np.broadcast_arrays(*arrays)
    except ValueError:
        raise ParameterError(f"MsM probabilities p, q, r, s must have broadcasting shapes; got "
                             f"{[x.shape for x in arrays]}") from None
    total = p + q + r + s
    if np.any(np.abs(total - 1) > _SUM_TOL):
        raise ParameterError(f"MsM needs p + q + r + s = 1; got {float(total.flat[0]):.6g}"
                             if total.size == 1 else "MsM needs p + q + r + s = 1 for every "
                             "draw")
    if np.any(r <= 0) or np.any(s <= 0):
        raise ParameterError("MsM needs r > 0 and s > 0 (the user must be able to reformulate "
                             "and to stop)")
    if np.any(p <= 0):
        raise ParameterError("MsM needs p > 0 (the user must be able to move forward)")
    return p, q, r, s


def _check_session(session) -> np.ndarray:
    run = float_array(session, "session relevance", finite=False, error=ParameterError)
    if run.ndim != 2 or run.shape[0] < 1 or run.shape[1] < 1:
        raise ParameterError(f"session must be an N x K matrix (documents x queries); got "
                             f"shape {run.shape}")
    if not np.all(np.isfinite(run)) or np.any(run < 0):
        raise ParameterError("session relevance must be finite and non-negative")
    return run


def query_walk(n_docs: int, p, q, r, s):
    """Per-document probabilities of the within-query walk with the rescaled boundaries.

    Returns ``forward, backward, stop, reformulate``, each ``(..., N)``.
    """
    p, q, r, s = (np.asarray(x, dtype=float)[..., None] for x in (p, q, r, s))
    shape = np.broadcast_shapes(p.shape[:-1], q.shape[:-1]) + (n_docs,)
    fwd, bwd, stop, ref = (np.broadcast_to(x, shape).copy() for x in (p, q, s, r))
    first = np.zeros(n_docs, dtype=bool)
    first[0] = True
    last = np.zeros(n_docs, dtype=bool)
    last[-1] = True
    # first document: no backward move; last document: no forward move (both when N = 1)
    bwd[..., first] = 0.0
    fwd[..., last] = 0.0
    norm = fwd + bwd + stop + ref
    return fwd / norm, bwd / norm, stop / norm, ref / norm


def session_quantities(n_docs: int, p, q, r, s) -> dict[str, np.ndarray]:
    """``e`` (..., N), ``e_Q``, ``h_F`` of Algorithm 1, from the chain engine."""
    if isinstance(n_docs, bool) or not isinstance(n_docs, int | np.integer) or n_docs < 1:
        raise ParameterError(f"n_docs must be a positive integer; got {plain(n_docs)}")
    p, q, r, s = _check_parameters(p, q, r, s)
    check_memory(p.shape + (int(n_docs),), f"a session walk over {int(n_docs):,} documents",
                 itemsize=8 * 8, error=ParameterError)
    fwd, bwd, stop, ref = query_walk(n_docs, p, q, r, s)
    # e(i): walk conditioned on staying within the query
    moves = fwd + bwd
    with np.errstate(invalid="ignore", divide="ignore"):
        e = chains.forward_passage_times(np.where(moves > 0, fwd / moves, 0.0))
    # e_Q: walk conditioned on not ending the session (F removed, rows renormalised)
    keep = 1.0 - stop
    walk_q = chains.Tridiagonal(bwd / keep, np.zeros_like(bwd), fwd / keep)
    e_q = chains.expected_stopping_time(walk_q, check=False)
    # h_F: absorption in F before Q, from document 1
    walk = chains.Tridiagonal(bwd, np.zeros_like(bwd), fwd)
    h_f = chains.expected_reward(walk, stop, check=False)
    return {"e": e, "e_Q": e_q, "h_F": h_f}


def reach_probabilities(n_queries: int, h_f) -> np.ndarray:
    """``pi(j) = 1 - sum_{l<j} h(l) = (1 - h_F)^(j-1)``: probability of reaching query j."""
    h_f = np.asarray(h_f, dtype=float)
    return (1.0 - h_f[..., None]) ** np.arange(n_queries)


def _discount(time: np.ndarray, discount: str, log_base: float) -> np.ndarray:
    if discount == "linear":
        return 1.0 + time
    if discount == "log":
        base = number(log_base, "log_base", above=1.0)
        return 1.0 + np.log1p(time) / np.log(base)
    raise ParameterError(f"discount must be 'linear' or 'log', got {plain(discount)}")


def msm(session, p, q, r, s, discount: str = "linear", log_base: float = 10) -> np.ndarray:
    """The MsM value of a session (reference-implementation semantics; see module docs).

    Parameters
    ----------
    session : array (N, K)
        Relevance of document ``i`` (row) of query ``j`` (column); 0 for not relevant.
    p, q, r, s : float or arrays with leading draw axes
        Forward, backward, next-query and stop probabilities, ``p + q + r + s = 1``,
        ``p > 0``, ``r > 0``, ``s > 0``.
    discount : "linear" or "log"
        ``1 + t`` or ``1 + log_b(1 + t)`` of the expected time ``t`` to reach a document.
    """
    run = _check_session(session)
    n, k = run.shape
    quant = session_quantities(n, p, q, r, s)
    time = quant["e"][..., :, None] + np.arange(k) * quant["e_Q"][..., None, None]
    gain = np.sum(run / _discount(time, discount, log_base), axis=-2)    # (..., K)
    return np.sum(reach_probabilities(k, quant["h_F"]) * gain, axis=-1)


def msm_pseudocode(session, p, q, r, s, discount: str = "linear",
                   log_base: float = 10) -> np.ndarray:
    """MsM exactly as Algorithm 1 prints it: every document discounted by
    ``1 + e(i) + e_Q`` whatever its query, each query's gain weighted by ``pi(j)``.
    Kept for comparison with the reference semantics of :func:`msm`."""
    run = _check_session(session)
    n, k = run.shape
    quant = session_quantities(n, p, q, r, s)
    time = quant["e"][..., :, None] + quant["e_Q"][..., None, None]
    gain = np.sum(run / _discount(time, discount, log_base), axis=-2)
    return np.sum(reach_probabilities(k, quant["h_F"]) * gain, axis=-1)
