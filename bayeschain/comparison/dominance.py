r"""Stochastic dominance of the laws of P@H under the posterior.

:func:`dominance_probability` gives, per topic, the posterior probability that run A's law
of P@H stochastically dominates run B's (order 3 of Ferrante & Ferro, ICTIR 2020): the
share of posterior draws under which A's CDF lies below B's everywhere.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ParameterError


def dominance_probability(runs, qrels, measure: str, posterior, a: str, b: str, *,
                          max_draws: int | None = 200, seed=None) -> pd.Series:
    """Per topic, the share of posterior draws under which ``a`` stochastically dominates
    ``b`` (P@H law of ``a`` above that of ``b``); the mean over topics is ``"all"``.

    ``measure`` must be ``PatH(model='sfbm' | 'rwbm')`` with a cut-off (the exact law costs
    one joint-distribution recursion per list and draw).  ``max_draws`` subsamples the
    posterior draws (None: all).
    """
    from ..browsing.base import extend_ranks
    from ..inference.parameters import draw_indices, walk_parameters
    from ..io.lists import ranked_lists
    from ..measures import parse_measure, path_distribution, stochastic_dominance
    from ..measures.path import apply_gains

    m = parse_measure(measure)
    kw = m.kwargs
    if m.name != "PatH" or kw.get("model", "sfbm") not in ("sfbm", "rwbm") or m.cutoff is None:
        raise ParameterError("dominance_probability takes PatH(model='sfbm' or 'rwbm')@k")
    lists = ranked_lists({a: runs[a], b: runs[b]}, qrels)
    p, q = walk_parameters(posterior)
    idx = draw_indices(p.shape[0], max_draws, seed)
    out = {}
    for topic in pd.unique(lists.query_ids):
        rows = {}
        for name in (a, b):
            hit = np.flatnonzero((lists.run_ids == name) & (lists.query_ids == topic))
            if hit.size:
                length = min(int(lists.lengths[hit[0]]), m.cutoff)
                rows[name] = apply_gains(lists.relevance[hit[0], :max(length, 1)])
        if len(rows) < 2:
            continue
        wins = 0
        for d in idx:
            laws = []
            for name in (a, b):
                rel = rows[name]
                params = {"p": extend_ranks(p[d:d + 1], rel.size)[0]}
                if kw.get("model") == "rwbm":
                    params["q"] = extend_ranks(q[d:d + 1], rel.size)[0]
                laws.append(path_distribution(rel, kw.get("model", "sfbm"), **params))
            wins += stochastic_dominance(*laws).a_dominates
        out[str(topic)] = wins / idx.size
    series = pd.Series(out, name=f"P({a} dominates {b})")
    series["all"] = float(series.mean()) if len(series) else float("nan")
    return series
