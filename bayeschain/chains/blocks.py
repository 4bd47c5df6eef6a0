"""Transient blocks of absorbing chains: validation and the dense/tridiagonal dispatch.

Every solver in :mod:`bayeschain.chains` takes the transient block ``P~`` of an absorbing
chain (the transitions between rank states; the missing mass of each row is the
probability of stopping) either as a dense array of shape ``(..., N, N)`` or as a
:class:`~bayeschain.chains.tridiagonal.Tridiagonal`.  :func:`as_block` validates it and
picks the solver: a dense array whose entries outside the three central bands are all zero
is converted to the tridiagonal path automatically.

Inputs are checked with the helpers of :mod:`bayeschain.chains.checks`.
"""

from __future__ import annotations

import numpy as np

from ..errors import ChainError
from . import tridiagonal as tri
from .checks import check_memory, float_array, plain
from .tridiagonal import Tridiagonal

#: Tolerance on row sums above one and on negative entries (floating-point rounding).
ROW_SUM_TOL = 1e-9
#: A state whose stop probability is below this (rounding noise of ``1 - row sum``) does not
#: count as exiting when absorption is checked.
EXIT_EPS = 1e-14
#: Dense solves form ``I - P~`` for this many bytes of matrices at a time.
_CHUNK_BYTES = 1 << 22
_SINGULAR = ("I - P~ is singular: the chain never stops from some state (a closed class; "
             "run with check=True to have it named)")


class DenseBlock:
    """A general ``(..., N, N)`` transient block, solved with LAPACK (``np.linalg.solve``)."""

    def __init__(self, matrix: np.ndarray):
        self.matrix = matrix

    @property
    def n_states(self) -> int:
        return self.matrix.shape[-1]

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.matrix.shape[:-2]

    def to_dense(self) -> np.ndarray:
        return self.matrix

    def row_sums(self) -> np.ndarray:
        return self.matrix.sum(axis=-1)

    def matvec(self, x: np.ndarray) -> np.ndarray:
        return np.einsum("...ij,...j->...i", self.matrix, x)

    def rmatvec(self, x: np.ndarray) -> np.ndarray:
        return np.einsum("...i,...ij->...j", x, self.matrix)

    def transpose(self) -> DenseBlock:
        return DenseBlock(np.swapaxes(self.matrix, -1, -2))

    def _identity_minus(self) -> np.ndarray:
        return np.eye(self.n_states) - self.matrix

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """Solve ``(I - P~) x = rhs`` batch-chunk by batch-chunk.

        LAPACK solves one matrix at a time either way; forming ``I - P~`` for a few dozen
        matrices at once keeps them in cache and is about 3x faster than one call on the
        whole batch (see ``benchmarks/bench_solvers.py``).
        """
        rhs = np.asarray(rhs, dtype=float)
        n = self.n_states
        shape = np.broadcast_shapes(self.batch_shape, rhs.shape[:-1])
        mats = np.broadcast_to(self.matrix, shape + (n, n)).reshape(-1, n, n)
        b = np.broadcast_to(rhs, shape + (n,)).reshape(-1, n)
        out = np.empty(b.shape)
        eye = np.eye(n)
        step = max(1, _CHUNK_BYTES // (8 * n * n))
        try:
            for lo in range(0, b.shape[0], step):
                hi = lo + step
                out[lo:hi] = np.linalg.solve(eye - mats[lo:hi], b[lo:hi, :, None])[..., 0]
        except np.linalg.LinAlgError:
            raise ChainError(_SINGULAR) from None
        return out.reshape(shape + (n,))

    def inverse(self) -> np.ndarray:
        check_memory(self.matrix.shape, "the fundamental matrix")
        try:
            return np.linalg.inv(self._identity_minus())
        except np.linalg.LinAlgError:
            raise ChainError(_SINGULAR) from None

    def inverse_diagonal(self) -> np.ndarray:
        return np.diagonal(self.inverse(), axis1=-2, axis2=-1)

    def can_reach_exit(self, exit_prob: np.ndarray, eps: float) -> np.ndarray:
        """States from which absorption has positive probability (backward reachability)."""
        edges = (self.matrix > 0).astype(float)
        reach = exit_prob > eps
        for _ in range(self.n_states):
            new = reach | (np.einsum("...ij,...j->...i", edges, reach.astype(float)) > 0)
            if np.array_equal(new, reach):
                break
            reach = new
        return reach


class TridiagonalBlock:
    """Adapter giving :class:`Tridiagonal` the same solver interface as :class:`DenseBlock`."""

    def __init__(self, bands: Tridiagonal):
        self.bands = bands

    @property
    def n_states(self) -> int:
        return self.bands.n_states

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.bands.batch_shape

    def to_dense(self) -> np.ndarray:
        return self.bands.to_dense()

    def row_sums(self) -> np.ndarray:
        return self.bands.row_sums()

    def matvec(self, x: np.ndarray) -> np.ndarray:
        return self.bands.matvec(np.asarray(x, dtype=float))

    def rmatvec(self, x: np.ndarray) -> np.ndarray:
        return self.bands.rmatvec(np.asarray(x, dtype=float))

    def transpose(self) -> TridiagonalBlock:
        return TridiagonalBlock(self.bands.transpose())

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        return tri.solve_identity_minus(self.bands, rhs)

    def inverse(self) -> np.ndarray:
        n = self.n_states
        check_memory(self.batch_shape + (n, n), "the fundamental matrix")
        eye = np.eye(n)
        # Column j of the inverse solves A x = e_j: put the columns on a batch axis.
        cols = tri.solve_identity_minus(
            Tridiagonal(*(b[..., None, :] for b in (self.bands.lower, self.bands.diag,
                                                   self.bands.upper))), eye)
        return np.swapaxes(cols, -1, -2)

    def inverse_diagonal(self) -> np.ndarray:
        return tri.inverse_diagonal(self.bands)

    def can_reach_exit(self, exit_prob: np.ndarray, eps: float) -> np.ndarray:
        return tri.can_reach_exit(self.bands, exit_prob, eps)


Block = DenseBlock | TridiagonalBlock


def _is_tridiagonal(m: np.ndarray) -> bool:
    """True when every entry outside the three central bands is zero (any batch element).

    The first batch element is checked first, so a general dense batch is recognised
    after looking at one matrix.
    """
    n = m.shape[-1]
    if n < 3:
        return True
    flat = m.reshape(-1, n, n)
    off = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) > 1
    if np.any(flat[0][off]):
        return False
    return not any(np.any(np.diagonal(flat, k, axis1=-2, axis2=-1))
                   for k in range(-(n - 1), n) if abs(k) > 1)


