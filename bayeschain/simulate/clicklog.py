"""Synthetic click logs in the canonical schema, from the examination walk with clicks.

Each session issues up to ``max_queries`` queries.  On a page of ``n_ranks`` results the
user walks the ranks as the walk of Ferrante & Ferro (ICTIR 2020) that bayeschain fits
(:mod:`bayeschain.browsing.page_walk`): from rank ``i`` forward with ``p_i``, backward with
``q_i``, next query of the session with ``r_i`` and end of session with the rest; rank 1
has no backward move (its mass ends the session) and at rank ``n`` the forward mass
leaves the page (split between next query and end in their proportion).  On each
examined rank the user clicks with probability ``click_i`` and then reads for an
exponential time of rate ``mu_i`` (seconds); examining a snippet takes ``examine_time``
seconds.

The log is what a real log shows: queries and clicks with times, not the examinations.
Parameter-recovery tests fit models to such logs and compare with the parameters used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..browsing.page_walk import walk_pages
from ..chains.checks import budget_origin, memory_budget, size_text
from ..errors import ParameterError
from ..io.clicklog import RESULT_COLUMNS, ClickLog, canonical_types


def _per_rank(value, n: int, name: str) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ParameterError(f"{name} must be finite and non-negative per rank")
    return arr


#: working memory of a simulation per (session, rank), as measured (10^6 sessions of 10
#: ranks peaked at 2.6 GB)
BYTES_PER_SESSION_RANK = 256
#: sessions simulated at a time when a log is streamed to disk (about 260 MB of working
#: memory with 10 ranks)
BATCH_SESSIONS = 100_000


@dataclass(frozen=True)
class _Walk:
    """Checked parameters of the simulated users (see :func:`simulate_click_log`)."""

    n: int
    moves: np.ndarray
    click: np.ndarray
    repeat: np.ndarray
    mu: np.ndarray
    examine_time: float
    max_queries: int
    max_steps: int
    topics: int
    attractiveness: np.ndarray | None    # (topics * max_queries * n,) per document


def _walk(*, n_ranks, forward, backward, reformulate, click, repeat, holding_rates,
          examine_time, max_queries, max_steps, topics, attractiveness_sd, seed) -> _Walk:
    from ..io.clicklog import MAX_RANK

    n = int(n_ranks)
    if not 1 <= n <= MAX_RANK:
        raise ParameterError(f"need 1 to {MAX_RANK:,} ranks; got {n:,}")
    p = _per_rank(forward, n, "forward")
    q = _per_rank(backward, n, "backward")
    r = _per_rank(reformulate, n, "reformulate")
    c = _per_rank(click, n, "click")
    mu = _per_rank(holding_rates, n, "holding_rates")
    rho = _per_rank(repeat, n, "repeat")
    q[0] = 0.0
    if np.any(p + q + r > 1 + 1e-12) or np.any(c > 1) or np.any(rho >= 1) or np.any(mu <= 0):
        raise ParameterError("need p + q + r <= 1, click <= 1, repeat < 1 and holding rates "
                             "> 0")
    topics = int(topics)
    sd = float(attractiveness_sd)
    if topics < 1 or not np.isfinite(sd) or sd < 0:
        raise ParameterError(f"need at least one topic and attractiveness_sd >= 0; got "
                             f"{topics:,} and {sd}")
    attract = None
    if sd > 0:
        if topics * int(max_queries) * n > 10**8:
            raise ParameterError(f"{topics:,} topics x {int(max_queries)} queries x {n:,} "
                                 f"ranks is more than 10^8 documents")
        # the population, from its own stream: the same documents for every batch of users
        pop = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        with np.errstate(divide="ignore"):
            base = np.log(c) - np.log1p(-c)
        z = pop.standard_normal((topics * int(max_queries), n))
        attract = (1.0 / (1.0 + np.exp(-(base[None, :] + sd * z)))).ravel()
    moves = np.stack([p, q, r, np.clip(1.0 - p - q - r, 0.0, None)], axis=1)
    return _Walk(n, moves, c, rho, mu, float(examine_time), int(max_queries), int(max_steps),
                 topics, attract)


def simulate_click_log(n_sessions: int, *, n_ranks: int = 10, forward=0.6, backward=0.15,
                       reformulate=0.05, click=0.3, repeat=0.0, holding_rates=0.05,
                       examine_time: float = 1.0, max_queries: int = 3, seed=None,
                       max_steps: int = 10_000, topics: int = 1000,
                       attractiveness_sd: float = 0.0) -> ClickLog:
    """Simulate a click log in memory (see the module docstring;
    :func:`write_click_log` streams a large one to disk).

    Parameters
    ----------
    forward, backward, reformulate : float or array (n_ranks,)
        ``p_i``, ``q_i``, ``r_i`` (``backward`` at rank 1 is ignored: that mass ends the
        session).  The stop probability is ``1 - p - q - r``.
    click : float or array (n_ranks,)
        Probability of clicking an examined rank (with ``attractiveness_sd > 0``: the
        population's median attractiveness at that rank).
    repeat : float or array (n_ranks,)
        Probability of clicking the same result again right after a click (a repeat; the
        user reads it again, then may repeat again).
    holding_rates : float or array (n_ranks,)
        Rate of the exponential reading time after a click (mean ``1 / mu`` seconds).
    topics : each session's topic is drawn uniformly from this many; its ``k``-th query is
        the topic's ``k``-th formulation (query id ``q<topic>-<k>``).
    attractiveness_sd : 0 (default): every page shows documents of its own and the click
        probability is the rank's.  Above 0: a population of documents, each query always
        showing the same ``n_ranks`` documents (``d<topic>-<k>-<rank>``), each with its own
        attractiveness ``logit alpha = logit click_rank + attractiveness_sd z``,
        ``z ~ N(0, 1)`` (drawn from the seed, the same for every session).
    """
    u = int(n_sessions)
    walk = _walk(n_ranks=n_ranks, forward=forward, backward=backward,
                 reformulate=reformulate, click=click, repeat=repeat,
                 holding_rates=holding_rates, examine_time=examine_time,
                 max_queries=max_queries, max_steps=max_steps, topics=topics,
                 attractiveness_sd=attractiveness_sd, seed=seed)
    if u < 1:
        raise ParameterError(f"need at least one session; got {u:,}")
    need = float(u) * walk.n * BYTES_PER_SESSION_RANK
    if need > memory_budget():
        raise ParameterError(f"simulating {u:,} sessions of {walk.n:,} ranks would hold about "
                             f"{size_text(need)} ({BYTES_PER_SESSION_RANK} bytes per session "
                             f"and rank, as measured); the limit is "
                             f"{size_text(memory_budget())} ({budget_origin()}); "
                             f"write_click_log streams larger logs to disk")
    events, results = _shift(*_batch(walk, u, np.random.default_rng(seed)), 0, 0, 0)
    return ClickLog(events, results, {}, has_sessions=True, has_time=True,
                    source="simulated")


def _batch(w: _Walk, u: int, rng) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Events and result pages of ``u`` sessions (ids, pages and ``seq`` from 0)."""
    n = w.n
    clock = rng.uniform(0, 10, u)
    topic = rng.integers(0, w.topics, size=u) if w.attractiveness is not None else None
    query_no = np.zeros(u, dtype=np.int64)
    alive = np.arange(u)
    positions = np.arange(n)
    records = []   # (session, query_no, kind, rank, time); kind 0 = query, 1 = click
    while alive.size:
        records.append((alive, query_no[alive], np.zeros(alive.size, np.int8),
                        np.zeros(alive.size, np.int64), clock[alive].copy()))
        index = np.broadcast_to(positions, (alive.size, n))
        if w.attractiveness is None:
            click, click_index = w.click, index
        else:       # the documents of each page's query
            query = topic[alive] * w.max_queries + query_no[alive]
            click, click_index = w.attractiveness, query[:, None] * n + positions[None, :]
        walked = walk_pages(np.full(alive.size, n), index, click_index, w.moves, click,
                            repeat=w.repeat, seed=int(rng.integers(2**32)),
                            max_steps=w.max_steps)
        if np.any(walked.outcome < 0):
            raise ParameterError(f"users still browsing after {w.max_steps} steps")
        dwell = rng.exponential(1.0 / w.mu[walked.click_rank - 1])
        # reading time of the earlier clicks of the same page (a sum within each page, so
        # that no rounding puts a click before its page's query)
        before = pd.Series(dwell).groupby(walked.click_page).cumsum().to_numpy() - dwell
        start = clock[alive]
        who = alive[walked.click_page]
        times = (start[walked.click_page] + walked.click_step * w.examine_time
                 + np.maximum(before, 0.0))
        records.append((who, query_no[who], np.ones(who.size, np.int8), walked.click_rank,
                        times))
        read = np.bincount(walked.click_page, weights=dwell, minlength=alive.size)
        clock[alive] = start + walked.steps * w.examine_time + read
        query_no[alive] += 1
        alive = alive[(walked.outcome == 0) & (query_no[alive] < w.max_queries)]
    if topic is None:
        topic = rng.integers(0, w.topics, size=u)
    return _tables(records, n, topic, documents=w.attractiveness is not None)


def _tables(records, n_ranks: int, topic: np.ndarray, *, documents: bool):
    session = np.concatenate([rec[0] for rec in records])
    qno = np.concatenate([rec[1] for rec in records])
    kind = np.concatenate([rec[2] for rec in records])
    rank = np.concatenate([rec[3] for rec in records])
    time = np.concatenate([rec[4] for rec in records])
    order = np.lexsort((kind == 1, time, session))       # a page's query before its clicks
    session, qno, kind, rank, time = (a[order] for a in (session, qno, kind, rank, time))
    is_query = kind == 0
    serp = np.cumsum(is_query) - 1
    query_id = _ids("q", topic[session], qno)
    # the documents of the query, or documents of the page's own
    doc = _ids("d", topic[session], qno, rank) if documents else _ids("d", serp, rank)
    events = pd.DataFrame({
        "session_id": session, "query_id": query_id,
        "serp_id": serp, "event": np.where(is_query, "query", "click"),
        "rank": np.where(is_query, pd.NA, rank), "doc_id": doc.where(~is_query, None),
        "time": time, "end_time": np.nan, "seq": np.arange(session.size)})
    pages = np.flatnonzero(is_query)
    ranks = np.tile(np.arange(1, n_ranks + 1), pages.size)
    results = pd.DataFrame({"serp_id": np.repeat(serp[pages], n_ranks), "rank": ranks})
    results["doc_id"] = _ids("d", np.repeat(topic[session[pages]], n_ranks),
                             np.repeat(qno[pages], n_ranks), ranks) if documents else \
        _ids("d", results["serp_id"].to_numpy(), ranks)
    return events, results[RESULT_COLUMNS]


def _ids(prefix: str, *parts: np.ndarray) -> pd.Series:
    """``prefix`` and the integers joined by ``-`` (``d12-0-3``), built by Arrow: the
    NumPy way (fixed-width unicode arrays) took 1 GB for 100,000 sessions."""
    import pyarrow as pa
    import pyarrow.compute as pc

    texts = [pc.cast(pa.array(np.asarray(x, dtype=np.int64)), pa.string()) for x in parts]
    joined = pc.binary_join_element_wise(*texts, "-")
    return pd.Series(pc.binary_join_element_wise(pa.scalar(prefix), joined, ""),
                     dtype="string")


def _shift(events: pd.DataFrame, results: pd.DataFrame, sessions: int, pages: int,
           seq: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A batch's ids moved past those of the batches before it (session ids as text)."""
    events = events.assign(session_id=(events["session_id"] + sessions).astype(str),
                           serp_id=events["serp_id"] + pages, seq=events["seq"] + seq)
    return canonical_types(events), results.assign(serp_id=results["serp_id"] + pages)


#: bytes a simulated session takes on disk (10 ranks, default walk, as measured:
#: Parquet events 52, results 70; CSV events 190, results 330), with a margin
DISK_BYTES = {".parquet": (80, 110), ".csv": (250, 420), ".tsv": (250, 420)}


def write_click_log(path, n_sessions: int, *, results=None, force: bool = False,
                    report=None, batch_sessions: int = BATCH_SESSIONS, seed=None,
                    **walk) -> dict:
    """Simulate a click log straight to disk, :data:`BATCH_SESSIONS` sessions at a time:
    memory stays bounded (about 260 MB with 10 ranks) for any number of sessions.

    ``path``: the events (``.parquet``: one row group per batch, ``.csv``, ``.tsv``);
    ``results``: where to write the pages' documents (``serp_id, rank, doc_id``; the
    ``--results`` of ``bayeschain fit``), or ``None``.  Both are written atomically:
    an error or an interruption leaves neither.  The keywords are those of
    :func:`simulate_click_log`; for the same seed a log of at most ``batch_sessions``
    sessions equals ``simulate_click_log``'s.  ``report(done, total)`` is called after each
    batch.  Returns the counts written (sessions, pages, clicks).
    """
    import shutil
    from pathlib import Path

    from ..io.write import atomic_outputs, check_output_path

    u = int(n_sessions)
    targets = [Path(path)] + ([Path(results)] if results is not None else [])
    for target in targets:
        if target.suffix.lower() not in DISK_BYTES:
            raise ParameterError(f"{target}: unknown extension; use .parquet, .csv or .tsv")
        check_output_path(target, force=force)
    if len(targets) == 2 and targets[0].resolve() == targets[1].resolve():
        raise ParameterError("the events and the results need two different files")
    import inspect

    # the defaults are simulate_click_log's: one home
    known = {k: p.default for k, p in inspect.signature(simulate_click_log).parameters.items()
             if p.kind is p.KEYWORD_ONLY and k != "seed"}
    unknown = sorted(set(walk) - set(known))
    if unknown:
        raise ParameterError(f"unknown simulation parameter(s) {unknown}")
    w = _walk(**{**known, **walk}, seed=seed)
    if u < 1:
        raise ParameterError(f"need at least one session; got {u:,}")
    need = 0.0
    for k, target in enumerate(targets):
        need += u * DISK_BYTES[target.suffix.lower()][k] * w.n / 10
    free = shutil.disk_usage(targets[0].resolve().parent).free
    if need > free:
        raise ParameterError(f"writing {u:,} sessions of {w.n:,} ranks would take about "
                             f"{size_text(need)} on disk (as measured per session); the limit "
                             f"is the {size_text(free)} free in {targets[0].resolve().parent}")
    # deep pages get smaller batches, within half the memory budget
    batch_sessions = max(1, min(int(batch_sessions),
                                int(memory_budget() // 2 // (BYTES_PER_SESSION_RANK * w.n))))
    rng = np.random.default_rng(seed)
    done = {"sessions": 0, "pages": 0, "clicks": 0}
    seq = 0
    with atomic_outputs(force=force) as out:
        writers = [_TableWriter(out.reserve(t)) for t in targets]
        try:
            while done["sessions"] < u:
                size = min(batch_sessions, u - done["sessions"])
                events, pages = _shift(*_batch(w, size, rng), done["sessions"], done["pages"],
                                       seq)
                writers[0].write(events)
                if len(writers) == 2:
                    writers[1].write(pages)
                is_query = events["event"] == "query"
                seq += len(events)
                done["sessions"] += size
                done["pages"] += int(is_query.sum())
                done["clicks"] += int((~is_query).sum())
                if report is not None:
                    report(done["sessions"], u)
        finally:
            for writer in writers:
                writer.close()
    return done


class _TableWriter:
    """Frames appended to one file: Parquet row groups (one schema, fixed by the first
    frame), or CSV / TSV rows under one header."""

    def __init__(self, path):
        self.path = path
        self.parquet = str(path).lower().endswith(".parquet")
        self.writer = None
        self.rows = 0

    def write(self, frame: pd.DataFrame) -> None:
        from ..io.write import naming_os_errors

        with naming_os_errors(self.path):
            if self.parquet:
                import pyarrow as pa
                import pyarrow.parquet as pq

                table = pa.Table.from_pandas(frame, preserve_index=False,
                                             schema=None if self.writer is None
                                             else self.writer.schema)
                if self.writer is None:
                    self.writer = pq.ParquetWriter(self.path, table.schema)
                self.writer.write_table(table)
            else:
                frame.to_csv(self.path, sep="\t" if str(self.path).lower().endswith(".tsv")
                             else ",", index=False, header=self.rows == 0,
                             mode="w" if self.rows == 0 else "a")
        self.rows += len(frame)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
