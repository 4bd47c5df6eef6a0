"""MPcont under per-document holding rates (issue 17, the structure of the MP paper's
Table 4): each run's relevant documents are weighed by their own mean holding time, so
runs that differ only in which documents they rank score differently; scores equal the
definition recomputed here (dense censored chain of :mod:`tests.reference.markov_jumps`)
with ``mu = exp(-(beta_rank + u_query + v_(query, document)))``."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayeschain as bc
from bayeschain.inference import Posterior

from ..reference.markov_jumps import dense_mp

RANKS = 10


def _posterior(beta, query_effects: dict, doc_effects: dict, draws: int = 1,
               tau=(0.3, 0.5)) -> Posterior:
    """A per-document dwell posterior whose every draw has the given effects (log mean
    dwell: ``beta[rank] + u[query] + v[query, doc]``)."""
    def grid(values, dim=None, coords=None):
        v = np.broadcast_to(np.asarray(values, float), (1, draws) + np.shape(values))
        dims = ("chain", "draw") + ((dim,) if dim else ())
        return xr.DataArray(v, dims=dims, coords={dim: coords} if dim else None)

    queries = sorted(query_effects)
    docs = sorted(doc_effects)
    ds = xr.Dataset({
        "holding_rate": grid(np.exp(-np.asarray(beta)), "rank", np.arange(1, RANKS + 1)),
        "dwell_query_effect": grid([query_effects[q] for q in queries], "dwell_query",
                                   queries),
        "dwell_document_effect": grid([doc_effects[d] for d in docs], "dwell_document",
                                      docs),
        "dwell_query_sd": grid(tau[0]), "dwell_document_sd": grid(tau[1])})
    return Posterior(xr.DataTree.from_dict({"posterior": ds}))


def _run(name, ranking: dict) -> pd.DataFrame:
    rows = [(q, d, float(len(docs) - i)) for q, docs in ranking.items()
            for i, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]).assign(run_id=name)


QRELS = pd.DataFrame({"query_id": ["1"] * 6 + ["2"] * 4,
                      "doc_id": ["a", "b", "c", "x", "y", "z", "a", "b", "k", "m"],
                      "relevance": [1, 1, 1, 0, 0, 0, 1, 1, 0, 0]})
#: three runs with the same relevance pattern (R N R N R N / R N N R) and other documents
RUNS = {"A": _run("A", {"1": ["a", "x", "b", "y", "c", "z"], "2": ["a", "k", "m", "b"]}),
        "B": _run("B", {"1": ["b", "x", "c", "y", "a", "z"], "2": ["b", "k", "m", "a"]}),
        "C": _run("C", {"1": ["c", "y", "a", "z", "b", "x"], "2": ["a", "m", "k", "b"]})}
BETA = np.log(30.0) - 0.1 * np.arange(RANKS)


def _effects(long_doc: str) -> dict:
    """Document effects: ``long_doc`` holds users 4x longer than the others."""
    out = {f"{q}\x1f{d}": 0.0 for q in ("1", "2") for d in "abcxyzkm"}
    for q in ("1", "2"):
        out[f"{q}\x1f{long_doc}"] = np.log(4.0)
    return out


def test_scores_equal_the_definition_with_each_documents_rate():
    post = _posterior(BETA, {"1": 0.2, "2": -0.1}, _effects("b"))
    got = bc.score(RUNS, QRELS, "MPcont(model='GL_AD_ID')", post)
    for run, table in RUNS.items():
        for q, docs in table.groupby("query_id")["doc_id"]:
            docs = list(docs)
            rel = np.array([QRELS.set_index(["query_id", "doc_id"]).loc[(q, d), "relevance"]
                            for d in docs], dtype=float)
            log_mean = np.array([BETA[i] + {"1": 0.2, "2": -0.1}[q]
                                 + _effects("b")[f"{q}\x1f{d}"] for i, d in enumerate(docs)])
            want = dense_mp(rel, "GL_AD_ID", mu=np.exp(-log_mean))
            assert float(got.sel(run=run, topic=q).values.ravel()[0]) == \
                pytest.approx(want, abs=1e-12)


def test_runs_that_differ_only_in_their_documents_are_told_apart():
    """Per-rank rates tie the three runs (same relevance pattern); each of three
    per-document posteriors, favouring another document, orders them differently."""
    flat = _posterior(BETA, {"1": 0.0, "2": 0.0},
                      {f"{q}\x1f{d}": 0.0 for q in ("1", "2") for d in "abcxyzkm"})
    tied = bc.score(RUNS, QRELS, "MPcont(model='GL_AD_ID')", flat).mean("topic")
    assert np.ptp(tied.values) < 1e-12
    orders = set()
    for long_doc in "abc":
        post = _posterior(BETA, {"1": 0.0, "2": 0.0}, _effects(long_doc))
        means = bc.score(RUNS, QRELS, "MPcont(model='GL_AD_ID')", post).mean(
            ("chain", "draw", "topic"))
        assert np.ptp(means.values) > 1e-3
        orders.add(tuple(means["run"].values[np.argsort(-means.values)]))
    assert len(orders) == 3, orders


def test_documents_the_log_never_showed_get_the_population():
    """A document without its own effect draws one from Normal(0, tau): its scores spread
    over the draws, those of documents with an effect do not; the scores say how many."""
    effects = _effects("b")
    del effects["1\x1fc"]
    post = _posterior(BETA, {"1": 0.0, "2": 0.0}, effects, draws=400)
    got = bc.score(RUNS, QRELS, "MPcont(model='GL_AD_ID')", post)
    assert float(got.sel(topic="1", run="A").std()) > 1e-3          # c is relevant there
    assert float(got.sel(topic="2", run="A").std()) < 1e-12         # a, b known
    assert got.attrs["documents_without_own_rate"].startswith("3 of 15 ")
    again = bc.score(RUNS, QRELS, "MPcont(model='GL_AD_ID')", post)
    np.testing.assert_array_equal(got.values, again.values)           # reproducible


def test_the_comparison_says_which_documents_had_no_rate_of_their_own():
    effects = _effects("b")
    del effects["1\x1fc"]
    scores = bc.score(RUNS, QRELS, "MPcont(model='GL_AD_ID')",
                      _posterior(BETA, {"1": 0.0, "2": 0.0}, effects, draws=50))
    result = bc.compare(scores, topics="fixed")
    assert "3 of 15 relevant documents retrieved were not in the fitted log" in \
        result.uncertainty


def test_population_draws_are_normal_with_the_posteriors_spread():
    """An unseen document's log mean dwell is the rank effect plus ``tau z``: over 4,000
    draws its mean and standard deviation are those of Normal(0, tau) (5 s.e.)."""
    from bayeschain.posterior.dwell import log_means

    post = _posterior(BETA, {"1": 0.0}, {"1\x1fa": 0.0}, draws=4000, tau=(0.3, 0.5))
    eta = log_means(post, np.array([3]), ["1"], ["never-seen"])[:, 0] - BETA[2]
    assert abs(eta.mean()) < 5 * 0.5 / np.sqrt(4000)
    assert abs(eta.std() - 0.5) < 5 * 0.5 / np.sqrt(2 * 4000)
    other = log_means(post, np.array([3]), ["1"], ["another"])[:, 0] - BETA[2]
    assert abs(np.corrcoef(eta, other)[0, 1]) < 5 / np.sqrt(4000)   # independent documents
    new_query = log_means(post, np.array([3]), ["9"], ["x"])[:, 0] - BETA[2]
    assert abs(new_query.std() - np.hypot(0.3, 0.5)) < 5 * 0.58 / np.sqrt(2 * 4000)


def test_scores_do_not_depend_on_the_company_or_the_blocking():
    """A run scored alone equals its scores among others; draw blocks of any size give the
    same numbers (population draws are keyed on the document and the draw)."""
    effects = _effects("b")
    del effects["1\x1fc"], effects["2\x1fa"]
    post = _posterior(BETA, {"1": 0.0}, effects, draws=300)
    m = "MPcont(model='GL_AD_ID')"
    together = bc.score(RUNS, QRELS, m, post, draw_block=250)
    alone = bc.score({"A": RUNS["A"]}, QRELS, m, post, draw_block=64)
    np.testing.assert_array_equal(together.sel(run="A").values, alone.sel(run="A").values)


def test_unsorted_coordinates_and_per_rank_posteriors():
    """The effects are looked up by name, whatever the order of the coordinates; lists
    that carry document ids score a per-rank posterior as without them."""
    from bayeschain.inference import posterior_from_parameters
    from bayeschain.io.lists import ranked_lists

    post = _posterior(BETA, {"1": 0.2, "2": -0.1}, _effects("b"))
    shuffled = Posterior(xr.DataTree.from_dict({"posterior": post.posterior.isel(
        dwell_document=np.random.default_rng(0).permutation(16), dwell_query=[1, 0])}))
    m = "MPcont(model='GL_AD_ID')"
    np.testing.assert_array_equal(bc.score(RUNS, QRELS, m, post).values,
                                  bc.score(RUNS, QRELS, m, shuffled).values)
    per_rank = posterior_from_parameters({"holding_rate": np.exp(-BETA)[None]})
    lists = ranked_lists(RUNS, QRELS, docs=True)
    np.testing.assert_array_equal(bc.score(lists, None, m, per_rank).values,
                                  bc.score(RUNS, QRELS, m, per_rank).values)


def test_the_unseen_count_stays_within_the_cutoff():
    """MPcont@2 looks up only the first two ranks: the count names those documents."""
    effects = _effects("b")
    del effects["1\x1fc"]                     # c sits at rank 5, 3 and 1 in runs A, B, C
    post = _posterior(BETA, {"1": 0.0, "2": 0.0}, effects, draws=20)
    got = bc.score(RUNS, QRELS, "MPcont(model='GL_AD_ID')@2", post)
    # relevant in the top 2: A: a (1), a (2); B: b (1), b (2); C: c (1), a (2) -> 6, 1 unseen
    assert got.attrs["documents_without_own_rate"].startswith("1 of 6 ")
