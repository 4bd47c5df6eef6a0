"""Readers by query (``[examination] readers = "query"``, spec ``walk-query``): each query
of many pages read by its own walk, shifted from the population's on the logit scale.
Tested against the page likelihood written from its definition with each page's reader,
central differences, and pages walked by an independent simulator whose queries are
read by known, different readers."""

import dataclasses
import re

import numpy as np
import pytest

from bayeschain import chains
from bayeschain.browsing import build_chain
from bayeschain.errors import FormatError, ParameterError
from bayeschain.inference import fit, heldout_click_metrics
from bayeschain.inference.specs import load_spec
from bayeschain.inference.walk.data import OTHERS, page_data
from bayeschain.inference.walk.model import WalkModel
from bayeschain.posterior.walk import reader_depths
from tests.inference.walk.test_likelihood import assert_gradient_is_central_differences
from tests.reference.walk_clicks import (
    damped_page_log_likelihood,
    pages_to_log,
    simulate_pages,
)

N = 10
FORWARD = np.linspace(0.78, 0.58, N)
BACKWARD = np.r_[0.0, np.full(N - 1, 0.1)]
CLICK = np.linspace(0.45, 0.17, N)
REPEAT = np.full(N, 0.1)
#: each query's shift of the forward logit (against leaving and moving back); the rare
#: queries are read by the population's walk (shift 0)
SHIFTS = {"nav": -1.0, "mixed": -0.3, "broad": 0.4, "deep": 1.0}


def reader_moves(shift):
    """The truth's moves of a reader whose forward logit is shifted by ``shift``:
    ``p' = p e^shift / (p e^shift + q + leave)``, the others in proportion."""
    leave = 1 - FORWARD - BACKWARD
    total = FORWARD * np.exp(shift) + BACKWARD + leave
    p, q, lv = FORWARD * np.exp(shift) / total, BACKWARD / total, leave / total
    return p, q, 0.3 * lv, 0.7 * lv


def true_depth(shift):
    p, q, _, _ = reader_moves(shift)
    return float(chains.expected_stopping_time(build_chain("rwbm", N, p=p, q=q)))


def simulated_log(seed, per_query, rare):
    """``per_query`` pages of each query of :data:`SHIFTS` and ``rare`` pages of as many
    queries shown once, read by the population's walk."""
    rng = np.random.default_rng(seed)
    pages, queries = [], []
    for query, shift in SHIFTS.items():
        pages += simulate_pages(rng, per_query, *reader_moves(shift), CLICK, repeat=REPEAT)
        queries += [query] * per_query
    pages += simulate_pages(rng, rare, *reader_moves(0.0), CLICK, repeat=REPEAT)
    queries += [f"rare{seed}-{k}" for k in range(rare)]
    return pages_to_log(pages, N, queries=queries)


def shifted_rows(model, theta, reader):
    """Reader ``reader``'s moves with the ``leave`` boundary applied, and its repeats,
    written from the definition: the population's softmax with the reader's effects
    added to the forward and backward logits (against leaving), to the next query's
    (against the end) and to the repeat's."""
    f, b, r, s = model.move_tables(theta)[0, 0].T
    e = dict(zip(model.reader_logits, model.reader_effects(theta)[reader], strict=True))
    leave = r + s
    f, b = f * np.exp(e["forward"]), b * np.exp(e.get("backward", 0.0))
    total = f + b + leave
    odds = r / s * np.exp(e.get("continue", 0.0))
    f, b, leave = f / total, b / total, leave / total
    r, s = leave * odds / (1 + odds), leave / (1 + odds)
    share = r[-1] / (r[-1] + s[-1])
    r[-1], s[-1], f[-1] = r[-1] + f[-1] * share, s[-1] + f[-1] * (1 - share), 0.0
    rho = model.repeat_table(theta)
    rho = 1 / (1 + np.exp(-(np.log(rho / (1 - rho)) + e["repeat"])))
    return f, b, r, s, rho


