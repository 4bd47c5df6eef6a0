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


def _bayeschain_string(measure) -> tuple[str, int]:
    """An ir_measures measure as a bayeschain measure string and its relevance level."""
    name = measure.NAME
    params = {k: v for k, v in measure.params.items() if k not in ("cutoff", "rel")}
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


def register_ir_measures():
    """Register bayeschain's measures and provider with ir_measures; returns (MP, PatH)."""
    global _REGISTERED
    if _REGISTERED is not None:
        return _REGISTERED
    import ir_measures
    from ir_measures import Metric, measures, providers
    from ir_measures.providers.base import Any
    from ir_measures.util import QrelsConverter, RunConverter

    from ..evaluation import evaluate_lists
    from ..io.lists import ranked_lists

    param = measures.ParamInfo

    class _MP(measures.Measure):
        """Markov Precision (Ferrante, Ferro & Maistro, SIGIR 2014), computed by bayeschain."""

        __name__ = "MP"
        NAME = "MP"
        PRETTY_NAME = "Markov Precision"
        SUPPORTED_PARAMS = {
            "cutoff": param(dtype=int, required=False, desc="ranking cutoff threshold"),
            "model": param(dtype=str, default="GL_AD_ID", desc="GL/LO x AD/OR x ID/LID, CONST"),
            "rescale": param(dtype=str, required=False, desc="'recall' for MP@Rec(T)"),
            "rel": param(dtype=int, default=1, desc="minimum relevant grade"),
        }

    class _PatH(measures.Measure):
        """P@H (Ferrante & Ferro, ICTIR 2020), computed by bayeschain."""

        __name__ = "PatH"
        NAME = "PatH"
        PRETTY_NAME = "Precision at the stopping time H"
        SUPPORTED_PARAMS = {
            "cutoff": param(dtype=int, required=False, desc="ranking cutoff threshold"),
            "model": param(dtype=str, default="sfbm", desc="browsing model"),
            "p": param(dtype=float, required=False, desc="forward probability"),
            "q": param(dtype=float, required=False, desc="backward probability"),
            "p1": param(dtype=float, required=False, desc="forward probability of rank 1"),
            "qN": param(dtype=float, required=False, desc="backward probability of rank N"),
            "order": param(dtype=int, default=1, desc="1: E[T/H]; 2: E[T]/E[H]"),
            "loss": param(dtype=float, default=0.0, desc="geometric utility loss"),
            "rel": param(dtype=int, required=False, desc="unused; gains are the grades"),
        }

    mp, path = _MP(), _PatH()
    for m in (mp, path):
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
            type(ir_measures.AP)(cutoff=Any(), rel=Any()),
            type(ir_measures.P)(cutoff=Any(required=True), rel=Any()),
            type(ir_measures.RBP)(cutoff=Any(), p=Any(), rel=Any(required=True)),
            _MP(cutoff=Any(), model=Any(), rescale=Any(), rel=Any()),
            _PatH(cutoff=Any(), model=Any(), p=Any(), q=Any(), p1=Any(), qN=Any(),
                  order=Any(), loss=Any(), rel=Any()),
        ]

        def _evaluator(self, wanted, qrels):
            return BayeschainEvaluator(list(wanted), qrels)

    provider = BayeschainProvider()
    providers.register(provider)
    pipeline = ir_measures.DefaultPipeline
    if all(p.NAME != provider.NAME for p in pipeline.providers):
        pipeline.providers.append(provider)
    _REGISTERED = (mp, path)
    return _REGISTERED
