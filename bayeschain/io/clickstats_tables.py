"""The sufficient statistics of a click log as tables (:class:`ClickStats`): their columns
(``TABLES``) and canonical form (``canonical``), shared by the pandas, DuckDB and Dask back
ends of :func:`bayeschain.io.click_statistics`, whose docstring defines each table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

TABLES = {
    "transitions": (["from_rank", "to_rank"], ["count"]),
    "last_clicks": (["rank", "outcome"], ["count"]),
    "first_clicks": (["rank"], ["count"]),
    "dwell": (["rank"], ["n", "sum", "sum_log", "sum_log2", "censored", "nonpositive"]),
    "pages": (["outcome", "clicked"], ["count"]),
}


@dataclass(frozen=True)
class ClickStats:
    """Sufficient statistics of a click log (see the module docstring)."""

    transitions: pd.DataFrame
    last_clicks: pd.DataFrame
    first_clicks: pd.DataFrame
    dwell: pd.DataFrame
    pages: pd.DataFrame
    off_page_clicks: int = 0
    #: sessions in the log (-1: not counted, e.g. statistics from observations alone)
    sessions: int = -1

    def table(self, name: str) -> pd.DataFrame:
        return getattr(self, name)

    def counts(self) -> dict[str, int]:
        """Sessions, pages and clicks (on the pages and off them) the tables count."""
        on_page = int(self.transitions["count"].sum() + self.last_clicks["count"].sum())
        return {"sessions": int(self.sessions), "pages": int(self.pages["count"].sum()),
                "clicks": on_page + int(self.off_page_clicks)}

    def backward_share(self) -> float:
        """Share of click-to-click transitions that go to a higher rank (backward)."""
        t = self.transitions
        total = t["count"].sum()
        return float(t.loc[t["to_rank"] < t["from_rank"], "count"].sum() / total) if total \
            else float("nan")

    def clicks_per_rank(self) -> pd.Series:
        """Clicks on each rank (first clicks plus the arrivals of transitions)."""
        first = self.first_clicks.groupby("rank")["count"].sum()
        moved = self.transitions.groupby("to_rank")["count"].sum()
        return first.add(moved, fill_value=0).astype(int).sort_index()

    def transition_matrix(self, n_ranks: int | None = None) -> np.ndarray:
        """Counts ``C[i-1, j-1]`` of transitions from rank ``i`` to ``j``."""
        t = self.transitions.groupby(["from_rank", "to_rank"])["count"].sum().reset_index()
        n = n_ranks or int(max(t["from_rank"].max(), t["to_rank"].max())) if len(t) else \
            (n_ranks or 0)
        m = np.zeros((n, n))
        keep = (t["from_rank"] <= n) & (t["to_rank"] <= n)
        np.add.at(m, (t.loc[keep, "from_rank"].to_numpy() - 1,
                      t.loc[keep, "to_rank"].to_numpy() - 1), t.loc[keep, "count"].to_numpy())
        return m


def canonical(stats: ClickStats) -> ClickStats:
    """Canonical types and row order, so that backends compare equal."""
    tables = {}
    for name, (keys, values) in TABLES.items():
        t = stats.table(name).copy()
        cols = (["query_id"] if "query_id" in t else []) + keys
        for c in cols:
            if c in ("from_rank", "to_rank", "rank"):
                t[c] = t[c].astype("int64")
            elif c == "clicked":
                t[c] = t[c].astype(bool)
            else:
                t[c] = t[c].astype(str)
        for c in values:
            t[c] = t[c].astype("float64" if c.startswith("sum") else "int64")
        tables[name] = t[cols + values].sort_values(cols).reset_index(drop=True)
    return ClickStats(**tables, off_page_clicks=int(stats.off_page_clicks),
                      sessions=int(stats.sessions))
