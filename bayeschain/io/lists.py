"""Join runs with qrels into ranked relevance matrices (trec_eval semantics).

:func:`ranked_lists` turns one or many runs and a qrels table into a :class:`RankedLists`:
one row per (run, topic), the judged grade of the document at each rank (unjudged and
padding = 0) and whether it has a judgement at all, plus each topic's recall base, count of
judged non-relevant documents and ideal gains.  Everything is vectorised:
doc ids are factorised once, looked up through an integer hash index, and ranked with one
``np.lexsort`` (skipped when the file is already in trec_eval's order).

trec_eval conventions followed:

* only topics present in the qrels are evaluated; with ``complete=True`` (``trec_eval -c``)
  a qrels topic missing from a run is scored as an empty ranking;
* ranking by score descending, then doc id descending; the rank column is ignored;
* ``depth`` (``trec_eval -M``) keeps the first ``depth`` documents of each ranking;
* relevant means ``grade >= level`` (``trec_eval -l``); negative grades are judged
  non-relevant and contribute no gain (the measures that tell judged from unjudged
  documents, bpref and rbp_resid, see them as trec_eval does: in the pool but unjudged);
* a document judged twice for a topic is refused (trec_eval aborts on it), and so are
  non-finite grades and scores (a NaN would silently give NaN topic scores): frames built
  in memory get the checks the readers give files.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ParameterError
from .arrow import as_string_array

#: Largest topic x judged-document table used for the grade lookup (128 MB of float64).
_DENSE_LOOKUP_LIMIT = 1 << 24


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
    doc_ids : object array (R, D), optional
        The document at each rank (``None`` beyond the list's end), kept when asked for
        (``ranked_lists(..., docs=True)``): what per-document user models look up.
    judged : bool array (R, D), optional
        Whether the document at each rank has a line in the qrels (any grade, negative
        ones too; False beyond the list's end): what Judged@k, bpref and rbp_resid need.
    nonrelevant_base : int array (R,), optional
        Number of documents of the topic judged non-relevant, ``0 <= grade < level``
        (bpref's N; trec_eval counts negative grades as unjudged).
    """

    run_ids: np.ndarray
    query_ids: np.ndarray
    relevance: np.ndarray
    lengths: np.ndarray
    recall_base: np.ndarray
    ideal: np.ndarray
    level: int = 1
    doc_ids: np.ndarray | None = None
    judged: np.ndarray | None = None
    nonrelevant_base: np.ndarray | None = None

    @property
    def binary(self) -> np.ndarray:
        """``relevance >= level`` as 0/1 floats."""
        return (self.relevance >= self.level).astype(float)

    def __len__(self) -> int:
        return self.relevance.shape[0]


