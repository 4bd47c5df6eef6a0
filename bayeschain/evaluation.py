"""Evaluate TREC runs against qrels: the engine behind ``bayeschain eval``.

:func:`evaluate_runs` reads nothing itself: it takes parsed runs and qrels (see
:mod:`bayeschain.io`), builds the ranked relevance matrix of every (run, topic) once, and
evaluates each measure on all rows in one vectorised call.

:func:`evaluate_files` reads the files too, streaming the runs in batches of about
``batch_lines`` lines (the next batch is parsed while one is evaluated), so that memory
stays bounded whatever the number of runs; it returns an :class:`Evaluation`, plain arrays
that need no pandas (:meth:`Evaluation.to_frame` gives :func:`evaluate_runs`' table).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # imported where used: evaluate_files reads files meanwhile
    import pandas as pd

    from .io.lists import RankedLists
    from .measures.registry import Measure

#: Run lines evaluated together by :func:`evaluate_files` (a larger run file is one batch).
BATCH_LINES = 1 << 18


def _values(parsed: Sequence[Measure], lists: RankedLists, context: Mapping,
            threads: int = 2) -> np.ndarray:
    """``(measures, rows)``: each measure on every row of ``lists`` (on two threads, or
    on the caller's with ``threads=1``)."""
    from .measures.registry import MEASURES

    ctx = {"recall_base": lists.recall_base, "ideal": lists.ideal, "lengths": lists.lengths,
           "level": lists.level, "judged": lists.judged,
           "nonrelevant_base": lists.nonrelevant_base, **context}

    def one(m):
        return np.asarray(MEASURES.get(m.name).compute(lists.relevance, m, ctx), dtype=float)

    if len(parsed) < 2 or threads < 2:
        results = [one(m) for m in parsed]
    else:  # measures are independent, and NumPy releases the GIL on large arrays
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(one, parsed))
    return np.array(results, dtype=float).reshape(len(parsed), len(lists))


def evaluate_lists(measures: Iterable[str], lists: RankedLists, **context) -> pd.DataFrame:
    """Per-(run, topic) values of each measure, as a long table.

    Returns columns ``run, topic, measure, value`` (``measure`` is the canonical string).
    """
    from .measures import parse_measure

    parsed = [parse_measure(m) for m in measures]
    values = _values(parsed, lists, context)
    return _frame(lists.run_ids, lists.query_ids, [repr(m) for m in parsed], values)


def _frame(runs: np.ndarray, topics: np.ndarray, measures: list[str],
           values: np.ndarray) -> pd.DataFrame:
    import pandas as pd

    frames = [pd.DataFrame({"run": runs, "topic": topics, "measure": m, "value": v})
              for m, v in zip(measures, values, strict=True)]
    if not frames:
        return pd.DataFrame(columns=["run", "topic", "measure", "value"])
    return pd.concat(frames, ignore_index=True)


def evaluate_runs(qrels: pd.DataFrame, runs: Mapping[str, pd.DataFrame] | pd.DataFrame,
                  measures: Iterable[str], *, level: int = 1, depth: int | None = None,
                  complete: bool = False, **context) -> pd.DataFrame:
    """Evaluate runs on qrels with trec_eval's conventions (see
    :func:`~bayeschain.io.lists.ranked_lists`).

    The values are those of :func:`evaluate_lists` on ``ranked_lists(runs, qrels, ...)``,
    computed a chunk of runs at a time on matrices of the same width (the longest list), so
    that the relevance matrices stay small enough to be reused."""
    from .io.lists import Judgements, assemble_lists, list_width, rank_parts
    from .measures import parse_measure

    if not isinstance(runs, Mapping):
        from .io.lists import ranked_lists

        return evaluate_lists(measures, ranked_lists(runs, qrels, level=level, depth=depth,
                                                     complete=complete), **context)
    parsed = [parse_measure(m) for m in measures]
    judged = qrels if isinstance(qrels, Judgements) else Judgements(qrels, level)
    if judged.level != int(level):
        from .errors import ParameterError

        raise ParameterError(f"the qrels were prepared for level {judged.level}, not {level}")
    names = list(runs)
    chunks, parts = rank_parts(judged, list(runs.values()), depth=depth)
    width = list_width(parts)

    def one(i: int):
        chunk = chunks[i] if chunks else []
        lists = assemble_lists(judged, [names[j] for j in chunk], parts[i:i + 1],
                               first=chunk[0] if chunk else 0, complete=complete, width=width)
        return lists.run_ids, lists.query_ids, _values(parsed, lists, context, threads=1)

    if len(chunks) < 2:
        done = [one(0)]
    else:                      # a chunk's lists and measures on each thread
        with ThreadPoolExecutor(max_workers=2) as pool:
            done = list(pool.map(one, range(len(chunks))))
    return _frame(np.concatenate([d[0] for d in done]), np.concatenate([d[1] for d in done]),
                  [repr(m) for m in parsed], np.concatenate([d[2] for d in done], axis=1))


