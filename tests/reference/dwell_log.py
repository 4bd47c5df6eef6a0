"""An independent simulator of timed click logs with a known dwell-time truth (test helper;
shares no code with bayeschain's dwell model).

Each session issues 1-3 queries drawn from a pool; each query shows its ten documents, in
their usual order or (on a third of the pages) shuffled, so that rank and document effects
are told apart.  On a page the user waits an examination time ``Exp(mean exam)`` before the
first click; each click's dwell has mean ``exp(beta[rank] + u[query] + v[query, doc])``
(the family chosen); the log records the click's end with probability ``p_end``; the next
click comes an examination time after the dwell; after the page's last click the user
writes the next query (``Exp(mean write)``, another law than the examination) or, on the
session's last page, leaves: that last click is the satisfied one, its mean dwell
``last`` times longer (no later event; no end time unless recorded).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bayeschain.io.clicklog import ClickLog, make_events

RANKS = 10


@dataclass
class DwellTruth:
    beta: np.ndarray          # (RANKS,) log mean dwell of the typical document per rank
    u: np.ndarray             # (queries,) query effects
    v: np.ndarray             # (queries, RANKS) (query, document) effects, document j = d{j}
    family: str
    shape: float
    exam: float               # mean examination time (s)
    write: float              # mean time to write the next query (s)
    last: float = 3.0         # the session's last click stays this many times longer

    def log_mean(self, q: int, r: int, doc: int) -> float:
        """Document ``doc`` (0-based) of query ``q`` shown at rank ``r``."""
        return float(self.beta[r - 1] + self.u[q] + self.v[q, doc])


def truth(seed: int, queries: int, family: str = "lognormal", shape: float = 1.0,
          doc_sd: float = 0.5, query_sd: float = 0.3) -> DwellTruth:
    rng = np.random.default_rng(seed)
    beta = np.log(40.0) - 0.12 * np.arange(RANKS)           # shorter dwells deeper down
    return DwellTruth(beta, rng.normal(0, query_sd, queries),
                      rng.normal(0, doc_sd, (queries, RANKS)), family, shape, 4.0, 20.0)


def _dwell(rng, t: DwellTruth, log_mean: float) -> float:
    mean = math.exp(log_mean)
    if t.family == "exponential":
        return rng.exponential(mean)
    if t.family == "lognormal":
        return math.exp(rng.normal(log_mean - t.shape**2 / 2, t.shape))
    if t.family == "gamma":
        return rng.gamma(t.shape, mean / t.shape)
    if t.family == "weibull":
        return mean / math.gamma(1 + 1 / t.shape) * rng.weibull(t.shape)
    raise ValueError(t.family)


def simulate_log(t: DwellTruth, sessions: int, seed: int, p_end: float = 0.3) -> ClickLog:
    rng = np.random.default_rng(seed)
    cols = ("session_id", "query_id", "serp_id", "event", "rank", "doc_id", "time",
            "end_time", "seq")
    rows = {c: [] for c in cols}
    seq = serp = 0

    def add(*values):
        nonlocal seq
        for c, v in zip(cols, values + (seq,), strict=True):
            rows[c].append(v)
        seq += 1

    n_queries = t.u.size
    for s in range(sessions):
        now = 0.0
        pages = int(rng.integers(1, 4))
        for page in range(pages):
            q = int(rng.integers(n_queries))
            add(f"s{s}", f"q{q}", serp, "query", None, None, now, np.nan)
            order = rng.permutation(RANKS) if rng.random() < 1 / 3 else np.arange(RANKS)
            clicks = int(rng.integers(1, 4))
            ranks = rng.choice(np.arange(1, RANKS + 1), size=clicks, replace=False,
                               p=np.linspace(2, 1, RANKS) / np.linspace(2, 1, RANKS).sum())
            for k, r in enumerate(ranks):
                now += rng.exponential(t.exam)
                doc = int(order[r - 1])
                final = page == pages - 1 and k == len(ranks) - 1
                dwell = _dwell(rng, t, t.log_mean(q, int(r), doc)
                               + (math.log(t.last) if final else 0.0))
                end = now + dwell if rng.random() < p_end else np.nan
                add(f"s{s}", f"q{q}", serp, "click", int(r), f"d{doc}", now, end)
                now += dwell
            serp += 1
            if page < pages - 1:
                now += rng.exponential(t.write)
    return ClickLog(make_events(rows))
