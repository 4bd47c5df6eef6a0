"""Attractiveness per document fitted to clicks: documents shown at several ranks are told
apart from the walk that examines them, with and without click offsets by rank (users
simulated by an independent simulator, tests/reference/walk_clicks.py)."""

import numpy as np
import pytest

import bayeschain as bc
from bayeschain.browsing import build_chain
from bayeschain.inference import expected_visits, fit, walk_parameters
from tests.inference.walk.test_fit import interval
from tests.reference.walk_clicks import pages_to_log, simulate_document_pages

pytest.importorskip("nutpie")


def test_attractiveness_per_document_is_told_apart_from_examination():
    """Documents shown at several ranks: their attractiveness and the walk are both
    recovered (99% intervals; most documents inside)."""
    rng = np.random.default_rng(13)
    n, n_docs = 6, 30
    attractive = rng.uniform(0.1, 0.8, n_docs)
    layouts = [rng.choice(n_docs, n, replace=False) for _ in range(200)]   # result pages
    shown = [layouts[k] for k in rng.integers(0, len(layouts), 12_000)]
    f = np.linspace(0.75, 0.6, n)
    b = np.r_[0.0, np.full(n - 1, 0.1)]
    leave = 1 - f - b
    pages = simulate_document_pages(rng, len(shown), f, b, 0.3 * leave, 0.7 * leave,
                                    attractive, shown)
    log = pages_to_log(pages, n, documents=[[f"doc{d}" for d in s] for s in shown],
                       queries=["q"] * len(shown))
    post = fit(log, seed=5)                               # clicks = "auto": per document
    assert post.attrs["click_level"] == "document"
    att = post.posterior["attractiveness"]
    order = [int(d[3:]) for d in att["doc_id"].values]
    draws = att.stack(s=("chain", "draw")).transpose("s", ...).values
    lo, hi = interval(draws, 0.99)
    truth = attractive[order]
    assert np.mean((lo <= truth) & (truth <= hi)) >= 0.9
    p_hat, q_hat = walk_parameters(post)
    lo, hi = interval(p_hat[:, :n - 1], 0.99)
    assert np.sum((f[:n - 1] < lo) | (f[:n - 1] > hi)) <= 1


def test_click_offsets_by_rank_are_told_apart_from_documents_and_the_walk():
    """Documents shown at several ranks, clicked less often lower down once examined (a
    logit offset by rank, trust bias): the offsets, the documents' attractiveness, the
    walk's forward moves and E[H] of a 6-result page are recovered (99% intervals)."""
    rng = np.random.default_rng(17)
    n, n_docs = 6, 30
    attractive = rng.uniform(0.15, 0.8, n_docs)
    offset = np.array([0.0, -0.4, -0.6, -0.7, -0.8, -0.9])
    layouts = [rng.choice(n_docs, n, replace=False) for _ in range(200)]
    shown = [layouts[k] for k in rng.integers(0, len(layouts), 12_000)]
    f = np.linspace(0.75, 0.6, n)
    b = np.r_[0.0, np.full(n - 1, 0.1)]
    leave = 1 - f - b
    pages = simulate_document_pages(rng, len(shown), f, b, 0.3 * leave, 0.7 * leave,
                                    attractive, shown, offset=offset)
    log = pages_to_log(pages, n, documents=[[f"doc{d}" for d in s] for s in shown],
                       queries=["q"] * len(shown))
    spec = bc.inference.parse_spec(bc.load_spec("walk").text.replace(
        "[examination]\n", "[examination]\nrank_offsets = true\n"))
    post = fit(log, spec, seed=5)
    assert post.attrs["click_level"] == "document"
    got = post.posterior["click_offset"].stack(s=("chain", "draw")).transpose("s", ...).values
    assert np.all(got[:, 0] == 0.0)
    lo, hi = interval(got[:, 1:], 0.99)
    assert np.sum((offset[1:] < lo) | (offset[1:] > hi)) <= 1
    att = post.posterior["attractiveness"]
    order = [int(d[3:]) for d in att["doc_id"].values]
    lo, hi = interval(att.stack(s=("chain", "draw")).transpose("s", ...).values, 0.99)
    assert np.mean((lo <= attractive[order]) & (attractive[order] <= hi)) >= 0.9
    p_hat, _ = walk_parameters(post)
    lo, hi = interval(p_hat[:, :n - 1], 0.99)
    assert np.sum((f[:n - 1] < lo) | (f[:n - 1] > hi)) <= 1
    true_e_h = float(bc.chains.expected_stopping_time(build_chain("rwbm", n, p=f, q=b)))
    lo, hi = np.quantile(expected_visits(post, n).sum(axis=1), [0.005, 0.995])
    assert lo <= true_e_h <= hi
