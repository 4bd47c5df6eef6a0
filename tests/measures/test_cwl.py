"""INST and its C/W/L quantities (EU, ETU, ED) against cwl_eval, the C/W/L formulas written
out here, simulated users and ir_measures' published values.

* cwl_eval (``pip install cwl-eval``, Azzopardi, Thomas & Moffat's reference code), when
  installed: its INSTCWLMetric on the same gains at depth ``n`` gives EU and ED exactly; its
  ETU leaves out the users it stops at rank ``n`` (``L(n) = reach(n) (1 - C(n))``), so it is
  ours minus ``reach(n) C(n) G_n``.
* The C/W/L definitions written with loops (W, L, C from the gain collected) at a depth
  given, and the infinite ranking against a long finite one.
* Simulated users who carry the gain they have collected, continue after rank i with
  probability C(i) computed from it and stop otherwise: the mean gain and depth of 200,000
  of them, and the ratio of the two means (C/W/L's rate of gain is ETU / ED, a ratio of
  means, not the mean of each user's rate), are within 4 standard errors of ETU, ED, EU.
* ir_measures' cwl fixtures: INST(T=1) and INST(T=2), published to 4 decimals; and
  ir_measures' own cwl_eval provider on a generated collection.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from bayeschain.errors import ParameterError
from bayeschain.measures import cwl, evaluate, path_expectation

DATA = Path(__file__).resolve().parents[2] / "data"


def cwl_by_loops(gains, T, depth):
    """EU, ETU, ED of INST by the C/W/L definitions, one rank at a time (depth >= len)."""
    g = list(gains) + [0.0] * (depth - len(gains))
    c, collected = [], 0.0
    for i, gi in enumerate(g, start=1):
        collected += gi
        t_i = T - collected
        c.append(((i + T + t_i - 1) / (i + T + t_i)) ** 2)
    reach = [1.0]
    for ci in c[:-1]:
        reach.append(reach[-1] * ci)
    ed = sum(reach)
    w = [x / ed for x in reach]
    stop = [r * (1 - ci) for r, ci in zip(reach, c, strict=True)]
    stop[-1] = reach[-1]                       # the user stops at the last rank read
    cum = np.cumsum(g)
    etu = sum(s * gc for s, gc in zip(stop, cum, strict=True))
    eu = sum(wi * gi for wi, gi in zip(w, g, strict=True))
    return eu, etu, ed


def quantities(grades, text):
    return [evaluate(text.replace("}", f", value='{v}')").replace("{", "("), grades)
            for v in ("EU", "ETU", "ED")]


@pytest.mark.parametrize("T", [0.5, 1.0, 2.0, 3.5])
def test_inst_is_the_cwl_definition(T):
    rng = np.random.default_rng(int(T * 10))
    for n in (1, 7, 40):
        grades = rng.choice([0, 0, 1, 2, 3], size=n).astype(float)
        for depth in (n, n + 13, 120):
            want = cwl_by_loops(grades / 3, T, depth)
            got = quantities(grades, f"INST{{T={T}, max_rel=3}}@{depth}")
            np.testing.assert_allclose(got, want, rtol=1e-12)
    # the infinite ranking: the closed-form tail against 200,000 ranks read one by one
    grades = rng.choice([0, 1, 2, 3], size=30).astype(float)
    deep = 200_000
    g = np.r_[grades / 3, np.zeros(deep - 30)]
    c = cwl.inst_continuation(g, T)
    reach = np.r_[1.0, np.cumprod(c[:-1])]
    finite = evaluate(f"INST(T={T}, max_rel=3, value='ED')@{deep}", grades)
    assert finite == pytest.approx(reach.sum(), rel=1e-11)
    infinite = evaluate(f"INST(T={T}, max_rel=3, value='ED')", grades)
    a = 2 * T - g.sum()                      # reach(m) ~ reach(deep) (deep + a - 1)^2 / m^2
    left = reach[-1] * (deep + a - 1) ** 2 / (deep + a - 1)
    assert infinite - finite == pytest.approx(left, rel=1e-4)
    assert evaluate(f"INST(T={T}, max_rel=3)", grades) == pytest.approx(
        (g * reach).sum() / infinite, rel=1e-12)


def test_inst_is_the_sfbm_walk_with_continuation_c():
    """INST at the list's depth is order-2 P@H of the forward walk whose p_i is C(i)."""
    rng = np.random.default_rng(5)
    gains = rng.choice([0, 0.5, 1.0], size=(6, 25))
    c = cwl.inst_continuation(gains, 1.5)
    via_path = path_expectation(gains, "sfbm", order=2, p=c)
    np.testing.assert_allclose(evaluate("INST(T=1.5, max_rel=1)@25", gains), via_path,
                               rtol=1e-12)