@pytest.mark.parametrize("reclicks", ["fresh", "damped"])
def test_page_likelihood_is_each_page_under_its_querys_reader(reclicks):
    """The model's log-likelihood of a log of three queries of their own and rarer ones
    equals the sum over pages of each page's likelihood written from the definition
    (dense matrices, the clicked set carried along) under its query's reader, reader 0
    for the rarer queries; the gradient of the log density equals central differences."""
    rng = np.random.default_rng(5)
    n = 6
    pages, queries = [], []
    for k, shift in enumerate((-0.8, 0.2, 0.9)):
        p, q, lv = FORWARD[:n] * np.exp(shift), BACKWARD[:n], 1 - FORWARD[:n] - BACKWARD[:n]
        total = p + q + lv
        pages += simulate_pages(rng, 150, p / total, q / total, 0.3 * lv / total,
                                0.7 * lv / total, CLICK[:n], repeat=REPEAT[:n],
                                reclick=0.3)
        queries += [f"q{k}"] * 150
    pages += simulate_pages(rng, 40, FORWARD[:n], BACKWARD[:n], 0.3 * (1 - FORWARD[:n]),
                            0.7 * (1 - FORWARD[:n]), CLICK[:n], repeat=REPEAT[:n])
    queries += [f"rare{k}" for k in range(40)]
    pages[-1] = (pages[-1][0], "end")     # the log's last page: nothing followed it
    data = page_data(pages_to_log(pages, n, queries=queries), readers=100,
                     reclicks=reclicks == "damped")
    assert list(data.readers) == [OTHERS, "q0", "q1", "q2"]
    assert list(data.reader_pages) == [40, 150, 150, 150]
    model = WalkModel(data, reclicks=reclicks)
    theta = model.initial_point(rng) + rng.normal(0, 0.4, model.ndim)
    kappa, click = model.reclick_factor(theta), model.click_table(theta)
    reader_of = {q: k + 1 for k, q in enumerate(("q0", "q1", "q2"))}
    rows = [shifted_rows(model, theta, g) for g in range(4)]
    want = sum(damped_page_log_likelihood(clicks, outcome, *rows[reader_of.get(query, 0)][:4],
                                          click, rows[reader_of.get(query, 0)][4], kappa)
               for (clicks, outcome), query in zip(pages, queries, strict=True))
    got = model.pattern_log_likelihood(theta) @ data.patterns.pages
    assert got == pytest.approx(want, rel=1e-11)
    assert_gradient_is_central_differences(model, theta, rel=1e-4)


@pytest.fixture(scope="module")
def readers_and_one():
    """6,600 pages: four queries of 1,500 pages, each read by its own known walk, and 600
    queries shown once read by the population's; ``walk-query`` and the default walk
    fitted to them with a fixed number of draws (the same draws on every run)."""
    log = simulated_log(2026, 1500, 600)
    return (log, fit(log, spec="walk-query", seed=7, draws=1000, min_ess=0),
            fit(log, seed=7, draws=1000, min_ess=0))


def test_each_querys_reader_is_recovered(readers_and_one):
    """Each reader's E[H] and shift of the forward logit (from reader 0's) are inside
    their 99% intervals; reader 0, who reads the queries shown once, is the population's
    walk; the sampler converged."""
    _, post, _ = readers_and_one
    depths = reader_depths(post, N, prob=0.99).set_index("reader")
    truth = {OTHERS: 0.0, **SHIFTS}
    assert set(depths.index) == set(truth)
    for query, shift in truth.items():
        row = depths.loc[query]
        assert row["lo"] <= true_depth(shift) <= row["hi"], (query, row, true_depth(shift))
    effect = post.posterior["reader_effect"].sel(reader_logit="forward")
    shift = (effect - effect.sel(reader=OTHERS)).stack(s=("chain", "draw"))
    for query, want in SHIFTS.items():
        lo, hi = np.quantile(shift.sel(reader=query).values, [0.005, 0.995])
        assert lo <= want <= hi, (query, lo, hi)
    diag = post.diagnostics()
    assert diag["max_rhat"].max() <= 1.01 and diag["min_ess"].min() >= 400
    assert post.divergences() == 0


