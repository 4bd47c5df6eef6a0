"""The walk's pages straight from canonical click-log files, out of core (DuckDB).

A log of millions of sessions never enters memory: DuckDB sorts its events by session
(spilling to disk beyond the memory limit) and one pass over the sorted chunks of whole
sessions (:mod:`bayeschain.io.event_window`, :mod:`.page_terms`) gives what the walk's
fit needs, whose size does not grow with the log (but for one pattern number per page):

* the likelihood's terms with their counts (:class:`~.likelihood.ClickCounts`): for
  every page, its start (the first click's rank, or leaving without a click: next query
  or end) and, after each click, the next click's rank or leaving, each keyed by the
  page's configuration; with clicks per rank and no relevance classes a configuration is
  the page's length (its last listed result, ``default_length`` without result lists, or
  its deepest click when deeper): the same terms as
  :func:`~.data.page_data` counts in memory (tested equal);
* the pages' patterns (:class:`~.data.PagePatterns`, for the pointwise log-likelihood);
* the click statistics (dwell times for the holding rates).

Predictive checks replay the fitted walk on a random sample of the log's sessions, read
into memory (:meth:`ClickLogFiles.sample`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import ParameterError
from ...io.clickstats_sql import DUCKDB_MEMORY
from .data import PageData, PagePatterns
from .likelihood import ClickCounts

#: a term is ``(length, state, target)``: states -1 .. 9,999 and targets -3 .. 9,999,
#: shifted to >= 0, are coded as ``(state + 1) * _BASE + target + 4`` within a page
#: (:mod:`.page_terms`), and ``length * _BASE**2`` plus that code across pages (the order
#: of (length, state, target)); with damped re-clicks a click's term adds ``mask * _BASE**2``
#: within the page (the bit mask of the positions clicked so far), so masks reach position
#: :data:`CODED_MASK_POSITIONS`
_BASE = 20003
#: the longest page whose clicked positions fit a term's code (``mask * _BASE**2 < 2**63``)
CODED_MASK_POSITIONS = 34


@dataclass
class ClickLogFiles:
    """Canonical click-log files (Parquet / CSV / TSV, a file or a glob) read out of core
    (see the module docstring); ``results``: the pages' documents (a file), or None."""

    path: str
    results: str | None = None
    memory_limit: str = DUCKDB_MEMORY
    has_sessions: bool = True
    #: what one DuckDB pass gave, by page length; the recurring share by threshold; whether the
    #: results file was checked (each computed once per ClickLogFiles)
    _scans: dict = field(default_factory=dict, repr=False)
    _recurrence: dict = field(default_factory=dict, repr=False)
    _results_checked: bool = field(default=False, repr=False)
    _sessions: int | None = field(default=None, repr=False)      # counted by a scan

    def __repr__(self) -> str:
        return f"<click-log files {self.path} (out of core, DuckDB)>"

    def page_data(self, default_length: int = 10, reclicks: bool = False) -> PageData:
        """The walk's pages with clicks per rank (see the module docstring); with
        ``reclicks``, every state after a click keyed also by the positions clicked so
        far (as :func:`~.data.page_data` with ``reclicks=True``)."""
        return self._scan(default_length, reclicks)[0]

    def statistics(self, default_length: int = 10):
        """The log's click statistics (:class:`~bayeschain.io.clickstats_tables.ClickStats`)."""
        scans = [v for (length, _), v in self._scans.items() if length == default_length]
        return scans[0][1] if scans else self._scan(default_length, False)[1]

    def _scan(self, default_length: int, reclicks: bool = False):
        key = (int(default_length), bool(reclicks))
        if key not in self._scans:
            self._scans[key] = _scan(self, *key)
        return self._scans[key]

    def recurring_share(self, at_least: int) -> float:
        """:func:`~bayeschain.inference.walk.data.recurring_share` from the query events and
        the results alone (no pass over the clicks)."""
        if self.results is None:
            return 0.0
        if at_least not in self._recurrence:         # one DuckDB join per ClickLogFiles
            from ...io.clickstats_sql import duckdb_connection, source_sql

            with duckdb_connection(self.path, memory_limit=self.memory_limit) as con:
                self._check_results(con)
                src = source_sql(con, self.path)
                shown, recurring = con.execute(
                    f"SELECT SUM(n), COALESCE(SUM(n) FILTER (WHERE n >= {int(at_least)}), 0) "
                    f"FROM (SELECT COUNT(*) AS n FROM {_results_sql(self.results)} r JOIN "
                    f"{src} q ON q.serp_id = r.serp_id AND q.event = 'query' "
                    f"GROUP BY q.query_id, r.doc_id)").fetchone()
            self._recurrence[at_least] = float(recurring / shown) if shown else 0.0
        return self._recurrence[at_least]

    def _check_results(self, con) -> None:
        """:func:`_check_results` of the results file, once per ClickLogFiles."""
        if not self._results_checked:
            _check_results(con, self.results)
            self._results_checked = True

    def sample(self, sessions: int, seed: int = 0):
        """A random sample of ``sessions`` sessions (all of them when fewer), read into
        memory as a :class:`~bayeschain.io.clicklog.ClickLog` (checked row by row): the
        sessions whose hash with ``seed`` is smallest, the same for the same files and
        seed whatever DuckDB's threads."""
        from ...io.clicklog import read_canonical
        from ...io.clickstats_sql import duckdb_connection, source_sql

        with duckdb_connection(self.path, memory_limit=self.memory_limit) as con:
            src = source_sql(con, self.path)
            events = _smallest_hashes(con, src, int(sessions), int(seed), self._sessions)
            pages = None
            if self.results is not None:
                res = _results_sql(self.results)
                con.register("sampled", events[["serp_id"]].dropna().drop_duplicates())
                pages = con.execute(f"SELECT r.* FROM {res} r JOIN sampled s USING "
                                    f"(serp_id)").df()
        return read_canonical(events, results=pages)


