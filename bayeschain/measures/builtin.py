"""The built-in measures: registrations of the classical measures and P@H.

Binary measures count a document as relevant when its grade is at least ``level``
(context, default 1, trec_eval's ``-l``).

Each parameter is declared once, in its measure's registration, as a
:class:`~bayeschain.measures.registry.Param`: its default and the values it accepts.  Only
PatH's walk moves ``p``, ``q``, ``p_rel`` and ``q_rel`` may be lists (one value per rank:
the browsing models take per-rank moves); RBP's persistence is one number, as in its
definition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..browsing.dynamic import top_grade
from ..errors import ParameterError
from . import classical, cwl, judged
from .markov import MODELS as MP_MODELS
from .path import apply_gains, path_expectation
from .registry import (
    MAX_CUTOFF,
    MAX_USERS,
    Measure,
    MeasureSpec,
    Param,
    arguments,
    register_measure,
)


def _binary(rel: np.ndarray, ctx: Mapping[str, Any]) -> np.ndarray:
    """Relevant (grade >= level) as booleans."""
    return rel >= ctx.get("level", 1)


def _precision(rel, m: Measure, ctx):   # binary measures with a cut-off: the first k ranks
    return classical.precision_at(_binary(classical.top(rel, m.cutoff), ctx), m.cutoff)


def _ap(rel, m: Measure, ctx):
    return classical.average_precision(_binary(classical.top(rel, m.cutoff), ctx),
                                       ctx.get("recall_base"), m.cutoff)


def _rr(rel, m: Measure, ctx):
    return classical.reciprocal_rank(_binary(classical.top(rel, m.cutoff), ctx), m.cutoff)


def _recall(rel, m: Measure, ctx):
    return classical.recall_at(_binary(rel, ctx), ctx.get("recall_base"), m.cutoff)


def _rprec(rel, m: Measure, ctx):
    return classical.r_precision(_binary(rel, ctx), ctx.get("recall_base"))


def _success(rel, m: Measure, ctx):
    return classical.success_at(_binary(classical.top(rel, m.cutoff), ctx), m.cutoff)


def _judged_at(rel, m: Measure, ctx):
    return judged.judged_at(rel, ctx.get("judged"), m.cutoff, ctx.get("lengths"))


def _bpref(rel, m: Measure, ctx):
    return judged.bpref(rel, ctx.get("judged"), ctx.get("level", 1), ctx.get("recall_base"),
                        ctx.get("nonrelevant_base"), ctx.get("lengths"))


def _rbp_resid(rel, m: Measure, ctx):
    return judged.rbp_residual(rel, arguments(m)["p"], ctx.get("judged"), ctx.get("lengths"))


def _inst(rel, m: Measure, ctx):
    kw = arguments(m)
    low, high = float(kw["min_rel"]), kw["max_rel"]
    if high is None:        # the topic's top grade (judged grades when qrels are known)
        high = np.maximum(top_grade(_ideal(rel, ctx)), low + 1)
    elif float(high) <= low:
        raise ParameterError(f"INST max_rel={high} must exceed min_rel={kw['min_rel']}")
    return cwl.inst(rel, float(kw["T"]), m.cutoff, min_rel=low, max_rel=high,
                    value=kw["value"])


def _rbp_gains(rel, gains, ctx):
    """RBP gains: binary (default), a ``{grade: weight}`` map, or ``'graded'``: the grade
    over the topic's top grade when that exceeds 1 (trec_eval 10's rbp, which rescales
    gains into [0, 1])."""
    if gains is None:
        return _binary(rel, ctx)
    if gains == "graded":
        return apply_gains(rel) / top_grade(_ideal(rel, ctx), keepdims=True)
    if isinstance(gains, str):
        raise ParameterError(f"RBP gains must be a {{grade: weight}} map or 'graded', "
                             f"got {gains!r}")
    return apply_gains(rel, gains)


def _rbp(rel, m: Measure, ctx):
    kw = arguments(m)
    p = ctx.get("params", {}).get("p", kw["p"])       # a posterior supplies p per draw
    gains = _rbp_gains(rel, kw["gains"], ctx)
    if m.cutoff is not None:
        gains = classical.cut(gains, m.cutoff)
    if kw["finite"]:
        lengths = ctx.get("lengths")
        if m.cutoff is not None:
            lengths = m.cutoff if lengths is None else np.minimum(lengths, m.cutoff)
        return classical.rank_biased_precision_finite(gains, p, lengths)
    return classical.rank_biased_precision(gains, p)


def _ideal(rel, ctx):
    ideal = ctx.get("ideal")
    return rel if ideal is None else np.asarray(ideal, dtype=float)


def _first_ranks(rel, m: Measure):
    """The first k ranks of ``rel`` for a measure with a cut-off k (every rank is still
    checked, as the gains of all ranks were), else ``rel``."""
    if m.cutoff is None:
        return rel
    return classical.top(classical.ranked(rel), m.cutoff)


def _dcg(rel, m: Measure, ctx):
    kw = arguments(m)
    g = apply_gains(_first_ranks(rel, m), kw["gains"])
    return classical.discounted_cumulative_gain(g, m.cutoff, kw["base"], kw["variant"])


def _ndcg(rel, m: Measure, ctx):
    kw = arguments(m)
    g = apply_gains(_first_ranks(rel, m), kw["gains"])
    ideal = apply_gains(_ideal(rel, ctx), kw["gains"])
    return classical.normalized_dcg(g, ideal, m.cutoff, kw["base"], kw["variant"])


def _err(rel, m: Measure, ctx):
    max_grade = arguments(m)["max_grade"]
    if max_grade is None:
        max_grade = ctx.get("max_grade")
    if max_grade is None:
        # the grading scale's top: the topic's best judged grade when qrels are known
        max_grade = top_grade(_ideal(rel, ctx))
    max_grade = np.asarray(max_grade, dtype=float)
    if max_grade.ndim:
        max_grade = max_grade[..., None]
    return classical.expected_reciprocal_rank(rel, m.cutoff, max_grade)


_MODEL_PARAMS = ("p", "q", "p1", "qN", "p_rel", "q_rel", "cutoff", "base", "variant",
                 "max_grade")


def _path(rel, m: Measure, ctx):
    kw = arguments(m)
    if kw["effort"] not in ("h", "1"):
        raise ParameterError("PatH effort must be 'h' or '1' in a measure string; pass a "
                             "function to bayeschain.measures.path_expectation for others")
    model_params = {k: kw[k] for k in _MODEL_PARAMS if kw[k] is not None}
    if kw["model"] == "drwbm":          # relevant: grade >= level, as every binary measure
        model_params.setdefault("level", ctx.get("level", 1))
    for k, v in ctx.get("params", {}).items():  # posterior draws etc. passed as context
        model_params[k] = v
    lengths = ctx.get("lengths")
    if m.cutoff is not None:
        rel = classical.cut(rel, m.cutoff)
        if lengths is not None:
            lengths = np.minimum(lengths, m.cutoff)
    gains = kw["gains"]
    if gains is None:
        rel = apply_gains(rel)
    return path_expectation(rel, kw["model"], order=int(kw["order"]), gains=gains,
                            loss=float(kw["loss"]), effort=kw["effort"],
                            users=int(ctx.get("users", kw["users"])),
                            seed=ctx.get("seed", kw["seed"]), lengths=lengths,
                            **model_params)


#: learned jump kernels MP and MPcont take from ``context["params"]`` (posterior draws)
_MP_KERNELS = {"jump_exponent": "exponent", "jump": "jumps"}


def _mp(rel, m: Measure, ctx, continuous: bool = False):
    from .markov import markov_precision

    kw = arguments(m)
    rates = ctx.get("holding_rates") if continuous else None
    if continuous and rates is None:
        raise ParameterError(f"{m!r} needs holding rates (context holding_rates, or "
                             f"--holding-rates on the command line)")
    params = dict(ctx.get("params", {}))
    unknown = sorted(set(params) - set(_MP_KERNELS))
    if unknown:
        raise ParameterError(f"{m.name} takes a learned jump kernel ({', '.join(_MP_KERNELS)}) "
                             f"as params; got {unknown}")
    if m.cutoff is not None:
        rel = classical.cut(rel, m.cutoff)
    lengths = ctx.get("lengths")
    if lengths is not None:
        lengths = np.minimum(lengths, rel.shape[-1])
    return markov_precision(rel, kw["model"], rates, kw["rescale"],
                            recall_base=ctx.get("recall_base"), lengths=lengths,
                            level=ctx.get("level", 1), method=kw["method"],
                            **{_MP_KERNELS[k]: v for k, v in params.items()})


def _mpcont(rel, m: Measure, ctx):
    return _mp(rel, m, ctx, continuous=True)


def _browsing_models() -> list[str]:
    from ..browsing import MODELS

    return MODELS.names()


def _probability(what: str, per_rank: bool = False) -> Param:
    """A browsing-model probability left to the model (None) or given: a number in [0, 1],
    or, where the model takes per-rank values, a list of them (one per rank)."""
    return Param.number(None, 0.0, 1.0, per_rank=per_rank, what=what)


_GAINS = Param.gains()
_BASE = Param.number(2.0, 1.0, low_open=True, what="the base of the log discount")
_VARIANT = Param.choice("trec", ("trec", "jarvelin"), what="the discount")
_MAX_GRADE = Param.number(None, 0.0, what="the top of the grading scale")
_MP_PARAMS = {"model": Param.choice("GL_AD_ID", MP_MODELS, names="Markov Precision model"),
              "rescale": Param.choice(None, ("recall",)),
              "method": Param.choice("closed", ("closed", "chain"))}

register_measure(MeasureSpec(
    "P", _precision, {}, "required", "precision at cut-off k: relevant in top k / k",
    "Ferrante & Ferro, ICTIR 2020, Sec. 6.1 (DFBM)"))
register_measure(MeasureSpec(
    "AP", _ap, {}, "optional", "average precision over the recall base (context recall_base)",
    "Ferrante & Ferro, ICTIR 2020, Sec. 6.2, Eq. 7"))
register_measure(MeasureSpec(
    "RBP", _rbp, {"p": Param.number(0.8, 0.0, 1.0, high_open=True, what="the persistence"),
                  "gains": Param.gains(graded=True),
                  "finite": Param.flag(False, what="RBP(N) of the finite list")}, "optional",
    "rank-biased precision (1 - p) sum r_i p^(i-1); finite=True gives RBP(N) = E[T]/E[H]",
    "Moffat & Zobel, TOIS 2008; Ferrante & Ferro, ICTIR 2020, Sec. 6.3", posterior=("p",)))
register_measure(MeasureSpec(
    "DCG", _dcg, {"gains": _GAINS, "base": _BASE, "variant": _VARIANT}, "optional",
    "discounted cumulated gain: sum w(r_i) / log_b(i+1) (variant='jarvelin': max(1, log_b i))",
    "Järvelin & Kekäläinen, TOIS 2002; Ferrante & Ferro, ICTIR 2020, App. D"))
register_measure(MeasureSpec(
    "nDCG", _ndcg, {"gains": _GAINS, "base": _BASE, "variant": _VARIANT}, "optional",
    "DCG over the ideal DCG of the topic's judgements (context ideal), as trec_eval's ndcg_cut",
    "Järvelin & Kekäläinen, TOIS 2002"))
register_measure(MeasureSpec(
    "ERR", _err, {"max_grade": _MAX_GRADE}, "optional",
    "expected reciprocal rank with R = (2^g - 1) / 2^g_max",
    "Chapelle et al., CIKM 2009; Ferrante & Ferro, ICTIR 2020, Sec. 6.5"))
register_measure(MeasureSpec(
    "MP", _mp, dict(_MP_PARAMS), "optional",
    "Markov Precision: precision of the relevant ranks weighted by the invariant distribution "
    "of the user's jump chain; rescale='recall' gives @Rec(T)",
    "Ferrante, Ferro & Maistro, SIGIR 2014, Def. 1", posterior=("jumps",)))
register_measure(MeasureSpec(
    "MPcont", _mpcont, dict(_MP_PARAMS), "optional",
    "continuous-time Markov Precision: MP with pi_i weighted by the mean holding time 1/mu_i "
    "(context holding_rates)",
    "Ferrante, Ferro & Maistro, SIGIR 2014, Sec. 4.1", posterior=("holding_rates", "jumps")))
register_measure(MeasureSpec(
    "PatH", _path, {
        "model": Param.choice("sfbm", _browsing_models, names="browsing model"),
        "order": Param.integer(1, 1, 2, what="1: E[T/f(H)], 2: E[T]/E[f(H)]"),
        "loss": Param.number(0.0, 0.0, 1.0, what="the utility lost at each revisit"),
        "effort": Param.choice("h", ("h", "1"), what="f(H)"),
        "gains": _GAINS,
        # per-rank moves of the walks (sfbm, rwbm, drwbm); p1 and qN are rwbm's two
        # boundary probabilities, one number each
        "p": _probability("forward probability", per_rank=True),
        "q": _probability("backward probability", per_rank=True),
        "p1": _probability("forward probability at rank 1"),
        "qN": _probability("backward probability at the last rank"),
        "p_rel": _probability("forward probability at relevant ranks", per_rank=True),
        "q_rel": _probability("backward probability at relevant ranks", per_rank=True),
        "cutoff": Param.integer(None, 1, MAX_CUTOFF, what="dfbm's last rank"),
        "base": Param.number(None, 1.0, low_open=True, what="dcg's log base"),
        "variant": Param.choice(None, ("trec", "jarvelin"), what="dcg's discount"),
        "max_grade": _MAX_GRADE,                                    # err
        "users": Param.integer(100_000, 1, MAX_USERS, what="simulated users"),
        "seed": Param.integer(None, 0, what="the simulation's seed")}, "optional",
    "P@H of a browsing model: order 1 E[T/f(H)] or order 2 E[T]/E[f(H)]",
    "Ferrante & Ferro, ICTIR 2020, Eq. 2-4", posterior=("p", "q", "p_rel", "q_rel")))
register_measure(MeasureSpec(
    "RR", _rr, {}, "optional",
    "reciprocal rank: 1 / rank of the first relevant document (0 if none in the top k)",
    "trec_eval recip_rank (m_recip_rank.c); ir_measures RR"))
register_measure(MeasureSpec(
    "R", _recall, {}, "optional",
    "recall at cut-off k: relevant in top k / recall base (context recall_base)",
    "trec_eval recall_k (m_recall.c); ir_measures R@k"))
register_measure(MeasureSpec(
    "Rprec", _rprec, {}, "none",
    "R-precision: relevant in top R / R, R the recall base (context recall_base)",
    "Buckley & Voorhees, in TREC: Experiment and Evaluation in IR, 2005; trec_eval Rprec "
    "(m_Rprec.c)"))
register_measure(MeasureSpec(
    "Success", _success, {}, "optional",
    "success at cut-off k: 1 if a relevant document is in the top k, else 0",
    "trec_eval success_k (m_success.c, Tomlinson); ir_measures Success@k"))
register_measure(MeasureSpec(
    "Judged", _judged_at, {}, "optional",
    "judged at cut-off k: the fraction of the top min(k, N) documents with a qrels line "
    "(any grade; context judged)",
    "ir_measures Judged@k (judged_provider, after OpenNIR)"))
register_measure(MeasureSpec(
    "Bpref", _bpref, {}, "none",
    "binary preference: (1/R) sum over relevant retrieved r of 1 - min(n_r, R) / min(N, R), "
    "n_r judged non-relevant above r, N the topic's judged non-relevant (context judged, "
    "nonrelevant_base)",
    "Buckley & Voorhees, SIGIR 2004; trec_eval bpref (m_bpref.c)"))
register_measure(MeasureSpec(
    "RBPresid", _rbp_resid, {"p": Param.number(0.8, 0.0, 1.0, high_open=True,
                                               what="the persistence")}, "none",
    "RBP's residual: p^N + (1 - p) sum over unjudged ranks i of p^(i-1), 0 when no retrieved "
    "document is unjudged (context judged)",
    "Moffat & Zobel, TOIS 2008, Sec. 5; trec_eval 10 rbp_resid (m_rbp_resid.c)"))
register_measure(MeasureSpec(
    "INST", _inst, {
        "T": Param.number(1.0, 0.5, what="the target gain"),
        "min_rel": Param.number(0.0, what="the grade of gain 0"),
        "max_rel": Param.number(None, what="the grade of gain 1"),
        "value": Param.choice("EU", cwl.QUANTITIES,
                              what="the C/W/L quantity: rate of gain, total gain or depth")},
    "optional",
    "INST, the adaptive C/W/L measure: continuation C(i) = ((i + T + T_i - 1) / "
    "(i + T + T_i))^2, T_i = T - gain collected to rank i; value EU (expected rate of gain), "
    "ETU (expected total gain) or ED (expected depth); @k reads k ranks",
    "Moffat, Bailey, Scholer & Thomas, ADCS 2015; Azzopardi, Thomas & Moffat, SIGIR 2019 "
    "(cwl_eval)"))
