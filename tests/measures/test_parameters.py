"""Every measure parameter has one declaration (issue 16, d14): its default and the values it
accepts, checked when a measure string is parsed, with errors that name the parameter and
what it accepts; cut-offs are bounded by a documented limit."""

import math

import numpy as np
import pytest

from bayeschain.errors import ParameterError
from bayeschain.measures import MEASURES, MeasureSpec, evaluate, parse_measure
from bayeschain.measures.registry import (
    MAX_CUTOFF,
    MAX_MEASURE_LENGTH,
    MAX_USERS,
    Measure,
    Param,
)

REL = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 0.0], [3.0, 3.0, 0.0]])


@pytest.mark.parametrize(("text", "message"), [
    (f"P@{10**12}", "cut-off 1,000,000,000,000 is above the limit of 1,000,000 ranks"),
    ("RBP(p=[0.5,0.6])", r"RBP parameter p \(the persistence\) must be a finite number in "
                         r"\[0, 1\); got \[0.5, 0.6\]"),
    ("RBP(p={'a':1})", r"RBP parameter p .* got \{'a': 1\}"),
    ("RBP(p=[.5,.6,.7])", r"RBP parameter p .* got \[0.5, 0.6, 0.7\]"),
    ("RBP(p='0.8')", r"RBP parameter p .* got '0.8'"),
    ("RBP(p=1e999)", r"RBP parameter p .* got inf"),
    ("RBP(p=True)", "RBP parameter p"),
    ("RBP(finite=1)", "RBP parameter finite .* must be True or False; got 1"),
    ("RBP(gains='binary')", r"RBP parameter gains .* map of finite numbers or 'graded'"),
    ("nDCG(gains='graded')", r"nDCG parameter gains .* finite numbers, or None; got 'graded'"),
    ("DCG(gains={1: float})", "literal"),
    ("DCG(gains={'1': 2})", "DCG parameter gains"),
    ("DCG(gains={1: 1e999})", "DCG parameter gains"),
    ("DCG(base=1)", r"DCG parameter base .* must be a finite number > 1; got 1"),
    ("nDCG(variant='log')", "nDCG parameter variant .* one of 'trec', 'jarvelin'; got 'log'"),
    ("ERR(max_grade=-1)", r"ERR parameter max_grade .* must be a finite number >= 0, or None"),
    ("MP(model=3)", "MP parameter model .* one of 'GL_AD_ID'"),
    ("MP(model='XX')", "MP parameter model: unknown Markov Precision model 'XX'"),
    ("MP(rescale='precision')", "MP parameter rescale must be one of 'recall', or None"),
    ("PatH(order=3)", r"PatH parameter order .* must be an integer from 1 to 2; got 3"),
    ("PatH(order=1.0)", "PatH parameter order"),
    ("PatH(order=True)", "PatH parameter order"),
    ("PatH(loss=2)", r"PatH parameter loss .* in \[0, 1\]; got 2"),
    ("PatH(effort='log')", "PatH parameter effort"),
    ("PatH(p=[0.5, 'x'])", r"PatH parameter p \(forward probability\) must be a finite "
                           r"number in \[0, 1\], or a list of up to 1,000,000 such numbers"),
    ("PatH(p=[])", "PatH parameter p"),
    ("PatH(p1=[0.5])", "PatH parameter p1"),
    ("PatH(users=0)", "PatH parameter users .* an integer from 1 to 10,000,000; got 0"),
    (f"PatH(users={MAX_USERS + 1})", "PatH parameter users"),
    ("PatH(seed=-1)", "PatH parameter seed .* an integer >= 0, or None; got -1"),
    ("PatH(cutoff=0)", "PatH parameter cutoff"),
    ("PatH(model='walk')", "PatH parameter model: unknown browsing model 'walk'"),
    ("PatH(model=None)", "PatH parameter model"),
])
def test_bad_parameters_are_named_with_what_they_accept(text, message):
    """Issue 16 (d14): each of these was a traceback, a 2.7 TiB allocation or a silently
    different measure; the error now names the parameter and what it accepts, at parse
    time (before any relevance is seen)."""
    with pytest.raises(ParameterError, match=message):
        parse_measure(text)
    with pytest.raises(ParameterError, match=message):
        evaluate(text, REL)


