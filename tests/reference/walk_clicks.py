"""Independent references for the examination walk with clicks (tests only).

* :func:`dense_log_likelihood`: the page likelihood written with dense matrices, straight
  from its definition (first click ``G = M diag(c)``, next click ``K = P G``, click-less
  pages ``z = M (a o)``, ends ``e = o + P z``, ``M = (I - diag(1 - c) P)^{-1}``);
* :func:`simulate_pages`: users walking a page one step at a time in plain Python, with
  no code shared with bayeschain (the independent simulator the recovery tests use).
"""

import numpy as np


def _move_matrix(f, b, n):
    """``P``: forward ``f_i`` to ``i + 1``, backward ``b_i`` to ``i - 1``."""
    P = np.zeros((n, n))
    for i in range(n):
        if i + 1 < n:
            P[i, i + 1] = f[i]
        if i > 0:
            P[i, i - 1] = b[i]
    return P


def _dense(f, b, r, s, c, n):
    P = _move_matrix(f, b, n)
    a = 1 - c[:n]
    M = np.linalg.inv(np.eye(n) - a[:, None] * P)
    return P, a, M


def dense_log_likelihood(lengths, f, b, r, s, c, first, none, moves, ends, repeat=None,
                         after_click=None):
    """Sum over configurations of counts x log-probabilities (dense linear algebra).  After
    a click on i the same result is clicked again at once with ``repeat[g, i]``: the next
    click is ``rho_i [i = j] + (1 - rho_i) K_ij`` and the end ``(1 - rho_i) e_i``.  With
    ``after_click = (fc, bc, rc, sc)`` the user moves with those after a click and with
    ``f, b, r, s`` after an examination without one: ``M`` is built from the latter,
    ``K = P_c G`` and ``e = o_c + P_c z``."""
    total = 0.0
    rep = np.zeros_like(np.asarray(c, dtype=float)) if repeat is None else repeat
    fc, bc, rc, sc = (f, b, r, s) if after_click is None else after_click
    for g, n in enumerate(lengths):
        P, a, M = _dense(f[g], b[g], r[g], s[g], c[g], n)
        Pc, _, _ = _dense(fc[g], bc[g], rc[g], sc[g], c[g], n)
        outs = [r[g, :n], s[g, :n], r[g, :n] + s[g, :n]]
        outs_c = [rc[g, :n], sc[g, :n], rc[g, :n] + sc[g, :n]]
        G = M * c[g, :n][None, :]
        rho = rep[g, :n]
        K = rho[:, None] * np.eye(n) + (1 - rho[:, None]) * (Pc @ G)
        for j in range(n):
            if first[g, j]:
                total += first[g, j] * np.log(G[0, j])
        for o, vec in enumerate(outs):
            z = M @ (a * vec)
            e = outs_c[o] + Pc @ z
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


def simulate_pages(rng, n_pages, forward, backward, reformulate, stop, click, repeat=None,
                   after_click=None, reclick=1.0, second_look=1.0):
    """Pages walked by simulated users: ``(clicks, outcome)`` per page, where ``clicks``
    lists the clicked ranks (1-based) in order and ``outcome`` is ``"next_query"`` or
    ``"end"``.  Per-rank moves (length n arrays): at rank i (0-based) the user clicks with
    ``click[i]``, then moves forward / backward / reformulates / stops with the given
    probabilities; a move off the page (backward at rank 1, forward at rank n) is replaced
    by leaving, split between reformulate and stop in their proportion at that rank.  After
    a click the user clicks the same result again at once with ``repeat[i]`` (default 0),
    and again, until they walk on.  ``after_click = (forward, backward, reformulate,
    stop)``: the moves after a click (the others are then those after an examination
    without a click).  ``reclick``: a result clicked before on the page clicks at a later
    arrival with ``reclick * click[i]``; ``second_look``: a result examined before on the
    page (clicked or not) clicks at a later examination with ``second_look * click[i]``
    (the ranks examined so far are kept as a set)."""
    n = len(forward)
    repeat = np.zeros(n) if repeat is None else repeat
    skip = (forward, backward, reformulate, stop)
    clicked_moves = skip if after_click is None else after_click
    out = []
    for _ in range(n_pages):
        i = 0
        clicks = []
        examined = set()
        while True:
            moves = skip
            chance = click[i] * (reclick if i + 1 in clicks else 1.0) * (
                second_look if i in examined else 1.0)
            examined.add(i)
            if rng.random() < chance:
                moves = clicked_moves
                clicks.append(i + 1)
                while rng.random() < repeat[i]:
                    clicks.append(i + 1)
            nxt = _step(rng, moves[0][i], moves[1][i], i, n)
            if nxt is not None:
                i = nxt
            else:
                share = moves[2][i] / (moves[2][i] + moves[3][i])
                outcome = "next_query" if rng.random() < share else "end"
                out.append((clicks, outcome))
                break
    return out


