"""Measure strings in the ir_measures style, parsed with :mod:`ast`, and their registry.

A measure string is a name, optional keyword parameters and an optional cut-off:
``AP``, ``P@10``, ``RBP(p=0.8)``, ``nDCG@10``, ``ERR@20``,
``PatH(model='rwbm', p=0.5, q=0.25, loss=0.25)``.  :func:`parse_measure` turns it into a
:class:`Measure` whose ``repr`` gives the string back.  trec_eval names are accepted as
aliases (``map``, ``P_10``, ``ndcg_cut_10``, ``map_cut_5``, ``rbp``, ``recip_rank``, ``Rprec``,
``bpref``, ``recall_100``, ``success_10``, ``rbp_resid``), and :func:`trec_name` gives a
measure's trec_eval name back where trec_eval computes the same number.

Measures register a :class:`MeasureSpec` in :data:`MEASURES`; each parameter is declared
once, as a :class:`Param`: its default and the values it accepts (a number or an integer
within bounds, optionally a list of per-rank numbers; a flag; one of a few names; a
``{grade: weight}`` map).  :func:`parse_measure` checks every parameter against its
declaration and the cut-off against :data:`MAX_CUTOFF`, so a bad measure string fails
before any computation with an error naming the parameter and what it accepts.

Limits: a cut-off (and a per-rank list) of at most :data:`MAX_CUTOFF` = 1,000,000 ranks; a
measure string of at most :data:`MAX_MEASURE_LENGTH` = 100,000 characters; a relevance
batch whose working arrays fit in a quarter of this machine's memory
(:func:`~bayeschain.chains.checks.check_memory`).
"""

from __future__ import annotations

import ast
import math
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..chains.checks import check_memory, float_array, plain
from ..errors import ParameterError
from ..registry import Registry

#: Largest cut-off (and longest per-rank list) a measure string may ask for, in ranks.
MAX_CUTOFF = 1_000_000
#: Longest measure string accepted, in characters.
MAX_MEASURE_LENGTH = 100_000
#: Most simulated users a measure may ask for (``users``).
MAX_USERS = 10_000_000
#: Most entries of a ``{grade: weight}`` map.
MAX_GAINS = 10_000
#: Working arrays of the shape of the relevance batch a measure may hold at once (the
#: memory check of :func:`evaluate` and :func:`~bayeschain.measures.classical.cut`).
WORKING_ARRAYS = 4


@dataclass(frozen=True)
class Measure:
    """A parsed measure: name, parameters (in the order given) and cut-off."""

    name: str
    params: tuple[tuple[str, Any], ...] = ()
    cutoff: int | None = None

    def __repr__(self) -> str:
        text = self.name
        if self.params:
            text += "(" + ", ".join(f"{k}={v!r}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text

    __str__ = __repr__

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)


def _is_number(x) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and \
        not isinstance(x, bool | np.bool_)


def _is_integer(x) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)


