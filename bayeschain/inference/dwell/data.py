r"""The dwell times a click log shows, each with what the log really knows about it.

A click starts at ``time``; how long the user stayed on the document (the *dwell*) is known
in one of four ways:

========== ======================================= ============================================
kind       when                                     what it says about the dwell ``D``
========== ======================================= ============================================
``exact``  the log records the click's end          ``D = end - time``
``gap``    no end; the next event is a click on     ``next - time = D + E``: the dwell plus an
           the same page                            examination time ``E`` (back on the page,
                                                    scanning snippets to the next click)
``query``  no end; the next event is a new query    ``next - time = D + W``: the dwell plus the
                                                    time ``W`` to write the next query
``open``   no end and no later event (the           nothing about its length: a right-censored
           session's last click)                    time with lower bound 0
========== ======================================= ============================================

Every click is also marked ``last`` when nothing followed it in its session (no later
click, no new query): the session's last click, after which the user stopped searching
(satisfied, or gave up).  Those clicks' dwells are longer in real logs; the model gives
them their own shift and weighs the two kinds of click by their share at each rank
(:mod:`bayeschain.inference.dwell.model`), so dropping the ``open`` ones no longer biases
the rates upward: the share of last clicks is known from the log even where their times
are not.

Taking ``next - time`` as the dwell (what the sufficient statistics of
:mod:`bayeschain.inference.clicks.data` do) counts the examination and the writing of the next
query as dwell, and biases the rates of the deep ranks downward (issue 17: ranks 9-10
recovered at 0.152 / 0.149 against the true 0.18 / 0.20 with one second of examination).

The examination time is observed directly on every page whose first click the log times:
``delay = first click - query``.  These delays are the ``scan`` observations; the model
of :mod:`bayeschain.inference.dwell.model` gives them the law of ``E``, which separates
``D`` from ``E`` in the gaps (without them the sum of two exponentials is symmetric in
the two rates and the dwell is not identified).  The writing time ``W`` has its own
exponential law: reading a query gap as the bound ``D <= next - time`` would be wrong (the
bound's probability ``F(next - time)`` grows as dwells shorten, and a simulated log's
rates came out 20-50% too high), because the gap is ``D + W`` with ``W`` of some law,
not a censoring time independent of ``D``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import ParameterError
from ...io.clicklog import ClickLog

KINDS = ("exact", "gap", "query", "open")


@dataclass(frozen=True)
class DwellObservations:
    """One row per click in ``clicks`` (``rank`` capped at the model's ranks, ``query_id``,
    ``doc_id``, ``kind``, ``last`` (nothing followed it in its session), ``time``: the
    dwell or the time to the next event in seconds;
    NaN for ``open``) and the examination delays ``scan`` (seconds, one per timed page)."""

    clicks: pd.DataFrame
    scan: np.ndarray
    ranks: int

    def of_kind(self, kind: str) -> pd.DataFrame:
        return self.clicks[self.clicks["kind"] == kind]

    def counts(self) -> dict[str, int]:
        """Clicks of each kind, the sessions' last clicks, and the timed pages."""
        got = self.clicks["kind"].value_counts()
        return {**{k: int(got.get(k, 0)) for k in KINDS}, "last": int(self.clicks["last"].sum()),
                "scan": int(self.scan.size)}

    def last_share(self) -> np.ndarray:
        """Per rank (1..ranks), the share of clicks that were their session's last."""
        ranks = self.clicks["rank"].to_numpy() - 1
        total = np.bincount(ranks, minlength=self.ranks)
        last = np.bincount(ranks, weights=self.clicks["last"].to_numpy(float),
                           minlength=self.ranks)
        return np.divide(last, total, out=np.zeros(self.ranks), where=total > 0)


def dwell_observations(log: ClickLog, ranks: int) -> DwellObservations:
    """The dwell observations of ``log`` (see the module docstring); ranks deeper than
    ``ranks`` are pooled into the last one.  A log without a clock has none."""
    if int(ranks) < 1:
        raise ParameterError("ranks must be >= 1")
    clicks, _, _ = log.observations()
    start = clicks["time"].to_numpy(dtype=float, na_value=np.nan)
    end = clicks["end_time"].to_numpy(dtype=float, na_value=np.nan)
    after = clicks["next_time"].to_numpy(dtype=float, na_value=np.nan)
    next_rank = clicks["next_rank"].to_numpy(dtype=float, na_value=np.nan)
    timed = np.isfinite(start)
    kind = np.full(len(clicks), "open", dtype=object)
    # the session's last click: no later click on its page, and the page ended the session
    # (or, in a log without sessions, the page's last click)
    last = ~np.isfinite(next_rank) & (clicks["outcome"].to_numpy() != "next_query") \
        & ~(timed & np.isfinite(after))          # nothing at all came after it
    value = np.full(len(clicks), np.nan)
    exact = timed & np.isfinite(end)
    gap = timed & ~exact & np.isfinite(after) & np.isfinite(next_rank)
    query = timed & ~exact & ~gap & np.isfinite(after)
    kind[exact], value[exact] = "exact", (end - start)[exact]
    kind[gap], value[gap] = "gap", (after - start)[gap]
    kind[query], value[query] = "query", (after - start)[query]
    # a zero time (same-second clock) is the clock's resolution, not a length: impossible
    # under a continuous law, such times are left out (``open``)
    zero = np.isfinite(value) & (value <= 0)
    kind[zero] = "open"
    value[zero] = np.nan
    table = pd.DataFrame({
        "rank": np.minimum(clicks["rank"].to_numpy(dtype=np.int64), int(ranks)),
        "query_id": clicks["query_id"].astype(str).to_numpy(),
        "doc_id": clicks["doc_id"].astype(str).to_numpy(),
        "kind": kind, "last": last, "time": value})
    return DwellObservations(table, _scan_delays(log.events, clicks), int(ranks))


def _scan_delays(events: pd.DataFrame, clicks: pd.DataFrame) -> np.ndarray:
    """``first click - query`` of every page whose query and first click are timed and
    strictly ordered in time."""
    queries = events[(events["event"] == "query") & events["serp_id"].notna()]
    shown = pd.Series(queries["time"].to_numpy(dtype=float, na_value=np.nan),
                      index=queries["serp_id"].to_numpy(dtype=np.int64))
    shown = shown[~shown.index.duplicated()]
    first = clicks[clicks["k"] == 1]
    at = shown.reindex(first["serp_id"].to_numpy(dtype=np.int64)).to_numpy()
    delay = first["time"].to_numpy(dtype=float, na_value=np.nan) - at
    return delay[np.isfinite(delay) & (delay > 0)]
