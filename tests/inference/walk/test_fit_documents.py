"""Attractiveness per document fitted to clicks: documents shown at several ranks are told
apart from the walk that examines them, with and without click offsets by rank (users
simulated by an independent simulator, tests/reference/walk_clicks.py)."""

import numpy as np
import pytest

import bayeschain as bc
from bayeschain.browsing import build_chain
from bayeschain.inference import expected_visits, fit, walk_parameters
from tests.inference.walk.test_fit import interval
from tests.reference.walk_clicks import documents_at_several_ranks

pytest.importorskip("nutpie")


def test_attractiveness_per_document_is_told_apart_from_examination():
    """Documents shown at several ranks: their attractiveness and the walk are both
    recovered (99% intervals; most documents inside)."""
    log, attractive, f, b = documents_at_several_ranks(13)
    n = f.size
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
    offset = np.array([0.0, -0.4, -0.6, -0.7, -0.8, -0.9])
    log, attractive, f, b = documents_at_several_ranks(17, low=0.15, offset=offset)
    n = f.size
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
