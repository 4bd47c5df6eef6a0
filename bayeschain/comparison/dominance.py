r"""Stochastic dominance of the laws of P@H under the posterior, with all four outcomes.

Under one draw of the user model, the P@H of a list is a random variable over users: its
law is exact (the joint law of ``(T(H), H)``, :func:`bayeschain.chains.ratio_laws`, for
every draw at once).  For runs ``A`` and ``B`` on a topic, with CDFs ``F_A`` and ``F_B`` on
the union of their supports (order 3 of Ferrante & Ferro, ICTIR 2020, Section 5.1), each
draw falls in exactly one of

* **A dominates B**: ``F_A <= F_B`` everywhere and ``F_A < F_B`` somewhere (every user
  percentile of A is at least B's);
* **B dominates A**: the reverse;
* **equal laws**: ``F_A = F_B`` everywhere (e.g. the same list);
* **crossing laws**: neither (each run is ahead for some users),

with ties judged to ``tol`` (the laws are exact up to the mass ``<= 1e-10`` that the
recursion leaves beyond its last step).  The four posterior probabilities sum to 1; their
Monte-Carlo standard error is ``sqrt(p (1 - p) / ESS)`` with the effective sample size of
the outcome's indicator over the chains (ArviZ; the number of draws for a random subset).

**User-to-user variability** (no peer reports it): the probability of superiority
``P(X_A > X_B) + P(X_A = X_B) / 2`` of one random user's P@H under A against another
independent user's under B, from the exact laws, per draw.

**System level** (the population of topics given by the collection):

* the law of P@H of a random user on a random topic is the mixture of the topics' laws;
  the posterior probabilities of its four outcomes;
* the posterior distribution of the share of topics on which A dominates B;
* the probability of superiority on a random topic (the mean of the topics').
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ParameterError

#: the four outcomes of a draw, as named in results (columns, fields)
OUTCOMES = ("a_dominates", "b_dominates", "equal", "crossing")
#: how they are printed
LABELS = {"a_dominates": "P(A dom B)", "b_dominates": "P(B dom A)", "equal": "P(equal laws)",
          "crossing": "P(crossing)", "superiority": "P(X_A>X_B)+P(=)/2"}
#: the probability of superiority of one user under A over one under B (ties half)
SUPERIORITY = "superiority"


@dataclass(frozen=True)
class SystemDominance:
    """The system-level results of :func:`dominance_probability`: the posterior
    probabilities of the four outcomes for the law of a random user on a random topic
    (with their Monte-Carlo standard errors, by outcome), the share of topics on which A
    dominates and the probability of superiority on a random topic (posterior means and
    95% intervals)."""

    a_dominates: float
    b_dominates: float
    equal: float
    crossing: float
    standard_errors: dict[str, float]
    share_a_dominates: float
    share_a_dominates_interval: tuple[float, float]
    superiority: float
    superiority_interval: tuple[float, float]

    def outcome(self, name: str) -> float:
        """The probability of one of :data:`OUTCOMES`."""
        return float(getattr(self, name))


@dataclass(frozen=True)
class DominanceComparison:
    """Result of :func:`dominance_probability` (see the module docstring).

    ``topics``: one row per topic with the four outcome probabilities (columns
    :data:`OUTCOMES`), their Monte-Carlo standard errors (``se_<outcome>``) and the
    posterior mean of the probability of superiority (``superiority``).  ``system``: the
    same for the topic mixture (:class:`SystemDominance`).
    """

    a: str
    b: str
    measure: str
    draws: int
    topics: pd.DataFrame
    system: SystemDominance

    def summary(self) -> str:
        s = self.system
        lo, hi = s.share_a_dominates_interval
        sl, sh = s.superiority_interval
        return (f"{self.a} vs {self.b}, law of {self.measure} over users, {self.draws:,} "
                f"posterior draws, {len(self.topics)} topics\n"
                f"  random user on a random topic: P(A dom B) {s.a_dominates:.3f}, "
                f"P(B dom A) {s.b_dominates:.3f}, P(equal) {s.equal:.3f}, "
                f"P(crossing) {s.crossing:.3f}\n"
                f"  share of topics on which A dominates: {s.share_a_dominates:.3f} "
                f"[{lo:.3f}, {hi:.3f}]\n"
                f"  one random user under A beats one under B (ties half): "
                f"{s.superiority:.3f} [{sl:.3f}, {sh:.3f}]")


def dominance_probability(runs, qrels, measure: str, posterior, a: str, b: str, *,
                          level: int = 1, max_draws: int | None = None, seed=None,
                          tol: float = 1e-9, law_tol: float = 1e-10,
                          draw_block: int = 500) -> DominanceComparison:
    """Posterior probabilities that run ``a``'s law of P@H dominates ``b``'s, per topic and
    for the topic mixture (see the module docstring).

    ``measure`` is ``PatH(model='sfbm' | 'rwbm')@k`` (the law is over the first ``k``
    ranks; integer gains).  All posterior draws by default; ``max_draws`` takes a random
    subset (the standard errors then count them as independent).  ``law_tol``: the
    probability mass each exact law may leave beyond its last step (the recursion runs
    until ``P(H > n) <= law_tol``; its cost grows with ``log(1 / law_tol)`` squared for
    walks that revisit ranks); ``tol``: CDF differences below it count as equal.
    """
    from ..browsing.base import extend_ranks
    from ..chains.recursion import ratio_laws
    from ..io.lists import ranked_lists
    from ..measures import parse_measure
    from ..measures.path import apply_gains
    from ..posterior.draws import draw_indices
    from ..posterior.walk import walk_parameters

    m = parse_measure(measure)
    kw = m.kwargs
    model = kw.get("model", "sfbm")
    if m.name != "PatH" or model not in ("sfbm", "rwbm") or m.cutoff is None:
        raise ParameterError("dominance_probability takes PatH(model='sfbm' or 'rwbm')@k")
    if a == b:
        raise ParameterError("name two different runs")
    for name in (a, b):
        if name not in runs:
            raise ParameterError(f"run {name!r} is not among {sorted(runs)}")
    lists = ranked_lists({a: runs[a], b: runs[b]}, qrels, level=level)
    p, q = walk_parameters(posterior).arrays()
    if model == "sfbm" and np.any(q > 0):
        raise ParameterError("the fitted walk moves backward: use PatH(model='rwbm')")
    n_total = p.shape[0]
    idx = draw_indices(n_total, max_draws, seed)
    gains = {}
    for name in (a, b):
        for i in np.flatnonzero(lists.run_ids == name):
            length = max(min(int(lists.lengths[i]), m.cutoff), 1)
            g = apply_gains(lists.relevance[i, :length], kw.get("gains"))
            if np.any(g != np.round(g)):
                raise ParameterError("the exact law of P@H needs integer gains")
            gains[name, str(lists.query_ids[i])] = g.astype(np.int64)
    topics = [t for t in pd.unique(lists.query_ids.astype(str))
              if (a, t) in gains and (b, t) in gains]
    if not topics:
        raise ParameterError(f"runs {a!r} and {b!r} share no topic")

    def walk(length, rows):
        up = extend_ranks(p[rows], length).copy()
        lo = extend_ranks(q[rows], length).copy() if model == "rwbm" else np.zeros_like(up)
        up[:, -1] = 0.0
        lo[:, 0] = 0.0
        return up, lo

    n_topics = len(topics)
    ind = {o: np.zeros((n_topics, idx.size)) for o in OUTCOMES}
    sup = np.zeros((n_topics, idx.size))
    mixture = {o: np.zeros(idx.size) for o in OUTCOMES}
    for lo_d in range(0, idx.size, draw_block):
        rows = idx[lo_d:lo_d + draw_block]
        laws = []
        for k, t in enumerate(topics):
            ga, gb = gains[a, t], gains[b, t]
            if ga.size == gb.size:
                vals, pmf = ratio_laws(*walk(ga.size, rows), np.stack([ga, gb]), tol=law_tol)
                pa, pb = pmf[0], pmf[1]
            else:
                va, la = ratio_laws(*walk(ga.size, rows), ga[None], tol=law_tol)
                vb, lb = ratio_laws(*walk(gb.size, rows), gb[None], tol=law_tol)
                vals = np.union1d(va, vb)
                pa = _on(vals, va, la[0])
                pb = _on(vals, vb, lb[0])
            out = _outcomes(pa, pb, tol)
            for o in OUTCOMES:
                ind[o][k, lo_d:lo_d + rows.size] = out[o]
            sup[k, lo_d:lo_d + rows.size] = _superiority(pa, pb)
            laws.append((vals, pa, pb))
        acc_a, acc_b = _mixture(laws)
        out = _outcomes(acc_a / n_topics, acc_b / n_topics, tol)
        for o in OUTCOMES:
            mixture[o][lo_d:lo_d + rows.size] = out[o]
    chains = posterior.posterior.sizes["chain"] if max_draws is None else None
    table = pd.DataFrame({"topic": topics})
    for o in OUTCOMES:
        table[o] = ind[o].mean(axis=1)
    for o in OUTCOMES:
        table["se_" + o] = [_mc_se(ind[o][k], chains) for k in range(n_topics)]
    table[SUPERIORITY] = sup.mean(axis=1)
    share = ind["a_dominates"].mean(axis=0)
    superiority = sup.mean(axis=0)
    lo_share, hi_share = np.quantile(share, [0.025, 0.975])
    lo_sup, hi_sup = np.quantile(superiority, [0.025, 0.975])
    system = SystemDominance(
        **{o: float(mixture[o].mean()) for o in OUTCOMES},
        standard_errors={o: _mc_se(mixture[o], chains) for o in OUTCOMES},
        share_a_dominates=float(share.mean()),
        share_a_dominates_interval=(float(lo_share), float(hi_share)),
        superiority=float(superiority.mean()),
        superiority_interval=(float(lo_sup), float(hi_sup)))
    return DominanceComparison(a, b, repr(m), int(idx.size), table, system)


def _on(grid: np.ndarray, values: np.ndarray, pmf: np.ndarray) -> np.ndarray:
    """``pmf (D, K_v)`` on ``values`` spread onto the finer sorted ``grid``."""
    out = np.zeros(pmf.shape[:-1] + (grid.size,))
    out[..., np.searchsorted(grid, values)] = pmf
    return out


def _mixture(laws) -> tuple[np.ndarray, np.ndarray]:
    """Sums of the topics' pmfs ``(vals, pa, pb)`` on the union of their supports (added
    in topic order)."""
    grid = np.unique(np.concatenate([vals for vals, _, _ in laws]))
    acc_a = np.zeros(laws[0][1].shape[:-1] + (grid.size,))
    acc_b = np.zeros_like(acc_a)
    for vals, pa, pb in laws:
        at = np.searchsorted(grid, vals)
        acc_a[..., at] += pa
        acc_b[..., at] += pb
    return acc_a, acc_b


def _outcomes(pa: np.ndarray, pb: np.ndarray, tol: float) -> dict[str, np.ndarray]:
    """The four outcomes per draw from pmfs ``(D, K)`` on one sorted support."""
    diff = np.cumsum(pa, axis=-1) - np.cumsum(pb, axis=-1)        # F_A - F_B
    below = np.all(diff <= tol, axis=-1)
    above = np.all(diff >= -tol, axis=-1)
    equal = below & above
    a_dom = below & ~equal
    b_dom = above & ~equal
    return {"a_dominates": a_dom.astype(float), "b_dominates": b_dom.astype(float),
            "equal": equal.astype(float), "crossing": (~(below | above)).astype(float)}


def _superiority(pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """``P(X_A > X_B) + P(X_A = X_B) / 2`` for independent ``X_A ~ pa``, ``X_B ~ pb``."""
    fb_below = np.cumsum(pb, axis=-1) - pb                         # P(X_B < v_k)
    return np.sum(pa * (fb_below + 0.5 * pb), axis=-1) / (pa.sum(-1) * pb.sum(-1))


def _mc_se(indicator: np.ndarray, chains: int | None) -> float:
    """Monte-Carlo standard error of the mean of a 0/1 indicator over draws."""
    p = float(indicator.mean())
    if p in (0.0, 1.0):
        return 0.0
    n = indicator.size
    if chains and chains > 1 and n % chains == 0:
        from ..posterior.diagnostics import bulk_ess

        ess = float(bulk_ess(indicator.reshape(chains, -1, 1))[0])
        n = max(min(ess, n), 1.0) if np.isfinite(ess) else n
    return float(np.sqrt(p * (1 - p) / n))