def test_simulated_users_agree_with_the_exact_quantities():
    rng = np.random.default_rng(2024)
    grades = np.array([0, 2, 0, 0, 1, 3, 0, 1, 0, 0, 2, 0, 0, 0, 1.0])
    T, depth, users = 2.0, 40, 200_000
    g = np.r_[grades / 3, np.zeros(depth - grades.size)]
    total = np.zeros(users)
    depth_read = np.zeros(users)
    alive = np.ones(users, dtype=bool)
    for i in range(1, depth + 1):             # state: (rank i, gain collected so far)
        total[alive] += g[i - 1]
        depth_read[alive] += 1
        x = i + T + (T - total)               # i + T + T_i with the user's own T_i
        go_on = rng.random(users) < ((x - 1) / x) ** 2
        alive &= go_on
    eu, etu, ed = quantities(grades, f"INST{{T={T}, max_rel=3}}@{depth}")
    se_t = total.std(ddof=1) / np.sqrt(users)
    se_h = depth_read.std(ddof=1) / np.sqrt(users)
    assert abs(total.mean() - etu) < 4 * se_t
    assert abs(depth_read.mean() - ed) < 4 * se_h
    # the rate of gain is a ratio of means; its standard error by the delta method
    ratio = total.mean() / depth_read.mean()
    resid = (total - ratio * depth_read) / depth_read.mean()
    assert abs(ratio - eu) < 4 * resid.std(ddof=1) / np.sqrt(users)
    # ... and not the mean of each user's rate, which differs by many standard errors
    rates = total / depth_read
    assert abs(rates.mean() - eu) > 10 * rates.std(ddof=1) / np.sqrt(users)


def test_cwl_eval_agrees():
    pytest.importorskip("cwl", reason="cwl_eval (pip install cwl-eval) is the reference")
    from cwl.ruler.measures.cwl_inst import INSTCWLMetric
    from cwl.ruler.ranking import Ranking

    logging.getLogger("cwl").disabled = True
    rng = np.random.default_rng(7)
    for T in (1.0, 2.0, 3.0):
        for n in (1, 10, 60):
            grades = rng.choice([0, 0, 1, 2, 3], size=n).astype(float)
            for depth in (n, 100, 1000):
                metric = INSTCWLMetric(T)
                ranking = Ranking("t", list(grades / 3), list(np.ones(n)), max_n=depth)
                eu = metric.measure(ranking)
                ours_eu, ours_etu, ours_ed = quantities(
                    grades, f"INST{{T={T}, max_rel=3}}@{depth}")
                assert ours_eu == pytest.approx(eu, rel=1e-12)
                assert ours_ed == pytest.approx(metric.expected_items, rel=1e-12)
                g = np.r_[grades / 3, np.zeros(depth - n)]
                c = cwl.inst_continuation(g, T)
                reach = np.prod(c[:-1])
                dropped = reach * c[-1] * g.sum()      # users cwl_eval drops at rank n
                assert ours_etu - dropped == pytest.approx(metric.expected_total_utility,
                                                           rel=1e-11, abs=1e-15)


def test_ir_measures_published_inst_values():
    """ir_measures' cwl fixture (cwl_eval's values, max_n = 1000, tolerance 1e-4)."""
    from bayeschain.evaluation import evaluate_runs
    from bayeschain.io import read_qrels, read_run

    data = DATA / "ir_measures"
    table = evaluate_runs(read_qrels(data / "cwl.qrels"), read_run(data / "cwl.run"),
                          ["INST(T=1)@1000", "INST(T=2)@1000", "INST(T=1)"])
    got = table.set_index(["measure", "topic"])["value"]
    for measure, values in {"INST(T=1)@1000": (0.7934, 0.9226, 0.0888),
                            "INST(T=2)@1000": (0.5994, 0.6924, 0.1397)}.items():
        for topic, value in zip(("T1", "T2", "T3"), values, strict=True):
            assert got[(measure, topic)] == pytest.approx(value, abs=1e-4)
    # the infinite ranking reads a little deeper (rate lower) than cwl_eval's 1000 ranks
    for topic in ("T1", "T2", "T3"):
        assert 0 < got[("INST(T=1)@1000", topic)] - got[("INST(T=1)", topic)] < 1e-4


def test_ir_measures_cwl_provider_agrees():
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    from bayeschain.evaluation import evaluate_runs
    from tests.test_trec_measures import as_dicts, collection

    provider = ir_measures.providers.registry["cwl_eval"]
    qrels, run = collection(12, ties=False)    # grades -1..3: both clip -1 to gain 0
    q, r = as_dicts(qrels, run)
    names = {"INST(T=1, max_rel=3)": "INST(T=1, max_rel=3)@1000",
             "INST(T=2, max_rel=1)": "INST(T=2, max_rel=1)@1000"}
    measures = {n: ir_measures.parse_measure(n) for n in names}
    want = {(m.query_id, str(m.measure)): m.value
            for m in provider.iter_calc(list(measures.values()), q, r)}
    table = evaluate_runs(qrels, {"gen": run}, list(names.values()), complete=True)
    got = {(row.topic, row.measure): row.value for row in table.itertuples()}
    assert len(want) >= 9 * len(names) and sum(v > 0 for v in want.values()) >= 10
    for (topic, measure), value in want.items():
        ours = got[(topic, names[next(n for n, m in measures.items() if str(m) == measure)])]
        assert ours == pytest.approx(value, rel=1e-12, abs=1e-15), (topic, measure)


def test_inst_parameters_are_checked():
    with pytest.raises(ParameterError, match="target gain"):
        evaluate("INST(T=0.2)", np.array([1.0, 0]))
    with pytest.raises(ParameterError, match="must exceed min_rel"):
        evaluate("INST(min_rel=2, max_rel=1)", np.array([1.0, 0]))
    with pytest.raises(ParameterError, match="value"):
        evaluate("INST(value='EC')", np.array([1.0, 0]))
    # grades beyond max_rel are clipped: gain 1
    assert evaluate("INST(max_rel=1)@5", np.array([3.0, 0])) == \
        evaluate("INST(max_rel=1)@5", np.array([1.0, 0]))
