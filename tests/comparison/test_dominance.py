"""dominance_probability: the four outcomes per topic and draw against laws computed one
draw at a time (path_distribution, tested against brute force in tests/measures), and the
probability of superiority against simulated users."""

import numpy as np
import pandas as pd
import pytest

from bayeschain.chains import Tridiagonal
from bayeschain.chains.simulation import simulate_users
from bayeschain.comparison import dominance_probability
from bayeschain.comparison.dominance import OUTCOMES, SUPERIORITY
from bayeschain.errors import ParameterError
from bayeschain.inference import posterior_from_parameters
from bayeschain.measures import path_distribution, stochastic_dominance

RELEVANCE = {"t1": {"A": [1, 0, 0, 0, 0, 0], "B": [0, 1, 1, 1, 1, 0]},
             "t2": {"A": [2, 1, 0, 0, 1, 0], "B": [2, 1, 0, 0, 0, 0]},
             "t3": {"A": [0, 0, 1, 0], "B": [0, 0, 1, 0]}}


def _collection():
    runs = {"A": [], "B": []}
    judgements = []
    for topic, lists in RELEVANCE.items():
        for name, rel in lists.items():
            docs = [f"{topic}{name}{i}" for i in range(len(rel))]
            runs[name].append(pd.DataFrame({"query_id": topic, "doc_id": docs,
                                            "score": np.arange(len(rel), 0, -1.0),
                                            "run_id": name}))
            judgements.append(pd.DataFrame({"query_id": topic, "doc_id": docs,
                                            "relevance": rel}))
    return ({k: pd.concat(v, ignore_index=True) for k, v in runs.items()},
            pd.concat(judgements, ignore_index=True))


@pytest.fixture(scope="module")
def case():
    runs, qrels = _collection()
    walks = np.random.default_rng(3).dirichlet([4, 1, 1, 2], size=60)
    return runs, qrels, walks, posterior_from_parameters({"walk": walks})


def _brute(rel_a, rel_b, p, q):
    la = path_distribution(np.array(rel_a, float), "rwbm", p=p, q=q)
    lb = path_distribution(np.array(rel_b, float), "rwbm", p=p, q=q)
    d = stochastic_dominance(la, lb, tol=1e-9)
    equal = d.a_dominates and d.b_dominates
    return {"a_dominates": d.a_dominates and not equal, "b_dominates": d.b_dominates and not equal,
            "equal": equal, "crossing": not (d.a_dominates or d.b_dominates)}, la, lb


def test_outcomes_per_topic_and_draw_match_one_draw_at_a_time(case):
    runs, qrels, walks, post = case
    got = dominance_probability(runs, qrels, "PatH(model='rwbm')@10", post, "A", "B")
    assert got.draws == len(walks)
    for topic, lists in RELEVANCE.items():
        counts = dict.fromkeys(OUTCOMES, 0)
        for p, q, _, _ in walks:
            out, _, _ = _brute(lists["A"], lists["B"], p, q)
            for o in OUTCOMES:
                counts[o] += out[o]
        row = got.topics.set_index("topic").loc[topic]
        for o in OUTCOMES:
            assert row[o] == pytest.approx(counts[o] / len(walks)), (topic, o)
        assert sum(row[o] for o in OUTCOMES) == pytest.approx(1.0)
    t3 = got.topics.set_index("topic").loc["t3"]
    assert t3["equal"] == 1.0 and t3[SUPERIORITY] == pytest.approx(0.5)
    assert sum(got.system.outcome(o) for o in OUTCOMES) == pytest.approx(1.0)
    assert 0 < got.topics.set_index("topic").loc["t1", "crossing"] < 1
    assert "random user on a random topic" in got.summary()