def test_rbp_on_three_topics_no_longer_takes_one_persistence_per_topic():
    """RBP(p=[.5, .6, .7]) on three lists silently scored each list with its own p; RBP's
    persistence is one number (the definition has no per-list p)."""
    with pytest.raises(ParameterError, match="RBP parameter p"):
        evaluate("RBP(p=[.5,.6,.7])", REL)


def _rbp(gains, p):
    """(1 - p) sum_i g_i p^(i-1), term by term."""
    return (1 - p) * sum(g * p**i for i, g in enumerate(gains))


def test_accepted_values_score_as_their_definitions():
    rel = np.array([1.0, 0.0, 1.0, 1.0])
    assert evaluate("RBP(p=0)", rel) == pytest.approx(_rbp(rel, 0.0))
    assert evaluate("RBP(p=0.999999)", rel) == pytest.approx(_rbp(rel, 0.999999))
    assert evaluate("RBP(p=0.5, finite=True)", rel) == pytest.approx(
        sum(g * 0.5**i for i, g in enumerate(rel)) / sum(0.5**i for i in range(4)))
    assert evaluate("RBP(p=0.5, gains={1: 0.5})", rel) == pytest.approx(_rbp(rel * 0.5, 0.5))


def test_path_takes_per_rank_moves_as_lists():
    """PatH's p may be one number per rank (the walk's definition allows it): SFBM with
    p = (p_1, ..., p_N) reaches rank i with prod_{j<i} p_j, so order 2 is
    E[T] / E[H] = sum_i r_i P(H >= i) / sum_i P(H >= i)."""
    rel = np.array([1.0, 0.0, 1.0, 1.0])
    p = [0.9, 0.5, 0.25, 0.7]
    reach = np.cumprod([1.0] + p[:-1])
    expected = float(np.sum(rel * reach) / np.sum(reach))
    got = evaluate(f"PatH(model='sfbm', p={p}, order=2)", rel)
    assert got == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ParameterError, match="p has 3 ranks on its last axis; the list has 4"):
        evaluate("PatH(model='sfbm', p=[0.5, 0.5, 0.5])", rel)


def test_the_cutoff_limit_is_stated_and_reachable():
    assert parse_measure(f"P@{MAX_CUTOFF}").cutoff == MAX_CUTOFF
    assert evaluate(f"P@{MAX_CUTOFF}", np.array([1.0, 1.0])) == 2 / MAX_CUTOFF
    with pytest.raises(ParameterError, match=f"above the limit of {MAX_CUTOFF:,} ranks"):
        parse_measure(f"AP@{MAX_CUTOFF + 1}")
    with pytest.raises(ParameterError, match="above the limit"):
        parse_measure(f"P_{10**12}")                    # trec_eval alias, same limit
    with pytest.raises(ParameterError, match="above the limit"):
        parse_measure(Measure("P", (), 10**12))          # a Measure built by hand
    with pytest.raises(ParameterError, match="positive integer"):
        parse_measure(Measure("P", (), 2.5))


def test_measure_strings_are_bounded_and_the_parser_never_raises_its_own_errors():
    with pytest.raises(ParameterError, match=f"limit is {MAX_MEASURE_LENGTH:,}"):
        parse_measure("P@1" + " " * MAX_MEASURE_LENGTH)
    for text in ["(" * 500 + "AP" + ")" * 500, "AP\x00", "RBP(p={[1]: 2})", "RBP(p=2**10)",
                 "RBP(p=" + "9" * 5000 + ")", "RBP(p=" + "[" * 300 + "]" * 300 + ")"]:
        with pytest.raises(ParameterError):
            parse_measure(text)
    with pytest.raises(ParameterError, match="a measure is a string"):
        parse_measure(3)


