"""Stochastic dominance between two laws of P@H (order 3 of Ferrante & Ferro, ICTIR 2020).

``A`` dominates ``B`` (first order) when ``F_A(x) <= F_B(x)`` for every ``x``: every user
percentile of ``A`` is at least as good.  When the CDFs cross, neither dominates; the
result then says how much (largest gap each way, area where each is ahead, crossings).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..chains.checks import float_array, plain
from ..errors import ParameterError


@dataclass(frozen=True)
class Dominance:
    """Comparison of the CDFs of A and B on the union of their supports.

    Attributes
    ----------
    a_dominates, b_dominates : bool
        ``F_A <= F_B`` everywhere (A stochastically larger), and the reverse.  Both are
        True only when the laws are equal.
    max_gap_a, max_gap_b : float
        ``max_x (F_B - F_A)`` (how far A is ahead at best) and ``max_x (F_A - F_B)``.
    area_a, area_b : float
        ``integral (F_B - F_A)^+ dx`` and ``integral (F_A - F_B)^+ dx``; their difference is
        ``E[A] - E[B]``.
    crossings : int
        Number of sign changes of ``F_A - F_B``.
    """

    a_dominates: bool
    b_dominates: bool
    max_gap_a: float
    max_gap_b: float
    area_a: float
    area_b: float
    crossings: int


def stochastic_dominance(a, b, *, tol: float = 1e-12) -> Dominance:
    """Compare two laws given as objects with ``values`` and ``probabilities``
    (e.g. :class:`~bayeschain.measures.path.PathDistribution`) or ``(values, probs)`` pairs."""
    av, ap = _law(a)
    bv, bp = _law(b)
    grid = np.union1d(av, bv)
    fa = _cdf(av, ap, grid)
    fb = _cdf(bv, bp, grid)
    diff = fa - fb                                  # > 0 where B is ahead
    widths = np.diff(grid)
    area_b = float(np.sum(np.clip(diff[:-1], 0, None) * widths))
    area_a = float(np.sum(np.clip(-diff[:-1], 0, None) * widths))
    signs = np.sign(np.where(np.abs(diff) <= tol, 0.0, diff))
    nz = signs[signs != 0]
    return Dominance(
        a_dominates=bool(np.all(diff <= tol)),
        b_dominates=bool(np.all(diff >= -tol)),
        max_gap_a=float(max(0.0, -diff.min())),
        max_gap_b=float(max(0.0, diff.max())),
        area_a=area_a,
        area_b=area_b,
        crossings=int(np.sum(nz[1:] != nz[:-1])),
    )


def _law(x):
    if hasattr(x, "values") and hasattr(x, "probabilities"):
        v, p = x.values, x.probabilities
    else:
        try:
            v, p = x
        except (TypeError, ValueError):
            raise ParameterError(f"a law is a PathDistribution or a (values, probabilities) "
                                 f"pair; got {plain(x)}") from None
    v = float_array(v, "values of a law", ndim=1, error=ParameterError)
    p = float_array(p, "probabilities of a law", ndim=1, low=0.0, error=ParameterError)
    if v.shape != p.shape or v.size == 0:
        raise ParameterError(f"a law needs as many probabilities as values (at least one); got "
                             f"{v.size} values and {p.size} probabilities")
    return v, p


def _cdf(values, probs, grid):
    order = np.argsort(values)
    cum = np.cumsum(probs[order])
    idx = np.searchsorted(values[order], grid, side="right")
    return np.where(idx > 0, cum[np.maximum(idx - 1, 0)], 0.0)