def aggregate(per_topic: pd.DataFrame) -> pd.DataFrame:
    """Mean over topics of each (run, measure), keeping the order measures were given."""
    import pandas as pd

    order = pd.unique(per_topic["measure"])
    runs = pd.unique(per_topic["run"])
    table = per_topic.groupby(["run", "measure"], sort=False)["value"].mean()
    return (table.reset_index()
            .assign(run=lambda d: pd.Categorical(d["run"], runs),
                    measure=lambda d: pd.Categorical(d["measure"], order))
            .sort_values(["run", "measure"]).reset_index(drop=True)
            .astype({"run": str, "measure": str}))


@dataclass(frozen=True)
class Evaluation:
    """Per-(run, topic) values of each measure, as arrays.

    Rows come run by run (in the order the runs were given), topics in id order, as in
    :func:`evaluate_runs`; a run with no evaluated topic has no row.

    Attributes
    ----------
    runs : list of str
        The run names.
    run : int array (rows,)
        Each row's run, an index into ``runs``.
    topic : object array (rows,)
        Each row's topic id.
    measures : list of str
        The canonical measure strings.
    values : float array (measures, rows)
    """

    runs: list[str]
    run: np.ndarray
    topic: np.ndarray
    measures: list[str]
    values: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        """The long table of :func:`evaluate_runs` (``run, topic, measure, value``)."""
        names = np.asarray(self.runs, dtype=object)[self.run]
        return _frame(names, self.topic, self.measures, self.values)

    def run_rows(self) -> list[tuple[int, slice]]:
        """``(run, rows)`` for each run that has rows, in order."""
        if self.run.size == 0:
            return []
        starts = np.flatnonzero(np.r_[True, self.run[1:] != self.run[:-1]])
        ends = np.r_[starts[1:], self.run.size]
        return [(int(self.run[s]), slice(int(s), int(e))) for s, e in zip(starts, ends,
                                                                          strict=True)]

    def means(self) -> np.ndarray:
        """``(measures, runs with rows)``: each run's mean over its topics, the number
        :func:`aggregate` gives (bit for bit with pandas 3; pandas 2.2 sums a group in
        another order and may differ in the last bit)."""
        spans = self.run_rows()
        if not spans or not self.measures:
            return np.zeros((len(self.measures), len(spans)))
        if np.isnan(self.values).any():           # pandas skips NaN: let it
            table = aggregate(self.to_frame())
            values = table["value"].to_numpy(dtype=float, na_value=np.nan)
            return values.reshape(len(spans), -1).T
        # what pandas does for contiguous groups without NaN: one np.add.reduceat per
        # group, over the rows in order, divided by the group's size
        starts = np.array([s.start for _, s in spans])
        sizes = np.array([s.stop - s.start for _, s in spans], dtype=float)
        sums = np.add.reduceat(self.values.ravel(),
                               (starts[None, :] + self.values.shape[1]
                                * np.arange(len(self.measures))[:, None]).ravel())
        return sums.reshape(len(self.measures), len(spans)) / sizes


