"""From click-log statistics to the counts the models see.

* **Transitions** after a click on rank ``i`` (ranks deeper than the spec's ``ranks`` are
  pooled into the last one): ``forward`` (the next click on the page is at a deeper
  rank), ``backward`` (at a higher rank), ``stop`` (the last click, and the session
  ends) and ``reformulate`` (the last click, and the user issues another query).  A click
  followed by a click on the same rank (a repeat) says nothing about moving and is left
  out, counted in ``repeats``.  When the log has no sessions, what followed a page is
  unknown: leaving the page then counts as ``stop``.  A spec without ``reformulate``
  merges it into ``stop``.
* **Dwell** per rank: ``n``, ``sum``, ``sum_log``, ``sum_log2`` of the observed dwell
  times and the number of right-censored ones.  A censored dwell with no known lower
  bound contributes a factor 1 to the exponential and log-normal likelihoods, so it is
  reported, not used.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import ParameterError
from ...io.clickstats_tables import TABLES, ClickStats


@dataclass(frozen=True)
class ModelData:
    """Counts per rank for the models (rank axis first)."""

    ranks: int
    categories: tuple[str, ...]
    transitions: np.ndarray      # (ranks, categories) counts
    repeats: np.ndarray          # (ranks,)
    dwell_n: np.ndarray          # (ranks,)
    dwell_sum: np.ndarray
    dwell_sum_log: np.ndarray
    dwell_sum_log2: np.ndarray
    dwell_censored: np.ndarray
    digest: str
    moves: np.ndarray | None = None      # (ranks, ranks) click i -> next click j, repeats in
    dwell_obs: object = None             # DwellObservations, for dwell models on each click

    @property
    def coords(self) -> dict:
        """Coordinates of the models' variables: ``rank`` and ``to_rank`` (1..ranks) and
        the transition ``category``."""
        ranks = np.arange(1, self.ranks + 1)
        return {"rank": ranks, "category": list(self.categories), "to_rank": ranks}


def model_data(stats: ClickStats, ranks: int, categories=("forward", "backward", "stop",
                                                           "reformulate")) -> ModelData:
    """Aggregate :class:`~bayeschain.io.clickstats.ClickStats` into per-rank counts."""
    cats = tuple(categories)
    if not {"forward", "backward", "stop"} <= set(cats):
        raise ParameterError("transition categories must include forward, backward and stop")
    if int(ranks) < 1:
        raise ParameterError("ranks must be >= 1")
    r = int(ranks)
    counts = np.zeros((r, len(cats)))
    repeats = np.zeros(r)
    col = {c: i for i, c in enumerate(cats)}
    t = stats.transitions
    if "query_id" in t:
        raise ParameterError("model data takes statistics without by_query")
    frm = np.minimum(t["from_rank"].to_numpy(), r) - 1
    to = t["to_rank"].to_numpy()
    n = t["count"].to_numpy(dtype=float, na_value=np.nan)
    origin = t["from_rank"].to_numpy()
    np.add.at(counts[:, col["forward"]], frm[to > origin], n[to > origin])
    np.add.at(counts[:, col["backward"]], frm[to < origin], n[to < origin])
    np.add.at(repeats, frm[to == origin], n[to == origin])
    last = stats.last_clicks
    lr = np.minimum(last["rank"].to_numpy(), r) - 1
    outcome = last["outcome"].to_numpy()
    ln = last["count"].to_numpy(dtype=float, na_value=np.nan)
    refo = col.get("reformulate", col["stop"])
    np.add.at(counts[:, col["stop"]], lr[outcome != "next_query"], ln[outcome != "next_query"])
    np.add.at(counts[:, refo], lr[outcome == "next_query"], ln[outcome == "next_query"])
    d = stats.dwell
    dr = np.minimum(d["rank"].to_numpy(), r) - 1
    sums = {}
    for name in ("n", "sum", "sum_log", "sum_log2", "censored"):
        v = np.zeros(r)
        np.add.at(v, dr, d[name].to_numpy(dtype=float, na_value=np.nan))
        sums[name] = v
    return ModelData(r, cats, counts, repeats, sums["n"], sums["sum"], sums["sum_log"],
                     sums["sum_log2"], sums["censored"], stats_digest(stats),
                     _jump_counts(stats, r))


def _jump_counts(stats: ClickStats, r: int) -> np.ndarray:
    """``(r, r)`` counts of click ``i`` -> next click ``j`` on ranks 1..r (deeper clicks
    left out): what ``[jumps]`` learns from."""
    t = stats.transitions
    ok = (t["from_rank"] <= r) & (t["to_rank"] <= r)
    moves = np.zeros((r, r))
    np.add.at(moves, (t.loc[ok, "from_rank"].to_numpy() - 1, t.loc[ok, "to_rank"].to_numpy()
                      - 1), t.loc[ok, "count"].to_numpy(dtype=float, na_value=np.nan))
    return moves


def stats_digest(stats: ClickStats) -> str:
    """A hash of the statistics: what a saved posterior was fitted to."""
    h = hashlib.sha256()
    for name in TABLES:
        h.update(pd.util.hash_pandas_object(stats.table(name), index=False).values.tobytes())
    return h.hexdigest()[:16]