@dataclass(frozen=True)
class Param:
    """The declaration of one measure parameter: its default and the values it accepts.

    Build one with :meth:`number`, :meth:`integer`, :meth:`flag`, :meth:`choice` or
    :meth:`gains`.  A parameter whose default is ``None`` also accepts ``None`` (the value is
    then computed from the context, e.g. ERR's ``max_grade``).
    """

    default: Any
    kind: str                                   # number, integer, flag, choice, gains
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    options: tuple | Callable[[], Iterable] | None = None
    per_rank: bool = False                      # numbers: also a list of per-rank values
    graded: bool = False                        # gains: also the string 'graded'
    nullable: bool = False
    what: str = ""                              # a few words for messages
    names: str = ""                             # choice: the kind of name (a registry's)

    @classmethod
    def number(cls, default, low=None, high=None, *, low_open=False, high_open=False,
               per_rank=False, what: str = "") -> Param:
        """A finite real number within ``[low, high]`` (ends open on request); with
        ``per_rank``, also a list of such numbers, one per rank."""
        return cls(default, "number", low, high, low_open, high_open, per_rank=per_rank,
                   nullable=default is None, what=what)

    @classmethod
    def integer(cls, default, low=None, high=None, *, what: str = "") -> Param:
        """An integer (not a boolean, not a float) within ``[low, high]``."""
        return cls(default, "integer", low, high, nullable=default is None, what=what)

    @classmethod
    def flag(cls, default: bool, *, what: str = "") -> Param:
        """``True`` or ``False``."""
        return cls(default, "flag", what=what)

    @classmethod
    def choice(cls, default, options: tuple | Callable[[], Iterable],
               *, nullable: bool = False, what: str = "", names: str = "") -> Param:
        """One of ``options`` (a tuple, or a function giving them: a registry's names,
        ``names`` saying what they name, as in "unknown browsing model 'walk'")."""
        return cls(default, "choice", options=options, nullable=nullable or default is None,
                   what=what, names=names)

    @classmethod
    def gains(cls, default=None, *, graded: bool = False, what: str = "") -> Param:
        """A ``{grade: weight}`` map of finite numbers (or ``'graded'`` when allowed)."""
        return cls(default, "gains", graded=graded, nullable=default is None,
                   what=what or "the gain of each grade")

    def _options(self) -> tuple:
        opts = self.options() if callable(self.options) else self.options
        return tuple(opts or ())

    def _range(self) -> str:
        if self.low is not None and self.high is not None:
            return (("(" if self.low_open else "[") + f"{plain(self.low)}, {plain(self.high)}"
                    + (")" if self.high_open else "]"))
        if self.low is not None:
            return (">" if self.low_open else ">=") + f" {plain(self.low)}"
        if self.high is not None:
            return ("<" if self.high_open else "<=") + f" {plain(self.high)}"
        return ""

    def expected(self) -> str:
        """What the parameter accepts, in words."""
        if self.kind == "number":
            rng = self._range()
            text = "a finite number" + (f" in {rng}" if rng.startswith(("[", "(")) else
                                        f" {rng}" if rng else "")
            if self.per_rank:
                text += (f", or a list of up to {MAX_CUTOFF:,} such numbers (one per rank)")
        elif self.kind == "integer":
            if self.low is not None and self.high is not None:
                text = f"an integer from {self.low:,} to {self.high:,}"
            else:
                text = "an integer" + (f" {self._range()}" if self._range() else "")
        elif self.kind == "flag":
            text = "True or False"
        elif self.kind == "choice":
            text = "one of " + ", ".join(repr(o) for o in self._options())
        else:
            text = "a {grade: weight} map of finite numbers" + \
                (" or 'graded'" if self.graded else "")
        return text + (", or None" if self.nullable else "")

    def _in_range(self, x: float) -> bool:
        if not math.isfinite(x):
            return False
        if self.low is not None and (x <= self.low if self.low_open else x < self.low):
            return False
        return not (self.high is not None and (x >= self.high if self.high_open
                                               else x > self.high))

    def accepts(self, value) -> bool:
        """Whether ``value`` is one of the values the parameter accepts."""
        if value is None:
            return self.nullable
        if self.kind == "number":
            if _is_number(value):
                return self._in_range(float(value))
            if self.per_rank and isinstance(value, list | tuple):
                return 0 < len(value) <= MAX_CUTOFF and all(
                    _is_number(x) and self._in_range(float(x)) for x in value)
            return False
        if self.kind == "integer":
            return _is_integer(value) and self._in_range(float(value))
        if self.kind == "flag":
            return isinstance(value, bool | np.bool_)
        if self.kind == "choice":
            return isinstance(value, str | int) and not isinstance(value, bool) and \
                value in self._options()
        if self.graded and value == "graded":
            return True
        return isinstance(value, Mapping) and len(value) <= MAX_GAINS and all(
            _is_number(k) and math.isfinite(float(k)) and _is_number(w) and
            math.isfinite(float(w)) for k, w in value.items())

    def check(self, value, where: str) -> None:
        """Raise :class:`ParameterError` naming ``where`` unless :meth:`accepts`."""
        if not self.accepts(value):
            if self.names and isinstance(value, str):
                raise ParameterError(f"{where}: unknown {self.names} {value!r}; valid names: "
                                     f"{', '.join(map(str, self._options()))}")
            what = f" ({self.what})" if self.what else ""
            raise ParameterError(f"{where}{what} must be {self.expected()}; got "
                                 f"{plain(value)}")