def test_readers_predict_held_out_clicks_better_than_one_walk(readers_and_one):
    """On held-out pages walked by the same users (another seed), the walk with a reader
    per query has a better log-likelihood and perplexity than the one walk fitted to the
    same pages; a held-out query the log never showed is read by reader 0."""
    log, readers, one = readers_and_one
    test = simulated_log(99, 400, 200)
    with_readers = heldout_click_metrics(readers, test, seed=1)
    without = heldout_click_metrics(one, test, seed=1)
    assert with_readers.log_likelihood > without.log_likelihood + 0.002
    assert with_readers.perplexity < without.perplexity
    data = page_data(test, readers=tuple(readers.posterior["reader"].values))
    unseen = np.char.startswith(data.page_queries.astype(str), "rare99")
    assert unseen.sum() == 200
    assert (data.move_index[data.page_config[unseen]] < N).all()       # reader 0's rows


def test_next_query_and_repeat_logits_are_centred_only_where_the_pages_inform_them():
    """Each reader's pages followed by another query and its repeats (a click on the
    result clicked just before), counted from the log's events, are what the model
    counts; a reader's effect on the next query (the repeat) is centred only with 100
    such events or more (next queries and ends), on the moves with 100 pages.  The
    population's next-query logits are centred (at ranks of many clicks) only in a log of
    100 next queries and 100 session ends or more: WSCD's sessions are one page each, its
    next-query logits keep their prior, and centred they made a funnel with their
    spread; a log of few long sessions informs the split as little."""
    import pandas as pd

    from bayeschain.inference.walk.model import CENTRED

    def per_reader(query_ids, flags, readers):
        reader = pd.Series(query_ids.to_numpy()).map(
            lambda q: readers.index(q) if q in readers else 0)
        return np.bincount(reader, weights=flags.fillna(False).to_numpy(dtype=float),
                           minlength=len(readers))

    def session_outcomes(log, readers):
        """Per reader, from the log's events: pages followed by another query of their
        session, and pages that end it."""
        ev = log.events
        pages = ev[ev["event"] == "query"]
        followed = pages["session_id"].eq(pages["session_id"].shift(-1)).fillna(False)
        return (per_reader(pages["query_id"], followed, readers),
                per_reader(pages["query_id"], ~followed, readers))

    log = simulated_log(5, 400, 50)
    ev = log.events
    clicks = ev[ev["event"] == "click"]
    repeat = (clicks["serp_id"].eq(clicks["serp_id"].shift())
              & clicks["rank"].eq(clicks["rank"].shift()))
    data = page_data(log, readers=100)
    readers = list(data.readers)
    want_next, want_ends = session_outcomes(log, readers)
    want_repeats = per_reader(clicks["query_id"], repeat, readers)
    want_split = np.minimum(want_next, want_ends)
    split, repeats = data.reader_events()
    np.testing.assert_array_equal(split, want_split)
    np.testing.assert_array_equal(repeats, want_repeats)
    assert (want_repeats[1:] < 100).any() and (want_split[1:] >= 100).all()
    model = WalkModel(data)
    mode = {f.name: f.mode for f in model.families}
    big = data.reader_pages >= 100
    np.testing.assert_array_equal(mode["reader_forward"] == CENTRED, big)
    np.testing.assert_array_equal(mode["reader_continue"] == CENTRED, big & (want_split >= 100))
    np.testing.assert_array_equal(mode["reader_repeat"] == CENTRED,
                                  big & (want_repeats >= 100))
    assert (mode["continue[0]"] == CENTRED).any()          # ranks of 500 clicks or more
    rng = np.random.default_rng(5)
    leave = 1 - FORWARD - BACKWARD
    alone = pages_to_log(simulate_pages(rng, 3000, FORWARD, BACKWARD, 0 * leave, leave,
                                        CLICK, repeat=REPEAT), N,
                         queries=["a"] * 1500 + ["b"] * 1500)
    data = page_data(alone)
    assert data.next_queries == 0 and (data.clicks_per_rank() >= 500).any()
    mode = {f.name: f.mode for f in WalkModel(data).families}
    assert (mode["continue[0]"] != CENTRED).all() and (mode["forward[0]"] == CENTRED).any()
    # readers of many pages, none followed by another query: next-query effects not centred
    data = page_data(alone, readers=100)
    assert list(data.readers[1:]) == ["a", "b"] and (data.reader_events()[0] == 0).all()
    mode = {f.name: f.mode for f in WalkModel(data).families}
    assert (mode["reader_forward"][1:] == CENTRED).all()
    assert (mode["reader_continue"] != CENTRED).all()
    # few long sessions: next queries in thousands, ends fewer than 100 (counted from the
    # log's sessions), and the logit that sets one against the other not centred
    long = pages_to_log(simulate_pages(rng, 3000, FORWARD, BACKWARD, 0.99 * leave,
                                       0.01 * leave, CLICK, repeat=REPEAT), N,
                        queries=["a"] * 1500 + ["b"] * 1500)
    data = page_data(long, readers=100)
    want_next, want_ends = session_outcomes(long, list(data.readers))
    assert want_next.sum() > 2000 and want_ends.sum() < 100
    assert data.next_queries == want_next.sum() and data.session_ends == want_ends.sum()
    assert (data.clicks_per_rank() >= 500).any()
    np.testing.assert_array_equal(data.reader_events()[0], np.minimum(want_next, want_ends))
    mode = {f.name: f.mode for f in WalkModel(data).families}
    assert (mode["continue[0]"] != CENTRED).all() and (mode["forward[0]"] == CENTRED).any()
    assert (mode["reader_forward"][1:] == CENTRED).all()
    assert (mode["reader_continue"] != CENTRED).all()