def test_memory_limit_of_a_batch_is_stated(monkeypatch):
    """A batch whose working arrays exceed the memory limit is refused before any work,
    with the size and the limit."""
    from bayeschain.chains import checks

    monkeypatch.setattr(checks, "memory_budget", lambda: 1 << 20)
    with pytest.raises(ParameterError, match=r"3 x 100000 .*limit is 1.0 MiB"):
        evaluate("P@100000", REL)
    evaluate("P@10", REL)


def test_unknown_context_is_refused_and_context_values_are_checked():
    with pytest.raises(ParameterError, match=r"unknown context \['recal_base'\]"):
        evaluate("AP", REL, recal_base=[1, 1, 1])
    with pytest.raises(ParameterError, match=r"recall_base must have one value per list \(3\)"):
        evaluate("AP", REL, recall_base=[1, 2])
    with pytest.raises(ParameterError, match="recall_base contains NaN"):
        evaluate("AP", REL, recall_base=[1, np.nan, 1])
    with pytest.raises(ParameterError, match="recall_base must be whole numbers"):
        evaluate("AP", REL, recall_base=[1, 1e-320, 1])          # AP overflowed to inf
    with pytest.raises(ParameterError, match="level"):
        evaluate("AP", REL, level="1")
    with pytest.raises(ParameterError, match="ideal must be"):
        evaluate("nDCG", REL, ideal=np.ones((2, 3)))
    with pytest.raises(ParameterError, match="users"):
        evaluate("PatH(model='rwbm', p=0.5, q=0.2, loss=0.5)", REL, users=10**9)


def test_every_parameter_is_declared_once_with_its_default():
    """MeasureSpec.params holds the defaults (what MeasureSpec.arguments reads); the
    schema holds a Param for every parameter, whose default it accepts."""
    for name in MEASURES:
        spec = MEASURES.get(name)
        assert set(spec.schema) == set(spec.params)
        for key, decl in spec.schema.items():
            assert isinstance(decl, Param)
            assert spec.params[key] is decl.default or spec.params[key] == decl.default
            assert decl.accepts(decl.default), (name, key)
            assert decl.expected()
        assert spec.arguments(parse_measure(name if spec.cutoff != "required" else
                                            f"{name}@3")) == spec.params


def test_a_measure_cannot_be_registered_without_declarations():
    with pytest.raises(TypeError, match="declare parameter"):
        MeasureSpec("X", lambda rel, m, ctx: rel.sum(-1), {"p": 0.5})
    with pytest.raises(ParameterError, match="default of X parameter p"):
        MeasureSpec("X", lambda rel, m, ctx: rel.sum(-1), {"p": Param.number(2.0, 0, 1)})


@pytest.mark.parametrize(("decl", "good", "bad"), [
    (Param.number(0.5, 0.0, 1.0, high_open=True), [0, 0.0, 0.999, 5e-324],
     [1, 1.0, -1e-300, math.inf, math.nan, "0.5", True, None, [0.5]]),
    (Param.number(None, 0.0, 1.0, per_rank=True), [None, 0.5, [0.1, 1.0], (0.2,)],
     [[], [0.5, 2.0], [[0.5]], {"a": 1}, [True]]),
    (Param.integer(1, 1, 2), [1, 2], [0, 3, 1.0, True, "1", None]),
    (Param.flag(False), [True, False], [0, 1, "True", None]),
    (Param.choice("h", ("h", "1")), ["h", "1"], ["H", 1, None, ["h"]]),
    (Param.gains(graded=True), [None, "graded", {}, {1: 0.5, -1: 0}, {2.5: 1}],
     ["Graded", {"1": 1}, {1: "1"}, {1: math.inf}, {math.nan: 1}, {True: 1}, [1, 2]]),
])
def test_each_kind_of_declaration_accepts_what_it_says(decl, good, bad):
    for value in good:
        assert decl.accepts(value), value
    for value in bad:
        assert not decl.accepts(value), value
        with pytest.raises(ParameterError, match="must be"):
            decl.check(value, "x")
