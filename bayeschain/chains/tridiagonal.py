"""Tridiagonal transient blocks: forward/backward random walks solved in O(N).

A random-walk browsing model moves only between adjacent ranks, so its transient block
``P~`` is tridiagonal.  :class:`Tridiagonal` stores the three bands (with any leading batch
axes) and solves ``(I - P~) x = b`` with the Thomas algorithm, vectorised over the batch
axes: O(N) work per chain and no dense inverse.

``I - P~`` is a (weakly) row-diagonally-dominant M-matrix whenever absorption is certain,
so the Thomas algorithm needs no pivoting and its pivots stay positive (Higham, *Accuracy
and Stability of Numerical Algorithms*, 2nd ed., section 9.6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ChainError
from .checks import float_array


@dataclass(frozen=True)
class Tridiagonal:
    """Transient block with non-zero entries only on the three central bands.

    Parameters
    ----------
    lower : array (..., N)
        ``lower[..., i] = P~[i, i - 1]`` (backward probability from state ``i``);
        ``lower[..., 0]`` must be 0.
    diag : array (..., N)
        ``diag[..., i] = P~[i, i]`` (staying probability, usually 0).
    upper : array (..., N)
        ``upper[..., i] = P~[i, i + 1]`` (forward probability from state ``i``);
        ``upper[..., N - 1]`` must be 0.

    All three bands have the state axis last and the same length N, so that
    ``upper[..., i]`` and ``lower[..., i]`` are the forward and backward probabilities of
    rank ``i + 1`` in the paper's notation (``p_i`` and ``q_i``).  Leading axes broadcast.
    """

    lower: np.ndarray
    diag: np.ndarray
    upper: np.ndarray

    def __post_init__(self) -> None:
        bands = [float_array(a, f"{name} band", finite=False)
                 for name, a in zip(("lower", "diag", "upper"),
                                    (self.lower, self.diag, self.upper), strict=True)]
        if any(b.ndim == 0 for b in bands):
            raise ChainError("the bands of a Tridiagonal block need a state axis (arrays "
                             f"(..., N)); got shapes {[b.shape for b in bands]}")
        try:
            lower, diag, upper = np.broadcast_arrays(*bands)
        except ValueError:
            raise ChainError(f"the bands of a Tridiagonal block must have the same number of "
                             f"states and broadcasting batch axes; got shapes "
                             f"{[b.shape for b in bands]}") from None
        if lower.shape[-1] == 0:
            raise ChainError("transient block has no states (N = 0)")
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "diag", diag)
        object.__setattr__(self, "upper", upper)

    @classmethod
    def from_dense(cls, matrix: np.ndarray) -> Tridiagonal:
        """Take the three central bands of a dense ``(..., N, N)`` matrix."""
        m = np.asarray(matrix, dtype=float)
        n = m.shape[-1]
        lower = np.zeros(m.shape[:-1])
        upper = np.zeros(m.shape[:-1])
        idx = np.arange(n - 1)
        lower[..., 1:] = m[..., idx + 1, idx]
        upper[..., :-1] = m[..., idx, idx + 1]
        return cls(lower, np.diagonal(m, axis1=-2, axis2=-1).copy(), upper)

    @property
    def n_states(self) -> int:
        return self.diag.shape[-1]

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self.diag.shape[:-1]

    def to_dense(self) -> np.ndarray:
        """The ``(..., N, N)`` dense matrix (for tests and small chains)."""
        n = self.n_states
        out = np.zeros(self.batch_shape + (n, n))
        idx = np.arange(n)
        out[..., idx, idx] = self.diag
        out[..., idx[1:], idx[:-1]] = self.lower[..., 1:]
        out[..., idx[:-1], idx[1:]] = self.upper[..., :-1]
        return out

    def row_sums(self) -> np.ndarray:
        return self.lower + self.diag + self.upper

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """``P~ x`` along the state axis (last axis of ``x``)."""
        out = self.diag * x
        out[..., 1:] += self.lower[..., 1:] * x[..., :-1]
        out[..., :-1] += self.upper[..., :-1] * x[..., 1:]
        return out

    def rmatvec(self, x: np.ndarray) -> np.ndarray:
        """``x P~`` (row vector times matrix) along the state axis (last axis of ``x``)."""
        out = self.diag * x
        out[..., 1:] += self.upper[..., :-1] * x[..., :-1]
        out[..., :-1] += self.lower[..., 1:] * x[..., 1:]
        return out

    def transpose(self) -> Tridiagonal:
        """The transposed block (bands swapped and shifted)."""
        lower = np.empty_like(self.lower)
        lower[..., 0] = 0.0
        lower[..., 1:] = self.upper[..., :-1]
        if not self.lower.any():                 # forward-only: the transpose has no upper
            upper = np.zeros(self.lower.shape[:-1] + (1,))
            upper = np.broadcast_to(upper, self.lower.shape)
        else:
            upper = np.empty_like(self.upper)
            upper[..., -1] = 0.0
            upper[..., :-1] = self.lower[..., 1:]
        return Tridiagonal(lower, self.diag, upper)


# The Thomas algorithm once, in two forms: scalar sweeps over one system for compiled
# kernels (Numba calls them inside its loops: the walk's page likelihood and its click
# predictions), and the NumPy form batched over leading axes (solve_identity_minus).

def thomas_factor(lower, upper, n, cprime, inv):
    """LU of the tridiagonal ``A`` with unit diagonal, ``lower[i] = A[i, i-1]`` and
    ``upper[i] = A[i, i+1]``, without pivoting (A is diagonally dominant by rows):
    ``A = L U`` with ``L`` lower bidiagonal (pivots ``1 / inv[i]``, subdiagonal ``lower``)
    and ``U`` unit upper bidiagonal (superdiagonal ``cprime``)."""
    inv[0] = 1.0
    cprime[0] = upper[0] if n > 1 else 0.0
    for i in range(1, n):
        v = 1.0 / (1.0 - lower[i] * cprime[i - 1])
        inv[i] = v
        cprime[i] = upper[i] * v if i < n - 1 else 0.0


def thomas_solve(lower, cprime, inv, rhs, out, n):
    """``A out = rhs`` from the factors of :func:`thomas_factor`."""
    out[0] = rhs[0]
    for i in range(1, n):
        out[i] = (rhs[i] - lower[i] * out[i - 1]) * inv[i]
    for i in range(n - 2, -1, -1):
        out[i] -= cprime[i] * out[i + 1]


def solve_identity_minus(block: Tridiagonal, rhs: np.ndarray) -> np.ndarray:
    """Solve ``(I - P~) x = rhs`` by the Thomas algorithm, batched over leading axes.

    ``rhs`` has shape ``(..., N)``; the batch axes of ``block`` and ``rhs`` broadcast.
    The loop runs over the N states; every step is one vector operation over the batch.
    """
    n = block.n_states
    b = np.asarray(rhs, dtype=float)
    if n > 1 and not block.upper.any() and not b[..., 1:].any():
        # lower bidiagonal with its right-hand side at state 0 only (a walk that moves only
        # forward, started at rank 1): x_0 = b_0 / d_0, x_i = x_(i-1) l_i / d_i with
        # d = 1 - diag, one cumulative product instead of the two sweeps
        shape = np.broadcast_shapes(block.lower.shape, b.shape)
        x = np.empty(shape)
        np.divide(block.lower, 1.0 - block.diag, out=x)
        x[..., 0] = b[..., 0] / (1.0 - block.diag[..., 0])
        return np.cumprod(x, axis=-1, out=x)
    # Bands of A = I - P~: a = sub-diagonal (A[i, i-1]), d = diagonal, c = super-diagonal.
    a = -block.lower
    d = 1.0 - block.diag
    c = -block.upper
    shape = np.broadcast_shapes(a.shape, b.shape)
    # State axis first: each step then touches one contiguous row of the batch.
    a, d, c, b = (np.ascontiguousarray(np.moveaxis(np.broadcast_to(v, shape), -1, 0))
                  for v in (a, d, c, b))
    cp = np.empty_like(d)
    dp = np.empty_like(d)
    cp[0] = c[0] / d[0]
    dp[0] = b[0] / d[0]
    for i in range(1, n):
        m = d[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / m
        dp[i] = (b[i] - a[i] * dp[i - 1]) / m
    x = dp  # back substitution in place
    for i in range(n - 2, -1, -1):
        x[i] -= cp[i] * x[i + 1]
    return np.moveaxis(x, 0, -1)


def inverse_diagonal(block: Tridiagonal) -> np.ndarray:
    """Diagonal of ``(I - P~)^-1`` in O(N), without forming the inverse.

    With the forward pivots ``D_i = d_i - a_i c_{i-1} / D_{i-1}`` and the backward pivots
    ``E_i = d_i - c_i a_{i+1} / E_{i+1}`` of ``A = I - P~``,
    ``(A^-1)_ii = 1 / (D_i + E_i - d_i)`` (the twisted factorisation; Meurant, SIAM J.
    Matrix Anal. Appl. 13 (1992), 707-728).
    """
    n = block.n_states
    a = np.moveaxis(-block.lower, -1, 0)
    d = np.moveaxis(1.0 - block.diag, -1, 0)
    c = np.moveaxis(-block.upper, -1, 0)
    fwd = np.empty_like(d)
    bwd = np.empty_like(d)
    fwd[0] = d[0]
    for i in range(1, n):
        fwd[i] = d[i] - a[i] * c[i - 1] / fwd[i - 1]
    bwd[n - 1] = d[n - 1]
    for i in range(n - 2, -1, -1):
        bwd[i] = d[i] - c[i] * a[i + 1] / bwd[i + 1]
    return np.moveaxis(1.0 / (fwd + bwd - d), 0, -1)


def can_reach_exit(block: Tridiagonal, exit_prob: np.ndarray, eps: float) -> np.ndarray:
    """Which states can reach absorption (two O(N) sweeps).

    In a walk between adjacent states, a path from ``i`` to a state ``k < i`` must use every
    backward edge between them (and symmetrically for ``k > i``), so ``i`` reaches an
    exiting state iff the nearest one on its left is reachable through positive backward
    probabilities or the nearest one on its right through positive forward probabilities.
    """
    n = block.n_states
    exits = np.moveaxis(exit_prob > eps, -1, 0)
    back = np.moveaxis(block.lower > 0, -1, 0)
    fwd = np.moveaxis(block.upper > 0, -1, 0)
    left = exits.copy()
    for i in range(1, n):
        left[i] |= back[i] & left[i - 1]
    right = exits.copy()
    for i in range(n - 2, -1, -1):
        right[i] |= fwd[i] & right[i + 1]
    return np.moveaxis(left | right, 0, -1)