def _smallest_hashes(con, src: str, sessions: int, seed: int, known: int | None):
    """The events (by ``seq``) of the ``sessions`` sessions whose ``hash(session_id,
    seed)`` is smallest (ties by session_id), in one filtered scan: hashes are uniform on
    [0, 2**64), so those sessions lie below a threshold at about twice their share of the
    log's sessions (``known``, else of its rows), raised until enough are found."""
    share = 2 * sessions / max(known or con.execute(f"SELECT COUNT(*) FROM {src}"
                                                    ).fetchone()[0], 1)
    while True:
        bound = min(int(share * 2.0**64), 2**64 - 1)
        events = con.execute(f"SELECT * FROM (SELECT *, hash(session_id, {seed}) AS _hash "
                             f"FROM {src}) WHERE _hash <= {bound}::UBIGINT").df()
        found = events["session_id"].nunique()
        if found >= sessions or share >= 1:
            break
        share *= max(4.0, 2 * sessions / max(found, 1))
    first = events.groupby("session_id", sort=False)["_hash"].first().reset_index()
    chosen = first.sort_values(["_hash", "session_id"]).head(sessions)["session_id"]
    events = events[events["session_id"].isin(chosen)].drop(columns="_hash")
    return events.sort_values("seq", kind="stable").reset_index(drop=True)


def _results_sql(path: str) -> str:
    """A FROM clause for a results file (``serp_id, rank, doc_id``: Parquet, CSV, TSV)."""
    from pathlib import Path

    from ...errors import FormatError

    quoted = str(path).replace("'", "''")
    suffix = Path(str(path).replace("*", "x")).suffix.lower()
    if suffix == ".parquet":
        return f"read_parquet('{quoted}')"
    if suffix in (".csv", ".tsv"):
        sep = "\\t" if suffix == ".tsv" else ","
        return (f"read_csv('{quoted}', delim='{sep}', header=true, types={{'serp_id': "
                f"'BIGINT', 'rank': 'BIGINT', 'doc_id': 'VARCHAR'}})")
    raise FormatError("result pages out of core are read from .parquet, .csv or .tsv",
                      file=str(path))


