"""Evaluate TREC runs against qrels: the engine behind ``bayeschain eval``.

:func:`evaluate_runs` reads nothing itself: it takes parsed runs and qrels (see
:mod:`bayeschain.io`), builds the ranked relevance matrix of every (run, topic) once, and
evaluates each measure on all rows in one vectorised call.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from .io.lists import RankedLists, ranked_lists
from .measures import parse_measure
from .measures.registry import MEASURES


def evaluate_lists(measures: Iterable[str], lists: RankedLists, **context) -> pd.DataFrame:
    """Per-(run, topic) values of each measure, as a long table.

    Returns columns ``run, topic, measure, value`` (``measure`` is the canonical string).
    """
    parsed = [parse_measure(m) for m in measures]
    ctx = {"recall_base": lists.recall_base, "ideal": lists.ideal, "lengths": lists.lengths,
           "level": lists.level, "judged": lists.judged,
           "nonrelevant_base": lists.nonrelevant_base, **context}

    def one(m):
        return np.asarray(MEASURES.get(m.name).compute(lists.relevance, m, ctx), dtype=float)

    # measures are independent, and NumPy releases the GIL on large arrays: use both cores
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, parsed))
    frames = [pd.DataFrame({"run": lists.run_ids, "topic": lists.query_ids,
                            "measure": repr(m), "value": values})
              for m, values in zip(parsed, results, strict=True)]
    if not frames:
        return pd.DataFrame(columns=["run", "topic", "measure", "value"])
    return pd.concat(frames, ignore_index=True)


def evaluate_runs(qrels: pd.DataFrame, runs: Mapping[str, pd.DataFrame] | pd.DataFrame,
                  measures: Iterable[str], *, level: int = 1, depth: int | None = None,
                  complete: bool = False, **context) -> pd.DataFrame:
    """Evaluate runs on qrels with trec_eval's conventions (see :func:`ranked_lists`)."""
    lists = ranked_lists(runs, qrels, level=level, depth=depth, complete=complete)
    return evaluate_lists(measures, lists, **context)


def aggregate(per_topic: pd.DataFrame) -> pd.DataFrame:
    """Mean over topics of each (run, measure), keeping the order measures were given."""
    order = pd.unique(per_topic["measure"])
    runs = pd.unique(per_topic["run"])
    table = per_topic.groupby(["run", "measure"], sort=False)["value"].mean()
    return (table.reset_index()
            .assign(run=lambda d: pd.Categorical(d["run"], runs),
                    measure=lambda d: pd.Categorical(d["measure"], order))
            .sort_values(["run", "measure"]).reset_index(drop=True)
            .astype({"run": str, "measure": str}))
