"""Measure strings in the ir_measures style, parsed with :mod:`ast`, and their registry.

A measure string is a name, optional keyword parameters and an optional cut-off:
``AP``, ``P@10``, ``RBP(p=0.8)``, ``nDCG@10``, ``ERR@20``,
``PatH(model='rwbm', p=0.5, q=0.25, loss=0.25)``.  :func:`parse_measure` turns it into a
:class:`Measure` whose ``repr`` gives the string back.  trec_eval names are accepted as
aliases (``map``, ``P_10``, ``ndcg_cut_10``, ``map_cut_5``, ``rbp``).

Measures register a :class:`MeasureSpec` in :data:`MEASURES`; :func:`evaluate` looks the
name up, checks the parameters and runs it on a relevance vector or matrix.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..registry import Registry


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


@dataclass(frozen=True)
class MeasureSpec:
    """How to compute a registered measure.

    ``compute(relevance, measure, context) -> values``: ``relevance`` is ``(B, D)``, the
    result ``(B,)`` (or with extra leading draw axes for parameters with draw axes).
    ``cutoff`` is ``"required"``, ``"optional"`` or ``"none"``; ``params`` maps accepted
    parameter names to defaults (the only place a default is written: ``compute`` reads
    them through :meth:`arguments`).  ``posterior`` names the parameters a fitted user
    model supplies when the measure is scored under a posterior (``()``: nothing is learned
    from clicks, the measure is not scored under a posterior).
    """

    name: str
    compute: Callable[[np.ndarray, Measure, Mapping[str, Any]], np.ndarray]
    params: dict[str, Any] = field(default_factory=dict)
    cutoff: str = "optional"
    summary: str = ""
    reference: str = ""
    posterior: tuple[str, ...] = ()

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


def _trec_alias(text: str) -> str | None:
    """trec_eval measure names -> measure strings (``P_10`` -> ``P@10``)."""
    simple = {"map": "AP", "ndcg": "nDCG", "rbp": "RBP(p=0.9, gains='graded')"}
    if text in simple:
        return simple[text]
    for prefix, name in (("P_", "P"), ("ndcg_cut_", "nDCG"), ("map_cut_", "AP")):
        rest = text[len(prefix):]
        if text.startswith(prefix) and rest.isdigit():
            return f"{name}@{int(rest)}"
    return None


def parse_measure(text: str | Measure) -> Measure:
    """Parse ``NAME``, ``NAME(k=v, ...)`` and either followed by ``@cutoff``.

    Raises :class:`ParameterError` for syntax errors, unknown measures (listing the
    valid ones), unknown parameters, positional arguments and bad cut-offs.
    """
    if isinstance(text, Measure):
        return _validated(text)
    src = str(text).strip()
    alias = _trec_alias(src)
    if alias is not None:
        src = alias
    try:
        node = ast.parse(src, mode="eval").body
    except SyntaxError:
        raise ParameterError(f"cannot parse measure {text!r}; expected e.g. 'AP', 'P@10' or "
                             f"'RBP(p=0.8)'") from None
    cutoff = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        if not (isinstance(node.right, ast.Constant) and type(node.right.value) is int):
            raise ParameterError(f"cut-off in {text!r} must be a positive integer")
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
            except ValueError:
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
        raise ParameterError(f"a parameter is repeated in {measure!r}")
    if measure.cutoff is not None and (spec.cutoff == "none" or measure.cutoff < 1):
        raise ParameterError(f"{measure.name} takes no cut-off" if spec.cutoff == "none" else
                             f"cut-off must be a positive integer, got {measure.cutoff}")
    if measure.cutoff is None and spec.cutoff == "required":
        raise ParameterError(f"{measure.name} needs a cut-off, e.g. {measure.name}@10")
    return measure


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
        ``users``/``seed`` (Monte-Carlo estimates), ``holding_rates`` (MPcont).

    Returns
    -------
    float for a 1-D list, array (B,) for a batch.
    """
    m = parse_measure(measure)
    rel = np.asarray(relevance, dtype=float)
    if rel.ndim not in (1, 2):
        raise ParameterError(f"relevance must be 1-D (one list) or 2-D (a batch); got shape "
                             f"{rel.shape}")
    if not np.all(np.isfinite(rel)):
        raise ParameterError("relevance contains NaN or infinite values")
    single = rel.ndim == 1
    batch = rel[None, :] if single else rel
    ctx = dict(context)
    for key in ("recall_base", "ideal", "lengths", "max_grade"):
        if key in ctx and ctx[key] is not None and single:
            ctx[key] = np.asarray(ctx[key])[None, ...]
    out = MEASURES.get(m.name).compute(batch, m, ctx)
    out = np.asarray(out, dtype=float)
    return float(out[0]) if single and out.ndim == 1 else (out[..., 0] if single else out)
