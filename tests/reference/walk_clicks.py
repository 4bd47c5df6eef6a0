"""Independent references for the examination walk with clicks (tests only).

* :func:`dense_log_likelihood`: the page likelihood written with dense matrices, straight
  from its definition (first click ``G = M diag(c)``, next click ``K = P G``, click-less
  pages ``z = M (a o)``, ends ``e = o + P z``, ``M = (I - diag(1 - c) P)^{-1}``);
* :func:`simulate_pages`: users walking a page one step at a time in plain Python, with
  no code shared with bayeschain (the independent simulator the recovery tests use).
"""

import numpy as np


def _dense(f, b, r, s, c, n):
    P = np.zeros((n, n))
    for i in range(n):
        if i + 1 < n:
            P[i, i + 1] = f[i]
        if i > 0:
            P[i, i - 1] = b[i]
    a = 1 - c[:n]
    M = np.linalg.inv(np.eye(n) - a[:, None] * P)
    return P, a, M


def dense_log_likelihood(lengths, f, b, r, s, c, first, none, moves, ends, repeat=None):
    """Sum over configurations of counts x log-probabilities (dense linear algebra).  After
    a click on i the same result is clicked again at once with ``repeat[g, i]``: the next
    click is ``rho_i [i = j] + (1 - rho_i) K_ij`` and the end ``(1 - rho_i) e_i``."""
    total = 0.0
    rep = np.zeros_like(np.asarray(c, dtype=float)) if repeat is None else repeat
    for g, n in enumerate(lengths):
        P, a, M = _dense(f[g], b[g], r[g], s[g], c[g], n)
        outs = [r[g, :n], s[g, :n], r[g, :n] + s[g, :n]]
        G = M * c[g, :n][None, :]
        rho = rep[g, :n]
        K = rho[:, None] * np.eye(n) + (1 - rho[:, None]) * (P @ G)
        for j in range(n):
            if first[g, j]:
                total += first[g, j] * np.log(G[0, j])
        for o, vec in enumerate(outs):
            z = M @ (a * vec)
            e = vec + P @ z
            if none[g, o]:
                total += none[g, o] * np.log(z[0])
            for i in range(n):
                if ends[g, i, o]:
                    total += ends[g, i, o] * np.log((1 - rho[i]) * e[i])
        for i in range(n):
            for j in range(n):
                if moves[g, i, j]:
                    total += moves[g, i, j] * np.log(K[i, j])
    return total


def simulate_pages(rng, n_pages, forward, backward, reformulate, stop, click, repeat=None):
    """Pages walked by simulated users: ``(clicks, outcome)`` per page, where ``clicks``
    lists the clicked ranks (1-based) in order and ``outcome`` is ``"next_query"`` or
    ``"end"``.  Per-rank moves (length n arrays): at rank i (0-based) the user clicks with
    ``click[i]``, then moves forward / backward / reformulates / stops with the given
    probabilities; a move off the page (backward at rank 1, forward at rank n) is replaced
    by leaving, split between reformulate and stop in their proportion at that rank.  After
    a click the user clicks the same result again at once with ``repeat[i]`` (default 0),
    and again, until they walk on."""
    n = len(forward)
    repeat = np.zeros(n) if repeat is None else repeat
    out = []
    for _ in range(n_pages):
        i = 0
        clicks = []
        while True:
            if rng.random() < click[i]:
                clicks.append(i + 1)
                while rng.random() < repeat[i]:
                    clicks.append(i + 1)
            f = forward[i] if i + 1 < n else 0.0
            bk = backward[i] if i > 0 else 0.0
            u = rng.random()
            if u < f:
                i += 1
            elif u < f + bk:
                i -= 1
            else:
                share = reformulate[i] / (reformulate[i] + stop[i])
                outcome = "next_query" if rng.random() < share else "end"
                out.append((clicks, outcome))
                break
    return out


def pages_to_log(pages, n_ranks, documents=None, queries=None):
    """A ClickLog of simulated pages (``(clicks, outcome)`` as from :func:`simulate_pages`):
    consecutive pages share a session while the outcome is ``"next_query"``.  Every page
    lists ``n_ranks`` results: ``documents[k]`` (a list of ids) or ``d<k>-<rank>``; its query
    is ``queries[k]`` or ``q<k>``."""
    import pandas as pd

    from bayeschain.io.clicklog import RESULT_COLUMNS, ClickLog, make_events

    cols = ("session_id", "query_id", "serp_id", "event", "rank", "doc_id", "time",
            "end_time", "seq")
    rows = {c: [] for c in cols}
    results = {c: [] for c in RESULT_COLUMNS}
    session = 0
    for k, (clicks, outcome) in enumerate(pages):
        docs = documents[k] if documents is not None else [f"d{k}-{r}" for r in
                                                             range(1, n_ranks + 1)]
        query = queries[k] if queries is not None else f"q{k}"
        events = [("query", None, None)] + [("click", r, docs[r - 1]) for r in clicks]
        for event, rank, doc in events:
            for c, v in zip(cols, (str(session), query, k, event, rank, doc, np.nan, np.nan,
                                   len(rows["seq"])), strict=True):
                rows[c].append(v)
        results["serp_id"] += [k] * n_ranks
        results["rank"] += list(range(1, n_ranks + 1))
        results["doc_id"] += list(docs)
        if outcome != "next_query":
            session += 1
    res = pd.DataFrame(results).astype({"serp_id": "int64", "rank": "int64",
                                        "doc_id": "string"})
    return ClickLog(make_events(rows), res[RESULT_COLUMNS], {}, has_sessions=True,
                    has_time=False, source="reference simulator")


def simulate_document_pages(rng, n_pages, forward, backward, reformulate, stop,
                            attractiveness, shown):
    """Pages whose click probability at each position is the attractiveness of the
    document shown there: ``shown[k]`` lists the document indices of page ``k``."""
    out = []
    for k in range(n_pages):
        click = [attractiveness[d] for d in shown[k]]
        out.extend(simulate_pages(rng, 1, forward, backward, reformulate, stop, click))
    return out