def test_readers_are_refused_where_they_are_not_built(tmp_path):
    """Readers by query with moves by relevance or after a click, or the decision made
    once, are refused by the spec; a log whose queries all have fewer than
    ``reader_pages`` pages is refused, naming the most a query has."""
    spec = tmp_path / "spec.toml"
    for key in ("by_relevance = true", "click_moves = true", 'reclicks = "once"'):
        spec.write_text(f'[model]\nname = "x"\n[examination]\nreaders = "query"\n{key}\n'
                        f'[sampler]\nmethod = "nuts"\n')
        with pytest.raises(FormatError, match="readers = 'query'"):
            load_spec(spec)
    log = simulated_log(1, 20, 10)
    with pytest.raises(ParameterError, match="no query has 100 pages or more .* is 20"):
        page_data(log, readers=100)
    with pytest.raises(ParameterError, match="the log records no session topics"):
        page_data(log, readers=5, readers_by="topic")
    # pages of a log without topics, under a posterior's readers by topic: reader 0's
    held = page_data(log, readers=(OTHERS, "t1", "t2"), readers_by="topic")
    assert (held.move_index[held.move_index >= 0] < N).all()


def test_a_large_file_with_readers_is_read_into_memory(tmp_path):
    """A canonical file over the out-of-core threshold is fitted in memory when the spec
    has readers (their pages are built in memory), as with relevance classes."""
    import argparse

    from bayeschain.cli.fit import _fits_out_of_core

    args = argparse.Namespace(out_of_core=False, memory_limit=None, heldout=None,
                              results=None, log=str(tmp_path / "log.parquet"))
    assert _fits_out_of_core(args, load_spec("walk"), None)
    assert not _fits_out_of_core(args, load_spec("walk-query"), None)