def test_the_mixture_over_topics_is_the_law_of_a_random_user_on_a_random_topic(case):
    """System outcome of one draw recomputed: mix the three topics' laws with weight 1/3."""
    runs, qrels, walks, post = case
    one = posterior_from_parameters({"walk": walks[:1]})
    got = dominance_probability(runs, qrels, "PatH(model='rwbm')@10", one, "A", "B")
    p, q = walks[0, :2]
    laws = {name: [path_distribution(np.array(RELEVANCE[t][name], float), "rwbm", p=p, q=q)
                   for t in RELEVANCE] for name in "AB"}

    def mixture(ls):
        values = np.concatenate([law.values for law in ls])
        probs = np.concatenate([law.probabilities for law in ls]) / len(ls)
        return values, probs

    d = stochastic_dominance(mixture(laws["A"]), mixture(laws["B"]), tol=1e-9)
    equal = d.a_dominates and d.b_dominates
    assert got.system.a_dominates == float(d.a_dominates and not equal)
    assert got.system.b_dominates == float(d.b_dominates and not equal)
    assert got.system.crossing == float(not (d.a_dominates or d.b_dominates))


def test_probability_of_superiority_against_simulated_users(case):
    """P(X_A > X_B) + P(X_A = X_B)/2 for independent users, one draw, topic t2."""
    runs, qrels, walks, _ = case
    w = walks[7]
    post = posterior_from_parameters({"walk": w[None]})
    got = dominance_probability(runs, qrels, "PatH(model='rwbm')@10", post, "A", "B")
    exact = got.topics.set_index("topic").loc["t2", SUPERIORITY]
    p, q = w[:2]
    users = 200_000
    x = {}
    for name in "AB":
        rel = np.array(RELEVANCE["t2"][name], float)
        n = rel.size
        chain = Tridiagonal(np.r_[0.0, np.full(n - 1, q)], np.zeros(n),
                            np.r_[np.full(n - 1, p), 0.0])
        x[name] = simulate_users(chain, users, rewards=rel,
                                 seed={"A": 11, "B": 12}[name]).precision()
    xa, xb = np.round(x["A"], 12), np.round(x["B"], 12)
    rng = np.random.default_rng(0)
    xb = rng.permutation(xb)                      # independent pairs of users
    est = np.mean(xa > xb) + 0.5 * np.mean(xa == xb)
    se = np.sqrt(est * (1 - est) / users)
    assert abs(est - exact) < 5 * se


def test_identical_runs_have_equal_laws_and_no_dominance(case):
    runs, qrels, _, post = case
    same = {"A": runs["A"], "C": runs["A"].assign(run_id="C")}
    got = dominance_probability(same, qrels, "PatH(model='rwbm')@10", post, "A", "C")
    assert got.system.a_dominates == got.system.b_dominates == 0.0
    assert got.system.equal == 1.0
    assert (got.topics["equal"] == 1.0).all()
    assert got.system.superiority == pytest.approx(0.5)


def test_monte_carlo_error_is_reported_and_subsets_are_seeded(case):
    runs, qrels, _, post = case
    a = dominance_probability(runs, qrels, "PatH(model='rwbm')@10", post, "A", "B",
                              max_draws=20, seed=1)
    b = dominance_probability(runs, qrels, "PatH(model='rwbm')@10", post, "A", "B",
                              max_draws=20, seed=1)
    pd.testing.assert_frame_equal(a.topics, b.topics)
    row = a.topics.set_index("topic").loc["t1"]
    p = row["crossing"]
    assert row["se_crossing"] == pytest.approx(np.sqrt(p * (1 - p) / 20))


def test_bad_requests_are_errors(case):
    runs, qrels, _, post = case
    with pytest.raises(ParameterError, match="sfbm' or 'rwbm"):
        dominance_probability(runs, qrels, "PatH(model='rwbm')", post, "A", "B")
    with pytest.raises(ParameterError, match="two different runs"):
        dominance_probability(runs, qrels, "PatH(model='rwbm')@5", post, "A", "A")
    with pytest.raises(ParameterError, match="moves backward"):
        dominance_probability(runs, qrels, "PatH(model='sfbm')@5", post, "A", "B")