@dataclass(frozen=True)
class MeasureSpec:
    """How to compute a registered measure.

    ``compute(relevance, measure, context) -> values``: ``relevance`` is ``(B, D)``, the
    result ``(B,)`` (or with extra leading draw axes for parameters with draw axes).
    ``cutoff`` is ``"required"``, ``"optional"`` or ``"none"``.  ``params`` declares each
    accepted parameter once, as a :class:`Param` (its default and the values it accepts);
    after construction ``params`` maps the names to their defaults (the only place a
    default is written: ``compute`` reads them through :meth:`arguments`) and ``schema``
    keeps the declarations that :func:`parse_measure` checks given values against.
    ``posterior`` names the parameters a fitted user model supplies when the measure is
    scored under a posterior (``()``: nothing is learned from clicks, the measure is not
    scored under a posterior).
    """

    name: str
    compute: Callable[[np.ndarray, Measure, Mapping[str, Any]], np.ndarray]
    params: dict[str, Any] = field(default_factory=dict)
    cutoff: str = "optional"
    summary: str = ""
    reference: str = ""
    posterior: tuple[str, ...] = ()
    schema: dict[str, Param] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        undeclared = [k for k, v in self.params.items() if not isinstance(v, Param)]
        if undeclared:
            raise TypeError(f"measure {self.name}: declare parameter(s) {undeclared} with "
                            f"Param.number / integer / flag / choice / gains")
        if self.cutoff not in ("required", "optional", "none"):
            raise TypeError(f"measure {self.name}: cutoff must be 'required', 'optional' or "
                            f"'none', not {self.cutoff!r}")
        schema = dict(self.params)
        for key, decl in schema.items():
            if decl.default is not None and not callable(decl.options):
                decl.check(decl.default, f"the default of {self.name} parameter {key}")
        object.__setattr__(self, "schema", schema)
        object.__setattr__(self, "params", {k: d.default for k, d in schema.items()})

    def arguments(self, measure: Measure) -> dict[str, Any]:
        """The measure's parameters: the declared defaults updated with those given."""
        return {**self.params, **measure.kwargs}


MEASURES: Registry[MeasureSpec] = Registry("measure")


def register_measure(spec: MeasureSpec) -> MeasureSpec:
    MEASURES.add(spec.name, spec)
    return spec


def arguments(measure: Measure) -> dict[str, Any]:
    """``measure``'s parameters with the registered defaults filled in."""
    return MEASURES.get(measure.name).arguments(measure)


#: trec_eval names without a cut-off -> measure strings (trec_eval 10's defaults: rbp and
#: rbp_resid use p = 0.9, rbp rescales graded gains into [0, 1])
TREC_NAMES = {"map": "AP", "ndcg": "nDCG", "rbp": "RBP(p=0.9, gains='graded')",
              "recip_rank": "RR", "Rprec": "Rprec", "bpref": "Bpref",
              "rbp_resid": "RBPresid(p=0.9)"}
#: trec_eval name prefixes of measures at a cut-off (``P_10``) -> measure names (``P@10``)
TREC_CUTOFF_NAMES = {"P_": "P", "ndcg_cut_": "nDCG", "map_cut_": "AP", "recall_": "R",
                     "success_": "Success"}


def _trec_alias(text: str) -> str | None:
    """trec_eval measure names -> measure strings (``P_10`` -> ``P@10``)."""
    if text in TREC_NAMES:
        return TREC_NAMES[text]
    for prefix, name in TREC_CUTOFF_NAMES.items():
        rest = text[len(prefix):]
        if text.startswith(prefix) and rest.isdigit():
            return f"{name}@{int(rest)}"
    return None


