"""Hooks into the tools IR researchers already use: an ir_measures provider.

``register_ir_measures()`` adds bayeschain as a provider of ``ir_measures`` (Apache-2.0,
terrierteam): its own measures ``MP`` and ``PatH`` become ``ir_measures`` measures, and
``AP``, ``P@k`` and ``RBP(p, rel)`` can be computed by bayeschain too.  Afterwards::

    import ir_measures
    from bayeschain.integrations.ir_measures import register_ir_measures
    MP, PatH = register_ir_measures()
    ir_measures.calc_aggregate([MP(model='GL_AD_ID'), PatH(model='rwbm', p=0.5, q=0.25)],
                               qrels, run)

Runs and qrels may be anything ir_measures accepts (TREC files via ``ir_measures.read_trec_*``,
pandas DataFrames, dicts, ir_datasets iterables).  The numbers are those of
``bayeschain eval`` with the same measure strings.
"""

from __future__ import annotations

from collections import defaultdict

_REGISTERED: tuple | None = None


#: bayeschain measures registered in ir_measures under their own names
OWN = ("MP", "PatH")


def _bayeschain_string(measure) -> tuple[str, int]:
    """An ir_measures measure as a bayeschain measure string and its relevance level."""
    name = measure.NAME
    dropped = ("cutoff", "rel", "judged_only")      # judged_only is only claimed when False
    params = {k: v for k, v in measure.params.items() if k not in dropped}
    cutoff = measure.params.get("cutoff")
    level = measure.params.get("rel", 1)
    if name == "RBP":
        params = {"p": float(measure["p"])}
    if name == "P" and cutoff is None:
        raise ValueError("P needs a cut-off")
    text = name
    if params:
        text += "(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")"
    if cutoff is not None:
        text += f"@{int(cutoff)}"
    return text, int(level)


def _measure_class(name: str, measures):
    """An ir_measures ``Measure`` class for bayeschain's measure ``name``, its parameters
    taken from the measure's one declaration (:class:`bayeschain.measures.MeasureSpec`)."""
    from ..measures import MEASURES

    spec = MEASURES.get(name)
    info = measures.ParamInfo
    supported = {"cutoff": info(dtype=int, required=False, desc="ranking cutoff threshold"),
                 "rel": info(dtype=int, default=1, desc="minimum relevant grade")}
    for key, default in spec.params.items():
        if key in supported:        # PatH's dfbm `cutoff` is ir_measures' @k cut-off
            continue
        kind = type(default) if default is not None else object
        supported[key] = info(dtype=kind, required=False, default=default,
                              desc=f"parameter of {name} (default {default!r})")
    return type(f"_{name}", (measures.Measure,), {
        "__doc__": f"{spec.summary} ({spec.reference}), computed by bayeschain.",
        "__name__": name, "NAME": name, "PRETTY_NAME": spec.summary,
        "SUPPORTED_PARAMS": supported})


def register_ir_measures():
    """Register bayeschain's measures and provider with ir_measures; returns (MP, PatH)."""
    global _REGISTERED
    if _REGISTERED is not None:
        return _REGISTERED
    import ir_measures
    from ir_measures import Metric, measures, providers
    from ir_measures.providers.base import Any, Choices
    from ir_measures.util import QrelsConverter, RunConverter

    from ..evaluation import evaluate_lists
    from ..io.lists import ranked_lists

    classes = {name: _measure_class(name, measures) for name in OWN}
    own = tuple(cls() for cls in classes.values())
    for m in own:
        if m.NAME not in measures.registry:
            measures.register(m)

    class BayeschainEvaluator(providers.Evaluator):
        def __init__(self, wanted, qrels):
            self.qrels = QrelsConverter(qrels).as_pd_dataframe()[["query_id", "doc_id",
                                                                   "relevance"]]
            super().__init__(wanted, set(self.qrels["query_id"].astype(str)))

        def _iter_calc(self, run):
            frame = RunConverter(run).as_pd_dataframe()[["query_id", "doc_id", "score"]]
            groups = defaultdict(list)
            for m in self.measures:
                text, level = _bayeschain_string(m)
                groups[level].append((m, text))
            for level, items in groups.items():
                lists = ranked_lists({"run": frame.assign(run_id="run")}, self.qrels,
                                     level=level)
                table = evaluate_lists([t for _, t in items], lists)
                by_text = {t: m for m, t in items}
                for row in table.itertuples(index=False):
                    yield Metric(query_id=str(row.topic), measure=by_text[row.measure],
                                 value=float(row.value))

    class BayeschainProvider(providers.Provider):
        """bayeschain's exact chain solvers as an ir_measures provider."""

        NAME = "bayeschain"
        SUPPORTED_MEASURES = [
            type(ir_measures.AP)(cutoff=Any(), rel=Any(), judged_only=Choices(False)),
            type(ir_measures.P)(cutoff=Any(required=True), rel=Any(),
                                judged_only=Choices(False)),
            type(ir_measures.RBP)(cutoff=Any(), p=Any(), rel=Any(required=True)),
        ] + [cls(**{k: Any() for k in cls.SUPPORTED_PARAMS}) for cls in classes.values()]

        def _evaluator(self, wanted, qrels):
            return BayeschainEvaluator(list(wanted), qrels)

    provider = BayeschainProvider()
    providers.register(provider)
    pipeline = ir_measures.DefaultPipeline
    if all(p.NAME != provider.NAME for p in pipeline.providers):
        pipeline.providers.append(provider)
    _REGISTERED = own
    return _REGISTERED
