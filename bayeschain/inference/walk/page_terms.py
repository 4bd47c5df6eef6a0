"""The walk's likelihood terms of every page, from chunks of whole sessions
(:class:`~bayeschain.io.event_window.SessionChunk`), for logs read out of core.

A page's terms, each coded as an integer within the page (see :mod:`.files`): its start
(the first click's rank ``r`` as ``r + 3``; leaving without a click as ``3 - o``, with
``o`` the query's outcome: 0 next query, 1 end, 2 unknown) and, after each click at rank
``r``, ``mask * B**2 + r * B + t`` with ``t`` the next click's rank plus 3 when the
session's next on-page click is on this page, else ``3 - o`` for the click's outcome
(``mask``: the positions clicked on the page so far, with damped re-clicks, else 0).  A
click whose previous on-page click in the session is on another page (or none) starts the
page again (a start term).  Pages with the same sorted terms share a *term set*; the sets
are found with a 64-bit hash of the sorted terms and confirmed term by term (two sets
never merge, even when their hashes collide).  The pages breaking a rule of the log (two
query events, a click before its page's query in ``seq`` order) are noted.

One pass over each session in Numba: a session's pages are found by a scan of the pages
seen in that session (sessions show a few), their terms sorted in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...chains.jit import jit_globals


def _page_slot(page, gen, table_key, table_gen, table_val, pages):
    """The session's local index of ``page`` in the scratch table (open addressing;
    entries of earlier sessions carry an older ``gen`` and count as empty), or a new one
    (``pages``); returns ``(index, is_new)``."""
    size = table_key.size
    slot = np.int64((np.uint64(page) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)) \
        & (size - 1)
    while table_gen[slot] == gen:
        if table_key[slot] == page:
            return table_val[slot], False
        slot = (slot + 1) & (size - 1)
    table_gen[slot] = gen
    table_key[slot] = page
    table_val[slot] = pages
    return pages, True


def _sort_run(codes, first, stop):
    """Sort ``codes[first:stop]`` in place (insertion sort for the few terms of a page)."""
    if stop - first > 32:
        codes[first:stop] = np.sort(codes[first:stop])
        return
    for t in range(first + 1, stop):
        code = codes[t]
        u = t - 1
        while u >= first and codes[u] > code:
            codes[u + 1] = codes[u]
            u -= 1
        codes[u + 1] = code


def _chunk_pages(start, serp, is_query, is_click, on_page, rank, seq, next_serp, next_rank,
                 prev_serp, next_query, end_code, reclicks, base):
    """Per page of the chunk: serp_id, query events, deepest click, min seq of its query
    and of its clicks (-1: none), the offsets of its sorted terms, the terms, a hash.

    Each session in one pass: its pages are found in a scratch hash table (linear in the
    session's events however many pages it shows), each event's terms are noted with its
    page, then counted into place page by page and sorted within the page."""
    n = serp.size
    base2 = base * base
    out = np.empty((5, n), dtype=np.int64)      # serp, queries, deepest, query / click seq
    out_hash = np.empty(n, dtype=np.uint64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    codes = np.empty(2 * n, dtype=np.int64)
    local = np.empty((6, n + 1), dtype=np.int64)  # the session's pages, as ``out`` + mask
    fill = np.empty(n + 1, dtype=np.int64)
    longest = 1                                   # the longest session sizes the table
    run = 0
    for i in range(n):
        run = 1 if start[i] else run + 1
        longest = max(longest, run)
    size = 2
    while size < 2 * longest + 2:                 # small: it stays in the cache
        size *= 2
    table_key = np.empty(size, dtype=np.int64)
    table_gen = np.full(size, -1, dtype=np.int64)
    table_val = np.empty(size, dtype=np.int64)
    tmp_page = np.empty(2 * n, dtype=np.int64)
    tmp_code = np.empty(2 * n, dtype=np.int64)
    mult = np.uint64(0x9E3779B97F4A7C15)
    n_pages = 0
    n_codes = 0
    s = 0
    gen = 0
    while s < n:
        e = s + 1
        while e < n and not start[e]:
            e += 1
        pages = 0
        terms = 0
        for i in range(s, e):
            page = serp[i]
            if page < 0 or not (is_query[i] or is_click[i]):
                continue
            j, new = _page_slot(page, gen, table_key, table_gen, table_val, pages)
            if new:
                pages += 1
                local[0, j] = page
                local[1, j] = 0
                local[2, j] = 0
                local[3, j] = -1
                local[4, j] = -1
                local[5, j] = 0
            if is_click[i] and local[4, j] < 0:
                local[4, j] = seq[i]
            if not (is_query[i] or on_page[i]):
                continue                                  # a click off the page
            outcome = 3 - (0 if next_query[i] else end_code)
            if is_query[i]:
                if local[1, j] == 0:
                    local[3, j] = seq[i]
                local[1, j] += 1
                if next_serp[i] != page:                  # left without a click
                    tmp_page[terms] = j
                    tmp_code[terms] = outcome
                    terms += 1
                continue
            r = rank[i]
            if r > local[2, j]:
                local[2, j] = r
            if reclicks and r <= 62:
                local[5, j] |= np.int64(1) << (r - 1)
            after = next_rank[i] + 3 if next_serp[i] == page else outcome
            tmp_page[terms] = j
            tmp_code[terms] = (local[5, j] if reclicks else 0) * base2 + r * base + after
            terms += 1
            if prev_serp[i] != page:                      # a start of the page
                tmp_page[terms] = j
                tmp_code[terms] = r + 3
                terms += 1
        gen += 1
        # the terms counted into place, page by page
        fill[:pages + 1] = 0
        for t in range(terms):
            fill[tmp_page[t] + 1] += 1
        for k in range(pages):
            fill[k + 1] += fill[k]
            offsets[n_pages + k + 1] = n_codes + fill[k + 1]
        for t in range(terms):
            k = tmp_page[t]
            codes[n_codes + fill[k]] = tmp_code[t]
            fill[k] += 1
        for k in range(pages):
            first, stop = offsets[n_pages + k], offsets[n_pages + k + 1]
            _sort_run(codes, first, stop)
            h = np.uint64(stop - first) * mult
            for t in range(first, stop):
                h = (h ^ np.uint64(codes[t])) * mult
                h ^= h >> np.uint64(31)
            for row in range(5):
                out[row, n_pages + k] = local[row, k]
            out_hash[n_pages + k] = h
        n_pages += pages
        n_codes += terms
        s = e
    return (out[0, :n_pages], out[1, :n_pages], out[2, :n_pages], out[3, :n_pages],
            out[4, :n_pages], offsets[:n_pages + 1], codes[:n_codes], out_hash[:n_pages])


def _same_terms(offsets, codes, p, q):
    a, b = offsets[p], offsets[q]
    size = offsets[p + 1] - a
    if size != offsets[q + 1] - b:
        return False
    for t in range(size):
        if codes[a + t] != codes[b + t]:
            return False
    return True


def _local_sets(offsets, codes, hashes):
    """The term set of every page within the chunk: ``(set of each page, its first page)``
    (open addressing on the hash, sets compared term by term)."""
    n = hashes.size
    size = 1
    while size < 2 * n:
        size *= 2
    table = np.full(size, -1, dtype=np.int64)         # slot -> set
    first = np.empty(n, dtype=np.int64)                # set -> its first page
    set_of = np.empty(n, dtype=np.int64)
    sets = 0
    for p in range(n):
        slot = np.int64(hashes[p] & np.uint64(size - 1))
        while True:
            k = table[slot]
            if k < 0:
                table[slot] = sets
                first[sets] = p
                set_of[p] = sets
                sets += 1
                break
            if hashes[first[k]] == hashes[p] and _same_terms(offsets, codes, first[k], p):
                set_of[p] = k
                break
            slot = (slot + 1) & (size - 1)
    return set_of, first[:sets]


_COMPILED = {}


def _kernels():
    if not _COMPILED:
        done = jit_globals(globals(), ("_page_slot", "_sort_run", "_same_terms",
                                       "_chunk_pages", "_local_sets"), nogil=True)
        _COMPILED.update(pages=done["_chunk_pages"], sets=done["_local_sets"])
    return _COMPILED


@dataclass
class PageTerms:
    """The pages of a log's chunks and their term sets, gathered chunk by chunk."""

    base: int
    reclicks: bool = False
    end_code: int = 1
    sets: list = field(default_factory=list)            # set id -> sorted terms (int64)
    _seen: dict = field(default_factory=dict)           # hash -> [(terms bytes, set id)]
    _parts: list = field(default_factory=list)
    #: the first page breaking a rule (two query events, a click before its query):
    #: ``(serp_id, queries, query seq, first click seq)``, or None
    bad_page: tuple | None = None

    def add(self, chunk) -> None:
        """The pages of a :class:`~bayeschain.io.event_window.SessionChunk`."""
        with np.errstate(over="ignore"):        # the hash wraps (Numba absent: in NumPy)
            (serp, queries, deepest, query_seq, click_seq, offsets, codes,
             hashes) = _kernels()["pages"](
                chunk.start, chunk.serp, chunk.is_query, chunk.is_click, chunk.on_page,
                chunk.rank, chunk.seq, chunk.next_click_serp, chunk.next_click_rank,
                chunk.prev_click_serp, chunk.next_query, self.end_code, self.reclicks,
                self.base)
        set_of, first = _kernels()["sets"](offsets, codes, hashes)
        ids = np.array([self._set_id(int(hashes[p]), codes[offsets[p]:offsets[p + 1]])
                        for p in first], dtype=np.int64)
        bad = (queries > 1) | ((click_seq >= 0) & (query_seq >= 0) & (click_seq < query_seq))
        if bad.any() and self.bad_page is None:
            p = int(np.argmax(bad))
            self.bad_page = (int(serp[p]), int(queries[p]), int(query_seq[p]),
                             int(click_seq[p]))
        kept = np.diff(offsets) > 0             # pages with only clicks off them: no terms
        self._parts.append((serp[kept], queries[kept].astype(np.int32),
                            deepest[kept].astype(np.int32),
                            ids[set_of[kept]].astype(np.int32)))

    def _set_id(self, h: int, terms: np.ndarray) -> int:
        raw = terms.tobytes()
        entries = self._seen.setdefault(h, [])
        for known, set_id in entries:
            if known == raw:
                return set_id
        entries.append((raw, len(self.sets)))
        self.sets.append(terms.copy())
        return len(self.sets) - 1

    def pages(self) -> dict[str, np.ndarray]:
        """Every page seen: ``serp_id, queries, deepest, set``."""
        names = ("serp_id", "queries", "deepest", "set")
        if not self._parts:
            return {name: np.zeros(0, dtype=np.int64) for name in names}
        return {name: np.concatenate([part[i] for part in self._parts])
                for i, name in enumerate(names)}

    def set_order(self) -> np.ndarray:
        """The rank of every term set in the lexicographic order of its sorted terms."""
        order = sorted(range(len(self.sets)), key=lambda i: tuple(self.sets[i].tolist()))
        rank = np.empty(len(self.sets), dtype=np.int64)
        rank[order] = np.arange(len(self.sets))
        return rank


__all__ = ["PageTerms"]
