"""Click statistics split by the relevance of the clicked document (``by_relevance``).

What a user does after a click may depend on what the click found: a relevant document
may end the search (stop) or send the user on (forward) with other probabilities than a
non-relevant one.  With relevance judgements for the clicked documents (TREC qrels) each
click falls in a class, ``relevant`` (grade >= ``level``) or ``non-relevant`` (lower grade
or unjudged, trec_eval's convention), and the transitions after it, its dwell and the
outcome of its page are counted in that class.  The classes' posteriors are the
parameters of the relevance-dependent walk ``drwbm`` (``p, q`` and ``p_rel, q_rel``).

A click's topic is its session's topic when the log records one (TREC Session logs:
``meta["session_topic"]``), otherwise its query id.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..io.clicklog import ClickLog
from ..io.clickstats import observations, statistics_from_observations
from .data import ModelData, model_data

CLASSES = ("non-relevant", "relevant")


def click_relevance(clicks: pd.DataFrame, qrels: pd.DataFrame, topic_of: dict | None,
                    level: int = 1) -> np.ndarray:
    """Whether each click's document is relevant to its topic (bool array)."""
    missing = {"query_id", "doc_id", "relevance"} - set(qrels.columns)
    if missing:
        raise ParameterError(f"qrels need columns query_id, doc_id, relevance; missing "
                             f"{sorted(missing)}")
    if topic_of:
        topics = clicks["session_id"].astype(str).map({str(k): str(v)
                                                       for k, v in topic_of.items()})
    else:
        topics = clicks["query_id"].astype(str)
    grades = pd.Series(qrels["relevance"].to_numpy(),
                       index=pd.MultiIndex.from_arrays([qrels["query_id"].astype(str),
                                                        qrels["doc_id"].astype(str)]))
    grades = grades[~grades.index.duplicated(keep="last")]
    keys = pd.MultiIndex.from_arrays([topics.fillna("").to_numpy(),
                                      clicks["doc_id"].astype(str).to_numpy()])
    found = grades.reindex(keys).to_numpy(dtype=float)
    if not np.isfinite(found).any():
        raise ParameterError("no clicked document is judged in the qrels (do the topic ids "
                             "match the log's sessions or queries?)")
    return np.nan_to_num(found, nan=-np.inf) >= level


def relevance_model_data(log, qrels: pd.DataFrame, ranks: int, categories,
                         level: int = 1) -> dict[str, ModelData]:
    """Per-class :class:`ModelData` (``non-relevant``, ``relevant``) of a click log."""
    if not isinstance(log, ClickLog):
        raise ParameterError("transitions by relevance need the click log itself (its "
                             "clicked documents), not aggregated statistics")
    clicks, pages, off_page = observations(log.events, has_sessions=log.has_sessions)
    relevant = click_relevance(clicks, qrels, log.meta.get("session_topic"), level)
    out = {}
    for name, mask in zip(CLASSES, (~relevant, relevant), strict=True):
        stats = statistics_from_observations(clicks[mask], pages, off_page)
        out[name] = model_data(stats, ranks, categories)
    return out
