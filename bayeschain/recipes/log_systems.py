"""Systems and sessions built from a click log, for scoring with the walk fitted to it.

A TREC Session log shows, per session, the result pages of every query and the documents
on them.  ``systems_from_log`` turns them into runs (one topic per session);
``session_qrels`` copies the track's qrels (per topic) to each session of that topic;
``session_matrices`` gives each session's documents x queries relevance matrix (MsM's
input).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BayeschainError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def systems_from_log(log) -> dict[str, pd.DataFrame]:
    """Four systems as TREC runs, one topic per session: the result pages of each session's
    first query (``first query``) and of its last reformulation (``last query``); the
    engine's first-query ranking (``engine``) and the same documents re-ranked by the
    query-term overlap of their title and snippet (``baseline``, ties in the engine's
    order)."""
    import pandas as pd

    ev = log.events
    pages = ev[(ev["event"] == "query") & ev["serp_id"].notna()]
    results = log.results
    texts = log.meta.get("doc_text", {})
    rows = {"first query": [], "last query": [], "engine": [], "baseline": []}
    for sid, group in pages.groupby("session_id", sort=False):
        serps = group["serp_id"].astype(int).tolist()
        query = str(group["query_id"].iloc[0])
        for name, serp in (("first query", serps[0]), ("last query", serps[-1])):
            docs = results[results["serp_id"] == serp].sort_values("rank")["doc_id"]
            docs = [d for d in docs if d]
            rows[name] += [(sid, d, float(len(docs) - i), name) for i, d in enumerate(docs)]
        docs = [d for d in results[results["serp_id"] == serps[0]].sort_values("rank")
                ["doc_id"] if d]
        terms = set(query.lower().split())
        overlap = [sum(w in terms for w in texts.get(d, "").lower().split()) for d in docs]
        order = sorted(range(len(docs)), key=lambda i: (-overlap[i], i))
        rows["engine"] += [(sid, d, float(len(docs) - i), "engine") for i, d in enumerate(docs)]
        rows["baseline"] += [(sid, docs[j], float(len(docs) - i), "baseline")
                             for i, j in enumerate(order)]
    return {name: pd.DataFrame(r, columns=["query_id", "doc_id", "score", "run_id"])
            for name, r in rows.items()}


def session_qrels(log, qrels: pd.DataFrame, qrels_path: Path) -> pd.DataFrame:
    """The track's qrels copied to each session of their topic (runs are per session)."""
    import pandas as pd

    topic_of = log.meta.get("session_topic", {})
    parts = []
    for sid, topic in topic_of.items():
        part = qrels[qrels["query_id"].astype(str) == str(topic)]
        if len(part):
            parts.append(part.assign(query_id=str(sid)))
    if not parts:
        raise BayeschainError("no qrels match the sessions' topics", file=qrels_path)
    return pd.concat(parts, ignore_index=True)


def session_matrices(log, qrels: pd.DataFrame, depth: int = 10) -> dict[str, np.ndarray]:
    """Each session's documents x queries relevance matrix (first ``depth`` results)."""
    import numpy as np

    grades = {(str(q), str(d)): g for q, d, g in zip(qrels["query_id"], qrels["doc_id"],
                                                      qrels["relevance"], strict=True)}
    ev = log.events
    pages = ev[(ev["event"] == "query") & ev["serp_id"].notna()]
    res = log.results
    out = {}
    for sid, group in pages.groupby("session_id", sort=False):
        cols = []
        for serp in group["serp_id"].astype(int):
            docs = res[res["serp_id"] == serp].sort_values("rank")["doc_id"].tolist()[:depth]
            col = [max(grades.get((str(sid), str(d)), 0), 0) for d in docs]
            cols.append(col + [0] * (depth - len(col)))
        if any(any(c) for c in cols):
            out[str(sid)] = np.array(cols, dtype=float).T
    return out
