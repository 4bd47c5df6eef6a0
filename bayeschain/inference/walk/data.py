r"""The pages of a click log as the examination walk sees them.

Every result page of the log is one walk of the user: it starts at
rank 1 of a page of ``n`` results (``n`` = the page's length in the log: 10, 20, 50...,
never a cut that drops clicks), and what the log shows of it is the ordered sequence of
clicked ranks (repeats included) and what followed the last click or the click-less page:
the next query of the session (``next_query``), the end of the session (``end``), or
``unknown`` for logs without sessions.

Pages that share everything the likelihood depends on form a *configuration*: the page
length, the click parameter at each position (the rank's, or the attractiveness of the
document shown there) and the move parameters at each position (the rank's, or the
rank's within the relevance class of the document shown there).  The likelihood needs only
counts per configuration (:class:`~bayeschain.inference.walk.likelihood.ClickCounts`):
first clicks, click-less pages, click-to-click moves and last clicks by outcome.

Page lengths come from the log's result pages (``ClickLog.results``); a page the log
lists without its results gets ``default_length`` positions, or more when a click lies
deeper (a click is never dropped).  Clicks on documents that are not on the page were
already counted and left out by the reader.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...errors import ParameterError
from ...io.clicklog import ClickLog
from .likelihood import END, NEXT_QUERY, OUTCOMES, ClickCounts


@dataclass(frozen=True)
class PagePatterns:
    """The distinct likelihood contributions of a log's pages.

    A page's log-likelihood is the sum of the log-probabilities of its terms (its first
    click or click-less leave, each click-to-click move, its last click's leave: see
    :class:`~bayeschain.inference.walk.likelihood.ClickCounts`).  Pages with the same
    terms (the same configuration and the same clicks, or clicks whose moves are the same
    multiset) have the same log-likelihood under every parameter value: a *pattern*.
    Logs of millions of pages hold few patterns (with clicks per rank), so the pointwise
    log-likelihood is kept once per pattern with its count.

    ``terms (U, T)`` sparse: how often each term occurs in a page of the pattern;
    ``pages (U,)`` pages per pattern; ``page_pattern (P,)`` the pattern of each page.
    """

    terms: object
    pages: np.ndarray
    page_pattern: np.ndarray

    @classmethod
    def of(cls, row_page: np.ndarray, row_term: np.ndarray, n_pages: int,
           n_terms: int) -> PagePatterns:
        """From the page and the term of every row of the counts (one row per first click
        or click-less page, one per click)."""
        from scipy import sparse

        per_page = sparse.coo_matrix((np.ones(row_page.size), (row_page, row_term)),
                                     shape=(n_pages, n_terms)).tocsr()
        per_page.sum_duplicates()
        per_page.sort_indices()
        keys = [per_page.indices[a:b].tobytes() + per_page.data[a:b].tobytes()
                for a, b in zip(per_page.indptr[:-1], per_page.indptr[1:], strict=True)]
        codes, _ = pd.factorize(pd.Index(keys, dtype=object))
        first = np.unique(codes, return_index=True)[1]
        return cls(per_page[first], np.bincount(codes, minlength=first.size).astype(np.int64),
                   codes.astype(np.int64))

    @property
    def size(self) -> int:
        return int(self.pages.size)


@dataclass(frozen=True)
class PageData:
    """Page configurations of a click log and their counts.

    Attributes
    ----------
    lengths : (G,) page length of each configuration
    click_index : (G, N) index of the click parameter at each position (-1 beyond the page):
        the rank (0-based) for rank-level clicks, the document for attractiveness
    move_index : (G, N) index of the move row at each position: ``class * ranks + rank``,
        or ``reader * ranks + rank`` with readers by query
    counts : the click counts per configuration
    pages : (G,) pages per configuration
    ranks : the longest page (the walk's rank axis)
    classes : relevance classes of the moves (1, or 2 with qrels)
    documents : ``query_id, doc_id, impressions, median_rank, pooled_rank`` of each
        document, when clicks are per document (else None): the (query, document) pairs
        with an attractiveness of their own (``pooled_rank`` 0), then one entry per rank
        ``r`` (``pooled_rank = r``, no query or document) shared by the rarer pairs shown
        there (:func:`page_data`'s ``min_impressions``)
    sessions : whether the log tells what followed a page (next query or end)
    report : counts of what was read and left out
    readers : with readers by query or topic (:func:`page_data`'s ``readers``), the
        query (topic) each reader reads: :data:`OTHERS` for reader 0, who reads every
        query (topic) without a reader of its own; ``reader_pages`` the pages each reads
    """

    lengths: np.ndarray
    click_index: np.ndarray
    move_index: np.ndarray
    counts: ClickCounts
    pages: np.ndarray
    ranks: int
    classes: int = 1
    documents: pd.DataFrame | None = None
    sessions: bool = True
    report: dict = field(default_factory=dict)
    digest: str = ""
    page_ids: np.ndarray | None = None        # (P,) serp_id of each page, ascending
    page_config: np.ndarray | None = None     # (P,) configuration of each page
    page_queries: np.ndarray | None = None    # (P,) query of each page
    patterns: PagePatterns | None = None      # the pages' distinct likelihood terms
    reclicks: bool = False    # the counts keep the positions clicked so far (their masks)
    readers: np.ndarray | None = None         # (R,) readers by query: their queries
    reader_pages: np.ndarray | None = None    # (R,) pages of each reader

    @property
    def n_configs(self) -> int:
        return int(self.lengths.size)

    @property
    def click_level(self) -> str:
        return "rank" if self.documents is None else "document"

    def clicked(self, log: ClickLog) -> np.ndarray:
        """``(P, N)`` whether each page of ``log`` (the log this data was built from) has at
        least one click at each position (the click vector of click-model evaluation)."""
        obs, _, _ = log.observations()
        row = pd.Index(self.page_ids).get_indexer(obs["serp_id"].to_numpy())
        ok = row >= 0
        out = np.zeros((self.page_ids.size, self.ranks), dtype=bool)
        out[row[ok], obs["rank"].to_numpy(dtype=np.int64)[ok] - 1] = True
        return out

    def reader_events(self) -> tuple[np.ndarray, np.ndarray]:
        """``(next_query_split, repeats)``, each ``(R,)``: with readers by query, what
        informs each reader's effects on the next query's logit and on the repeat logit.
        The first is the fewer of its pages followed by another query and its pages that
        end their session (the logit sets one against the other, so the rarer outcome
        bounds what it learns); the second its repeats (a click on the result clicked
        just before)."""
        c = self.counts
        config, state = c.term_states()
        reader = self.move_index[config, 0] // self.ranks   # position 0: every page has it
        n = self.readers.size

        def count(flags):
            return np.bincount(reader, weights=c.counts * flags, minlength=n)

        return (np.minimum(count(c.targets == NEXT_QUERY), count(c.targets == END)),
                count((c.targets == state) & (state >= 0)))

    @property
    def next_queries(self) -> int:
        """Pages followed by another query of their session."""
        return int(self.counts.counts[self.counts.targets == NEXT_QUERY].sum())

    @property
    def session_ends(self) -> int:
        """Pages that end their session (an unknown outcome is neither)."""
        return int(self.counts.counts[self.counts.targets == END].sum())

    @property
    def next_query_split(self) -> int:
        """What informs the log's next-query logit (next query against end): the fewer of
        its next queries and its session ends (per reader: :meth:`reader_events`)."""
        return min(self.next_queries, self.session_ends)

    def clicks_per_rank(self) -> np.ndarray:
        """``(ranks,)`` clicks observed at each rank (0-based)."""
        t = self.counts.targets
        return np.bincount(t[t >= 0], weights=self.counts.counts[t >= 0],
                           minlength=self.ranks)


def recurring_share(log: ClickLog, at_least: int) -> float:
    """Share of the log's impressions (a document shown on a page) whose (query, document)
    pair the log shows at least ``at_least`` times (0 without result pages): how much the
    log says about documents apart from their ranks."""
    res = log.results
    if not len(res):
        return 0.0
    ev = log.events
    pages = ev.loc[(ev["event"] == "query") & ev["serp_id"].notna(), ["serp_id", "query_id"]]
    shown = res.merge(pages.astype({"serp_id": "int64"}), on="serp_id")
    if not len(shown):
        return 0.0
    per_pair = shown.groupby(["query_id", "doc_id"], dropna=False).size()
    return float(per_pair[per_pair >= at_least].sum() / len(shown))


def page_lengths(log: ClickLog, page_ids: np.ndarray, deepest: np.ndarray,
                 default_length: int) -> np.ndarray:
    """Length of each page: its last result's rank in ``log.results``, or its deepest click
    when that lies deeper.  A log without result pages gives every page ``default_length``
    positions (or its deepest click); in a log with result pages, a page listed without
    results is empty (length 0, or its deepest click)."""
    res = log.results
    if not len(res):
        return np.maximum(default_length, deepest).astype(np.int64)
    known = res.groupby("serp_id")["rank"].max()
    length = known.reindex(page_ids).fillna(0).to_numpy(dtype=np.int64)
    return np.maximum(length, deepest).astype(np.int64)


#: the label of reader 0, who reads the queries (topics) without a reader of their own
OTHERS = "(others)"
#: what readers are by: the page's query, or its topic (its session's topic where the log
#: records one, TREC Session's; otherwise its query)
READERS_BY = ("query", "topic")


def page_data(log: ClickLog, *, clicks: str = "rank", qrels: pd.DataFrame | None = None,
              level: int = 1, default_length: int = 10, min_length: int = 1,
              reclicks: bool | None = False, min_impressions: int = 1,
              known: pd.MultiIndex | None = None, readers=None,
              readers_by: str = "query") -> PageData:
    """Group the pages of ``log`` into configurations with their click counts.

    Parameters
    ----------
    clicks : ``"rank"`` (one click probability per rank) or ``"document"`` (one
        attractiveness per (query, document) pair shown by the log)
    min_impressions : with clicks per document, a pair the log shows fewer times (its
        impressions) shares, wherever it is shown, one click chance per rank with the
        other such pairs (a pseudo-document per rank: ``documents["pooled_rank"]``); 1:
        every pair its own
    known : with clicks per document, the pairs that have their own attractiveness (a
        fitted posterior's, for pages of another log); the others share the click chance
        of their rank.  In place of ``min_impressions``, which then names the fit's
        threshold: pages a fit of ``log`` built with it are reused when their own pairs
        are ``known``
    qrels, level : relevance judgements (``query_id, doc_id, relevance``): moves then
        depend on whether the examined document is relevant (grade >= ``level``; unjudged
        documents are non-relevant, as in trec_eval).  A page's topic is its session's
        topic when the log records one (TREC Session), otherwise its query.
    readers : readers by query: an int ``k``, every query of at least ``k`` pages has a
        reader of its own and reader 0 (:data:`OTHERS`) reads the others; or the
        readers' queries (a fitted posterior's, reader 0 first), for pages of another log:
        a query without a reader of its own is read by reader 0.  The moves of a page's
        positions are then its reader's (``move_index = reader * ranks + rank``)
    readers_by : ``"query"``, or ``"topic"``: readers by the page's topic (its session's
        topic where the log records one, otherwise its query) instead
    default_length : positions of a page the log lists without its results
    reclicks : key every state after a click also by the positions clicked so far on the
        page (for walks in which a result clicked before is clicked again less often);
        pages of at most :data:`MASK_POSITIONS` results.  ``None``: the pages built with
        them if a fit built those already (its checks then share them), otherwise the
        pages without (prediction, which reads no clicked positions, on any log)

    Built once per log and arguments (:meth:`ClickLog.derived`): a fit and its checks
    share the pages.
    """
    if not isinstance(log, ClickLog):
        raise ParameterError("the examination walk is fitted to the click log itself (its "
                             "pages and their clicks), not to aggregated statistics")
    if clicks not in ("rank", "document"):
        raise ParameterError(f"clicks must be 'rank' or 'document', got {clicks!r}")
    if min_impressions < 1:
        raise ParameterError(f"min_impressions must be at least 1, got {min_impressions}")
    if readers_by not in READERS_BY:
        raise ParameterError(f"readers_by must be one of {READERS_BY}, got {readers_by!r}")
    if readers is not None:
        if qrels is not None:
            raise ParameterError("readers by query and moves by relevance are not fitted "
                                 "together: pass one of readers and qrels")
        if isinstance(readers, (int, np.integer)):
            readers = int(readers)
            if readers < 1:
                raise ParameterError(f"readers by {readers_by}: a reader of its own needs "
                                     f"at least 1 page, got {readers}")
        else:
            readers = tuple(str(q) for q in readers)
            if not readers or readers[0] != OTHERS:
                raise ParameterError(f"readers by {readers_by}: the first reader must be "
                                     f"{OTHERS!r}, got {readers[:1]}")

    def key_of(least, pairs, who=readers):
        return ("page_data", clicks, id(qrels), level if qrels is not None else None,
                default_length, min_length, least if clicks == "document" else None,
                _pairs_digest(pairs) if clicks == "document" else None, who,
                readers_by if who is not None else None)

    own = (int(min_impressions), None) if known is None else (0, known)
    key = key_of(*own)
    if known is not None and clicks == "document" and min_impressions > 1:
        # the fitted log's own pages, as its fit built them with the threshold: a fit and
        # its checks build the pages once
        for flag in (True, False) if reclicks is None else (bool(reclicks),):
            kept = log.built(key_of(int(min_impressions), None) + (flag,))
            if kept is not None and kept[0] is qrels and _same_pairs(kept[1], known):
                return kept[1]
    if reclicks is None:
        kept = log.built(key + (True,))
        if kept is not None and kept[0] is qrels:
            return kept[1]
        reclicks = False
    key += (bool(reclicks),)
    built = log.derived(key, lambda: (qrels, _page_data(log, clicks, qrels, level,
                                                        default_length, min_length,
                                                        reclicks, own, readers,
                                                        readers_by)))
    if built[0] is not qrels:            # another qrels table at a reused address
        return _page_data(log, clicks, qrels, level, default_length, min_length, reclicks,
                          own, readers, readers_by)
    if isinstance(readers, int):      # the same pages, as the fit's posterior names them
        log.derived(key_of(*own, who=tuple(built[1].readers)) + (bool(reclicks),),
                    lambda: built)
    return built[1]


def _same_pairs(data: PageData, known: pd.MultiIndex) -> bool:
    """Whether the pairs with an attractiveness of their own in ``data`` are ``known``."""
    from ...posterior.walk import pd_index

    own = data.documents[data.documents["pooled_rank"] == 0]
    pairs = pd_index(own["query_id"], own["doc_id"])
    return len(pairs) == len(known) and bool(pairs.isin(known).all())


def _pairs_digest(known: pd.MultiIndex | None) -> str | None:
    """A digest of a set of (query, document) pairs (the pages' cache key)."""
    if known is None:
        return None
    import hashlib

    text = "\x1e".join(f"{q}\x1f{d}" for q, d in sorted(known))
    return hashlib.sha1(text.encode()).hexdigest()


#: the longest page whose clicked positions a state can keep (bits of an int64 mask)
MASK_POSITIONS = 62


def _page_data(log: ClickLog, clicks: str, qrels, level: int, default_length: int,
               min_length: int, reclicks: bool = False, own=(1, None),
               readers=None, readers_by: str = "query") -> PageData:
    obs, pages, off_page = log.observations()
    pages = pages.sort_values("serp_id", kind="stable").reset_index(drop=True)
    page_ids = pages["serp_id"].to_numpy(dtype=np.int64)
    deepest = obs.groupby("serp_id")["rank"].max().reindex(page_ids).fillna(0) \
        .to_numpy(dtype=np.int64)
    lengths = page_lengths(log, page_ids, deepest, default_length)
    keep = lengths >= min_length
    report = {"pages": int(keep.sum()), "empty_pages": int((~keep).sum()),
              "off_page_clicks": int(off_page), "clicks": int(obs["serp_id"].isin(
                  page_ids[keep]).sum())}
    pages, lengths, page_ids = pages[keep].reset_index(drop=True), lengths[keep], \
        page_ids[keep]
    width = int(lengths.max()) if lengths.size else 0
    if width == 0:
        raise ParameterError("the click log has no result pages to fit")
    if reclicks and width > MASK_POSITIONS:
        raise ParameterError(f"walks that keep the results clicked so far take pages of at "
                             f"most {MASK_POSITIONS} results; the log has a page of {width}")
    position = np.arange(width)
    inside = position[None, :] < lengths[:, None]                      # (pages, N)
    docs = _page_documents(log, page_ids, width)                       # (pages, N) or None
    documents = None
    if clicks == "rank":
        click_index = np.where(inside, position[None, :], -1)
    else:
        if docs is None:
            raise ParameterError("attractiveness per document needs the documents of each "
                                 "page (the log's result pages)")
        click_index, documents = _document_index(docs, pages["query_id"].to_numpy(), inside,
                                                 *own)
    classes = 1
    move_index = np.where(inside, position[None, :], -1)
    if qrels is not None:
        if docs is None:
            raise ParameterError("moves by relevance need the documents of each page (the "
                                 "log's result pages)")
        relevant = _relevant(docs, _page_topics(log, pages), qrels, level)
        move_index = np.where(inside, relevant * width + position[None, :], -1)
        classes = 2
        report["relevant_positions"] = int((relevant & inside).sum())
    labels = reader_pages = None
    if readers is not None:
        if readers_by == "query":
            units = pages["query_id"].astype(str).to_numpy()
        elif log.meta.get("session_topic"):
            units = _page_topics(log, pages)
        elif isinstance(readers, int):
            raise ParameterError("readers by topic: the log records no session topics "
                                 "(TREC Session's does); fit readers by query instead")
        else:                 # pages without a topic: every one read by reader 0
            units = np.full(len(pages), "", dtype=object)
        labels, reader = _readers(units.astype(str), readers, readers_by)
        move_index = np.where(inside, reader[:, None] * width + position[None, :], -1)
        reader_pages = np.bincount(reader, minlength=labels.size).astype(np.int64)
    key = np.concatenate([lengths[:, None], click_index, move_index], axis=1)
    uniq, config = np.unique(key, axis=0, return_inverse=True)
    config = config.ravel()
    counts, patterns = _counts(obs, pages, page_ids, config, uniq.shape[0], reclicks)
    digest = counts.digest(uniq)
    return PageData(uniq[:, 0].astype(np.int64), uniq[:, 1:1 + width].astype(np.int64),
                    uniq[:, 1 + width:].astype(np.int64), counts,
                    np.bincount(config, minlength=uniq.shape[0]), width, classes, documents,
                    bool(log.has_sessions), report, digest, page_ids, config,
                    pages["query_id"].astype(str).to_numpy(), patterns, bool(reclicks),
                    labels, reader_pages)


def _readers(units: np.ndarray, readers, by: str) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, reader of each page)``: with an int, the queries (topics: ``units``, one
    per page) of at least that many pages get a reader of their own (in order of their
    labels), after reader 0 (:data:`OTHERS`), who reads the others and pages without a
    topic; with labels, those."""
    if isinstance(readers, int):
        per_unit = pd.Series(units[units != ""]).value_counts()
        own = sorted(per_unit.index[per_unit >= readers])
        if not own:
            most = int(per_unit.max()) if len(per_unit) else 0
            raise ParameterError(f"readers by {by}: no {by} has {readers} pages or more "
                                 f"(the most a {by} has is {most}): lower reader_pages, "
                                 f"or fit one reader for the log")
        labels = np.array([OTHERS, *own], dtype=object)
    else:
        labels = np.array(readers, dtype=object)
    reader = pd.Index(labels[1:]).get_indexer(units) + 1          # unknown (-1): reader 0
    return labels, reader.astype(np.int64)


def _page_documents(log: ClickLog, page_ids: np.ndarray, width: int) -> np.ndarray | None:
    """``(pages, N)`` document ids shown at each position (None: the log has no results)."""
    res = log.results
    if not len(res):
        return None
    row = pd.Index(page_ids).get_indexer(res["serp_id"].to_numpy())
    ok = (row >= 0) & (res["rank"].to_numpy() <= width)
    docs = np.full((page_ids.size, width), "", dtype=object)
    docs[row[ok], res["rank"].to_numpy()[ok] - 1] = res["doc_id"].astype(str).to_numpy()[ok]
    return docs


def _document_index(docs: np.ndarray, queries: np.ndarray, inside: np.ndarray,
                    min_impressions: int = 1, known: pd.MultiIndex | None = None):
    """Index of each shown (query, document) pair, and the table of pairs.  A position
    without a document id gets a pair of its own (nothing to share).  Pairs shown fewer
    than ``min_impressions`` times (or, with ``known``, pairs not in it) are replaced at
    each position by the pseudo-document of its rank (``pooled_rank``), listed after the
    pairs with their own attractiveness."""
    n_pages, width = docs.shape
    rows, cols = np.nonzero(inside)
    doc = docs[rows, cols].astype(str)
    blank = doc == ""
    doc = np.where(blank, np.char.add("#blank-", (rows * width + cols).astype(str)), doc)
    frame = pd.DataFrame({"query_id": queries[rows].astype(str), "doc_id": doc,
                          "rank": cols + 1})
    codes, uniques = pd.factorize(pd.MultiIndex.from_frame(frame[["query_id", "doc_id"]]))
    if known is not None:
        own = uniques.isin(known)
    else:
        own = np.bincount(codes, minlength=len(uniques)) >= min_impressions
    kept = np.flatnonzero(own)
    renumber = np.full(len(uniques), -1, dtype=np.int64)
    renumber[kept] = np.arange(kept.size)
    code = renumber[codes]
    pooled = code < 0
    ranks_pooled = np.unique(cols[pooled] + 1)
    code[pooled] = kept.size + np.searchsorted(ranks_pooled, cols[pooled] + 1)
    index = np.full((n_pages, width), -1, dtype=np.int64)
    index[rows, cols] = code
    table = pd.concat([uniques[kept].to_frame(index=False, name=["query_id", "doc_id"]),
                       pd.DataFrame({"query_id": [""] * ranks_pooled.size,
                                     "doc_id": [""] * ranks_pooled.size})],
                      ignore_index=True)
    grouped = frame.assign(code=code).groupby("code")["rank"]
    table["impressions"] = grouped.size().to_numpy()
    table["median_rank"] = grouped.median().to_numpy()
    table["pooled_rank"] = np.r_[np.zeros(kept.size, dtype=np.int64),
                                 ranks_pooled].astype(np.int64)
    return index, table


def _page_topics(log: ClickLog, pages: pd.DataFrame) -> np.ndarray:
    topic_of = log.meta.get("session_topic") or {}
    if not topic_of:
        return pages["query_id"].astype(str).to_numpy()
    ev = log.events
    sessions = ev.loc[(ev["event"] == "query") & ev["serp_id"].notna()].set_index("serp_id")[
        "session_id"]
    sid = sessions.reindex(pages["serp_id"]).astype(str).to_numpy()
    return np.array([str(topic_of.get(s, "")) for s in sid], dtype=object)


def _relevant(docs: np.ndarray, topics: np.ndarray, qrels: pd.DataFrame,
              level: int) -> np.ndarray:
    """``(pages, N)`` whether the document at each position is relevant to the page's
    topic (grade >= level; unjudged: not relevant)."""
    missing = {"query_id", "doc_id", "relevance"} - set(qrels.columns)
    if missing:
        raise ParameterError(f"qrels need columns query_id, doc_id, relevance; missing "
                             f"{sorted(missing)}")
    grades = pd.Series(qrels["relevance"].to_numpy(dtype=float, na_value=np.nan),
                       index=pd.MultiIndex.from_arrays([qrels["query_id"].astype(str),
                                                        qrels["doc_id"].astype(str)]))
    grades = grades[~grades.index.duplicated(keep="last")]
    n_pages, width = docs.shape
    keys = pd.MultiIndex.from_arrays([np.repeat(topics.astype(str), width),
                                      docs.ravel().astype(str)])
    found = grades.reindex(keys).to_numpy(dtype=float, na_value=np.nan)
    if not np.isfinite(found).any():
        raise ParameterError("no document on the log's pages is judged in the qrels (do the "
                             "topic ids match the log's sessions or queries?)")
    return (np.nan_to_num(found, nan=-np.inf) >= level).reshape(n_pages, width)


def clicked_so_far(page: np.ndarray, order: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """The bit mask of the positions (0-based ``rank``) clicked on each click's page up to
    and including that click (``order``: the click's place on its page, 1, 2, ...)."""
    sort = np.lexsort((order, page))
    mask = np.zeros(page.size, dtype=np.int64)
    for position in np.unique(rank):
        hit = pd.Series(rank[sort] == position).groupby(page[sort]).cummax()
        mask[sort] |= hit.to_numpy(dtype=bool).astype(np.int64) << np.int64(position)
    return mask


def _counts(obs: pd.DataFrame, pages: pd.DataFrame, page_ids: np.ndarray,
            config: np.ndarray, n_configs: int,
            reclicks: bool = False) -> tuple[ClickCounts, PagePatterns]:
    """Sparse counts: one term per (configuration, left state, target), or per
    (configuration, left state, positions clicked so far, target) with ``reclicks``; and
    the terms of each page (:class:`PagePatterns`)."""
    outcome_code = {o: i for i, o in enumerate(OUTCOMES)}
    page_row = pd.Index(page_ids)
    clicks = obs[obs["serp_id"].isin(page_ids)]
    click_page = page_row.get_indexer(clicks["serp_id"].to_numpy())
    cfg_of_click = config[click_page]
    rank = clicks["rank"].to_numpy(dtype=np.int64) - 1
    nxt = clicks["next_rank"].to_numpy(dtype=float, na_value=np.nan)
    out = clicks["outcome"].map(outcome_code).to_numpy(dtype=np.int64)
    first = clicks["k"].to_numpy() == 1
    clicked = pages["serp_id"].isin(clicks["serp_id"]).to_numpy()
    page_out = pages["outcome"].map(outcome_code).to_numpy(dtype=np.int64)
    # the page's start: the first click's rank, or leaving without a click
    start_cfg = np.r_[cfg_of_click[first], config[~clicked]]
    start_target = np.r_[rank[first], -1 - page_out[~clicked]]
    start_page = np.r_[click_page[first], np.flatnonzero(~clicked)]
    # after each click: the next click's rank, or leaving
    after_target = np.where(np.isfinite(nxt), np.nan_to_num(nxt, nan=0).astype(np.int64) - 1,
                            -1 - out)
    cfg = np.r_[start_cfg, cfg_of_click]
    state = np.r_[np.full(start_cfg.size, -1), rank]
    target = np.r_[start_target, after_target]
    mask = np.r_[np.zeros(start_cfg.size, dtype=np.int64),
                 clicked_so_far(click_page, clicks["k"].to_numpy(), rank)] \
        if reclicks else np.zeros_like(state)
    terms, term_of, count = np.unique(np.stack([cfg, state, mask, target], axis=1), axis=0,
                                      return_inverse=True, return_counts=True)
    counts = ClickCounts.from_terms(terms[:, 0], terms[:, 1], terms[:, 3], count, n_configs,
                                    terms[:, 2])
    return counts, PagePatterns.of(np.r_[start_page, click_page], term_of.ravel(),
                                   page_ids.size, terms.shape[0])
