"""Fuzzing measure strings: every string either scores or fails with a BayeschainError.

Hypothesis builds measure strings from the registry (every registered measure, its declared
parameters with values of every type: numbers inside, on and outside their bounds, huge,
negative and non-finite numbers, per-rank lists, maps, strings, booleans, None; unknown
parameters; cut-offs from 1 to far beyond :data:`~bayeschain.measures.registry.MAX_CUTOFF`),
then mutates some of them (token swaps, truncations, duplications, inserted characters),
and evaluates each on a small random relevance vector or matrix.  The contract: either
the result is finite with the right shape (a float for one list, ``(B,)`` for a batch), or
the call raises a :class:`~bayeschain.errors.BayeschainError`.  Any other exception, a
NaN, a ``MemoryError`` or a call running longer than :data:`SPIN_SECONDS` fails the test.

Profiles (tests/fuzz/profile.py)
--------------------------------
* default (plain ``python3 -m pytest``, CI): :data:`CI_EXAMPLES` examples per test,
  derandomized (the same examples on every run);
* long: ``BAYESCHAIN_FUZZ=long python3 -m pytest -q tests/fuzz/test_measures.py``, or the
  ``fuzz`` profile of tests/fuzz/conftest.py
  (``python3 -m pytest tests/fuzz -m fuzz --hypothesis-profile=fuzz``):
  2,000 random examples per test (4 tests, 8,000 measure strings, a few
  minutes); ``BAYESCHAIN_FUZZ_EXAMPLES=N`` runs N per test.  Add
  ``--hypothesis-show-statistics`` to see how many examples each test ran.
"""

from __future__ import annotations

import math
import signal
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bayeschain.errors import BayeschainError
from bayeschain.measures import MEASURES, evaluate, parse_measure
from bayeschain.measures.registry import MAX_CUTOFF, MAX_USERS, Param
from tests.fuzz.profile import fuzz_settings

pytestmark = pytest.mark.fuzz

CI_EXAMPLES = 100
#: A single evaluation running longer than this is a spin.
SPIN_SECONDS = 120

FUZZ = fuzz_settings(CI_EXAMPLES)

NAMES = MEASURES.names()
ALIASES = ["map", "ndcg", "rbp", "P_5", "ndcg_cut_10", "map_cut_3", "P_0",
           f"P_{10**12}", "ndcg_cut_"]


# ---------------------------------------------------------------- values of every kind

def _huge_ints():
    return st.sampled_from([10**6, 10**7 + 1, 2**31, 2**63, 10**12, 10**30, 10**300])


FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from([0.0, -0.0, 1.0, 0.5, 1 - 1e-16, 1 + 1e-16, -1e-300, 1e-320, 1e308,
                     -1e308, math.inf, -math.inf]),
)
INTS = st.one_of(st.integers(-5, 20), _huge_ints(), _huge_ints().map(lambda x: -x))
STRINGS = st.one_of(
    st.sampled_from(["", "h", "1", "2", "graded", "recall", "trec", "jarvelin", "closed",
                     "chain", "exact", "sfbm", "rwbm", "dfbm", "dcg", "ap", "err", "drwbm",
                     "walk", "GL_AD_ID", "LO_OR_LID", "CONST", "GL_XX_ID", "0.8", "nan"]),
    st.text(max_size=8),
)
SCALARS = st.one_of(FLOATS, INTS, STRINGS, st.booleans(), st.none())