def _step(rng, forward, backward, i, n):
    """One move from rank ``i`` (0-based) of ``n``: the next rank, or None for leaving (a
    move off the page leaves)."""
    f = forward if i + 1 < n else 0.0
    bk = backward if i > 0 else 0.0
    u = rng.random()
    if u < f:
        return i + 1
    if u < f + bk:
        return i - 1
    return None


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
                            attractiveness, shown, offset=None, reclick=1.0):
    """Pages whose click probability at each position is the attractiveness of the
    document shown there: ``shown[k]`` lists the document indices of page ``k``.  With
    ``offset`` (a logit per position, 0-based), a document at position ``i`` clicks with
    ``1 / (1 + exp(-(log(a / (1 - a)) + offset[i])))`` instead; ``reclick`` as in
    :func:`simulate_pages`."""
    out = []
    for k in range(n_pages):
        click = [attractiveness[d] for d in shown[k]]
        if offset is not None:
            click = [1 / (1 + np.exp(-(np.log(a / (1 - a)) + offset[i])))
                     for i, a in enumerate(click)]
        out.extend(simulate_pages(rng, 1, forward, backward, reformulate, stop, click,
                                  reclick=reclick))
    return out


def documents_at_several_ranks(seed, low=0.1, high=0.8, offset=None, n=6, n_docs=30,
                               reclick=1.0, pages=12_000, layouts=200):
    """A log of ``pages`` pages of one query, each one of ``layouts`` layouts of ``n`` of
    ``n_docs`` documents with attractiveness uniform in ``[low, high]``, read by the walk with
    forward moves ``linspace(0.75, 0.6)``, backward 0.1 (none at rank 1), the rest leaving
    (30% to a next query); ``offset`` and ``reclick`` as in
    :func:`simulate_document_pages`.  Returns
    ``(log, attractiveness, forward, backward)``: documents ``doc<k>`` have
    ``attractiveness[k]``."""
    rng = np.random.default_rng(seed)
    attractive = rng.uniform(low, high, n_docs)
    drawn = [rng.choice(n_docs, n, replace=False) for _ in range(layouts)]
    shown = [drawn[k] for k in rng.integers(0, layouts, pages)]
    f = np.linspace(0.75, 0.6, n)
    b = np.r_[0.0, np.full(n - 1, 0.1)]
    leave = 1 - f - b
    walked = simulate_document_pages(rng, pages, f, b, 0.3 * leave, 0.7 * leave,
                                     attractive, shown, offset=offset, reclick=reclick)
    log = pages_to_log(walked, n, documents=[[f"doc{d}" for d in s] for s in shown],
                       queries=["q"] * len(shown))
    return log, attractive, f, b


def walk_paths(rng, n_users, skip, after_click, click):
    """The ranks (0-based, in order) that each of ``n_users`` users examines on one list of
    ``n`` results under the click walk: at every arrival at rank ``i`` they click with
    ``click[i]``, then move with the row ``after_click[i]`` after a click or ``skip[i]``
    otherwise (forward, backward, reformulate, stop; a move off the list leaves).  For a
    walk by relevance pass each rank's rows for the class of the document it shows."""
    paths = []
    for _ in range(n_users):
        i, path = 0, []
        while True:
            path.append(i)
            row = after_click[i] if rng.random() < click[i] else skip[i]
            i = _step(rng, row[0], row[1], i, len(click))
            if i is None:
                break
        paths.append(path)
    return paths


def page_counts(clicks, outcome, n):
    """The counts of one page as the kernel takes them: a ``ClickCounts`` of one
    configuration, from :func:`dense_page_counts`."""
    from bayeschain.inference.walk.likelihood import ClickCounts

    return ClickCounts.from_dense(*dense_page_counts(clicks, outcome, n))


def dense_page_counts(clicks, outcome, n):
    """``first (1, n), none (1, 3), moves (1, n, n), ends (1, n, 3)``: the counts of one
    page (its ordered clicks, 1-based, and what followed), written from their
    definition, as :func:`dense_log_likelihood` takes them."""
    o = {"next_query": 0, "end": 1, "unknown": 2}[outcome]
    first, none = np.zeros((1, n)), np.zeros((1, 3))
    moves, ends = np.zeros((1, n, n)), np.zeros((1, n, 3))
    if clicks:
        first[0, clicks[0] - 1] = 1
        for a, b in zip(clicks[:-1], clicks[1:], strict=True):
            moves[0, a - 1, b - 1] += 1
        ends[0, clicks[-1] - 1, o] = 1
    else:
        none[0, o] = 1
    return first, none, moves, ends