def evaluate_files(qrels, runs: Sequence, measures: Iterable[str], *, level: int = 1,
                   depth: int | None = None, complete: bool = False,
                   batch_lines: int | None = None, **context) -> Evaluation:
    """Read a qrels file and run files and evaluate the runs, as :func:`evaluate_runs`
    would on :func:`~bayeschain.io.read_qrels` and :func:`~bayeschain.io.read_runs`
    (the same values and run names), streaming the runs.

    Two threads read the run files as Arrow tables, a chunk of files of about
    :data:`~bayeschain.io.batches.CHUNK_LINES` lines at a time, and rank each chunk as soon
    as it is read (keeping 13 bytes a ranked document, not the tables); the ranked runs are
    evaluated in batches of about ``batch_lines`` documents (default :data:`BATCH_LINES`)
    while the next files are read, so that memory stays bounded whatever the number of
    runs.  The qrels are prepared once.  Reading starts before the measures, the ranking
    and Arrow's compute functions are imported (the CSV reader needs none of them).  Errors
    come qrels first, then the measure strings, then the run files in order.  A run file
    with no lines is a :class:`~bayeschain.errors.FormatError`; the same file given twice
    a :class:`~bayeschain.errors.ParameterError`.
    """
    from .errors import FormatError, ParameterError
    from .io.batches import CHUNK_LINES, line_chunks
    from .io.trec import (
        check_distinct_files,
        first_run_id,
        read_qrels_table,
        read_run_tables,
        unique_run_names,
    )

    measures = list(measures)
    if depth is not None and int(depth) < 1:
        raise ParameterError(f"depth must be a positive integer, got {depth!r}")
    paths = list(runs)
    budget = max(1, int(BATCH_LINES if batch_lines is None else batch_lines))

    def prepare():
        from .io.lists import Judgements

        return Judgements(read_qrels_table(qrels), level)

    def read(indices: list[int]):
        """Read and rank files ``indices``: their run ids, line counts and ranked rows."""
        tables = read_run_tables([paths[i] for i in indices])
        for i, table in zip(indices, tables, strict=True):
            if table.num_rows == 0:
                raise FormatError("the run has no rankings (an empty run file)",
                                  file=paths[i])
        from .io.arrow import pc

        judged = qrels_ready.result().topics
        for i, table in zip(indices, tables, strict=True):
            found = pc.index_in(table["query_id"], judged)
            if found.null_count == len(found):
                raise FormatError(f"no topic of the run is judged in {qrels} (trec_eval: "
                                  "'No queries with both results and relevance info')",
                                  file=paths[i])
        ids = [first_run_id(t) for t in tables]
        lines = [t.num_rows for t in tables]
        tables = [t.select(["query_id", "doc_id", "score"]) for t in tables]
        from .io.lists import rank_chunk

        return ids, lines, rank_chunk(qrels_ready.result(), indices, tables, depth=depth)

    ids: list[str | None] = []
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def evaluate(batch: list, first: int, n_runs: int) -> None:
        from .io.lists import assemble_lists

        lists = assemble_lists(qrels_ready.result(), list(range(first, first + n_runs)),
                               batch, first=first, complete=complete)
        parts.append((np.asarray(lists.run_ids, dtype=np.int64), lists.query_ids,
                      _values(parsed, lists, context)))

    pool = ThreadPoolExecutor(max_workers=2)
    try:
        qrels_ready = pool.submit(prepare)
        try:
            check_distinct_files(paths)
        except ParameterError:
            qrels_ready.result()                 # qrels errors come first
            raise
        chunks = line_chunks([_size(p) // 40 for p in paths])   # about 40 bytes a line
        pending: deque = deque()
        next_chunk = 0

        def read_ahead() -> None:    # about two batches, and two chunks: both threads busy
            nonlocal next_chunk
            while next_chunk < len(chunks) and (
                    len(pending) < 2 or len(pending) * CHUNK_LINES < 2 * budget):
                pending.append(pool.submit(read, chunks[next_chunk]))
                next_chunk += 1

        read_ahead()
        try:
            from .measures import parse_measure

            parsed = [parse_measure(m) for m in measures]
        except ParameterError:
            qrels_ready.result()
            raise
        qrels_ready.result()
        batch, batch_rows, first = [], 0, 0
        while pending:
            chunk_ids, lines, rows = pending.popleft().result()
            read_ahead()
            ids += chunk_ids
            batch.append(rows)
            batch_rows += sum(lines)
            if batch_rows >= budget:
                evaluate(batch, first, len(ids) - first)
                first, batch, batch_rows = len(ids), [], 0
        if batch or not parts:
            evaluate(batch, first, len(ids) - first)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    run_names = unique_run_names(paths, ids)
    run = np.concatenate([p[0] for p in parts])
    topic = np.concatenate([p[1] for p in parts])
    values = np.concatenate([p[2] for p in parts], axis=1)
    return Evaluation(run_names, run, topic, [repr(m) for m in parsed], values)


def _size(path) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0
