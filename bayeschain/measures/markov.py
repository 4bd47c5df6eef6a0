r"""Markov Precision, discrete (MP) and continuous time (MPcont).

Ferrante, Ferro & Maistro, "Injecting User Models and Time into Precision via Markov
Chains", SIGIR 2014.  A user jumps between the documents of a ranked list; MP averages
the precision of the relevant ranks with the weights of the invariant distribution ``pi``
of the chain watched on the relevant documents (Definition 1):

``MP = sum_{i in R} pi_i Prec(i)``,
``MPcont = sum_{i in R} pi~_i Prec(i)``, ``pi~_i = (pi_i / mu_i) / sum_j (pi_j / mu_j)``,

with ``mu_i`` the exponential holding-time rate of rank ``i``.  ``@Rec(T)`` rescaling
multiplies by relevant retrieved / recall base.

Models (Section 4.3): connectedness GL (jumps between all pairs) or LO (adjacent states
only) x state space AD (all documents, then the chain censored on the relevant ones,
Eq. 8) or OR (a chain on the relevant documents only) x weights ID or LID.  From state
``i`` the user jumps to ``j`` with probability ``alpha(i, j) / sum_k alpha(i, k)``
(Eq. 10), where, as in the authors' MATLAB reference (MATTERS, ``markovPrecision.m``),

* ID:  ``alpha(i, j) = 1 / (|i - j| + 1)``  (Eq. 9),
* LID: ``alpha(i, j) = 1 / log10(|i - j| + 2)``,

``i != j`` being ranks in the list.  In an OR chain the states are the relevant ranks, LO
links consecutive relevant documents, and distances are still measured in ranks.  The
``CONST`` model of Section 4.2 jumps to any other document with probability ``1/(T - 1)``;
its ``pi`` is uniform on the relevant documents, so ``MP * Rec(T) = AP`` exactly.

Two computations:

* ``method="closed"`` (default): the weights are symmetric, so every chain is reversible
  with ``pi_i`` proportional to the row sum ``sum_k alpha(i, k)``; the censored chain's
  invariant distribution is the full one restricted to R and renormalised.  O(N) per
  list (AD: prefix sums of the distance kernel; OR/GL: one convolution of the relevance
  vector with the kernel; OR/LO: the gaps between consecutive relevant documents).
* ``method="chain"``: build the transition matrix, censor it on R by the Schur complement
  (Eq. 8) and solve ``pi P~ = pi`` by GTH state reduction.  O(N^3) per list; the
  independent reference the tests hold the closed form against.

Why LO_AD_ID and LO_AD_LID coincide (footnote 4 of the paper): with adjacent jumps only,
every weight is ``alpha(i, i +- 1)``, the same constant (1/2 for ID, 1/log10 3 for LID);
the normalisation of Eq. 10 cancels it, so both give the same chain and the same MP.
(LO_OR models differ: consecutive relevant documents lie at different rank distances.)

Edge cases: a list with no relevant document scores 0; with one relevant document the
chain on R has a single state, which holds all the mass (``MP = Prec(i)``); a one-document
list has no jump, and its single state again holds the mass.  For lists of two or more
ranks every model's weights are positive on a connected graph, so the chains are
irreducible and ``pi`` is unique.
"""

from __future__ import annotations

import numpy as np

from .. import chains
from ..chains.checks import MAX_WORK, check_memory, float_array, plain
from ..errors import ParameterError

CONNECTEDNESS = ("GL", "LO")
STATE_SPACES = ("AD", "OR")
WEIGHTS = ("ID", "LID")
MODELS = tuple(f"{c}_{s}_{w}" for c in CONNECTEDNESS for s in STATE_SPACES for w in WEIGHTS) \
    + ("CONST",)