def _values_for(decl: Param):
    """Values aimed at one declared parameter: inside, on and beyond its bounds."""
    edges = [x for x in (decl.low, decl.high) if x is not None]
    near = [e + d for e in edges for d in (-1e-9, 0.0, 1e-9)]
    if decl.kind == "number":
        lo = decl.low if decl.low is not None else -10.0
        hi = decl.high if decl.high is not None else 10.0
        inside = st.floats(lo, hi, allow_nan=False)
        base = st.one_of(inside, st.sampled_from(near or [0.0]), FLOATS)
        if decl.per_rank:
            return st.one_of(base, st.lists(inside, min_size=0, max_size=12),
                             st.lists(SCALARS, max_size=4))
        return base
    if decl.kind == "integer":
        lo = int(decl.low) if decl.low is not None else -3
        hi = min(int(decl.high), 10**4) if decl.high is not None else 10**4
        return st.one_of(st.integers(lo, min(hi, lo + 50)), st.sampled_from(near or [0]).map(
            lambda x: int(x)), INTS, st.floats(lo, hi, allow_nan=False))
    if decl.kind == "flag":
        return st.one_of(st.booleans(), st.sampled_from([0, 1, "True", None]))
    if decl.kind == "choice":
        opts = decl._options()
        return st.one_of(st.sampled_from(list(opts)), STRINGS, INTS)
    grades = st.one_of(st.integers(-2, 5), st.floats(-2, 5, allow_nan=False), FLOATS)
    maps = st.dictionaries(grades, st.one_of(st.floats(0, 2, allow_nan=False), FLOATS),
                           max_size=4)
    return st.one_of(maps, st.just("graded"), STRINGS,
                     st.dictionaries(STRINGS, st.integers(0, 3), max_size=2))


ANY_VALUE = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner),
    st.dictionaries(st.one_of(st.integers(-3, 3), st.text(max_size=3)), inner, max_size=3)),
    max_leaves=8)


#: The parameters each browsing model takes (PatH strings that reach the solvers).
WALKS = {"sfbm": ("p",), "rwbm": ("p", "q", "p1", "qN"), "dfbm": ("cutoff",),
         "dcg": ("base", "variant"), "err": ("max_grade",), "ap": (),
         "drwbm": ("p", "q", "p_rel", "q_rel")}


def _valid_value(draw, decl: Param, width: int):
    """A value the declaration accepts (per-rank lists as long as the lists)."""
    if decl.kind == "number":
        lo = decl.low if decl.low is not None else -5.0
        hi = decl.high if decl.high is not None else lo + 10.0
        if decl.high_open:
            hi = math.nextafter(hi, -math.inf)
        if decl.low_open:
            lo = math.nextafter(lo, math.inf)
        one = st.floats(lo, hi, allow_nan=False)
        if decl.per_rank and width <= 50 and draw(st.integers(0, 3)) == 0:
            return draw(st.lists(one, min_size=width, max_size=width))
        return draw(one)
    if decl.kind == "integer":
        lo = int(decl.low) if decl.low is not None else 0
        return draw(st.integers(lo, lo + (1 if decl.high == 2 else 30)))
    if decl.kind == "flag":
        return draw(st.booleans())
    if decl.kind == "choice":
        return draw(st.sampled_from(list(decl._options())))
    return draw(st.one_of(st.dictionaries(st.integers(-1, 4), st.floats(0, 3), max_size=4),
                          st.just("graded") if decl.graded else st.none()))