def as_block(transient, *, check: bool = True) -> Block:
    """Validate a transient block and choose its solver.

    Parameters
    ----------
    transient : array (..., N, N) or Tridiagonal
        Transition probabilities between transient states; ``1 - row sum`` is the
        probability of being absorbed (stopping) from each state.
    check : bool
        Validate entries and absorption (default).  Internal callers that built the block
        from validated parameters may skip it.

    Raises
    ------
    ChainError
        If the block is not square, has NaN/inf or negative entries, a row summing above 1,
        or a state from which absorption is impossible (infinite expected stopping time).
    """
    if isinstance(transient, TridiagonalBlock | DenseBlock):
        return transient
    if isinstance(transient, Tridiagonal):
        block: Block = TridiagonalBlock(transient)
        if not check:
            return block
        entries = np.stack([transient.lower, transient.diag, transient.upper])
    else:
        m = float_array(transient, "transient block", finite=False)
        if m.ndim < 2 or m.shape[-1] != m.shape[-2]:
            raise ChainError(
                f"transient block must have shape (..., N, N) with square state axes; "
                f"got shape {m.shape}")
        if m.shape[-1] == 0:
            raise ChainError("transient block has no states (N = 0)")
        entries = m
        block = TridiagonalBlock(Tridiagonal.from_dense(m)) if _is_tridiagonal(m) else \
            DenseBlock(m)
    if check:
        _validate(block, entries)
    return block


def _validate(block: Block, entries: np.ndarray) -> None:
    if not np.all(np.isfinite(entries)):
        raise ChainError("transition probabilities contain NaN or infinite values")
    if np.any(entries < -ROW_SUM_TOL):
        raise ChainError(
            f"transition probabilities must be >= 0; smallest entry is {entries.min():.6g}")
    if isinstance(block, TridiagonalBlock):
        b = block.bands
        if np.any(b.lower[..., 0] != 0) or np.any(b.upper[..., -1] != 0):
            raise ChainError("tridiagonal block: lower[..., 0] and upper[..., N-1] must be 0 "
                             "(there is no state before the first or after the last)")
    sums = block.row_sums()
    if np.any(sums > 1 + ROW_SUM_TOL):
        idx = np.unravel_index(np.argmax(sums), sums.shape)
        raise ChainError(
            f"row {idx[-1]} of the transient block sums to {sums[idx]:.12g} > 1 "
            f"(batch index {idx[:-1]}); rows must be sub-stochastic")
    exit_prob = 1.0 - sums
    reach = block.can_reach_exit(exit_prob, EXIT_EPS)
    if not np.all(reach):
        bad = np.argwhere(~reach)[0]
        trapped = np.flatnonzero(~reach[tuple(bad[:-1])])
        raise ChainError(
            f"absorption is impossible from states {trapped.tolist()} (batch index "
            f"{tuple(bad[:-1].tolist())}): they form a closed class, so the expected stopping "
            f"time is infinite; give some state in it a positive stopping probability")


def start_vector(start, n_states: int, batch: tuple | None = None) -> np.ndarray:
    """A start distribution from a 0-based state index or a probability vector ``(..., N)``
    (whose leading axes, if any, must broadcast against ``batch``)."""
    if isinstance(start, int | np.integer) and not isinstance(start, bool | np.bool_):
        i = int(start)
        if not 0 <= i < n_states:
            raise ChainError(f"start state {i} is outside 0..{n_states - 1}")
        e = np.zeros(n_states)
        e[i] = 1.0
        return e
    v = float_array(start, "start (a 0-based state index or a distribution over the states)",
                    error=ChainError)
    if v.ndim == 0:
        raise ChainError(f"start must be a 0-based state index (an integer) or a distribution "
                         f"over the {n_states} states; got {plain(start)}")
    if v.shape[-1] != n_states:
        raise ChainError(f"start distribution has {v.shape[-1]} states, the chain has {n_states}")
    if batch is not None:
        float_array(v, "start distribution", last=n_states, batch=batch)
    if np.any(v < 0) or np.any(np.abs(v.sum(-1) - 1) > 1e-9):
        raise ChainError("start distribution must be non-negative and sum to 1")
    return v


def state_values(values, name: str, block, **bounds) -> np.ndarray:
    """Per-state values (rewards, ...) of a chain: a finite float array ``(..., N)`` whose
    leading axes broadcast against the block's batch axes, checked against the memory
    limit for the broadcast result."""
    arr = float_array(values, name, last=block.n_states, batch=block.batch_shape, **bounds)
    shape = np.broadcast_shapes(arr.shape[:-1], block.batch_shape) + (block.n_states,)
    check_memory(shape, f"{name} over the chain's batch")
    return arr