def ranked_lists(runs: Mapping[str, pd.DataFrame] | pd.DataFrame, qrels: pd.DataFrame, *,
                 level: int = 1, depth: int | None = None,
                 complete: bool = False, docs: bool = False) -> RankedLists:
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
    docs : bool
        Also keep the document ids in rank order (``RankedLists.doc_ids``).

    Runs are processed in parallel threads (Arrow's lookups and NumPy's large-array
    operations release the GIL); rows come out run by run, topics in id order.
    """
    if isinstance(runs, pd.DataFrame):
        name = str(runs["run_id"].iloc[0]) if "run_id" in runs and len(runs) else "run"
        runs = {name: runs}
    if depth is not None and int(depth) < 1:
        raise ParameterError(f"depth must be a positive integer, got {depth!r}")
    judged = _Judgements(qrels, level)
    names = list(runs)
    frames = list(runs.values())
    n_runs, n_topics = len(frames), judged.n_topics
    batches = [list(range(i, n_runs, _WORKERS)) for i in range(_WORKERS)]
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        parts = [p for p in pool.map(lambda b: _rank_runs([frames[i] for i in b], b, judged,
                                                           depth, docs), batches)
                 if p is not None]
    # one row per (run, topic) present (or every qrels topic with complete=True)
    present = np.zeros((n_runs, n_topics), dtype=bool)
    for p in parts:
        present[p.runs, p.topics] = True
    if complete:
        present[:] = True
    row_index = np.cumsum(present.ravel()).reshape(present.shape) - 1
    n_rows = int(present.sum())
    width = max([int(p.counts.max()) for p in parts if p.counts.size] + [1])
    relevance = np.zeros((n_rows, width))
    lengths = np.zeros(n_rows, dtype=np.int64)
    doc_ids = np.full((n_rows, width), None, dtype=object) if docs else None
    judged_mask = np.zeros((n_rows, width), dtype=bool)

    def fill(p: _RankedRows) -> None:
        rows = row_index[p.runs, p.topics]
        relevance[np.repeat(rows, p.counts), p.pos] = p.grade
        judged_mask[np.repeat(rows, p.counts), p.pos] = p.judged
        lengths[rows] = p.counts
        if docs:
            doc_ids[np.repeat(rows, p.counts), p.pos] = p.docs

    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        list(pool.map(fill, parts))
    row_run, row_topic = np.nonzero(present)
    return RankedLists(
        run_ids=np.asarray(names, dtype=object)[row_run],
        query_ids=judged.topic_names[row_topic],
        relevance=relevance,
        lengths=lengths,
        recall_base=judged.recall[row_topic],
        ideal=judged.ideal[row_topic],
        level=int(level),
        doc_ids=doc_ids,
        judged=judged_mask,
        nonrelevant_base=judged.nonrelevant[row_topic],
    )


_WORKERS = 2


class _Judgements:
    """The qrels prepared for lookups: topics in id order, judged doc ids, a grade table."""

    def __init__(self, qrels: pd.DataFrame, level: int):
        topic_col = as_string_array(qrels["query_id"])
        uniq = pc.unique(topic_col)
        self.topics = uniq.take(pc.array_sort_indices(uniq))  # id order, as trec_eval
        self.topic_names = np.asarray(self.topics.to_pylist(), dtype=object)
        self.n_topics = len(self.topics)
        q_doc = as_string_array(qrels["doc_id"])
        grades = qrels["relevance"].to_numpy(dtype=float, na_value=np.nan)
        if not np.isfinite(grades).all():
            i = int(np.flatnonzero(~np.isfinite(grades))[0])
            raise ParameterError(f"qrels grade of document {q_doc[i].as_py()!r} for topic "
                                 f"{topic_col[i].as_py()!r} is {grades[i]}; grades must be "
                                 "finite numbers")
        q_topic = _positions(topic_col, self.topics)
        self.docs = pc.unique(q_doc)
        self.n_docs = max(len(self.docs), 1)
        keys = q_topic * self.n_docs + _positions(q_doc, self.docs)
        if np.unique(keys).size != keys.size:
            _, first, counts = np.unique(keys, return_index=True, return_counts=True)
            i = int(first[np.flatnonzero(counts > 1)[0]])
            raise ParameterError(f"qrels judge document {q_doc[i].as_py()!r} twice for topic "
                                 f"{topic_col[i].as_py()!r}; trec_eval refuses duplicate "
                                 "judgements")
        if self.n_topics * self.n_docs <= _DENSE_LOOKUP_LIMIT:
            self.table = np.full(self.n_topics * self.n_docs, np.nan)    # NaN: unjudged
            self.table[keys] = grades
            self.keys = self.grades = None
        else:
            order = np.argsort(keys, kind="stable")
            self.table, self.keys, self.grades = None, keys[order], grades[order]
        self.recall, self.ideal, self.nonrelevant = _topic_summaries(
            q_topic, grades, self.n_topics, level)

    def grade(self, topic: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Grade of each (topic, judged-doc position) pair, 0 when unjudged (``d = -1``)."""
        return self.lookup(topic, d)[0]

    def lookup(self, topic: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Grade of each (topic, judged-doc position) pair (0 when unjudged) and whether
        the pair has a qrels line.

        The integer keys index a dense topic x judged-doc table (up to
        :data:`_DENSE_LOOKUP_LIMIT` cells, NaN where unjudged) or are matched against the
        sorted qrels keys.
        """
        keys = topic * self.n_docs + d
        if self.table is not None:
            grade = np.where(d >= 0, self.table[np.maximum(keys, 0)], np.nan)
            judged = ~np.isnan(grade)
            return np.where(judged, grade, 0.0), judged
        if self.keys.size == 0:
            return np.zeros(topic.size), np.zeros(topic.size, dtype=bool)
        at = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
        judged = (d >= 0) & (self.keys[at] == keys)
        return np.where(judged, self.grades[at], 0.0), judged


@dataclass(frozen=True)
class _RankedRows:
    """Ranked rows of a batch of runs: per (run, topic) group its run and topic index and
    list length, and per document its rank position, grade and whether it is judged (groups
    in order)."""

    runs: np.ndarray
    topics: np.ndarray
    counts: np.ndarray
    pos: np.ndarray
    grade: np.ndarray
    docs: np.ndarray | None = None
    judged: np.ndarray | None = None


def _rank_runs(frames: list[pd.DataFrame], run_index: list[int], judged: _Judgements,
               depth: int | None, docs: bool = False) -> _RankedRows | None:
    """Rank a batch of runs with whole-batch array operations.

    Topic and doc ids of the batch are looked up in one Arrow call each; rows are grouped
    by (run, topic) and put in trec_eval's order; grades come from the judgement table.
    """
    if not frames:
        return None
    qid = pa.chunked_array([c for f in frames for c in as_string_array(f["query_id"]).chunks],
                           pa.string())
    doc = pa.chunked_array([c for f in frames for c in as_string_array(f["doc_id"]).chunks],
                           pa.string())
    score = np.concatenate([f["score"].to_numpy(dtype=float, na_value=np.nan)
                            for f in frames])
    if not np.isfinite(score).all():
        raise ParameterError("run scores must be finite numbers; found "
                             f"{score[~np.isfinite(score)][0]}")
    run = np.repeat(np.asarray(run_index, dtype=np.int64), [len(f) for f in frames])
    topic = _positions(qid, judged.topics)
    d = _positions(doc, judged.docs)
    keep = topic >= 0                       # topics without qrels are not evaluated
    if not keep.all():
        idx = np.flatnonzero(keep)
        doc = doc.take(pa.array(idx))
        run, topic, d, score = run[idx], topic[idx], d[idx], score[idx]
    if topic.size == 0:
        return None
    group = run * judged.n_topics + topic
    order = _trec_order(group, score, doc)
    names = doc.to_numpy(zero_copy_only=False) if docs else None
    if order is not None:
        group, topic, d = group[order], topic[order], d[order]
        names = names[order] if docs else None
    grade, is_judged = judged.lookup(topic, d)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    counts = np.diff(np.r_[starts, group.size])
    pos = np.arange(group.size) - np.repeat(starts, counts)
    if depth is not None:
        sel = pos < int(depth)
        grade, pos, is_judged = grade[sel], pos[sel], is_judged[sel]
        names = names[sel] if docs else None
        counts = np.minimum(counts, int(depth))
    heads = group[starts]
    return _RankedRows(heads // judged.n_topics, heads % judged.n_topics, counts, pos, grade,
                       names, is_judged)


def _positions(values: pa.ChunkedArray, value_set: pa.Array) -> np.ndarray:
    """Index of each value in ``value_set`` (-1 when absent), by Arrow's hash lookup."""
    idx = pc.index_in(values, value_set=value_set)
    return np.asarray(pc.fill_null(idx, -1), dtype=np.int64)


def _trec_order(group: np.ndarray, score: np.ndarray,
                doc: pa.ChunkedArray) -> np.ndarray | None:
    """Row order: by group, score descending, doc id descending (trec_eval); None when the
    rows are already in that order.

    Run files are usually written in that order already (checked in O(n)); otherwise one
    two-key ``np.lexsort``.  Score ties are then broken locally: only the tied rows' doc
    ids are compared.
    """
    n = group.size
    if n == 0:
        return None
    same = group[1:] == group[:-1]
    in_order = np.all((group[1:] > group[:-1]) | (same & (score[1:] <= score[:-1])))
    if in_order:
        order, g, s = np.arange(n), group, score
    else:
        order = np.lexsort((-score, group))
        g, s = group[order], score[order]
    eq = (g[1:] == g[:-1]) & (s[1:] == s[:-1])
    first = np.flatnonzero(eq)                   # row i ties with row i + 1
    if first.size == 0:
        return None if in_order else order
    pos = np.union1d(first, first + 1)
    starts = ~np.isin(pos - 1, first)            # a run of equal (group, score) begins
    tie_run = np.cumsum(starts)
    docs = np.asarray(doc.take(pa.array(order[pos])).to_pylist(), dtype=object)
    _, rank = np.unique(docs, return_inverse=True)
    fixed = order[pos][np.lexsort((-rank, tie_run))]
    if in_order and np.array_equal(fixed, pos):
        return None
    order[pos] = fixed
    return order


def _topic_summaries(topic: np.ndarray, grade: np.ndarray, n_topics: int, level: int):
    """Recall base (count of grade >= level), sorted positive grades and the count of judged
    non-relevant documents (``0 <= grade < level``, trec_eval's bpref N) per topic."""
    recall = np.bincount(topic, weights=(grade >= level).astype(float), minlength=n_topics)
    nonrelevant = np.bincount(topic, weights=((grade >= 0) & (grade < level)).astype(float),
                              minlength=n_topics)
    positive = grade > 0
    tp, gp = topic[positive], grade[positive]
    order = np.lexsort((-gp, tp))
    tp, gp = tp[order], gp[order]
    counts = np.bincount(tp, minlength=n_topics)
    width = int(counts.max()) if counts.size and counts.max() > 0 else 1
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    ideal = np.zeros((n_topics, width))
    ideal[tp, np.arange(tp.size) - starts[tp]] = gp
    return recall.astype(np.int64), ideal, nonrelevant.astype(np.int64)
