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
* relevant means judged with ``grade >= level`` (``trec_eval -l``, any integer level;
  unjudged documents and the padding past a list's end never are: see
  :func:`unjudged_below_level`); negative grades are judged
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
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ..errors import ParameterError
from . import batches
from .arrow import as_string_array, from_numpy, pc, to_numpy

if TYPE_CHECKING:  # frames are accepted, pandas is not needed for Arrow tables
    import pandas as pd

#: Largest topic x judged-document table used for the grade lookup (128 MB of float64).
_DENSE_LOOKUP_LIMIT = 1 << 24
#: An unjudged cell of the int16 grade table is -_UNJUDGED.
_UNJUDGED = 32768
#: -1 as an Arrow scalar, made from an array (``pa.scalar`` would import pandas)
_MINUS_ONE = from_numpy(np.array([-1], dtype=np.int32))[0]


@dataclass(frozen=True)
class RankedLists:
    """Ranked relevance of many (run, topic) pairs.

    Attributes
    ----------
    run_ids, query_ids : arrays (R,)
        The run and topic of each row.
    relevance : float array (R, D)
        Grade of the document at each rank (0 for unjudged and beyond the list's end;
        ``level - 1`` there when the level is 0 or below: :func:`unjudged_below_level`).
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
        Columns ``query_id, doc_id, score`` (as from :func:`~bayeschain.io.read_run`; Arrow
        tables from :func:`~bayeschain.io.trec.read_run_table` work too).
    qrels : DataFrame
        Columns ``query_id, doc_id, relevance`` (or an Arrow table of them), or
        :class:`Judgements` already prepared (for many calls on the same qrels).
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
    if not isinstance(runs, Mapping):
        name = _first(runs["run_id"]) if "run_id" in _names(runs) and len(runs) else "run"
        runs = {name: runs}
    if depth is not None and int(depth) < 1:
        raise ParameterError(f"depth must be a positive integer, got {depth!r}")
    judged = qrels if isinstance(qrels, Judgements) else Judgements(qrels, level)
    if judged.level != int(level):
        raise ParameterError(f"the qrels were prepared for level {judged.level}, not {level}")
    return rank_runs(judged, list(runs), list(runs.values()), depth=depth,
                     complete=complete, docs=docs)


def _names(frame) -> list[str]:
    return list(frame.column_names if isinstance(frame, pa.Table) else frame.columns)


def _first(column) -> str:
    return str(column[0].as_py() if isinstance(column, pa.ChunkedArray) else column.iloc[0])


def rank_runs(judged: Judgements, names: list[str], runs: list, *, depth: int | None = None,
              complete: bool = False, docs: bool = False) -> RankedLists:
    """:func:`ranked_lists` on qrels prepared once (:class:`Judgements`): ``runs`` are
    DataFrames or Arrow tables (``query_id, doc_id, score``), named by ``names``.

    Runs are ranked in chunks of about :data:`~bayeschain.io.batches.RANK_CHUNK_LINES`
    documents on two threads: one Arrow lookup of the doc ids per chunk (Arrow builds its
    hash table of the judged docs on every call), and working arrays small enough to be
    reused from chunk to chunk."""
    _, parts = rank_parts(judged, runs, depth=depth, docs=docs)
    return assemble_lists(judged, names, parts, complete=complete, docs=docs)


def rank_parts(judged: Judgements, runs: list, *, depth: int | None = None,
               docs: bool = False) -> tuple[list[list[int]], list[RankedRows | None]]:
    """The chunks of consecutive runs (their indices) and each chunk's ranked rows: the
    ranking of :func:`rank_runs`, before :func:`assemble_lists`."""
    _check_depth(depth)
    columns = [_RunColumns.of(r) for r in runs]
    chunks = batches.line_chunks([len(c.score) for c in columns], batches.RANK_CHUNK_LINES)
    if len(chunks) < 2:
        return chunks, [_rank_runs(columns, list(range(len(columns))), judged, depth, docs)]
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        return chunks, list(pool.map(lambda b: _rank_runs([columns[i] for i in b], b, judged,
                                                          depth, docs), chunks))


def list_width(parts: list[RankedRows | None]) -> int:
    """The longest list of the ranked rows (at least 1)."""
    return max([int(p.counts.max()) for p in parts if p is not None and p.counts.size] + [1])


def rank_chunk(judged: Judgements, indices: list[int], runs: list, *,
               depth: int | None = None) -> RankedRows | None:
    """Runs (DataFrames or Arrow tables) ranked together, their rows labelled with the run
    ``indices``: what :func:`assemble_lists` puts together.  Streaming readers rank each
    chunk of runs as they read it (and keep only this: 13 bytes a document)."""
    _check_depth(depth)
    return _rank_runs([_RunColumns.of(r) for r in runs], list(indices), judged, depth)


def unjudged_below_level(relevance: np.ndarray, judged: np.ndarray, level: int) -> None:
    """The relevance rule, in place: relevant means *judged* with ``grade >= level``.  An
    unjudged document and the padding past a list's end hold grade 0, below every level
    >= 1; at a level of 0 or below (``trec_eval -l 0``) they are set to ``level - 1``, so
    that no ``grade >= level`` test anywhere counts them (their gain stays 0: negative
    grades give none)."""
    if level <= 0:
        relevance[~judged] = level - 1


def _check_depth(depth) -> None:
    if depth is not None and int(depth) < 1:
        raise ParameterError(f"depth must be a positive integer, got {depth!r}")


def assemble_lists(judged: Judgements, names: list, parts: list[RankedRows | None], *,
                   first: int = 0, complete: bool = False, docs: bool = False,
                   width: int | None = None) -> RankedLists:
    """The :class:`RankedLists` of runs ``first, first + 1, ...`` (named by ``names``)
    from their ranked rows (:func:`rank_chunk`, in any grouping), ``width`` ranks wide
    (default: the longest list)."""
    parts = [p for p in parts if p is not None]
    n_runs, n_topics = len(names), judged.n_topics
    # one row per (run, topic) present (or every qrels topic with complete=True)
    present = np.zeros((n_runs, n_topics), dtype=bool)
    for p in parts:
        present[p.runs - first, p.topics] = True
    if complete:
        present[:] = True
    row_index = np.cumsum(present.ravel()).reshape(present.shape) - 1
    n_rows = int(present.sum())
    if width is None:
        width = list_width(parts)
    relevance = np.zeros((n_rows, width))
    lengths = np.zeros(n_rows, dtype=np.int64)
    doc_ids = np.full((n_rows, width), None, dtype=object) if docs else None
    judged_mask = np.zeros((n_rows, width), dtype=bool)

    def fill(p: RankedRows) -> None:
        rows = row_index[p.runs - first, p.topics]
        cells = np.repeat(rows * width, p.counts)
        cells += p.pos
        relevance.ravel()[cells] = p.grade
        judged_mask.ravel()[cells] = p.judged
        lengths[rows] = p.counts
        if docs:
            doc_ids.ravel()[cells] = p.docs

    if len(parts) < 2 or n_rows * width < 1 << 20:
        for p in parts:
            fill(p)
    else:
        with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
            list(pool.map(fill, parts))
    unjudged_below_level(relevance, judged_mask, judged.level)
    row_run, row_topic = np.nonzero(present)
    return RankedLists(
        run_ids=np.asarray(names, dtype=object)[row_run],
        query_ids=judged.topic_names[row_topic],
        relevance=relevance,
        lengths=lengths,
        recall_base=judged.recall[row_topic],
        ideal=judged.ideal[row_topic],
        level=judged.level,
        doc_ids=doc_ids,
        judged=judged_mask,
        nonrelevant_base=judged.nonrelevant[row_topic],
    )


_WORKERS = 2


def _numbers(column) -> np.ndarray:
    """A numeric column (pandas, Arrow or NumPy) as float64, NaN for missing values."""
    if isinstance(column, pa.ChunkedArray | pa.Array):
        return to_numpy(pc.cast(column, pa.float64()), fill=np.nan)
    if hasattr(column, "to_numpy"):
        return column.to_numpy(dtype=float, na_value=np.nan)
    return np.asarray(column, dtype=float)


class Judgements:
    """The qrels prepared for lookups, once for any number of runs: topics in id order,
    judged doc ids, a grade table, and each topic's recall base, judged non-relevant count
    and ideal gains at relevance ``level``.

    ``qrels`` has columns ``query_id, doc_id, relevance`` (a DataFrame or an Arrow table).
    """

    def __init__(self, qrels, level: int = 1):
        self.level = int(level)
        topic_col = as_string_array(qrels["query_id"])
        uniq = pc.unique(topic_col)
        self.topics = pc.take(uniq, pc.array_sort_indices(uniq))  # id order, as trec_eval
        self.topic_names = np.asarray(self.topics.to_pylist(), dtype=object)
        self.n_topics = len(self.topics)
        q_doc = as_string_array(qrels["doc_id"])
        grades = _numbers(qrels["relevance"])
        if not np.isfinite(grades).all():
            i = int(np.flatnonzero(~np.isfinite(grades))[0])
            raise ParameterError(f"qrels grade of document {q_doc[i].as_py()!r} for topic "
                                 f"{topic_col[i].as_py()!r} is {grades[i]}; grades must be "
                                 "finite numbers")
        q_topic = _positions(topic_col, self.topics)
        self.docs = pc.unique(q_doc)
        # columns of the lookup: 0 = unjudged, 1 + position of the doc in self.docs
        self.width = len(self.docs) + 1
        keys = q_topic * self.width + _positions(q_doc, self.docs) + 1
        if _repeats(keys):
            _, first, counts = np.unique(keys, return_index=True, return_counts=True)
            i = int(first[np.flatnonzero(counts > 1)[0]])
            raise ParameterError(f"qrels judge document {q_doc[i].as_py()!r} twice for topic "
                                 f"{topic_col[i].as_py()!r}; trec_eval refuses duplicate "
                                 "judgements")
        if self.n_topics * self.width <= _DENSE_LOOKUP_LIMIT:
            small = bool(np.all((grades == np.round(grades)) & (np.abs(grades) < _UNJUDGED)))
            if small:           # whole grades as int16: a quarter of the memory to look in
                self.table = np.full(self.n_topics * self.width, -_UNJUDGED, dtype=np.int16)
                self.table[keys] = grades.astype(np.int16)
            else:
                self.table = np.full(self.n_topics * self.width, np.nan)    # NaN: unjudged
                self.table[keys] = grades
            self.keys = self.grades = None
        else:
            order = np.argsort(keys, kind="stable")
            self.table, self.keys, self.grades = None, keys[order], grades[order]
        self.recall, self.ideal, self.nonrelevant = _topic_summaries(
            q_topic, grades, self.n_topics, self.level)

    def doc_positions(self, doc) -> np.ndarray:
        """``1 +`` the position of each doc id among the judged ones, 0 when unjudged."""
        return self.doc_index(doc) + np.int32(1)

    def doc_index(self, doc) -> np.ndarray:
        """The position of each doc id among the judged ones (int32), -1 when unjudged."""
        return to_numpy(pc.fill_null(pc.index_in(doc, value_set=self.docs), _MINUS_ONE))

    def grade(self, topic: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Grade of each (topic, :meth:`doc_positions`) pair, 0 when unjudged."""
        return self.lookup(topic, d)[0]

    def lookup(self, topic: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Grade of each (topic, :meth:`doc_positions`) pair (0 when unjudged) and whether
        the pair has a qrels line.

        The integer keys index a dense topic x (1 + judged-doc) table (up to
        :data:`_DENSE_LOOKUP_LIMIT` cells; int16 when the grades are whole numbers below
        2^15 in size, -2^15 where unjudged, else float64 with NaN) or are matched against
        the sorted qrels keys.
        """
        return self.lookup_keys(topic * self.width + d)

    def lookup_keys(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`lookup` of ``topic * width + d``."""
        if self.table is not None:
            cell = self.table[keys]
            if cell.dtype == np.int16:
                unjudged = cell == -_UNJUDGED
                cell[unjudged] = 0
                grade = cell.astype(float)
            else:
                unjudged = np.isnan(cell)
                grade = cell
                grade[unjudged] = 0.0
            np.logical_not(unjudged, out=unjudged)
            return grade, unjudged
        if self.keys.size == 0:
            return np.zeros(keys.size), np.zeros(keys.size, dtype=bool)
        at = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
        judged = self.keys[at] == keys           # qrels keys have d >= 1: none is unjudged
        return np.where(judged, self.grades[at], 0.0), judged


@dataclass(frozen=True)
class _RunColumns:
    """One run's topic ids, doc ids (Arrow strings) and scores, in its own row order."""

    qid: pa.ChunkedArray
    doc: pa.ChunkedArray
    score: np.ndarray

    @classmethod
    def of(cls, frame) -> _RunColumns:
        return cls(as_string_array(frame["query_id"]), as_string_array(frame["doc_id"]),
                   _numbers(frame["score"]))


@dataclass(frozen=True)
class RankedRows:
    """Ranked rows of a batch of runs: per (run, topic) group its run and topic index and
    list length, and per document its rank position, grade and whether it is judged (groups
    in any order, each group's documents together and in rank order)."""

    runs: np.ndarray
    topics: np.ndarray
    counts: np.ndarray
    pos: np.ndarray
    grade: np.ndarray
    docs: np.ndarray | None = None
    judged: np.ndarray | None = None


def _rank_runs(runs: list[_RunColumns], run_index: list[int], judged: Judgements,
               depth: int | None, docs: bool = False) -> RankedRows | None:
    """Rank a batch of runs with whole-batch array operations.

    Topic ids are looked up once per stretch of equal ids, doc ids in one Arrow call; rows
    are grouped by (run, topic) and put in trec_eval's order; grades come from the
    judgement table.  Runs written topic by topic with scores descending (as systems write
    them, and as :func:`~bayeschain.io.read_run` returns them) are ranked stretch by
    stretch, without a per-row topic or group; others by a sort.
    """
    if not runs:
        return None
    qid = pa.chunked_array([c for r in runs for c in r.qid.chunks], pa.string())
    doc = pa.chunked_array([c for r in runs for c in r.doc.chunks], pa.string())
    score = runs[0].score if len(runs) == 1 else np.concatenate([r.score for r in runs])
    if not np.isfinite(score).all():
        raise ParameterError("run scores must be finite numbers; found "
                             f"{score[~np.isfinite(score)][0]}")
    lengths = np.array([len(r.score) for r in runs], dtype=np.int64)
    first_rows = np.r_[0, np.cumsum(lengths)[:-1]]
    starts = _stretch_starts(qid, first_rows[lengths > 0])
    if starts is not None:
        ranked = _rank_stretches(starts, qid, doc, score, first_rows,
                                 np.asarray(run_index, dtype=np.int64), judged, depth, docs)
        if ranked is not False:
            return ranked
    topic = _positions(qid, judged.topics)
    run = np.repeat(np.asarray(run_index, dtype=np.int64), lengths)
    group = run * judged.n_topics + topic
    keep = topic >= 0                       # topics without qrels are not evaluated
    if not keep.all():
        idx = np.flatnonzero(keep)
        doc = pc.take(doc, from_numpy(idx))
        group, topic, score = group[idx], topic[idx], score[idx]
    if topic.size == 0:
        return None
    d = judged.doc_positions(doc)
    order = _trec_order(group, score, doc)
    names = doc.to_numpy(zero_copy_only=False) if docs else None
    if order is not None:
        group, topic, d = group[order], topic[order], d[order]
        names = names[order] if docs else None
    grade, is_judged = judged.lookup(topic, d)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    counts = np.diff(np.r_[starts, group.size])
    heads = group[starts]
    return _rows(heads // judged.n_topics, heads % judged.n_topics, starts, counts, grade,
                 is_judged, names, depth)


def _rows(runs, topics, starts, counts, grade, is_judged, names, depth) -> RankedRows:
    """:class:`RankedRows` of groups (each group's rows together, in rank order)."""
    kind = np.int32 if grade.size < 1 << 31 else np.int64
    pos = np.arange(grade.size, dtype=kind)
    pos -= np.repeat(starts.astype(kind), counts)
    if depth is not None and counts.max() > int(depth):
        sel = pos < int(depth)
        grade, pos, is_judged = grade[sel], pos[sel], is_judged[sel]
        names = names[sel] if names is not None else None
        counts = np.minimum(counts, int(depth))
    return RankedRows(runs, topics, counts, pos, grade, names, is_judged)


def _stretch_starts(qid: pa.ChunkedArray, run_starts: np.ndarray) -> np.ndarray | None:
    """The first row of each stretch of equal topic ids (a new run starts one too), or None
    when the stretches are short (topics interleaved: rows are looked up one by one)."""
    n = len(qid)
    if n == 0:
        return None
    if n > 1:
        change = pc.indices_nonzero(pc.not_equal(qid.slice(1), qid.slice(0, n - 1)))
        starts = np.r_[0, to_numpy(change).astype(np.int64) + 1]
    else:
        starts = np.zeros(1, dtype=np.int64)
    if run_starts.size > 1:
        starts = _sorted_union(starts, run_starts)
    return None if starts.size > n // 8 + 1 else starts


def _rank_stretches(starts, qid, doc, score, first_rows, run_index, judged: Judgements,
                    depth, docs) -> RankedRows | None | bool:
    """:func:`_rank_runs` when every (run, topic) is one stretch of rows with scores
    descending: one group per stretch, only tied scores reordered.  False when the rows are
    not so (the caller sorts them)."""
    n = score.size
    counts = np.diff(np.r_[starts, n])
    topics = _positions(pc.take(qid, from_numpy(starts)), judged.topics)
    runs = run_index[np.searchsorted(first_rows, starts, side="right") - 1]
    keep = topics >= 0                       # topics without qrels are not evaluated
    groups = (runs * judged.n_topics + topics)[keep]
    if _repeats(groups):
        return False                         # a topic in two stretches of a run
    descending = score[1:] <= score[:-1]
    descending[starts[1:] - 1] = True
    if not descending.all():
        return False
    if not keep.all():
        rows = np.flatnonzero(np.repeat(keep, counts))
        if rows.size == 0:
            return None
        doc, score = pc.take(doc, from_numpy(rows)), score[rows]
        counts, topics, runs = counts[keep], topics[keep], runs[keep]
        starts = np.r_[0, np.cumsum(counts)[:-1]]
    d = judged.doc_index(doc)
    order = _tie_order(score, starts, doc)
    names = doc.to_numpy(zero_copy_only=False) if docs else None
    if order is not None:
        d = d[order]
        names = names[order] if docs else None
    keys = np.repeat(topics * judged.width + 1, counts)      # + 1: column 0 is unjudged
    keys += d
    del d
    grade, is_judged = judged.lookup_keys(keys)
    del keys
    return _rows(runs, topics, starts, counts, grade, is_judged, names, depth)


def _tie_order(score: np.ndarray, starts: np.ndarray, doc: pa.ChunkedArray) -> np.ndarray | None:
    """Row order within stretches (``starts``) of descending scores that puts tied scores
    by doc id descending (trec_eval); None when they already are."""
    eq = score[1:] == score[:-1]
    eq[starts[1:] - 1] = False                   # no tie across two stretches
    first = np.flatnonzero(eq)                   # row i ties with row i + 1
    if first.size == 0:
        return None
    return _tie_fix(first, None, doc, score.size)


def _positions(values: pa.ChunkedArray, value_set: pa.Array) -> np.ndarray:
    """Index of each value in ``value_set`` (-1 when absent), by Arrow's hash lookup."""
    return to_numpy(pc.index_in(values, value_set=value_set), fill=-1).astype(np.int64)


def _trec_order(group: np.ndarray, score: np.ndarray,
                doc: pa.ChunkedArray) -> np.ndarray | None:
    """A row order that puts each group's rows together, by score descending, doc id
    descending (trec_eval); None when the rows already are.

    Groups may come in any order (a run file lists topics 1, 2, ..., 10 while the ids sort
    1, 10, 2, ...): the rows' order only matters inside each group.  Run files are usually
    written so (checked in O(n)); otherwise one two-key ``np.lexsort``.  Score ties are then
    broken locally: only the tied rows' doc ids are compared.
    """
    n = group.size
    if n == 0:
        return None
    new = group[1:] != group[:-1]
    heads = group[np.r_[0, np.flatnonzero(new) + 1]]
    in_order = (not _repeats(heads)
                and bool(np.all(new | (score[1:] <= score[:-1]))))
    if in_order:
        order, g, s = None, group, score
    else:
        order = np.lexsort((-score, group))
        g, s = group[order], score[order]
    eq = (g[1:] == g[:-1]) & (s[1:] == s[:-1])
    first = np.flatnonzero(eq)                   # row i ties with row i + 1
    if first.size == 0:
        return order
    return _tie_fix(first, order, doc, n)


def _tie_fix(first: np.ndarray, order: np.ndarray | None, doc: pa.ChunkedArray,
             n: int) -> np.ndarray | None:
    """``order`` (None: the rows' own) with each run of tied rows (row ``first[i]`` ties
    with the next) put by doc id descending; None when nothing moves."""
    pos = _sorted_union(first, first + 1)
    at = np.minimum(np.searchsorted(first, pos - 1), first.size - 1)
    starts = first[at] != pos - 1                # a run of equal (group, score) begins
    tie_run = np.cumsum(starts)
    rows = pos if order is None else order[pos]
    docs = pc.take(doc, from_numpy(rows)).to_pylist()
    code = {d: i for i, d in enumerate(sorted(set(docs)))}     # code point order
    rank = np.array([code[d] for d in docs], dtype=np.int64)
    fixed = rows[np.lexsort((-rank, tie_run))]
    if order is None:
        if np.array_equal(fixed, pos):
            return None
        order = np.arange(n)
    order[pos] = fixed
    return order


def _repeats(values: np.ndarray) -> bool:
    """Whether a value occurs twice (by a sort: ``np.unique`` imports ``numpy.ma``, 10 ms)."""
    ordered = np.sort(values)
    return bool((ordered[1:] == ordered[:-1]).any())


def _sorted_union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted distinct values of two integer arrays (``np.union1d`` without
    ``numpy.ma``)."""
    both = np.sort(np.concatenate([a, b]))
    return both[np.r_[True, both[1:] != both[:-1]]] if both.size else both


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