@st.composite
def measure_texts(draw, width: int = 8):
    """A measure string: a registered name (sometimes an alias or an unknown name), some of
    its declared parameters, with valid values (to reach the computations), values aimed
    at the bounds of each declaration, or anything at all, unknown parameters and a
    cut-off.  ``width`` is the length of the lists it will be evaluated on."""
    kind = draw(st.sampled_from(["registered"] * 12 + ["alias", "unknown"]))
    if kind == "alias":
        return draw(st.sampled_from(ALIASES))
    name = draw(st.sampled_from(NAMES)) if kind == "registered" else \
        draw(st.sampled_from(["Foo", "p", "ap", "PATH", "P_at_H", "nDCG_", "_"]))
    schema = MEASURES.get(name).schema if name in MEASURES else {}
    mode = draw(st.sampled_from(["valid"] * 5 + ["targeted"] * 4 + ["wild"]))
    cut = draw(st.one_of(st.none(), st.none(), st.integers(1, 12), st.sampled_from(
        [1, 3, 100, 1000, 10**4, 0, -1, MAX_CUTOFF + 1, 10**12, 10**40, 1.5, True, "5"])))
    if name == "P" and cut is None and mode == "valid":
        cut = draw(st.integers(1, 12))
    ranks = cut if isinstance(cut, int) and not isinstance(cut, bool) and cut >= 1 else width
    if name == "PatH" and mode == "valid":
        model = draw(st.sampled_from(sorted(WALKS)))
        keys = ["model"] + draw(st.lists(st.sampled_from(["order", "loss", "effort", "gains",
                                                          "users", "seed"]),
                                         unique=True, max_size=3))
        keys += [k for k in WALKS[model] if draw(st.integers(0, 4)) > 0 or
                 k in ("p", "q", "p_rel", "q_rel")]
    else:
        model = None
        keys = draw(st.lists(st.sampled_from(sorted(schema)), unique=True, max_size=4)) \
            if schema else []
    params = []
    for key in keys:
        if key == "model" and model is not None:
            value = model
        elif key == "users" and mode == "valid":
            value = draw(st.integers(1, 2000))
        elif mode == "valid":
            value = _valid_value(draw, schema[key], ranks)
        elif mode == "targeted":
            value = draw(_values_for(schema[key]))
        else:
            value = draw(ANY_VALUE)
        params.append((key, value))
    if model in ("rwbm", "drwbm"):                        # keep p + q <= 1, mostly
        values = dict(params)
        for fwd, bwd in (("p", "q"), ("p_rel", "q_rel")):
            if isinstance(values.get(fwd), float) and isinstance(values.get(bwd), float) \
                    and draw(st.integers(0, 5)) > 0:
                values[bwd] = values[bwd] * (1 - values[fwd])
        params = list(values.items())
    if draw(st.sampled_from([False] * 14 + [True])):
        params.append((draw(st.sampled_from(["x", "cut", "P", "k"])), draw(SCALARS)))
    text = name
    if params:
        text += "(" + ", ".join(f"{k}={v!r}" for k, v in params) + ")"
    if cut is not None:
        text += f"@{cut!r}" if not isinstance(cut, str) else f"@{cut}"
    return text


@st.composite
def cases(draw, texts=None):
    """A relevance vector or matrix and a measure string for lists of its width."""
    rel = draw(relevance())
    text = draw(texts if texts is not None else measure_texts(width=rel.shape[-1]))
    return text, rel


TOKENS = ["(", ")", "@", ",", "=", "'", '"', "[", "]", "{", "}", ":", " ", "-", ".", "e",
          "1e999", "None", "True", "**", "*", "lambda", "\x00", "0" * 500, "(" * 300]


@st.composite
def mutated(draw, texts):
    """A measure string with a few edits: truncated, tokens swapped, duplicated, inserted."""
    text = draw(texts)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "swap", "insert", "delete", "duplicate"]))
        n = len(text)
        i = draw(st.integers(0, n))
        if op == "truncate":
            text = text[:i]
        elif op == "swap" and n >= 2:
            j = draw(st.integers(0, n - 1))
            i = min(i, n - 1)
            chars = list(text)
            chars[i], chars[j] = chars[j], chars[i]
            text = "".join(chars)
        elif op == "insert":
            text = text[:i] + draw(st.one_of(st.sampled_from(TOKENS), st.text(max_size=3))) + \
                text[i:]
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 4)):]
        else:
            text = text[:i] + text[i:] + text[i:]
    return text


@st.composite
def relevance(draw):
    """A small random relevance vector or matrix: graded, binary or fractional grades."""
    rows = draw(st.integers(1, 4))
    width = draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["graded", "binary", "fractional", "huge", "negative"]))
    if kind == "graded":
        rel = rng.integers(0, 4, (rows, width)).astype(float)
    elif kind == "binary":
        rel = (rng.random((rows, width)) < 0.4).astype(float)
    elif kind == "fractional":
        rel = np.round(rng.random((rows, width)) * 3, 2)
    elif kind == "huge":
        rel = rng.choice([0.0, 1.0, 1024.0, 5000.0, 1e300], (rows, width))
    else:
        rel = rng.integers(-2, 3, (rows, width)).astype(float)
    return rel[0] if draw(st.booleans()) else rel


class Spin(Exception):
    """An evaluation ran for longer than SPIN_SECONDS."""