def trec_name(measure: str | Measure) -> str | None:
    """trec_eval's name of a measure (``AP@10`` -> ``map_cut_10``, ``RR`` -> ``recip_rank``),
    or None when trec_eval has no measure that computes the same number."""
    m = parse_measure(measure)

    def same(text: str) -> bool:         # the same measure, parameters given or defaulted
        other = parse_measure(text)
        return other.name == m.name and arguments(other) == arguments(m)

    if m.cutoff is None:
        return next((name for name, text in TREC_NAMES.items() if same(text)), None)
    defaults = arguments(m) == MEASURES.get(m.name).params
    return next((f"{prefix}{m.cutoff}" for prefix, name in TREC_CUTOFF_NAMES.items()
                 if name == m.name and defaults), None)


def parse_measure(text: str | Measure) -> Measure:
    """Parse ``NAME``, ``NAME(k=v, ...)`` and either followed by ``@cutoff``.

    Raises :class:`ParameterError` for syntax errors, unknown measures (listing the
    valid ones), unknown parameters, positional arguments, parameter values that their
    declaration (:class:`Param`) does not accept and cut-offs that are not integers from 1
    to :data:`MAX_CUTOFF`.
    """
    if isinstance(text, Measure):
        return _validated(text)
    if not isinstance(text, str):
        raise ParameterError(f"a measure is a string such as 'AP', 'P@10' or 'RBP(p=0.8)'; got "
                             f"{plain(text)}")
    if len(text) > MAX_MEASURE_LENGTH:
        raise ParameterError(f"measure string of {len(text):,} characters; the limit is "
                             f"{MAX_MEASURE_LENGTH:,}")
    src = text.strip()
    alias = _trec_alias(src)
    if alias is not None:
        src = alias
    try:
        with warnings.catch_warnings():    # "invalid decimal literal", "invalid escape"
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            node = ast.parse(src, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ParameterError(f"cannot parse measure {text!r}; expected e.g. 'AP', 'P@10' or "
                             f"'RBP(p=0.8)'") from None
    cutoff = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        if not (isinstance(node.right, ast.Constant) and type(node.right.value) is int):
            raise ParameterError(f"cut-off in {text!r} must be a positive integer (at most "
                                 f"{MAX_CUTOFF:,})")
        cutoff = node.right.value
        node = node.left
    params: list[tuple[str, Any]] = []
    if isinstance(node, ast.Call):
        if node.args:
            raise ParameterError(f"parameters of {text!r} must be named (e.g. p=0.8)")
        if not isinstance(node.func, ast.Name):
            raise ParameterError(f"cannot parse measure {text!r}")
        for kw in node.keywords:
            if kw.arg is None:
                raise ParameterError(f"cannot parse measure {text!r}")
            try:
                params.append((kw.arg, ast.literal_eval(kw.value)))
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                raise ParameterError(f"parameter {kw.arg} of {text!r} must be a literal "
                                     f"(number, string, list or dict)") from None
        node = node.func
    if not isinstance(node, ast.Name):
        raise ParameterError(f"cannot parse measure {text!r}; expected e.g. 'AP', 'P@10' or "
                             f"'RBP(p=0.8)'")
    return _validated(Measure(node.id, tuple(params), cutoff))


def _validated(measure: Measure) -> Measure:
    spec = MEASURES.get(measure.name)
    names = [k for k, _ in measure.params]
    unknown = [k for k in names if k not in spec.params]
    if unknown:
        raise ParameterError(f"measure {measure.name} has no parameter(s) {unknown}; valid: "
                             f"{sorted(spec.params) or 'none'}")
    if len(set(names)) != len(names):
        raise ParameterError(f"a parameter is repeated in {measure.name}")
    cutoff = measure.cutoff
    if cutoff is not None:
        if spec.cutoff == "none":
            raise ParameterError(f"{measure.name} takes no cut-off")
        if not _is_integer(cutoff) or cutoff < 1:
            raise ParameterError(f"cut-off must be a positive integer, got {plain(cutoff)}")
        if cutoff > MAX_CUTOFF:
            raise ParameterError(f"cut-off {cutoff:,} is above the limit of {MAX_CUTOFF:,} "
                                 f"ranks")
    if cutoff is None and spec.cutoff == "required":
        raise ParameterError(f"{measure.name} needs a cut-off, e.g. {measure.name}@10")
    for key, value in measure.params:
        spec.schema[key].check(value, f"{measure.name} parameter {key}")
    return measure


#: Context keys :func:`evaluate` accepts (see its docstring).
CONTEXT = ("recall_base", "ideal", "lengths", "level", "max_grade", "users", "seed",
           "holding_rates", "params", "judged", "nonrelevant_base")


def _context(context: Mapping[str, Any], single: bool, rows: int, width: int) -> dict:
    """Check :func:`evaluate`'s context against the batch (``rows`` lists of ``width``)."""
    unknown = sorted(set(context) - set(CONTEXT))
    if unknown:
        raise ParameterError(f"unknown context {unknown}; valid: {', '.join(CONTEXT)}")
    ctx = {k: v for k, v in context.items() if v is not None}

    def per_list(key, **bounds):
        arr = float_array(ctx[key], key, error=ParameterError, **bounds)
        if single:
            if arr.ndim != 0:
                raise ParameterError(f"{key} of one list must be a number; got shape "
                                     f"{arr.shape}")
            arr = arr[None]
        elif arr.shape not in ((), (1,), (rows,)):
            raise ParameterError(f"{key} must have one value per list ({rows}); got shape "
                                 f"{arr.shape}")
        return np.broadcast_to(arr, (rows,)).copy()

    if "recall_base" in ctx:
        ctx["recall_base"] = per_list("recall_base", low=0.0)
        if np.any(ctx["recall_base"] != np.round(ctx["recall_base"])):
            raise ParameterError(f"recall_base must be whole numbers (relevant documents of "
                                 f"each topic); got {plain(ctx['recall_base'])}")
    if "nonrelevant_base" in ctx:
        ctx["nonrelevant_base"] = per_list("nonrelevant_base", low=0.0)
        if np.any(ctx["nonrelevant_base"] != np.round(ctx["nonrelevant_base"])):
            raise ParameterError(f"nonrelevant_base must be whole numbers (judged non-relevant "
                                 f"documents of each topic); got "
                                 f"{plain(ctx['nonrelevant_base'])}")
    if "judged" in ctx:
        mask = np.asarray(ctx["judged"])
        want = (width,) if single else (rows, width)
        if mask.dtype != bool or mask.shape != want:
            raise ParameterError(f"judged must be booleans, one per rank of each list (shape "
                                 f"{want}); got {plain(ctx['judged'])}")
        ctx["judged"] = mask[None] if single else mask
    if "max_grade" in ctx:
        ctx["max_grade"] = per_list("max_grade", low=0.0)
    if "lengths" in ctx:
        n = per_list("lengths", low=0.0, high=float(width))
        if np.any(n != np.round(n)):
            raise ParameterError(f"lengths must be integers from 0 to {width}")
        ctx["lengths"] = n.astype(np.int64)
    if "ideal" in ctx:
        ideal = float_array(ctx["ideal"], "ideal", error=ParameterError)
        if ideal.ndim != (1 if single else 2) or ideal.shape[-1] == 0 or \
                (not single and ideal.shape[0] not in (1, rows)):
            raise ParameterError(f"ideal must be the judged grades of each topic, "
                                 f"{'(M,)' if single else f'({rows}, M)'}, M >= 1; got shape "
                                 f"{ideal.shape}")
        check_memory((rows, ideal.shape[-1]), "the ideal grades", itemsize=8 * WORKING_ARRAYS,
                     error=ParameterError)
        ctx["ideal"] = np.broadcast_to(ideal[None] if single else ideal,
                                       (rows, ideal.shape[-1]))
    if "level" in ctx:
        level = ctx["level"]
        if not _is_number(level) or not math.isfinite(float(level)):
            raise ParameterError(f"level (the least relevant grade) must be a finite number; "
                                 f"got {plain(level)}")
    if "users" in ctx:
        Param.integer(1, 1, MAX_USERS).check(ctx["users"], "users")
    if "seed" in ctx:
        Param.integer(None, 0).check(ctx["seed"], "seed")
    if "holding_rates" in ctx:
        mu = float_array(ctx["holding_rates"], "holding_rates", error=ParameterError)
        if mu.ndim == 0 or mu.shape[-1] < width or np.any(mu <= 0):
            raise ParameterError(f"holding_rates must be positive rates, one per rank (at "
                                 f"least {width}); got {plain(mu)}")
        ctx["holding_rates"] = mu
    if "params" in ctx and not isinstance(ctx["params"], Mapping):
        raise ParameterError("params must be a mapping of model parameters")
    return ctx


def evaluate(measure: str | Measure, relevance, **context) -> np.ndarray | float:
    """Evaluate a measure string on one ranked list (1-D) or a batch of lists (2-D).

    Parameters
    ----------
    measure : str or Measure
        e.g. ``"AP"``, ``"P@10"``, ``"RBP(p=0.8)"``, ``"PatH(model='rwbm', p=0.5, q=0.25)"``.
    relevance : array (N,) or (B, N)
        Relevance grades of the ranked documents (rows padded with 0).
    **context
        ``recall_base`` (AP; default: relevant documents retrieved), ``ideal`` (nDCG: the
        topic's judged grades; default: the list's own grades), ``lengths`` (list lengths
        of padded rows), ``level`` (minimum relevant grade, default 1), ``max_grade`` (ERR),
        ``users``/``seed`` (Monte-Carlo estimates), ``holding_rates`` (MPcont),
        ``judged`` (Judged, Bpref, RBPresid: whether each ranked document has a qrels line,
        booleans shaped like ``relevance``; default: every rank of the list) and
        ``nonrelevant_base`` (Bpref: the topic's judged non-relevant documents; default:
        those retrieved).  One value per list (a number for a 1-D list); any other key is
        refused.

    Returns
    -------
    float for a 1-D list, array (B,) for a batch; always finite.

    Raises
    ------
    ParameterError
        For a bad measure string (see :func:`parse_measure`), relevance that is not a finite
        1-D or 2-D array of numbers with at least one rank, a bad context value, or a batch
        whose working arrays (``B x max(N, cut-off)``, :data:`WORKING_ARRAYS` of them) do
        not fit in a quarter of this machine's memory.
    """
    m = parse_measure(measure)
    rel = float_array(relevance, "relevance", error=ParameterError)
    if rel.ndim not in (1, 2):
        raise ParameterError(f"relevance must be 1-D (one list) or 2-D (a batch); got shape "
                             f"{rel.shape}")
    if rel.shape[-1] == 0:
        raise ParameterError("relevance has no ranks (an empty list); a list without retrieved "
                             "documents scores 0 under every measure here: pass [0]")
    single = rel.ndim == 1
    batch = rel[None, :] if single else rel
    width = max(batch.shape[1], m.cutoff or 0)
    check_memory((batch.shape[0], width), f"evaluating {m.name} on {batch.shape[0]:,} lists "
                 f"of {width:,} ranks", itemsize=8 * WORKING_ARRAYS, error=ParameterError)
    ctx = _context(context, single, batch.shape[0], batch.shape[1])
    if "judged" in ctx and ctx.get("level", 1) <= 0:      # the one relevance rule
        from ..io.lists import unjudged_below_level

        batch = batch.copy()
        unjudged_below_level(batch, np.broadcast_to(ctx["judged"], batch.shape),
                             int(ctx["level"]))
    out = MEASURES.get(m.name).compute(batch, m, ctx)
    out = np.asarray(out, dtype=float)
    if not np.all(np.isfinite(out)):
        raise ParameterError(_not_finite(m, batch))
    return float(out[0]) if single and out.ndim == 1 else (out[..., 0] if single else out)


def _not_finite(m: Measure, relevance: np.ndarray) -> str:
    """Why a measure gave a value that is not finite: an overflow of huge grades or gains,
    or (never expected) a defect."""
    weights = [abs(float(w)) for _, v in m.params if isinstance(v, Mapping)
               for w in v.values()]
    big = max([float(np.max(np.abs(relevance), initial=0.0)), *weights])
    if big > 1e150:
        return (f"{m!r} overflows on these lists: grades or gains up to {big:.3g} make sums "
                f"beyond the largest float ({np.finfo(float).max:.3g}); rescale them")
    return (f"{m!r} gave a value that is not finite on these lists; this is a defect, please "
            f"report it with the relevance that caused it")