def _kernel(weights: str, distance: np.ndarray) -> np.ndarray:
    """alpha as a function of the rank distance d = |i - j| >= 1 (0 at d = 0)."""
    d = np.abs(np.asarray(distance, dtype=float))
    with np.errstate(divide="ignore"):
        k = 1.0 / (d + 1.0) if weights == "ID" else 1.0 / np.log10(d + 2.0)
    return np.where(d > 0, k, 0.0)


def _parse_model(model: str) -> tuple[str, str, str]:
    if not isinstance(model, str):
        raise ParameterError(f"Markov Precision model must be a name, one of "
                             f"{', '.join(MODELS)}; got {plain(model)}")
    if model == "CONST":
        return "GL", "AD", "CONST"
    parts = model.split("_")
    if len(parts) != 3 or parts[0] not in CONNECTEDNESS or parts[1] not in STATE_SPACES \
            or parts[2] not in WEIGHTS:
        raise ParameterError(f"unknown Markov Precision model {model!r}; valid: "
                             f"{', '.join(MODELS)}")
    return parts[0], parts[1], parts[2]


def _relevance(relevance, level) -> np.ndarray:
    rel = float_array(relevance, "relevance", error=ParameterError)
    if rel.ndim < 1 or rel.shape[-1] < 1:
        raise ParameterError("relevance must have at least one rank on its last axis")
    if isinstance(level, bool) or not isinstance(level, int | float | np.integer | np.floating) \
            or not np.isfinite(level):
        raise ParameterError(f"level (the least relevant grade) must be a finite number; got "
                             f"{plain(level)}")
    return (rel >= level).astype(float)


def _lengths(lengths, shape, width) -> np.ndarray:
    if lengths is None:
        return np.full(shape, width, dtype=np.int64)
    n = float_array(lengths, "list lengths", error=ParameterError)
    if np.any(n < 0) or np.any(n > width) or np.any(n != np.round(n)):
        raise ParameterError(f"list lengths must be integers in 0..{width}; got {plain(n)}")
    try:
        return np.broadcast_to(n.astype(np.int64), shape)
    except ValueError:
        raise ParameterError(f"list lengths of shape {n.shape} do not match the {shape} "
                             f"lists") from None


def invariant_weights(relevance, model: str = "GL_AD_ID", *, lengths=None, level: float = 1,
                      method: str = "closed") -> np.ndarray:
    """``pi`` of the chain watched on the relevant ranks, as an array ``(..., N)``.

    Zero on non-relevant ranks; rows without relevant documents are all zero.
    """
    r = _relevance(relevance, level)
    n = _lengths(lengths, r.shape[:-1], r.shape[-1])
    r = r * (np.arange(r.shape[-1]) < n[..., None])
    if method == "closed":
        mass = _row_sums(r, n, *_parse_model(model))
    elif method == "chain":
        mass = _censored_invariant(r, n, model)
    else:
        raise ParameterError(f"method must be 'closed' or 'chain', got {plain(method)}")
    mass = mass * r
    total = mass.sum(axis=-1, keepdims=True)
    # single relevant state (or one-rank list): all the mass sits there
    single = (total <= 0) & (r.sum(axis=-1, keepdims=True) > 0)
    mass = np.where(single, r, mass)
    total = mass.sum(axis=-1, keepdims=True)
    return np.divide(mass, total, out=np.zeros_like(mass), where=total > 0)


def _row_sums(r: np.ndarray, n: np.ndarray, conn: str, space: str, weights: str) -> np.ndarray:
    """Unnormalised invariant mass of every rank (reversible chains: weight row sums)."""
    width = r.shape[-1]
    ranks = np.arange(width)
    if weights == "CONST":
        return np.ones_like(r)
    if space == "AD":
        if conn == "LO":  # one neighbour at the ends of the list, two inside
            return ((ranks > 0) & (ranks < n[..., None])).astype(float) + \
                (ranks < n[..., None] - 1)
        # sum over the other ranks j of the list: prefix sums of the kernel by distance
        h = np.r_[0.0, np.cumsum(_kernel(weights, np.arange(1, width + 1)))]
        right = np.clip(n[..., None] - 1 - ranks, 0, None)
        return h[ranks] + h[right]
    if conn == "GL":
        return _convolve_rows(r, _kernel(weights, np.abs(np.arange(-(width - 1), width))))
    return _consecutive_sums(r, weights)


