r"""INST and the C/W/L quantities: expected rate of gain, total gain and depth.

The C/W/L framework (Moffat, Bailey, Scholer & Thomas, TOIS 2017; Azzopardi, Thomas &
Moffat, SIGIR 2019, ``cwl_eval``) describes a user who reads rank 1, and after rank ``i``
continues to rank ``i + 1`` with probability ``C(i)``.  With ``reach(i) = prod_{j<i} C(j)``
the probability of reading rank ``i``:

* ``W(i) = reach(i) / sum_j reach(j)``, ``L(i) = reach(i) (1 - C(i))``;
* ``ED = sum_i reach(i)``: the expected depth (``cwl_eval``'s ED, "expected items");
* ``ETU = sum_i L(i) G_i = sum_i reach(i) g_i``: the expected total gain, ``G_i`` the
  gain collected up to rank ``i``;
* ``EU = sum_i W(i) g_i = ETU / ED``: the expected rate of gain, the measure's score.

INST (Moffat, Bailey, Scholer & Thomas, ADCS 2015; Bailey et al., SIGIR 2015) adapts to the
gain collected: with target ``T`` and ``T_i = T - G_i``,
``C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2``.  Gains lie in [0, 1]:
``g = (clip(grade, min_rel, max_rel) - min_rel) / (max_rel - min_rel)`` (ir_measures'
mapping; ``max_rel`` defaults to the topic's top grade).  ``T`` is at least 0.5, so that
``i + T + T_i - 1 >= 2T - 1 >= 0`` and ``C`` is a probability.

The continuation depends on the gain collected so far, so the user is a chain over the
states (rank, gain collected).  On a given ranking the gain collected at rank ``i`` is
``G_i``, one state per rank, so that chain is the forward walk over the ranks with
``p_i = C(i)`` (``G_i`` read off the list, like the dynamic browsing models): its
transient block is a :class:`~bayeschain.chains.Tridiagonal` and ``reach`` is its vector of
expected visits (:func:`~bayeschain.chains.expected_visits`), ``ETU = reach . g`` and
``ED = sum reach``.

Depth: ``INST@k`` reads a ranking of ``k`` ranks (the list cut, or padded with non-relevant
documents), the user stopping at rank ``k`` at the latest: ``cwl_eval``'s ``max_n = k``
(its default, and ir_measures', is 1000).  Without a cut-off the ranking goes on forever
with non-relevant documents, the C/W/L definition.  Beyond the list's last rank ``D`` no
gain is collected, ``a = 2T - G_D`` is constant and ``C(m) = ((m + a - 1) / (m + a))^2``
telescopes: ``reach(m) = reach(D) ((D + a - 1) / (m - 1 + a))^2``, so the depth beyond
``D`` up to ``k`` is ``reach(D) (D + a - 1)^2 (psi1(D + a) - psi1(k + a))`` (``psi1`` the
trigamma function, ``psi1(inf) = 0``) and no padding is built.

``cwl_eval`` 1.0.12's ETU sums ``L(i) G_i`` with ``L(n) = reach(n) (1 - C(n))`` at its last
rank ``n``, leaving out the users it stops there: it is this module's ETU at depth ``n``
minus ``reach(n) C(n) G_n`` (its EU and ED are the ones here).
"""

from __future__ import annotations

import numpy as np

from .. import chains
from ..browsing.base import walk_from_moves
from ..errors import ParameterError
from .classical import ranked, top

#: C/W/L quantities a measure string can report
QUANTITIES = ("EU", "ETU", "ED")


def inst_gains(grades, min_rel: float = 0, max_rel=None) -> np.ndarray:
    """Gains in [0, 1]: ``(clip(grade, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``.

    ``max_rel`` is a number, one per list (``(...)``), or None: each list's top grade (at
    least ``min_rel + 1``)."""
    g = ranked(grades, "grades")
    if max_rel is None:
        max_rel = np.maximum(g.max(axis=-1), min_rel + 1)
    top_rel = np.asarray(max_rel, dtype=float)
    if np.any(top_rel <= min_rel):
        raise ParameterError(f"max_rel must exceed min_rel={min_rel}; got {top_rel}")
    top_rel = top_rel[..., None] if top_rel.ndim else top_rel
    return (np.clip(g, min_rel, top_rel) - min_rel) / (top_rel - min_rel)


