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

Learned jump kernels (``exponent=``, ``jumps=``; what posterior scoring passes from a
posterior of the specs ``jumps-id`` / ``jumps-free``, :mod:`bayeschain.scoring.score`):

* An exponent ``g >= 0`` of the model's weights, ``alpha(i, j) = w(|i - j|)^g`` (``g = 1``
  the paper's, ``g = 0`` uniform: the AD models become ``CONST``).  ``alpha`` is still
  symmetric, so every model keeps the reversible closed form: ``pi_i`` proportional to
  ``sum_k c_i(k) w(k)^g`` with ``c_i(k)`` the states linked to ``i`` at rank distance
  ``k``, and ``MP = sum_k A(k) w(k)^g / sum_k B(k) w(k)^g`` with
  ``A(k) = sum_{i in R} Prec(i) c_i(k)``, ``B(k) = sum_{i in R} c_i(k)``: both tabled once
  per list (prefix sums for AD, pairs of relevant ranks for OR), then one matrix product
  ``(draws x distances) @ (distances x lists)``.  The table holds ``(w(k) / w(1))^g``: a
  common factor of all weights changes no ``pi``, and the table stays in ``(0, 1]``.
  LO_AD does not depend on ``g`` (its weights are all ``w(1)^g``).  MPcont of the AD
  models: their ``pi`` depends on the list length only, so one ``(draws x n)`` table of row
  sums over ``mu`` per length times the lists of that length; MPcont of the OR models, and
  ``method="chain"``, are solved draw by draw (about 20 s for 1,000 draws of 5,000 lists
  of 100 ranks, GL_OR).
* Free jump rows ``P`` between ranks ``1..R`` (row-stochastic, zero diagonal): not
  symmetric, so not reversible.  The chain of a list of ``n <= R`` ranks is the ``n x n``
  block with its rows renormalised over the list (GL_AD models only: every document,
  every pair).  The censored chain's invariant distribution is the full chain's restricted
  to the watched states and renormalised, for any irreducible chain (Meyer, "Stochastic
  complementation...", SIAM Review 31 (1989), Thm. 2.3; the chain watched on R of Eq. 8),
  so ``method="closed"`` solves one ``pi`` per list length and draw (GTH, batched over
  draws) and weighs the lists of that length by matrix products;
  ``method="chain"`` censors on each list's relevant ranks (Schur complement) before GTH,
  once per pattern of relevant ranks.

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
from ..errors import ChainError, ParameterError

CONNECTEDNESS = ("GL", "LO")
STATE_SPACES = ("AD", "OR")
WEIGHTS = ("ID", "LID")
MODELS = tuple(f"{c}_{s}_{w}" for c in CONNECTEDNESS for s in STATE_SPACES for w in WEIGHTS) \
    + ("CONST",)


def _kernel(weights: str, distance: np.ndarray, exponent: float = 1.0) -> np.ndarray:
    """alpha as a function of the rank distance d = |i - j| >= 1 (0 at d = 0): ``w(d)^g``
    with the paper's ``g = 1`` unless an ``exponent`` is given."""
    d = np.abs(np.asarray(distance, dtype=float))
    with np.errstate(divide="ignore"):
        k = 1.0 / (d + 1.0) if weights == "ID" else 1.0 / np.log10(d + 2.0)
    if exponent != 1.0:
        k = k ** exponent
    return np.where(d > 0, k, 0.0)


def parse_model(model: str) -> tuple[str, str, str]:
    """``(connectedness, state space, weights)`` of a model name (``CONST``: GL, AD, CONST),
    or a :class:`ParameterError` listing the valid names."""
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
                      method: str = "closed", exponent: float = 1.0) -> np.ndarray:
    """``pi`` of the chain watched on the relevant ranks, as an array ``(..., N)``.

    Zero on non-relevant ranks; rows without relevant documents are all zero.
    ``exponent`` is the ``g`` of the weights ``w(|i - j|)^g`` (one number; 1: the paper's).
    """
    r = _relevance(relevance, level)
    n = _lengths(lengths, r.shape[:-1], r.shape[-1])
    r = r * (np.arange(r.shape[-1]) < n[..., None])
    return _invariant(r, n, model, method, exponent)


