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


def simulate_click_log(n_sessions: int, *, n_ranks: int = 10, forward=0.6, backward=0.15,
                       reformulate=0.05, click=0.3, repeat=0.0, holding_rates=0.05,
                       examine_time: float = 1.0, max_queries: int = 3, seed=None,
                       max_steps: int = 10_000) -> ClickLog:
    """Simulate a click log (see the module docstring).

    Parameters
    ----------
    forward, backward, reformulate : float or array (n_ranks,)
        ``p_i``, ``q_i``, ``r_i`` (``backward`` at rank 1 is ignored: that mass ends the
        session).  The stop probability is ``1 - p - q - r``.
    click : float or array (n_ranks,)
        Probability of clicking an examined rank.
    repeat : float or array (n_ranks,)
        Probability of clicking the same result again right after a click (a repeat; the
        user reads it again, then may repeat again).
    holding_rates : float or array (n_ranks,)
        Rate of the exponential reading time after a click (mean ``1 / mu`` seconds).
    """
    from ..io.clicklog import MAX_RANK

    n = int(n_ranks)
    if not 1 <= n <= MAX_RANK or int(n_sessions) < 1:
        raise ParameterError(f"need at least one session and 1 to {MAX_RANK:,} ranks; got "
                             f"{int(n_sessions):,} sessions of {n:,} ranks")
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
    moves = np.stack([p, q, r, np.clip(1.0 - p - q - r, 0.0, None)], axis=1)
    rng = np.random.default_rng(seed)
    u = int(n_sessions)
    # measured: 10^6 sessions of 10 ranks peak at 2.6 GB, about 256 bytes a (session, rank)
    need = float(u) * n * 256
    if need > memory_budget():
        raise ParameterError(f"simulating {u:,} sessions of {n:,} ranks would hold about "
                             f"{size_text(need)} (256 bytes per session and rank, as measured); "
                             f"the limit is {size_text(memory_budget())} ({budget_origin()})")
    clock = rng.uniform(0, 10, u)
    query_no = np.zeros(u, dtype=np.int64)
    alive = np.arange(u)
    positions = np.arange(n)
    records = []   # (session, query_no, kind, rank, time); kind 0 = query, 1 = click
    while alive.size:
        records.append((alive, query_no[alive], np.zeros(alive.size, np.int8),
                        np.zeros(alive.size, np.int64), clock[alive].copy()))
        index = np.broadcast_to(positions, (alive.size, n))
        walked = walk_pages(np.full(alive.size, n), index, index, moves, c, repeat=rho,
                            seed=int(rng.integers(2**32)), max_steps=max_steps)
        if np.any(walked.outcome < 0):
            raise ParameterError(f"users still browsing after {max_steps} steps")
        dwell = rng.exponential(1.0 / mu[walked.click_rank - 1])
        # reading time of the earlier clicks of the same page (a sum within each page, so
        # that no rounding puts a click before its page's query)
        before = pd.Series(dwell).groupby(walked.click_page).cumsum().to_numpy() - dwell
        start = clock[alive]
        who = alive[walked.click_page]
        times = (start[walked.click_page] + walked.click_step * examine_time
                 + np.maximum(before, 0.0))
        records.append((who, query_no[who], np.ones(who.size, np.int8), walked.click_rank,
                        times))
        read = np.bincount(walked.click_page, weights=dwell, minlength=alive.size)
        clock[alive] = start + walked.steps * examine_time + read
        query_no[alive] += 1
        alive = alive[(walked.outcome == 0) & (query_no[alive] < max_queries)]
    return _to_log(records, n, rng)


def _to_log(records, n_ranks: int, rng) -> ClickLog:
    session = np.concatenate([rec[0] for rec in records])
    qno = np.concatenate([rec[1] for rec in records])
    kind = np.concatenate([rec[2] for rec in records])
    rank = np.concatenate([rec[3] for rec in records])
    time = np.concatenate([rec[4] for rec in records])
    order = np.lexsort((kind == 1, time, session))       # a page's query before its clicks
    session, qno, kind, rank, time = (a[order] for a in (session, qno, kind, rank, time))
    is_query = kind == 0
    serp = np.cumsum(is_query) - 1
    topic = rng.integers(0, 1000, size=session.max() + 1 if session.size else 0)
    query_id = np.char.add(np.char.add("q", topic[session].astype(str)), np.char.add("-",
                           qno.astype(str)))
    doc = np.char.add(np.char.add("d", serp.astype(str)), np.char.add("-", rank.astype(str)))
    events = pd.DataFrame({
        "session_id": session.astype(str), "query_id": query_id,
        "serp_id": serp, "event": np.where(is_query, "query", "click"),
        "rank": np.where(is_query, pd.NA, rank), "doc_id": np.where(is_query, None, doc),
        "time": time, "end_time": np.nan, "seq": np.arange(session.size)})
    pages = np.flatnonzero(is_query)
    results = pd.DataFrame({
        "serp_id": np.repeat(serp[pages], n_ranks),
        "rank": np.tile(np.arange(1, n_ranks + 1), pages.size)})
    results["doc_id"] = ("d" + results["serp_id"].astype(str) + "-"
                         + results["rank"].astype(str))
    return ClickLog(canonical_types(events), results[RESULT_COLUMNS], {},
                    has_sessions=True, has_time=True, source="simulated")
