"""Measure strings: parsing, round trips, errors that list the valid names; the
documentation of every registered measure names its parameters and their defaults."""

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from bayeschain.errors import ParameterError
from bayeschain.measures import MEASURES, evaluate, parse_measure


@pytest.mark.parametrize("text", ["AP", "P@10", "RBP(p=0.8)", "nDCG@10", "ERR@20",
                                  "PatH(model='rwbm', p=0.5, q=0.25, loss=0.25)",
                                  "RBP(p=0.9, gains={1: 0.5, 2: 1})@100", "AP@5"])
def test_repr_round_trips(text):
    m = parse_measure(text)
    assert repr(m) == text
    assert parse_measure(repr(m)) == m


@pytest.mark.parametrize(("alias", "canonical"), [("map", "AP"), ("P_10", "P@10"),
                                                  ("ndcg_cut_5", "nDCG@5"),
                                                  ("map_cut_100", "AP@100")])
def test_trec_eval_names(alias, canonical):
    assert repr(parse_measure(alias)) == canonical


@pytest.mark.parametrize(("text", "message"), [
    ("Foo", "unknown measure 'Foo'; valid names: AP, Bpref, DCG, ERR"),
    ("RBP(x=1)", "no parameter"),
    ("P", "needs a cut-off"),
    ("P@0", "positive integer"),
    ("P@1.5", "positive integer"),
    ("RBP(0.8)", "must be named"),
    ("RBP(p=foo)", "literal"),
    ("AP +", "cannot parse"),
    ("RBP(p=0.8, p=0.9)", "repeated"),
])
def test_parse_errors(text, message):
    with pytest.raises(ParameterError, match=message.replace("(", r"\(")):
        parse_measure(text)


def test_impossible_parameters():
    r = np.array([1, 0, 1.0])
    with pytest.raises(ParameterError, match="persistence"):
        evaluate("RBP(p=1.5)", r)
    with pytest.raises(ParameterError, match="probability"):
        evaluate("PatH(model='sfbm', p=-0.1)", r)
    with pytest.raises(ParameterError, match="exceeds 1"):
        evaluate("PatH(model='rwbm', p=0.8, q=0.4)", r)
    with pytest.raises(ParameterError, match="unknown browsing model 'walk'"):
        evaluate("PatH(model='walk')", r)
    with pytest.raises(ParameterError, match="needs parameter"):
        evaluate("PatH(model='rwbm', p=0.5)", r)
    with pytest.raises(ParameterError, match="NaN"):
        evaluate("AP", np.array([1, np.nan]))
    with pytest.raises(ParameterError, match="1-D"):
        evaluate("AP", np.ones((2, 2, 2)))


def test_single_and_batch_agree():
    rng = np.random.default_rng(0)
    rel = rng.integers(0, 3, (6, 12)).astype(float)
    for name in ["AP", "P@5", "RBP(p=0.7)", "nDCG@10", "ERR@10", "PatH(model='rwbm', p=.5, q=.2)"]:
        batch = evaluate(name, rel)
        singles = [evaluate(name, row) for row in rel]
        np.testing.assert_allclose(batch, singles, atol=1e-12)
        assert isinstance(singles[0], float)


README = Path(__file__).resolve().parents[2] / "README.md"