def _check_results(con, path: str) -> None:
    """The in-memory reader's rules for result pages
    (:func:`~bayeschain.io.clicklog.read_results`), out of core: ``serp_id >= 0``, ranks
    from 1 to ``MAX_RANK``, no rank listed twice on a page; a FormatError naming the file
    and the first page breaking one."""
    import duckdb

    from ...errors import FormatError
    from ...io.clicklog import MAX_RANK

    res = _results_sql(path)
    try:
        bad = con.execute(
            f"SELECT serp_id, rank FROM {res} WHERE serp_id IS NULL OR serp_id < 0 OR rank "
            f"IS NULL OR rank < 1 OR rank > {MAX_RANK} LIMIT 1").fetchone()
        twice = con.execute(f"SELECT serp_id, rank FROM {res} GROUP BY serp_id, rank "
                            f"HAVING COUNT(*) > 1 LIMIT 1").fetchone()
    except duckdb.Error as exc:          # the results file's fault, not the log's
        raise FormatError(f"DuckDB could not read the result pages: {exc}".splitlines()[0],
                          file=str(path)) from None
    if bad is not None:
        column, value = ("serp_id", bad[0]) if bad[0] is None or bad[0] < 0 else \
            ("rank", bad[1])
        bound = f"from 1 to {MAX_RANK:,}" if column == "rank" else ">= 0"
        raise FormatError(f"{column} must be an integer {bound}, got {value!r}"
                          + (f" (page {bad[0]})" if column == "rank" else ""), file=str(path))
    if twice is not None:
        raise FormatError(f"page {twice[0]} lists rank {twice[1]} twice", file=str(path))


def _page_lengths(con, files: ClickLogFiles, serp: np.ndarray, deepest: np.ndarray,
                  default_length: int) -> np.ndarray:
    """Each page's length: its last listed result (``default_length`` without result
    pages; 0 for a page the results do not list), or its deepest click when deeper."""
    if files.results is None:
        return np.maximum(int(default_length), deepest)
    files._check_results(con)
    listed = con.execute(f"SELECT serp_id, MAX(rank) AS listed FROM "
                         f"{_results_sql(files.results)} GROUP BY serp_id ORDER BY serp_id"
                         ).fetchnumpy()
    known = np.asarray(listed["serp_id"], dtype=np.int64)
    length = np.zeros(serp.size, dtype=np.int64)
    if known.size:
        where = np.minimum(np.searchsorted(known, serp), known.size - 1)
        length = np.where(known[where] == serp,
                          np.asarray(listed["listed"], dtype=np.int64)[where], 0)
    return np.maximum(length, deepest)


def _check_pages(con, terms, pages: dict, path: str) -> None:
    """The rules page by page (:func:`~bayeschain.io.clickstats_sql.page_error`): one query
    event per page, no click before it; and, out of core, a page's events in one session
    (pages are read session by session); ``pages`` sorted by serp_id."""
    from ...io.clickstats_sql import page_error, two_sessions_error

    if terms.bad_page is not None:
        page_error(con, path, *terms.bad_page)
    serp = pages["serp_id"]
    twice = np.flatnonzero(serp[1:] == serp[:-1])
    if twice.size:
        page = int(serp[twice[0]])
        queries = int(pages["queries"][twice[0]:twice[0] + 2].sum())
        if queries > 1:
            page_error(con, path, page, queries, None, None)
        two_sessions_error(con, path, page)


