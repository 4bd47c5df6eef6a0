"""Join runs with qrels into ranked relevance matrices (trec_eval semantics).

:func:`ranked_lists` turns one or many runs and a qrels table into a :class:`RankedLists`:
one row per (run, topic), the judged grade of the document at each rank (unjudged and
padding = 0), plus each topic's recall base and ideal gains.  Everything is vectorised:
doc ids are factorised once, looked up through an integer hash index, and ranked with one
``np.lexsort`` (skipped when the file is already in trec_eval's order).

trec_eval conventions followed:

* only topics present in the qrels are evaluated; with ``complete=True`` (``trec_eval -c``)
  a qrels topic missing from a run is scored as an empty ranking;
* ranking by score descending, then doc id descending; the rank column is ignored;
* ``depth`` (``trec_eval -M``) keeps the first ``depth`` documents of each ranking;
* relevant means ``grade >= level`` (``trec_eval -l``); negative grades are judged
  non-relevant and contribute no gain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import ParameterError


@dataclass(frozen=True)
class RankedLists:
    """Ranked relevance of many (run, topic) pairs.

    Attributes
    ----------
    run_ids, query_ids : arrays (R,)
        The run and topic of each row.
    relevance : float array (R, D)
        Grade of the document at each rank (0 for unjudged and beyond the list's end).
    lengths : int array (R,)
        Number of retrieved documents in each row.
    recall_base : int array (R,)
        Number of documents of the topic with ``grade >= level`` in the qrels.
    ideal : float array (R, K)
        The topic's positive qrels grades sorted descending (padded with 0): the ideal
        ranking for nDCG.
    level : int
        Relevance level used for binary measures.
    """

    run_ids: np.ndarray
    query_ids: np.ndarray
    relevance: np.ndarray
    lengths: np.ndarray
    recall_base: np.ndarray
    ideal: np.ndarray
    level: int = 1

    @property
    def binary(self) -> np.ndarray:
        """``relevance >= level`` as 0/1 floats."""
        return (self.relevance >= self.level).astype(float)

    def __len__(self) -> int:
        return self.relevance.shape[0]


def ranked_lists(runs: Mapping[str, pd.DataFrame] | pd.DataFrame, qrels: pd.DataFrame, *,
                 level: int = 1, depth: int | None = None,
                 complete: bool = False) -> RankedLists:
    """Rank every run's documents per topic and look up their grades in ``qrels``.

    Parameters
    ----------
    runs : DataFrame or mapping name -> DataFrame
        Columns ``query_id, doc_id, score`` (as from :func:`~bayeschain.io.read_run`).
    qrels : DataFrame
        Columns ``query_id, doc_id, relevance``.
    level : int
        Minimum grade that counts as relevant (trec_eval ``-l``; default 1).
    depth : int, optional
        Keep only the top ``depth`` documents per ranking (trec_eval ``-M``).
    complete : bool
        Score qrels topics missing from a run as empty rankings (trec_eval ``-c``).
    """
    if isinstance(runs, pd.DataFrame):
        name = str(runs["run_id"].iloc[0]) if "run_id" in runs and len(runs) else "run"
        runs = {name: runs}
    if depth is not None and int(depth) < 1:
        raise ParameterError(f"depth must be a positive integer, got {depth!r}")
    names = list(runs)
    q_topics = pd.unique(qrels["query_id"].astype(str))
    topic_index = pd.Index(q_topics)

    frames = [runs[n] for n in names]
    sizes = np.array([len(f) for f in frames])
    run_code = np.repeat(np.arange(len(names)), sizes)
    qid = np.concatenate([f["query_id"].astype(str).to_numpy() for f in frames]) if frames \
        else np.array([], dtype=object)
    doc = np.concatenate([f["doc_id"].astype(str).to_numpy() for f in frames]) if frames \
        else np.array([], dtype=object)
    score = np.concatenate([f["score"].to_numpy(dtype=float) for f in frames]) if frames \
        else np.array([])

    topic = topic_index.get_indexer(qid)
    keep = topic >= 0                       # topics without qrels are not evaluated
    run_code, topic, doc, score = run_code[keep], topic[keep], doc[keep], score[keep]

    grade = _lookup_grades(topic, doc, topic_index, qrels)
    n_topics = len(q_topics)
    group = run_code.astype(np.int64) * n_topics + topic
    order = _trec_order(group, score, doc)
    group, grade = group[order], grade[order]

    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if group.size else \
        np.array([], dtype=np.int64)
    counts = np.diff(np.r_[starts, group.size])
    pos = np.arange(group.size) - np.repeat(starts, counts)
    present = group[starts]
    if depth is not None:
        sel = pos < int(depth)
        group, grade, pos = group[sel], grade[sel], pos[sel]
        counts = np.minimum(counts, int(depth))

    if complete:
        all_groups = (np.arange(len(names))[:, None] * n_topics
                      + np.arange(n_topics)[None, :]).ravel()
    else:
        all_groups = present
    row_of = pd.Index(all_groups).get_indexer(group)
    width = int(counts.max()) if counts.size else 0
    relevance = np.zeros((all_groups.size, max(width, 1)))
    relevance[row_of, pos] = grade
    lengths = np.zeros(all_groups.size, dtype=np.int64)
    np.add.at(lengths, row_of, 1)

    recall, ideal = _topic_summaries(qrels, topic_index, level)
    row_topic = all_groups % n_topics
    return RankedLists(
        run_ids=np.asarray(names, dtype=object)[all_groups // n_topics],
        query_ids=np.asarray(q_topics, dtype=object)[row_topic],
        relevance=relevance,
        lengths=lengths,
        recall_base=recall[row_topic],
        ideal=ideal[row_topic],
        level=int(level),
    )


def _lookup_grades(topic: np.ndarray, doc: np.ndarray, topic_index: pd.Index,
                   qrels: pd.DataFrame) -> np.ndarray:
    """Grade of each (topic, doc) pair, 0 when unjudged, via one integer hash index."""
    q_topic = topic_index.get_indexer(qrels["query_id"].astype(str).to_numpy())
    q_doc = qrels["doc_id"].astype(str).to_numpy()
    codes, uniques = pd.factorize(np.concatenate([q_doc, doc]))
    n_docs = max(len(uniques), 1)
    q_keys = q_topic.astype(np.int64) * n_docs + codes[: len(q_doc)]
    r_keys = topic.astype(np.int64) * n_docs + codes[len(q_doc):]
    hit = pd.Index(q_keys).get_indexer(r_keys)
    grades = qrels["relevance"].to_numpy(dtype=float)
    return np.where(hit >= 0, grades[np.maximum(hit, 0)], 0.0)


def _trec_order(group: np.ndarray, score: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """Row order: by group, score descending, doc id descending (trec_eval)."""
    n = group.size
    if n == 0:
        return np.arange(0)
    same = group[1:] == group[:-1]
    in_order = np.all((group[1:] > group[:-1]) | (same & (score[1:] <= score[:-1])))
    if in_order and not np.any(same & (score[1:] == score[:-1])):
        return np.arange(n)
    order = np.lexsort((-score, group))
    g, s = group[order], score[order]
    tied = np.zeros(n, dtype=bool)
    eq = (g[1:] == g[:-1]) & (s[1:] == s[:-1])
    tied[1:] |= eq
    tied[:-1] |= eq
    if not tied.any():
        return order
    # Break score ties by doc id descending: rank the tied doc ids lexicographically.
    doc_key = np.zeros(n, dtype=np.int64)
    tied_docs = doc[order[tied]]
    _, inverse = np.unique(tied_docs, return_inverse=True)
    doc_key[order[tied]] = -inverse
    return np.lexsort((doc_key, -score, group))


def _topic_summaries(qrels: pd.DataFrame, topic_index: pd.Index, level: int):
    """Recall base (count of grade >= level) and sorted positive grades per topic."""
    t = topic_index.get_indexer(qrels["query_id"].astype(str).to_numpy())
    g = qrels["relevance"].to_numpy(dtype=float)
    n_topics = len(topic_index)
    recall = np.bincount(t, weights=(g >= level).astype(float), minlength=n_topics)
    positive = g > 0
    tp, gp = t[positive], g[positive]
    order = np.lexsort((-gp, tp))
    tp, gp = tp[order], gp[order]
    counts = np.bincount(tp, minlength=n_topics)
    width = int(counts.max()) if counts.size and counts.max() > 0 else 1
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    ideal = np.zeros((n_topics, width))
    ideal[tp, np.arange(tp.size) - starts[tp]] = gp
    return recall.astype(np.int64), ideal