def _invariant(r: np.ndarray, n: np.ndarray, model: str, method: str,
               exponent: float = 1.0) -> np.ndarray:
    """:func:`invariant_weights` of relevance already masked by the list lengths."""
    if method == "closed":
        mass = _row_sums(r, n, *parse_model(model), exponent=exponent)
    elif method == "chain":
        mass = _censored_invariant(r, n, model, exponent)
    else:
        raise ParameterError(f"method must be 'closed' or 'chain', got {plain(method)}")
    mass = mass * r
    total = mass.sum(axis=-1, keepdims=True)
    # single relevant state (or one-rank list): all the mass sits there
    single = (total <= 0) & (r.sum(axis=-1, keepdims=True) > 0)
    mass = np.where(single, r, mass)
    total = mass.sum(axis=-1, keepdims=True)
    return np.divide(mass, total, out=np.zeros_like(mass), where=total > 0)


def _row_sums(r: np.ndarray, n: np.ndarray, conn: str, space: str, weights: str,
              exponent: float = 1.0) -> np.ndarray:
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
        h = np.r_[0.0, np.cumsum(_kernel(weights, np.arange(1, width + 1), exponent))]
        right = np.clip(n[..., None] - 1 - ranks, 0, None)
        return h[ranks] + h[right]
    if conn == "GL":
        return _convolve_rows(r, _kernel(weights, np.abs(np.arange(-(width - 1), width)),
                                         exponent))
    return _consecutive_sums(r, weights, exponent)