@contextmanager
def spin_guard(seconds: int = SPIN_SECONDS):
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def handler(signum, frame):
        raise Spin(f"evaluation still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def check_contract(text: str, rel: np.ndarray, **context) -> str:
    """Evaluate; return 'value' or 'error', failing on anything outside the contract."""
    try:
        with spin_guard():
            value = evaluate(text, rel, **context)
    except BayeschainError as exc:
        assert str(exc), f"{text!r}: an error without a message"
        return "error"
    except (Spin, MemoryError) as exc:               # pragma: no cover - the failure itself
        pytest.fail(f"{text!r} on relevance of shape {rel.shape}: {type(exc).__name__}: {exc}")
    if rel.ndim == 1:
        assert isinstance(value, float), f"{text!r}: one list gave {type(value)}"
        assert math.isfinite(value), f"{text!r} gave {value}"
    else:
        value = np.asarray(value)
        assert value.shape == (rel.shape[0],), f"{text!r}: shape {value.shape} for {rel.shape}"
        assert np.all(np.isfinite(value)), f"{text!r} gave {value}"
    return "value"


@FUZZ
@given(cases())
def test_generated_measure_strings_score_or_fail_cleanly(case):
    check_contract(*case)


@FUZZ
@given(cases(mutated(measure_texts())))
def test_mutated_measure_strings_score_or_fail_cleanly(case):
    check_contract(*case)


@FUZZ
@given(cases(), st.fixed_dictionaries({}, optional={
    "level": st.one_of(st.integers(0, 3), FLOATS, STRINGS),
    "recall_base": st.one_of(st.integers(0, 5), FLOATS, st.lists(FLOATS, max_size=4)),
    "max_grade": st.one_of(st.integers(0, 5), FLOATS),
    "users": st.one_of(st.integers(1, 2000), INTS),
    "seed": st.one_of(st.integers(0, 10), INTS, STRINGS),
    "ideal": st.one_of(st.lists(st.integers(0, 3), min_size=0, max_size=5), STRINGS),
    "lengths": st.one_of(st.integers(0, 8), FLOATS),
    "holding_rates": st.one_of(st.lists(st.floats(0, 3), max_size=8), FLOATS),
    "bogus": st.integers(),
}))
def test_measure_strings_with_context_score_or_fail_cleanly(case, context):
    check_contract(*case, **context)


@FUZZ
@given(st.one_of(measure_texts(), mutated(measure_texts()), st.text(max_size=40),
                 ANY_VALUE))
def test_parsing_anything_gives_a_measure_or_a_parameter_error(text):
    """parse_measure alone: a Measure whose repr parses back to itself, or an error."""
    try:
        m = parse_measure(text)
    except BayeschainError:
        return
    again = parse_measure(repr(m))
    assert again == m or repr(again) == repr(m)


def test_the_fuzzer_reaches_values_and_errors():
    """The strategies produce both outcomes (a fuzzer that only makes errors tests nothing):
    a fixed sample of generated strings scores at least once and fails at least once."""
    outcomes = set()

    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(cases())
    def sample(case):
        outcomes.add(check_contract(*case))

    sample()
    assert outcomes == {"value", "error"}


@pytest.mark.parametrize("text", [
    f"P@{10**12}", "RBP(p=[0.5, 0.6])", "RBP(p={'a': 1})", "RBP(p='0.8')",
    "RBP(p=[.5, .6, .7])", "PatH(model='sfbm', p=1e999)", "PatH(users=10**9)",
    f"PatH(users={MAX_USERS + 1})", "nDCG(base=1)", "ERR(max_grade=-1)", "MP(model=3)",
    "PatH(order=True)", "PatH(p=[0.5, 'x'])", "RBP(finite=1)", "(" * 400 + "AP" + ")" * 400,
    "AP\x00", "PatH(p=" + "[" * 300 + "]" * 300 + ")",
])
def test_known_bad_strings_fail_cleanly(text):
    """The strings of issue 16 and a few parser edge cases (deep nesting, NUL bytes)."""
    assert check_contract(text, np.array([[1.0, 0.0, 2.0]] * 3)) == "error"