def measure_docs(name: str) -> str:
    """What the project documents about a registered measure: its MeasureSpec summary and
    reference, and the rows of the README's "Measure strings" table whose measure strings
    (first column) are this measure.  Raises if the measure has no README row."""
    spec = MEASURES.get(name)
    section = README.read_text().split("## Measure strings", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    own = [row for row in rows
           if any(re.match(rf"{re.escape(name)}(?=[(@]|$)", s)
                  for s in re.findall(r"`([^`]*)`", row.split("|")[1]))]
    assert own, f"{name} has no row in the README's Measure strings table"
    return "\n".join([spec.summary, spec.reference, *own])


def names_parameter(docs: str, param: str) -> bool:
    """The parameter's name appears as a word (``p`` in ``RBP(p=0.8)``, not in ``P@H``)."""
    return re.search(rf"(?<![\w.]){re.escape(param)}(?!\w)", docs) is not None


_NOT_LITERAL = object()


class Described(str):
    """A default the docs describe in words instead of a value."""


def _literal(text: str):
    try:
        return ast.literal_eval(text.strip().strip("`"))
    except (ValueError, SyntaxError):
        return _NOT_LITERAL


def stated_defaults(docs: str) -> dict[str, object]:
    """Defaults the docs state: "``x`` defaults to V", "x=V (default)", "(default x=V)",
    and the ``k=v`` of a signature (a measure string written with ``...``, as
    ``PatH(model=..., order=1, ...)``; an example such as ``RBP(p=0.8, finite=True)`` states
    no default).  A value that is not a Python literal ("the topic's top grade") describes a
    default computed from the context and is returned as the text."""
    found: dict[str, object] = {}
    phrases = (r"`?(\w+)`?\s+defaults?\s+to\s+([^;,|]+?)\s*(?=[;,|)]|$)",
               r"`?(\w+)=([^`,)\s]+)`?\s+\(default\)",
               r"\(default:?\s+`?(\w+)=([^`,)\s]+)`?\)")
    for pattern in phrases:
        for name, value in re.findall(pattern, docs, flags=re.MULTILINE):
            literal = _literal(value)
            found[name] = Described(value.strip()) if literal is _NOT_LITERAL else literal
    for signature in re.findall(r"`(\w+\([^`]*\.\.\.[^`]*\))`", docs):
        for name, value in re.findall(r"(\w+)=([^,)]+)", signature):
            literal = _literal(value)
            if literal is not _NOT_LITERAL and value.strip() != "...":
                found[name] = literal
    return found


def test_the_docs_parser_reads_what_it_claims():
    docs = ("`max_grade` defaults to the topic's top grade | `PatH(model=..., order=1, "
            "loss=0, effort='h', ...)` and `RBP(p=0.8, finite=True)`; base defaults to 2.0, "
            "variant='trec' (default)")
    stated = stated_defaults(docs)
    assert stated == {"max_grade": "the topic's top grade", "order": 1, "loss": 0,
                      "effort": "h", "base": 2.0, "variant": "trec"}
    assert isinstance(stated["max_grade"], Described)
    assert not isinstance(stated["effort"], Described)
    assert names_parameter("`PatH(p=0.5)`", "p") and not names_parameter("P@H of", "p")
    assert not names_parameter("p1=0.5", "p") and not names_parameter("MPcont", "MP")


def undocumented(name: str) -> list[str]:
    return [p for p in MEASURES.get(name).params if not names_parameter(measure_docs(name), p)]


@pytest.mark.parametrize("name", list(MEASURES))
def test_every_declared_parameter_is_documented(name):
    """Every declared parameter is named by the measure's documentation (its summary and
    reference, its README row)."""
    spec = MEASURES.get(name)
    assert spec.summary and spec.reference
    assert undocumented(name) == []


@pytest.mark.parametrize("name", list(MEASURES))
def test_stated_defaults_are_the_declared_defaults(name):
    """Where the docs state a default it is the declared one; a default described in words
    (computed from the context) must be declared as None."""
    spec = MEASURES.get(name)
    for param, stated in stated_defaults(measure_docs(name)).items():
        assert param in spec.params, f"{name}: the docs state a default for unknown {param}"
        declared = spec.params[param]
        if isinstance(stated, Described) and declared is None:
            continue                                # described, computed from the context
        assert type(stated) is type(declared) or {type(stated), type(declared)} <= {int, float}
        assert stated == declared, f"{name}: docs say {param}={stated!r}, declared {declared!r}"


def test_the_docs_state_defaults_at_all():
    stated = {name: stated_defaults(measure_docs(name)) for name in MEASURES}
    assert stated["PatH"].keys() >= {"order", "loss", "effort"}
    assert "max_grade" in stated["ERR"]


def test_ir_measures_fixture_values():
    """ir_measures' cwl fixtures (published values, tolerance 1e-4): AP, P@k, RBP(p=0.9)."""
    from pathlib import Path

    from bayeschain.evaluation import evaluate_runs
    from bayeschain.io import read_qrels, read_run

    data = Path(__file__).resolve().parents[2] / "data" / "ir_measures"
    table = evaluate_runs(read_qrels(data / "cwl.qrels"), read_run(data / "cwl.run"),
                          ["AP", "P@1", "P@5", "P@10", "P@20", "RBP(p=0.9)"])
    got = table.set_index(["measure", "topic"])["value"]
    expected = {"AP": (0.7087, 0.7438, 0.3068), "P@1": (1, 1, 0), "P@5": (0.6, 0.6, 0),
                "P@10": (0.5, 0.6, 0.4), "P@20": (0.25, 0.3, 0.2),
                "RBP(p=0.9)": (0.3501, 0.3996, 0.1988)}
    for measure, values in expected.items():
        for topic, value in zip(("T1", "T2", "T3"), values, strict=True):
            assert got[(measure, topic)] == pytest.approx(value, abs=1e-4)