def _convolve_rows(r: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """``out[..., i] = sum_j r[..., j] kernel[i - j + N - 1]`` by FFT (relative error ~1e-15
    of the largest term)."""
    from scipy.signal import fftconvolve

    width = r.shape[-1]
    full = fftconvolve(r, kernel.reshape((1,) * (r.ndim - 1) + (-1,)), axes=-1)
    return np.clip(full[..., width - 1: 2 * width - 1], 0.0, None)


def _consecutive_sums(r: np.ndarray, weights: str, exponent: float = 1.0) -> np.ndarray:
    """LO on the relevant documents: each links to the previous and next relevant one."""
    flat = r.reshape(-1, r.shape[-1]) > 0
    rows, cols = np.nonzero(flat)
    same_row = rows[1:] == rows[:-1]
    link = np.where(same_row, _kernel(weights, cols[1:] - cols[:-1], exponent), 0.0)
    mass = np.zeros(flat.shape)
    np.add.at(mass, (rows[:-1], cols[:-1]), link)
    np.add.at(mass, (rows[1:], cols[1:]), link)
    return mass.reshape(r.shape)


def transition_matrix(n_ranks: int, model: str, relevant=None,
                      exponent: float = 1.0) -> np.ndarray:
    """The jump matrix of a model on a list of ``n_ranks`` (Eq. 10); for OR models, on the
    relevant ranks given by the boolean ``relevant`` (states in rank order); weights
    ``w(|i - j|)^exponent``."""
    conn, space, weights = parse_model(model)
    ranks = np.arange(n_ranks) if space == "AD" else np.flatnonzero(relevant)
    m = ranks.size
    if weights == "CONST":
        alpha = 1.0 - np.eye(m)
    else:
        alpha = _kernel(weights, np.abs(ranks[:, None] - ranks[None, :]), exponent)
        if conn == "LO":
            k = np.arange(m)
            alpha = np.where(np.abs(k[:, None] - k[None, :]) == 1, alpha, 0.0)
    if m == 1:
        return np.ones((1, 1))
    return alpha / alpha.sum(axis=1, keepdims=True)


def _censored_invariant(r: np.ndarray, n: np.ndarray, model: str,
                        exponent: float = 1.0) -> np.ndarray:
    """Reference route: build P, censor it on R (Schur complement), solve by GTH."""
    conn, space, _ = parse_model(model)
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
            p = transition_matrix(length, model, exponent=exponent)
            watched = chains.censored_chain(p, rel)
        else:
            watched = transition_matrix(length, model, rel, exponent)
        out[idx][np.flatnonzero(rel)] = chains.invariant_distribution(watched)
    return out


def markov_precision(relevance, model: str = "GL_AD_ID", holding_rates=None, rescale=None, *,
                     recall_base=None, lengths=None, level: float = 1,
                     method: str = "closed", exponent=None, jumps=None) -> np.ndarray:
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
        lists give ``(D, L)`` values through one matrix product.  A callable
        ``rates(rows, cols) -> (D, K)`` gives the rates of the documents at those positions
        of ``(L, N)`` lists (per-document holding times; only the relevant positions are
        asked for).  With ``exponent`` or
        ``jumps`` draws: ``(N,)``, ``(D, N)`` or ``(D, 1, N)``, paired with them by draw.
    rescale : None or "recall"
        ``"recall"`` multiplies by relevant retrieved / ``recall_base`` (``@Rec(T)``).
    method : "closed" or "chain"
        Reversible closed form (fast, default) or censored chain + GTH (reference).
    exponent : number or array (D,), optional
        A learned exponent ``g`` of the model's weights, ``alpha(i, j) = w(|i - j|)^g``
        (``g >= 0``; ``g = 1`` is the paper's model, ``g = 0`` uniform jumps).  Draws give
        values ``(D, ...)``; a number, values of the shape of one list batch.
    jumps : array (R, R) or (D, R, R), optional
        Learned free jump rows between ranks ``1..R`` (row-stochastic, zero diagonal): the
        chain of a list of ``n <= R`` ranks is the top-left ``n x n`` block with its rows
        renormalised.  Only the ``GL_AD`` models (every document, every pair).  ``(D, R,
        R)`` gives values ``(D, ...)``.
    """
    if exponent is not None and jumps is not None:
        raise ParameterError("give a jump exponent or a jump matrix, not both")
    r = _relevance(relevance, level)
    if exponent is None and jumps is None:
        pi = invariant_weights(relevance, model, lengths=lengths, level=level, method=method)
        prec = np.cumsum(r, axis=-1) / np.arange(1, r.shape[-1] + 1)
        if holding_rates is None:
            value = np.sum(pi * prec, axis=-1)
        else:
            value = _continuous(pi, prec, holding_rates)
    else:
        value = _learned_precision(r, model, holding_rates, lengths, method, exponent, jumps)
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
    if callable(holding_rates):
        return _continuous_at(pi, prec, holding_rates)
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


def _continuous_at(pi: np.ndarray, prec: np.ndarray, rates) -> np.ndarray:
    """MPcont with rates that depend on the list, not only the rank (per-document holding
    times): ``rates(rows, cols)`` gives ``mu`` ``(D, K)`` of the documents at ``(rows,
    cols)``, the ``K`` entries where ``pi > 0`` (the relevant documents: nothing else enters
    the sums, so no ``(D, L, N)`` array is made).  Values ``(D, L)`` for ``(L, N)`` lists."""
    if pi.ndim != 2:
        raise ParameterError("per-document holding rates score lists (L, N) of one batch")
    rows, cols = np.nonzero(pi)
    mu = float_array(rates(rows, cols), "holding rates", error=ParameterError)
    if mu.ndim != 2 or mu.shape[1] != rows.size:
        raise ParameterError(f"per-document holding rates must be (draws, {rows.size}); got "
                             f"{mu.shape}")
    if not np.all(np.isfinite(mu)) or np.any(mu <= 0):
        raise ParameterError("holding rates mu must be finite and > 0")
    from scipy.sparse import csr_matrix

    shape = (rows.size, pi.shape[0])
    weight = pi[rows, cols]
    ones = np.arange(rows.size)
    num = csr_matrix((weight * prec[rows, cols], (ones, rows)), shape=shape)
    den = csr_matrix((weight, (ones, rows)), shape=shape)
    inv = 1.0 / mu
    top, bottom = np.asarray(num.T @ inv.T).T, np.asarray(den.T @ inv.T).T
    return np.divide(top, bottom, out=np.zeros_like(top), where=bottom > 0)


def _learned_precision(r: np.ndarray, model: str, holding_rates, lengths, method: str,
                       exponent, jumps) -> np.ndarray:
    """MP / MPcont under a learned jump kernel: ``(D, ...)`` values for draws, the batch's
    shape for one kernel (see the module docstring: learned jump kernels)."""
    if method not in ("closed", "chain"):
        raise ParameterError(f"method must be 'closed' or 'chain', got {plain(method)}")
    if callable(holding_rates):
        raise ParameterError("per-document holding rates are scored with the paper's jump "
                             "weights; a learned jump kernel with them is not supported")
    conn, space, weights = parse_model(model)
    lead, width = r.shape[:-1], r.shape[-1]
    n = _lengths(lengths, lead, width)
    r = (r * (np.arange(width) < n[..., None])).reshape(-1, width)
    n = n.reshape(-1)
    prec = np.cumsum(r, axis=-1) / np.arange(1, width + 1)
    if exponent is not None:
        g, single = _exponents(exponent, model, weights)
        mu = None if holding_rates is None else _draw_rates(holding_rates, g.size, width)
        if mu is None and method == "closed":
            value = _decay_precision(r, n, prec, conn, space, weights, g)
        elif method == "closed" and space == "AD":
            value = _decay_by_length(r, n, prec, conn, weights, g, mu)
        else:                        # MPcont on OR, or the reference route: draw by draw
            value = np.empty((g.size, r.shape[0]))
            for d in range(g.size):
                pi = _invariant(r, n, model, method, float(g[d]))
                value[d] = np.sum(pi * prec, axis=-1) if mu is None else \
                    _continuous(pi, prec, mu[min(d, mu.shape[0] - 1)])
    else:
        p, single = _jump_matrices(jumps, model, conn, space, weights, n)
        mu = None if holding_rates is None else _draw_rates(holding_rates, p.shape[0], width)
        value = _free_precision(r, n, prec, p, mu, method)
    value = value.reshape(value.shape[:1] + lead)
    return value[0] if single else value


def _exponents(exponent, model: str, weights: str) -> tuple[np.ndarray, bool]:
    """The exponents as ``(D,)`` and whether one number was given."""
    if weights == "CONST":
        raise ParameterError(f"model {model!r} jumps uniformly: it has no distance weights "
                             f"for a jump exponent to act on (use an ID or LID model)")
    g = float_array(exponent, "jump exponent", ndim=(0, 1), low=0.0, error=ParameterError)
    if g.size == 0:
        raise ParameterError("jump exponent: no draws")
    return g.reshape(-1), g.ndim == 0


def _jump_matrices(jumps, model: str, conn: str, space: str, weights: str,
                   n: np.ndarray) -> tuple[np.ndarray, bool]:
    """Free jump rows as ``(D, R, R)`` (checked) and whether one matrix was given."""
    if (conn, space) != ("GL", "AD") or weights == "CONST":
        raise ParameterError(f"free jump rows are a chain between all the documents of a "
                             f"list, every pair connected (the GL_AD models: GL_AD_ID or "
                             f"GL_AD_LID, whose fixed weights the learned rows replace); "
                             f"model {model!r} is not one")
    p = float_array(jumps, "jump matrix", ndim=(2, 3), low=0.0, error=ParameterError)
    single = p.ndim == 2
    p = p.reshape((-1,) + p.shape[-2:])
    ranks = p.shape[-1]
    if p.shape[0] == 0 or p.shape[-2] != ranks or ranks < 2:
        raise ParameterError(f"a jump matrix is (R, R) or (draws, R, R) with R >= 2 ranks; "
                             f"got shape {p.shape}")
    if np.any(np.abs(p.sum(axis=-1) - 1.0) > 1e-9):
        raise ParameterError("each row of a jump matrix must be probabilities summing to 1")
    if np.any(p[:, np.arange(ranks), np.arange(ranks)] != 0):
        raise ParameterError("a jump matrix has a zero diagonal (a jump lands on another "
                             "rank); this one has non-zero diagonal entries")
    longest = int(n.max(initial=0))
    if longest > ranks:
        raise ParameterError(f"the learned jump matrix covers ranks 1..{ranks}, but a list "
                             f"has {longest} ranks: cut the lists off at {ranks} or fewer "
                             f"ranks (e.g. MP@{ranks})")
    return p, single


def _draw_rates(holding_rates, draws: int, width: int) -> np.ndarray:
    """Holding rates as ``(1 or D, width)``, paired with the kernel's ``D`` draws."""
    mu = float_array(holding_rates, "holding rates", error=ParameterError)
    if mu.ndim == 3 and mu.shape[1] == 1:
        mu = mu[:, 0]
    if mu.ndim == 1:
        mu = mu[None]
    if mu.ndim != 2 or mu.shape[0] not in (1, draws):
        raise ParameterError(f"with {draws} jump-kernel draw(s), holding rates must be (N,), "
                             f"({draws}, N) or ({draws}, 1, N); got shape "
                             f"{np.shape(holding_rates)}")
    if mu.shape[1] < width:
        raise ParameterError(f"holding rates cover {mu.shape[1]} ranks, the lists have "
                             f"{width}")
    if not np.all(np.isfinite(mu)) or np.any(mu <= 0):
        raise ParameterError("holding rates mu must be finite and > 0")
    return mu[:, :width]


def decay_table(weights: str, exponent: np.ndarray, width: int) -> np.ndarray:
    """``(D, width)``: ``(w(k) / w(1))^g`` at rank distance ``k`` (0 at ``k = 0``).

    Dividing by ``w(1)^g`` (the largest weight) changes no ``pi`` (a common factor of every
    weight) and keeps the table in ``(0, 1]`` for any ``g >= 0``."""
    g = np.asarray(exponent, dtype=float).reshape(-1, 1)
    k = np.arange(1, max(width, 1), dtype=float)
    logw = -np.log(k + 1.0) if weights == "ID" else -np.log(np.log10(k + 2.0))
    rel = logw - logw[0] if k.size else logw
    return np.concatenate([np.zeros((g.shape[0], 1)), np.exp(g * rel[None, :])],
                          axis=1)[:, :width]


def _decay_precision(r: np.ndarray, n: np.ndarray, prec: np.ndarray, conn: str, space: str,
                     weights: str, g: np.ndarray) -> np.ndarray:
    """MP ``(D, L)`` of symmetric weights ``w(|i - j|)^g`` for every draw of ``g``.

    ``pi_i`` is proportional to ``sum_k c_i(k) w(k)^g``, ``c_i(k)`` the partners of rank
    ``i`` at distance ``k``, so ``MP = sum_k A(k) W(k) / sum_k B(k) W(k)`` with
    ``A(k) = sum_{i in R} Prec(i) c_i(k)`` and ``B(k) = sum_{i in R} c_i(k)`` tabled once
    per list: one matrix product for all draws x lists."""
    x = r * prec
    table = decay_table(weights, g, r.shape[1])                         # (D, N)
    num = table @ _lag_sums(x, r, n, conn, space).T
    den = table @ _lag_sums(r, r, n, conn, space).T
    count = r.sum(axis=1)
    many = count >= 2
    if np.any(many & (den <= 0)):
        raise ParameterError(f"jump exponent up to {float(g.max()):.3g}: the weights of "
                             f"distant ranks underflow to 0, so the chain is not connected")
    value = np.divide(num, den, out=np.zeros_like(num), where=many & (den > 0))
    # one relevant document holds all the mass: MP = its precision (0 without any)
    return np.where(many, value, np.where(count == 1, x.sum(axis=1), 0.0))


def _decay_by_length(r: np.ndarray, n: np.ndarray, prec: np.ndarray, conn: str,
                     weights: str, g: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """MPcont ``(D, L)`` of the AD models: their ``pi`` depends on the list length only,
    the row sums ``S_n(i) = H(i) + H(n - 1 - i)`` with ``H(k) = sum_{d=1..k} w(d)^g``
    (GL; LO: 1 or 2 neighbours), so each length is one product of ``(D, n)`` weights
    ``S_n / mu`` with the lists of that length."""
    x = r * prec
    inv = 1.0 / mu
    out = np.zeros((g.size, r.shape[0]))
    count = r.sum(axis=1)
    h = np.cumsum(decay_table(weights, g, r.shape[1]), axis=1)         # (D, N)
    for length in np.unique(n[count > 0]):
        length = int(length)
        rows = np.flatnonzero((n == length) & (count > 0))
        if length == 1:                  # one state: it holds all the mass
            out[:, rows] = x[rows, 0]
            continue
        i = np.arange(length)
        if conn == "GL":
            sums = h[:, i] + h[:, length - 1 - i]
        else:
            sums = np.broadcast_to((i > 0) + (i < length - 1).astype(float), (g.size, length))
        w = sums * inv[:, :length]
        out[:, rows] = (w @ x[rows, :length].T) / (w @ r[rows, :length].T)
    return out


def _lag_sums(x: np.ndarray, r: np.ndarray, n: np.ndarray, conn: str,
              space: str) -> np.ndarray:
    """``(L, N)``: ``sum_i x_i c_i(k)`` at every distance ``k`` (0 at ``k = 0``), where
    ``c_i(k)`` counts the states linked to ``i`` at rank distance ``k``: the other ranks
    of the list (AD), the other relevant ranks (OR); every pair (GL) or neighbours only
    (LO: distance 1 in AD, consecutive relevant ranks in OR)."""
    rows, width = x.shape
    if space == "AD":
        # partner i - k exists when i >= k, partner i + k when i + k < n
        cs = np.concatenate([np.zeros((rows, 1)), np.cumsum(x, axis=1)], axis=1)
        k = np.arange(width)
        out = (cs[:, width:] - cs[:, k]) + np.take_along_axis(
            cs, np.clip(n[:, None] - k[None, :], 0, width), axis=1)
        out[:, 0] = 0.0
        if conn == "LO":
            out[:, 2:] = 0.0
        return out
    # OR: pairs of relevant ranks, the t-th next relevant rank of each (t = 1 only for LO)
    lists, cols = np.nonzero(r > 0)
    out = np.zeros(rows * width)
    t = 1
    while t < lists.size:
        same = lists[t:] == lists[:-t]
        if not same.any():
            break
        a, b = np.flatnonzero(same), np.flatnonzero(same) + t
        where = lists[a] * width + (cols[b] - cols[a])
        out += np.bincount(where, weights=x[lists[a], cols[a]] + x[lists[b], cols[b]],
                           minlength=rows * width)
        if conn == "LO":
            break
        t += 1
    return out.reshape(rows, width)


def _free_precision(r: np.ndarray, n: np.ndarray, prec: np.ndarray, p: np.ndarray,
                    mu: np.ndarray | None, method: str) -> np.ndarray:
    """MP / MPcont ``(D, L)`` of free jump rows: for each list length ``n`` the chain is
    the ``n x n`` block with renormalised rows, solved for every draw at once (GTH)."""
    x = r * prec
    inv = None if mu is None else 1.0 / mu
    out = np.zeros((p.shape[0], r.shape[0]))
    count = r.sum(axis=1)
    for length in np.unique(n[count > 0]):
        length = int(length)
        rows = np.flatnonzero((n == length) & (count > 0))
        if length == 1:                  # one state: it holds all the mass
            out[:, rows] = x[rows, 0]
            continue
        block = _restricted(p, length)                                  # (D, n, n)
        if method == "closed":
            # the censored chain's pi is the full chain's restricted to R (Meyer 1989)
            pi = _solve(block)                                          # (D, n)
            w = pi if inv is None else pi * inv[:, :length]
            num, den = w @ x[rows, :length].T, w @ r[rows, :length].T
            out[:, rows] = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
            continue
        patterns, which = np.unique(r[rows, :length] > 0, axis=0, return_inverse=True)
        for k, pattern in enumerate(patterns):       # censor on R, then GTH (reference)
            sub = rows[which.reshape(-1) == k]
            pi = _solve(block, pattern)                                 # (D, |R|)
            w = pi if inv is None else pi * inv[:, :length][:, pattern]
            out[:, sub] = (w @ prec[sub][:, :length][:, pattern].T) / w.sum(axis=1)[:, None]
    return out


def _restricted(p: np.ndarray, length: int) -> np.ndarray:
    """The jump chain of a list of ``length`` ranks: rows renormalised over the list."""
    block = p[:, :length, :length]
    mass = block.sum(axis=-1)
    if np.any(mass <= 0):
        d, i = np.argwhere(mass <= 0)[0]
        raise ParameterError(f"jump draw {int(d)}: rank {int(i) + 1} never jumps to another of "
                             f"ranks 1..{length}, so the chain of a list of {length} ranks "
                             f"is not defined")
    return block / mass[..., None]


def _solve(block: np.ndarray, watched: np.ndarray | None = None) -> np.ndarray:
    """``pi`` of every draw's chain (GTH), of the chain censored on ``watched`` if given."""
    try:
        if watched is not None:
            block = chains.censored_chain(block, watched, check=False)
        return chains.invariant_distribution(block, check=False)
    except ChainError as exc:
        raise ParameterError(f"learned jump rows: {exc.message}") from None