def _convolve_rows(r: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """``out[..., i] = sum_j r[..., j] kernel[i - j + N - 1]`` by FFT (relative error ~1e-15
    of the largest term)."""
    from scipy.signal import fftconvolve

    width = r.shape[-1]
    full = fftconvolve(r, kernel.reshape((1,) * (r.ndim - 1) + (-1,)), axes=-1)
    return np.clip(full[..., width - 1: 2 * width - 1], 0.0, None)


def _consecutive_sums(r: np.ndarray, weights: str) -> np.ndarray:
    """LO on the relevant documents: each links to the previous and next relevant one."""
    flat = r.reshape(-1, r.shape[-1]) > 0
    rows, cols = np.nonzero(flat)
    same_row = rows[1:] == rows[:-1]
    link = np.where(same_row, _kernel(weights, cols[1:] - cols[:-1]), 0.0)
    mass = np.zeros(flat.shape)
    np.add.at(mass, (rows[:-1], cols[:-1]), link)
    np.add.at(mass, (rows[1:], cols[1:]), link)
    return mass.reshape(r.shape)


def transition_matrix(n_ranks: int, model: str, relevant=None) -> np.ndarray:
    """The jump matrix of a model on a list of ``n_ranks`` (Eq. 10); for OR models, on the
    relevant ranks given by the boolean ``relevant`` (states in rank order)."""
    conn, space, weights = _parse_model(model)
    ranks = np.arange(n_ranks) if space == "AD" else np.flatnonzero(relevant)
    m = ranks.size
    if weights == "CONST":
        alpha = 1.0 - np.eye(m)
    else:
        alpha = _kernel(weights, np.abs(ranks[:, None] - ranks[None, :]))
        if conn == "LO":
            k = np.arange(m)
            alpha = np.where(np.abs(k[:, None] - k[None, :]) == 1, alpha, 0.0)
    if m == 1:
        return np.ones((1, 1))
    return alpha / alpha.sum(axis=1, keepdims=True)


def _censored_invariant(r: np.ndarray, n: np.ndarray, model: str) -> np.ndarray:
    """Reference route: build P, censor it on R (Schur complement), solve by GTH."""
    conn, space, _ = _parse_model(model)
    width = int(n.max(initial=0))
    work = float(np.sum(np.asarray(n, dtype=float) ** 3))
    if work > MAX_WORK:
        raise ParameterError(f"method='chain' censors an N x N matrix per list (O(N^3)): "
                             f"{work:.3g} operations for these lists of up to {width:,} ranks; "
                             f"the limit is {MAX_WORK:.3g}: use method='closed'")
    check_memory((width, width), "method='chain'", error=ParameterError)
    out = np.zeros_like(r)
    for idx in np.ndindex(r.shape[:-1]):
        length = int(n[idx])
        rel = r[idx][:length] > 0
        if rel.sum() == 0:
            continue
        if rel.sum() == 1:
            out[idx][np.flatnonzero(rel)] = 1.0
            continue
        if space == "AD":
            p = transition_matrix(length, model)
            watched = chains.censored_chain(p, rel)
        else:
            watched = transition_matrix(length, model, rel)
        out[idx][np.flatnonzero(rel)] = chains.invariant_distribution(watched)
    return out


def markov_precision(relevance, model: str = "GL_AD_ID", holding_rates=None, rescale=None, *,
                     recall_base=None, lengths=None, level: float = 1,
                     method: str = "closed") -> np.ndarray:
    """Markov Precision (and MPcont when ``holding_rates`` are given).

    Parameters
    ----------
    relevance : array (..., N)
        Grades of the ranked documents (relevant when ``>= level``); rows may be
        zero-padded beyond ``lengths``.
    model : str
        One of ``GL_AD_ID``, ``GL_AD_LID``, ``GL_OR_ID``, ``GL_OR_LID``, ``LO_AD_ID``,
        ``LO_AD_LID``, ``LO_OR_ID``, ``LO_OR_LID``, ``CONST``.
    holding_rates : array (..., N), optional
        Exponential holding-time rate ``mu`` of each rank; leading axes (posterior draws)
        broadcast against those of ``relevance``.  ``(D, 1, N)`` rates with ``(L, N)``
        lists give ``(D, L)`` values through one matrix product.
    rescale : None or "recall"
        ``"recall"`` multiplies by relevant retrieved / ``recall_base`` (``@Rec(T)``).
    method : "closed" or "chain"
        Reversible closed form (fast, default) or censored chain + GTH (reference).
    """
    r = _relevance(relevance, level)
    pi = invariant_weights(relevance, model, lengths=lengths, level=level, method=method)
    prec = np.cumsum(r, axis=-1) / np.arange(1, r.shape[-1] + 1)
    if holding_rates is None:
        value = np.sum(pi * prec, axis=-1)
    else:
        value = _continuous(pi, prec, holding_rates)
    if rescale is None:
        return value
    if rescale != "recall":
        raise ParameterError(f"rescale must be None or 'recall', got {plain(rescale)}")
    retrieved = r.sum(axis=-1)
    rb = retrieved if recall_base is None else \
        float_array(recall_base, "recall_base", error=ParameterError)
    try:
        np.broadcast_shapes(rb.shape, retrieved.shape)
    except ValueError:
        raise ParameterError(f"recall_base must have one value per list, shape "
                             f"{retrieved.shape}; got shape {rb.shape}") from None
    if np.any(rb < retrieved):
        raise ParameterError("recall base is smaller than the relevant documents retrieved")
    factor = np.divide(retrieved, rb, out=np.zeros(np.broadcast_shapes(retrieved.shape,
                                                                       np.shape(rb))),
                       where=np.asarray(rb) > 0)
    return value * factor


def _continuous(pi: np.ndarray, prec: np.ndarray, holding_rates) -> np.ndarray:
    """``sum pi_i prec_i / mu_i / sum pi_i / mu_i`` (SIGIR 2014, MPcont)."""
    mu = float_array(holding_rates, "holding rates", error=ParameterError)
    if mu.ndim == 0:
        raise ParameterError("holding rates must be one rate per rank (an array (..., N))")
    if mu.shape[-1] != pi.shape[-1]:
        if mu.shape[-1] < pi.shape[-1]:
            raise ParameterError(f"holding rates cover {mu.shape[-1]} ranks, the lists have "
                                 f"{pi.shape[-1]}")
        mu = mu[..., : pi.shape[-1]]
    if not np.all(np.isfinite(mu)) or np.any(mu <= 0):
        raise ParameterError("holding rates mu must be finite and > 0")
    inv = 1.0 / mu
    if pi.ndim == 2 and mu.ndim >= 2 and mu.shape[-2] == 1:
        # draws x lists through matrix products: (..., 1, N) rates with (L, N) lists
        num = inv[..., 0, :] @ (pi * prec).T
        den = inv[..., 0, :] @ pi.T
    else:
        try:
            np.broadcast_shapes(pi.shape, inv.shape)
        except ValueError:
            raise ParameterError(f"holding rates of shape {mu.shape} do not match the lists "
                                 f"{pi.shape}") from None
        num = np.sum(pi * prec * inv, axis=-1)
        den = np.sum(pi * inv, axis=-1)
    return np.divide(num, den, out=np.zeros(np.broadcast_shapes(num.shape, den.shape)),
                     where=den > 0)