def damped_page_log_likelihood(clicks, outcome, f, b, r, s, c, rho, kappa):
    """Log-probability of one page (its ordered clicks, 1-based, and what followed) under
    the walk whose results clicked before click again with ``kappa c_i``: written from the
    definition with dense matrices, the clicked set carried along the page.  Per-rank
    rows ``f, b, r, s`` (boundary applied), ``c``, ``rho`` (immediate repeats)."""
    n = len(f)
    P = _move_matrix(f, b, n)
    leave = {"next_query": r, "end": s, "unknown": r + s}[outcome]

    def solved(seen):
        cc = np.array([c[i] * (kappa if i in seen else 1.0) for i in range(n)])
        return cc, np.linalg.inv(np.eye(n) - (1 - cc)[:, None] * P)

    cc, M = solved(set())
    if not clicks:
        return float(np.log((M @ ((1 - cc) * leave))[0]))
    total = np.log(M[0, clicks[0] - 1] * cc[clicks[0] - 1])
    seen = {clicks[0] - 1}
    for a, bb in zip(clicks[:-1], clicks[1:], strict=True):
        i, j = a - 1, bb - 1
        cc, M = solved(seen)
        walk = (P @ M)[i, j] * cc[j]
        total += np.log(rho[i] * (i == j) + (1 - rho[i]) * walk)
        seen.add(j)
    i = clicks[-1] - 1
    cc, M = solved(seen)
    total += np.log((1 - rho[i]) * (leave[i] + (P @ M @ ((1 - cc) * leave))[i]))
    return float(total)


def damped_page_counts(clicks, outcome):
    """The counts of one page as the kernel takes them for the damped walk: one term per
    left state keyed by the positions clicked so far (a bit mask), written out by hand."""
    from bayeschain.inference.walk.likelihood import ClickCounts

    o = {"next_query": 0, "end": 1, "unknown": 2}[outcome]
    terms = {}
    first = clicks[0] - 1 if clicks else -1 - o
    terms[(-1, 0, first)] = 1
    mask = 0
    for t, rank in enumerate(clicks):
        mask |= 1 << (rank - 1)
        target = clicks[t + 1] - 1 if t + 1 < len(clicks) else -1 - o
        key = (rank - 1, mask, target)
        terms[key] = terms.get(key, 0) + 1
    rows = sorted(terms)
    return ClickCounts.from_terms(np.zeros(len(rows)), [k[0] for k in rows],
                                  [k[2] for k in rows], [terms[k] for k in rows], 1,
                                  [k[1] for k in rows])


def once_sequence_probability(clicks, outcome, skip, after, c, kappa, rho, rescale=False):
    """The probability of a page's ordered clicks (0-based ranks) and its outcome (0 next
    query, 1 end, 2 unknown) under the walk whose *first* examination of a rank clicks
    with ``c_i`` and every later one with ``kappa c_i``, written from the definition: a
    linear system over (rank, the set of ranks examined so far, clicks matched so far,
    just clicked or not), with no use of the deepest rank.  ``skip``, ``after``: ``(n, 4)``
    moves (forward, backward, next query, end) after no click and after a click, before the
    boundary (at the last rank the forward mass leaves, split between next query and end
    in their proportion, or with ``rescale`` is spread over the other moves); ``rho``: the
    repeat of a click right after it."""
    n, m = len(c), len(clicks)

    def bounded(rows):
        rows = np.array(rows, dtype=float)
        f, b, r, s = rows[n - 1]
        rows[n - 1] = (0.0, b / (1 - f), r / (1 - f), s / (1 - f)) if rescale else \
            (0.0, b, r + f * r / (r + s), s + f * s / (r + s))
        return rows

    skip, after = bounded(skip), bounded(after)
    index = {}
    for i in range(n):
        for seen in range(1 << n):
            for t in range(m + 1):
                index[("arrive", i, seen, t)] = len(index)
                for just in (0, 1):
                    index[("after", i, seen, t, just)] = len(index)
    a = np.eye(len(index))
    rhs = np.zeros(len(index))
    for key, row in index.items():
        if key[0] == "arrive":
            _, i, seen, t = key
            p = c[i] * (kappa if seen >> i & 1 else 1.0)
            now = seen | (1 << i)
            if t < m and clicks[t] == i:
                a[row, index[("after", i, now, t + 1, 1)]] -= p
            a[row, index[("after", i, now, t, 0)]] -= 1 - p
            continue
        _, i, seen, t, just = key
        rows, w = (after, 1 - rho[i]) if just else (skip, 1.0)
        if just and t < m and clicks[t] == i:
            a[row, index[("after", i, seen, t + 1, 1)]] -= rho[i]
        if t == m:
            rhs[row] += w * (rows[i, 2], rows[i, 3], rows[i, 2] + rows[i, 3])[outcome]
        if i + 1 < n:
            a[row, index[("arrive", i + 1, seen, t)]] -= w * rows[i, 0]
        if i > 0:
            a[row, index[("arrive", i - 1, seen, t)]] -= w * rows[i, 1]
    return float(np.linalg.solve(a, rhs)[index[("arrive", 0, 0, 0)]])