@pytest.mark.parametrize("variant", [dict(), dict(backward=False), dict(sessions=False)])
def test_reader_tables_rebuild_each_readers_walk_from_reader_0s(variant):
    """The posterior stores reader 0's walk and every reader's effects;
    :func:`reader_tables` rebuilds reader g's moves and repeats from them: the model's
    own tables of reader g (its logits shifted by its effects), with and without backward
    moves and sessions."""
    from bayeschain.posterior.walk import reader_tables

    rng = np.random.default_rng(9)
    log = simulated_log(2, 60, 20)
    if variant.get("sessions") is False:
        log = dataclasses.replace(log, has_sessions=False)
    model = WalkModel(page_data(log, readers=50), backward=variant.get("backward", True))
    thetas = [model.initial_point(rng) + rng.normal(0, 0.5, model.ndim) for _ in range(3)]
    walk = np.stack([model.expand(t)["walk"][0] for t in thetas])
    repeat = np.stack([model.expand(t)["repeat"] for t in thetas])
    effect = np.stack([model.reader_effects(t) for t in thetas])
    moves, repeats = reader_tables(walk, repeat, effect, model.reader_logits)
    for d, theta in enumerate(thetas):
        for g in range(effect.shape[1]):
            logits = model._with_reader(model._logits(theta), g)
            np.testing.assert_allclose(moves[d, g], model.move_tables(theta, logits)[0, 0],
                                       rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(repeats[d, g], model.repeat_table(theta, logits),
                                       rtol=1e-12)


def test_readers_by_topic_group_the_pages_of_each_sessions_topic():
    """``readers_by = "topic"``: a page is read by its session's topic's reader (TREC
    Session records one per session), topics of fewer than ``readers`` pages and pages
    of a session without a topic by reader 0."""
    rng = np.random.default_rng(3)
    pages = simulate_pages(rng, 300, *reader_moves(0.0), CLICK, repeat=REPEAT)
    log = pages_to_log(pages, N)
    ev = log.events
    session_of = ev[ev["event"] == "query"].set_index("serp_id")["session_id"].astype(str)
    sessions = sorted(set(session_of), key=int)
    # topic "big" for the first half of the sessions, "small" for 3 of them, none for the rest
    topic = {s: "big" for s in sessions[:len(sessions) // 2]}
    topic |= {s: "small" for s in sessions[len(sessions) // 2:len(sessions) // 2 + 3]}
    log.meta["session_topic"] = topic
    data = page_data(log, readers=10, readers_by="topic")
    assert list(data.readers) == [OTHERS, "big"]
    want = np.array([topic.get(session_of[p], "") == "big" for p in data.page_ids])
    reader = data.move_index[data.page_config, 0] // N
    assert (reader == want).all() and data.reader_pages[1] == want.sum()
    with pytest.raises(ParameterError, match="readers by topic: no topic has 1000 pages"):
        page_data(log, readers=1000, readers_by="topic")


def test_the_fit_command_reports_each_readers_depth(tmp_path, capsys):
    """``bayeschain fit --spec walk-query`` says who has a reader of their own, the spreads
    of the effects and each reader's E[H] (the navigational query's the shallowest, the
    deep one's the deepest), and the posterior it writes predicts held-out pages."""
    from bayeschain.cli import main
    from bayeschain.inference import Posterior
    from bayeschain.io.clicklog import write_canonical

    log = simulated_log(4, 400, 100)
    events, pages = tmp_path / "log.parquet", tmp_path / "pages.parquet"
    write_canonical(log, events)
    log.results.to_parquet(pages, index=False)
    out = tmp_path / "post.nc"
    assert main(["fit", str(events), "--results", str(pages), "--spec", "walk-query",
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert ("readers by query: 4 queries with 400 pages or more read by their own reader; "
            "reader 0 reads the other queries (100 pages)") in text
    assert "spread (sd) of the readers' logit effects: forward " in text
    listed = re.findall(r"^  (\w+) +400 pages +([\d.]+) ", text, flags=re.M)
    assert [q for q, _ in listed] == ["nav", "mixed", "broad", "deep"]
    post = Posterior.load(out)
    assert post.attrs["readers_by"] == "query"
    assert heldout_click_metrics(post, simulated_log(5, 50, 50)).pages == 250


def test_predictions_on_the_fitted_log_reuse_the_pages_its_fit_built(readers_and_one):
    """The fit names its readers by query; the pages its predictive checks and
    predictions build from those names are the pages the fit built (not built twice)."""
    from bayeschain.inference.walk.prediction import pages_for

    log, post, _ = readers_and_one
    data = pages_for(post, log, None, 1)
    assert data.readers is not None and list(data.readers) == list(
        post.posterior["reader"].values)
    fitted = [v[1] for k, v in log.__dict__["_derived"].items()
              if k[0] == "page_data" and isinstance(k[-3], int)]
    assert any(d is data for d in fitted)
