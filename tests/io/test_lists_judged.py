"""ranked_lists' judged mask and count of judged non-relevant documents, against the qrels
themselves and against trec_eval 10's printed num_nonrel_judged_ret and unj_k."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeschain.io import lists as lists_module
from bayeschain.io import read_qrels, read_run
from bayeschain.io.lists import ranked_lists

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"


def expected(name: str) -> dict[tuple[str, str], float]:
    rows = {}
    for line in (DATA / "expected" / "v10.0" / name).read_text().splitlines():
        measure, topic, value = (x.strip() for x in line.split("\t"))
        if measure.startswith(("num_nonrel_judged_ret", "unj_", "num_rel")):
            rows[(measure, topic)] = float(value)
    return rows


@pytest.mark.parametrize(("out", "qrels", "run", "level", "options"), [
    ("out.test.aq", "qrels.test", "results.test", 1, {}),
    ("out.test.aql", "qrels.rel_level", "results.test", 2, {}),
    ("out.test.aqcM", "qrels.test", "results.trunc", 1, {"complete": True, "depth": 100}),
])
def test_judged_counts_match_trec_eval(out, qrels, run, level, options):
    """num_nonrel_judged_ret = retrieved with 0 <= grade < level (a negative grade is "in
    the pool, unjudged"); unj_k = retrieved in the top k without a qrels line or with a
    negative grade, over k; num_rel = the recall base."""
    want = expected(out)
    lists = ranked_lists(read_run(DATA / run), read_qrels(DATA / qrels), level=level,
                         **options)
    g, j = lists.relevance, lists.judged
    for row, topic in enumerate(lists.query_ids):
        nonrel = np.sum(j[row] & (g[row] >= 0) & (g[row] < level))
        assert nonrel == want[("num_nonrel_judged_ret", topic)], topic
        assert lists.recall_base[row] == want[("num_rel", topic)], topic
        inside = np.arange(g.shape[1]) < lists.lengths[row]
        unjudged = inside & ~(j[row] & (g[row] >= 0))
        for k in (5, 10, 20):
            assert unjudged[:k].sum() / k == pytest.approx(want[(f"unj_{k}", topic)],
                                                           abs=5e-5 + 1e-9), (topic, k)
    assert np.any(~j[:, :20] & (np.arange(g.shape[1])[:20] < lists.lengths[:, None]))


def test_mask_is_qrels_membership_on_both_lookup_paths(monkeypatch):
    qrels = pd.DataFrame({"query_id": ["a", "a", "a", "b", "b"],
                          "doc_id": ["d1", "d2", "d3", "d1", "d4"],
                          "relevance": [2, 0, -1, 1, 0]})
    run = pd.DataFrame({"query_id": ["a"] * 4 + ["b"] * 3,
                        "doc_id": ["d1", "d2", "d3", "x", "d4", "d1", "y"],
                        "score": [4, 3, 2, 1, 3, 2, 1.0], "run_id": "r"})
    dense = ranked_lists(run, qrels, level=1)
    monkeypatch.setattr(lists_module, "_DENSE_LOOKUP_LIMIT", 0)   # the sorted-keys lookup
    sparse = ranked_lists(run, qrels, level=1)
    for got in (dense, sparse):
        np.testing.assert_array_equal(got.judged, [[1, 1, 1, 0], [1, 1, 0, 0]])
        np.testing.assert_array_equal(got.relevance, [[2, 0, -1, 0], [0, 1, 0, 0]])
        np.testing.assert_array_equal(got.nonrelevant_base, [1, 1])   # the -1 is not counted
    cut = ranked_lists(run, qrels, depth=1, complete=True)
    np.testing.assert_array_equal(cut.judged, [[True], [True]])
    empty = ranked_lists(run[run["query_id"] == "a"], qrels, complete=True)
    assert not empty.judged[1].any() and empty.lengths[1] == 0