def inst_continuation(gains, T: float = 1.0) -> np.ndarray:
    """INST's ``C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2``, ``T_i = T - G_i``, per rank."""
    g = ranked(gains, "gains")
    if not T >= 0.5:
        raise ParameterError(f"INST's target T must be at least 0.5; got {T}")
    with np.errstate(over="ignore"):           # T near the largest float: 2T is inf
        x = np.arange(1, g.shape[-1] + 1) + 2.0 * T - np.cumsum(g, axis=-1)
    with np.errstate(invalid="ignore"):
        # the limit 1 where x is infinite (a target no list can reach: read to the end)
        return np.where(np.isinf(x), 1.0, ((x - 1.0) / x) ** 2)


def inst_chain(gains, T: float = 1.0) -> chains.Tridiagonal:
    """The INST user on a ranking of ``D`` ranks: forward with ``C(i)``, stopping at rank
    ``D`` at the latest."""
    forward = inst_continuation(gains, T)
    return walk_from_moves(forward, np.zeros_like(forward))


def _trigamma(x: np.ndarray) -> np.ndarray:
    from scipy.special import polygamma

    return polygamma(1, x)


def cwl_quantities(gains, continuation_chain: chains.Tridiagonal, *, T: float,
                   depth: int | None = None) -> dict[str, np.ndarray]:
    """EU, ETU and ED of the C/W/L user whose chain over the ``D`` ranks of ``gains`` is
    ``continuation_chain``, read to ``depth`` ranks (None: forever) with INST's
    continuation beyond rank ``D`` (no gain there).  ``depth`` below ``D`` is refused: cut
    the gains first."""
    g = ranked(gains, "gains")
    d = g.shape[-1]
    if depth is not None and depth < d:
        raise ParameterError(f"depth {depth} is below the {d} ranks given; cut them first")
    reach = chains.expected_visits(continuation_chain)
    etu = np.sum(reach * g, axis=-1)
    ed = np.sum(reach, axis=-1)
    if depth is None or depth > d:
        with np.errstate(over="ignore"):
            a = 2.0 * T - g.sum(axis=-1)
        ed = ed + _depth_beyond(reach[..., -1], d + a, None if depth is None else depth - d)
    return {"EU": etu / ed, "ETU": etu, "ED": ed}


def _depth_beyond(reach_last: np.ndarray, x: np.ndarray, more: int | None) -> np.ndarray:
    """Expected ranks read past the list's end, ``reach_D (x - 1)^2 (psi1(x) - psi1(x +
    more))`` with ``x = D + 2T - G_D`` (``more`` None: forever, the second trigamma 0).
    Beyond x = 1e8 (a target T far above any gain) the trigammas' difference loses its
    digits, and the asymptotic forms are used: ``(x - 1)^2 psi1(x) ~ (x - 1)^2 / x (1 +
    1/(2x))`` and ``(x - 1)^2 (psi1(x) - psi1(x + m)) ~ m (x - 1)^2 / (x (x + m))``, whose
    limits as T grows without bound are infinity (reading forever) and ``m`` (reading
    to the cut-off)."""
    small = x <= 1e8
    xs = np.where(small, x, 2.0)
    last = reach_last * (xs - 1.0) ** 2
    inner = _trigamma(xs)
    beyond = inner if more is None else inner - _trigamma(more + xs)
    near = last * beyond
    with np.errstate(over="ignore", invalid="ignore"):
        ratio = np.where(np.isinf(x), 1.0, (x - 1.0) / x)
        if more is None:
            far = reach_last * (x - 1.0) * ratio * (1.0 + 0.5 / x)
        else:
            far = reach_last * more * ratio * np.where(np.isinf(x), 1.0, (x - 1.0) / (x + more))
    return np.where(reach_last > 0, np.where(small, near, far), 0.0)


def inst(grades, T: float = 1.0, k: int | None = None, *, min_rel: float = 0, max_rel=None,
         value: str = "EU") -> np.ndarray:
    """INST's expected rate of gain (``value='EU'``), expected total gain (``'ETU'``) or
    expected depth (``'ED'``) on each ranked list, read to depth ``k`` (None: forever)."""
    if value not in QUANTITIES:
        raise ParameterError(f"value must be one of {', '.join(QUANTITIES)}; got {value!r}")
    gains = top(inst_gains(grades, min_rel, max_rel), k)
    return cwl_quantities(gains, inst_chain(gains, T), T=T, depth=k)[value]