def _scan(files: ClickLogFiles, default_length: int, reclicks: bool = False):
    """``(PageData, ClickStats)`` of the files in one pass over their sessions."""
    import pandas as pd

    from ...io.clickstats_sql import ChunkStatistics, duckdb_events, tie_error
    from ...io.event_window import session_chunks
    from .page_terms import PageTerms

    with duckdb_events(files.path, memory_limit=files.memory_limit,
                       check_pages=False) as (con, src):
        if files.results is not None:
            files._check_results(con)                 # before the long pass, not after
        stats = ChunkStatistics(con, has_sessions=files.has_sessions)
        terms = PageTerms(_BASE, reclicks, 1 if files.has_sessions else 2)
        for chunk in session_chunks(
                con, src, on_tie=lambda session, seq: tie_error(con, files.path, session, seq)):
            stats.add(chunk)
            terms.add(chunk)
        stats = stats.result()
        files._sessions = stats.sessions
        seen = terms.pages()
        order = np.argsort(seen["serp_id"])
        seen = {name: values[order] for name, values in seen.items()}
        del order
        _check_pages(con, terms, seen, files.path)
        kept = seen["queries"] > 0
        page_ids, deepest, set_of = (seen[k][kept] for k in ("serp_id", "deepest", "set"))
        del seen, kept
        length = _page_lengths(con, files, page_ids, deepest.astype(np.int64),
                               default_length)
    n_empty = int((length < 1).sum())
    fitted = length >= 1
    page_ids, length, set_of = page_ids[fitted], length[fitted], set_of[fitted]
    if page_ids.size == 0:
        raise ParameterError("the click log has no result pages to fit")
    # patterns: pages of the same length and term set, in the order of (length, terms)
    set_rank = terms.set_order()
    n_sets = max(len(terms.sets), 1)
    page_of, pattern_key = pd.factorize(length * n_sets + set_rank[set_of])   # by hashing
    sort = np.argsort(pattern_key)
    pattern_key = pattern_key[sort]
    rank_of = np.empty_like(sort)
    rank_of[sort] = np.arange(sort.size)
    page_of = rank_of[page_of]
    pattern_pages = np.bincount(page_of, minlength=pattern_key.size)
    by_rank = np.empty(len(terms.sets), dtype=np.int64)
    by_rank[set_rank] = np.arange(len(terms.sets))
    patterns = {"length": pattern_key // n_sets, "pages": pattern_pages,
                "key": [terms.sets[by_rank[k % n_sets]] for k in pattern_key]}
    pattern_length = np.asarray(patterns["length"], dtype=np.int64)
    if reclicks and pattern_length.max() > CODED_MASK_POSITIONS:
        raise ParameterError(f"out of core, walks that keep the results clicked so far take "
                             f"pages of at most {CODED_MASK_POSITIONS} results; the log has a page "
                             f"of {int(pattern_length.max())}: read it into memory")
    # the terms of every pattern, coded across pages, and their counts over the pages
    keys = patterns["key"]
    sizes = np.array([len(k) for k in keys], dtype=np.int64)
    within = np.concatenate([np.asarray(k, dtype=np.int64) for k in keys])
    codes = np.stack([np.repeat(pattern_length, sizes) * _BASE**2 + within % _BASE**2,
                      within // _BASE**2], axis=1)                  # (length, state, target), mask
    weights = np.repeat(np.asarray(patterns["pages"], dtype=np.int64), sizes)
    term_codes, term_of = np.unique(codes, axis=0, return_inverse=True)
    term_of = term_of.ravel()
    term_count = np.bincount(term_of, weights=weights)
    term_length = term_codes[:, 0] // _BASE**2
    states = term_codes[:, 0] % _BASE**2 // _BASE - 1
    targets = term_codes[:, 0] % _BASE - 4
    masks = term_codes[:, 1]
    lengths = np.unique(pattern_length)
    width = int(lengths.max())
    inside = np.arange(width)[None, :] < lengths[:, None]
    index = np.where(inside, np.arange(width)[None, :], -1).astype(np.int64)
    # the terms, sorted by (configuration, state, mask, target) as the kernel reads them
    order = np.lexsort((targets, masks, states, term_length))
    rank_of = np.empty_like(order)
    rank_of[order] = np.arange(order.size)
    term_of = rank_of[term_of]
    term_length, states, targets, masks, term_count = (x[order] for x in (
        term_length, states, targets, masks, term_count))
    counts = ClickCounts.from_terms(np.searchsorted(lengths, term_length), states, targets,
                                    term_count, lengths.size, masks)
    from scipy import sparse

    pattern_terms = sparse.coo_matrix(
        (np.ones(term_of.size), (np.repeat(np.arange(sizes.size), sizes), term_of)),
        shape=(sizes.size, term_codes.shape[0])).tocsr()
    pattern_terms.sum_duplicates()
    patterns = PagePatterns(pattern_terms, np.asarray(patterns["pages"], dtype=np.int64),
                            page_of)
    page_config = np.searchsorted(lengths, pattern_length)[page_of]
    # a click is the state of one term: the clicks of the pages kept
    clicks = int(counts.counts[counts.term_states()[1] >= 0].sum())
    report = {"pages": int(page_ids.size), "empty_pages": int(n_empty),
              "off_page_clicks": int(stats.off_page_clicks), "clicks": clicks}
    data = PageData(lengths.astype(np.int64), index, index.copy(), counts,
                    np.bincount(page_config, minlength=lengths.size), width, 1, None,
                    bool(files.has_sessions), report,
                    counts.digest(np.concatenate([lengths[:, None], index, index], axis=1)),
                    page_ids, page_config.astype(np.int64), None, patterns, bool(reclicks))
    return data, stats


__all__ = ["ClickLogFiles"]
