"""write_click_log streams a simulated log to disk batch by batch: the file read back is
one valid log (ids unique across batches), its clicks follow the walk's exact law (the
independent dense reference), and with a population of documents every query shows the
same documents whose attractiveness spreads as specified."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayeschain.io.clicklog import read_canonical
from bayeschain.simulate import simulate_click_log
from bayeschain.simulate.clicklog import write_click_log

from ..reference.walk_clicks import _dense


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_log_streamed_in_batches_is_one_log_whose_first_clicks_follow_the_walk(
        tmp_path, suffix):
    n = 6
    p, q, r = np.full(n, 0.6), np.full(n, 0.15), np.full(n, 0.05)
    c = np.linspace(0.5, 0.2, n)
    path, pages_path = tmp_path / f"log{suffix}", tmp_path / f"pages{suffix}"
    seen = []
    done = write_click_log(path, 12_000, results=pages_path, batch_sessions=1_700, seed=5,
                           n_ranks=n, forward=p, backward=q, reformulate=r, click=c,
                           report=lambda k, total: seen.append((k, total)))
    assert seen[-1] == (12_000, 12_000) and len(seen) == 8
    log = read_canonical(path, results=pages_path)
    ev = log.events
    assert log.summary()["sessions"] == 12_000 == done["sessions"]
    assert done["pages"] == log.summary()["pages"] and done["clicks"] == log.summary()["clicks"]
    assert ev["seq"].is_monotonic_increasing and ev["seq"].is_unique
    queries = ev[ev["event"] == "query"]
    assert (queries["serp_id"].to_numpy() == np.arange(len(queries))).all()
    # every page lies in one session, and a session's pages are consecutive
    assert queries.groupby("serp_id")["session_id"].nunique().max() == 1
    assert len(log.results) == n * len(queries)
    # the first click of a page: P(first click at j) = [M]_1j c_j (dense reference)
    f, b = p.copy(), q.copy()
    f[-1], b[0] = 0.0, 0.0
    _, _, M = _dense(f, b, r, 1 - f - b - r, c, n)
    first = M[0] * c
    expected = np.append(first, 1 - first.sum())
    clicks = ev[ev["event"] == "click"]
    first_rank = clicks.groupby("serp_id")["rank"].first().astype(int).to_numpy()
    counts = np.bincount(first_rank - 1, minlength=n).astype(float)
    observed = np.append(counts, len(queries) - counts.sum())
    chi2 = np.sum((observed - expected * observed.sum()) ** 2 / (expected * observed.sum()))
    assert stats.chi2.sf(chi2, df=n) > 1e-3, (observed / observed.sum(), expected)


def test_a_log_of_one_batch_is_the_in_memory_log(tmp_path):
    path = tmp_path / "log.parquet"
    write_click_log(path, 500, seed=9, n_ranks=5, attractiveness_sd=0.7, topics=20)
    got = read_canonical(path).events
    want = simulate_click_log(500, seed=9, n_ranks=5, attractiveness_sd=0.7, topics=20).events
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True),
                                  check_dtype=False)


def test_documents_recur_per_query_with_the_attractiveness_spread_asked():
    """Forward-only users examine rank 1 exactly once, so the share of a query's pages
    with a click at rank 1 estimates its first document's attractiveness; over 40 queries
    their logits have mean logit(click) and standard deviation ``attractiveness_sd``."""
    sd, click = 0.8, 0.35
    log = simulate_click_log(60_000, n_ranks=4, forward=0.7, backward=0.0, reformulate=0.0,
                             click=click, attractiveness_sd=sd, topics=40, max_queries=1,
                             seed=11)
    ev = log.events
    pages = ev[ev["event"] == "query"][["serp_id", "query_id"]]
    docs = log.results.merge(pages, on="serp_id")
    assert (docs.groupby(["query_id", "rank"])["doc_id"].nunique() == 1).all()
    assert docs.groupby("doc_id")["query_id"].nunique().max() == 1
    at_one = ev[(ev["event"] == "click") & (ev["rank"] == 1)]["serp_id"].unique()
    rate = pages.assign(hit=pages["serp_id"].isin(at_one)).groupby("query_id")["hit"].mean()
    assert len(rate) == 40
    logits = np.log(rate) - np.log1p(-rate)
    # 40 queries of about 1,500 pages: the logits' own noise is about 0.06
    assert abs(logits.mean() - np.log(click / (1 - click))) < 3 * sd / np.sqrt(40)
    assert 0.55 * sd < logits.std(ddof=1) < 1.45 * sd


def test_a_log_too_large_for_the_disk_is_refused_before_writing(tmp_path):
    from bayeschain.errors import ParameterError

    path = tmp_path / "log.parquet"
    with pytest.raises(ParameterError, match="on disk"):
        write_click_log(path, 10**13, seed=1)
    assert not path.exists() and not list(tmp_path.iterdir())
