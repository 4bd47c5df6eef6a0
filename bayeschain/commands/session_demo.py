"""``bayeschain demo``: the whole idea on the bundled TREC Session 2013 log, in minutes.

1. read the real log and summarise it;
2. fit the user model to its clicks: exact conjugate posterior, and NUTS as a check when
   PyMC is installed;
3. build real systems from the log: the result pages of each session's *first* query and
   of its *last* reformulation, and the engine's first-query ranking against the same
   documents re-ranked by a simple baseline (query-term overlap with title and snippet);
4. score them under every posterior draw with P@H and MsM, judged with the track's qrels,
   and under a walk whose moves depend on the relevance of the clicked document (fitted
   with the qrels: ``rwbm-relevance`` and ``PatH(model='drwbm')``);
5. compare: mean difference with its credible interval, P(A > B), P(practically equal),
   and the posterior probability that A's law of P@H dominates B's;
6. write the posterior, the tables and the figures to an output folder.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BayeschainError

if TYPE_CHECKING:  # NumPy and pandas load when the demo runs, not for --help
    import numpy as np
    import pandas as pd

MEASURE = "PatH(model='sfbm', order=2)"


def _step(t0: float, text: str) -> None:
    print(f"[{time.perf_counter() - t0:5.1f} s] {text}", flush=True)


def _output_folder(base: Path, force: bool) -> Path:
    """``base``, or ``base-2``, ``base-3``... so that earlier results are never overwritten
    (``--force`` reuses ``base``)."""
    if force or not base.exists():
        base.mkdir(parents=True, exist_ok=True)
        return base
    for k in range(2, 1000):
        cand = base.with_name(f"{base.name}-{k}")
        if not cand.exists():
            cand.mkdir(parents=True)
            return cand
    raise BayeschainError("too many demo output folders; pass --force or another --out",
                          file=base)


def _systems(log) -> dict[str, pd.DataFrame]:
    """Runs (one per system; each session is a topic)."""
    import pandas as pd

    ev = log.events
    pages = ev[(ev["event"] == "query") & ev["serp_id"].notna()]
    results = log.results
    texts = log.meta.get("doc_text", {})
    rows = {"first query": [], "last query": [], "engine": [], "baseline": []}
    for sid, group in pages.groupby("session_id", sort=False):
        serps = group["serp_id"].astype(int).tolist()
        query = str(group["query_id"].iloc[0])
        for name, serp in (("first query", serps[0]), ("last query", serps[-1])):
            docs = results[results["serp_id"] == serp].sort_values("rank")["doc_id"]
            docs = [d for d in docs if d]
            rows[name] += [(sid, d, float(len(docs) - i), name) for i, d in enumerate(docs)]
        docs = [d for d in results[results["serp_id"] == serps[0]].sort_values("rank")
                ["doc_id"] if d]
        terms = set(query.lower().split())
        overlap = [sum(w in terms for w in texts.get(d, "").lower().split()) for d in docs]
        order = sorted(range(len(docs)), key=lambda i: (-overlap[i], i))
        rows["engine"] += [(sid, d, float(len(docs) - i), "engine") for i, d in enumerate(docs)]
        rows["baseline"] += [(sid, docs[j], float(len(docs) - i), "baseline")
                             for i, j in enumerate(order)]
    return {name: pd.DataFrame(r, columns=["query_id", "doc_id", "score", "run_id"])
            for name, r in rows.items()}


def _session_qrels(log, qrels: pd.DataFrame, qrels_path: Path) -> pd.DataFrame:
    """The track's qrels copied to each session of their topic (runs are per session)."""
    import pandas as pd

    topic_of = log.meta.get("session_topic", {})
    parts = []
    for sid, topic in topic_of.items():
        part = qrels[qrels["query_id"].astype(str) == str(topic)]
        if len(part):
            parts.append(part.assign(query_id=str(sid)))
    if not parts:
        raise BayeschainError("no qrels match the sessions' topics", file=qrels_path)
    return pd.concat(parts, ignore_index=True)


def _session_matrices(log, qrels: pd.DataFrame, depth: int = 10) -> dict[str, np.ndarray]:
    """Each session's documents x queries relevance matrix (first ``depth`` results)."""
    import numpy as np

    grades = {(str(q), str(d)): g for q, d, g in zip(qrels["query_id"], qrels["doc_id"],
                                                      qrels["relevance"], strict=True)}
    ev = log.events
    pages = ev[(ev["event"] == "query") & ev["serp_id"].notna()]
    res = log.results
    out = {}
    for sid, group in pages.groupby("session_id", sort=False):
        cols = []
        for serp in group["serp_id"].astype(int):
            docs = res[res["serp_id"] == serp].sort_values("rank")["doc_id"].tolist()[:depth]
            col = [max(grades.get((str(sid), str(d)), 0), 0) for d in docs]
            cols.append(col + [0] * (depth - len(col)))
        if any(any(c) for c in cols):
            out[str(sid)] = np.array(cols, dtype=float).T
    return out


def run(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from ..compare import compare, dominance_probability, score, score_sessions
    from ..inference import fit, load_spec, model_data, predictive_backward_share
    from ..io import click_statistics, read_clicks, read_qrels

    t0 = time.perf_counter()
    from .demo import bundled_data_dir

    data = Path(args.data) if args.data else bundled_data_dir()
    folder = data / "trec_session_2013"
    log = read_clicks(folder / "sessiontrack2013.xml.gz")
    s = log.summary()
    _step(t0, f"read the TREC Session 2013 log: {s['sessions']} sessions, {s['pages']} result "
              f"pages, {s['clicks']} clicks ({s['missing_end_times']} clicks without end time,"
              f" {s['repeated_clicks']} repeated clicks, counted)")
    stats = click_statistics(log, backend="pandas")
    _step(t0, f"click statistics: {stats.backward_share():.1%} of click-to-click moves go "
              f"back up the page (the MP paper reports 21% on Yandex)")

    spec = load_spec("rwbm-conjugate")
    post = fit(stats, spec, draws=1000, chains=2, seed=args.seed)
    data_m = model_data(stats, spec.ranks)
    check = predictive_backward_share(post, data_m, seed=args.seed)
    lo, hi = check.interval()
    _step(t0, f"fitted {spec.name} (exact posterior, {post.n_draws:,} draws); backward share "
              f"observed {check.observed:.3f}, posterior predictive 95% [{lo:.3f}, {hi:.3f}]")
    if args.nuts:
        try:
            nuts = fit(stats, "rwbm-nuts", draws=500, tune=500, chains=2, seed=args.seed)
            gap = float(np.abs(nuts.posterior["transition"].mean(("chain", "draw"))
                               - post.posterior["transition"].mean(("chain", "draw"))).max())
            _step(t0, f"NUTS check (PyMC): {nuts.divergences()} divergences, posterior means "
                      f"within {gap:.4f} of the exact ones")
        except ImportError:
            _step(t0, "NUTS check skipped: install the [bayes] extra for PyMC")
    session_post = fit(stats, "msm-session", draws=1000, chains=2, seed=args.seed)

    topic_qrels = read_qrels(folder / "qrels.txt")
    qrels = _session_qrels(log, topic_qrels, folder / "qrels.txt")
    runs = _systems(log)
    _step(t0, f"systems from the log: {', '.join(runs)} "
              f"({runs['first query']['query_id'].nunique()} sessions with results)")
    scores = score(runs, qrels, MEASURE, post)
    out = _output_folder(Path(args.out), args.force)
    tables = []
    for a, b, what in (("last query", "first query", "did reformulating help?"),
                       ("engine", "baseline", "engine ranking vs term-overlap re-ranking")):
        comp = compare(scores.sel(run=[a, b]), rope=args.rope)
        row = comp.pairs.iloc[0]
        first, second = (row["A"], row["B"])
        dom = dominance_probability(runs, qrels, MEASURE + "@10", post, first, second,
                                    max_draws=40, seed=args.seed)
        tables.append(comp.pairs.assign(question=what, **{"P(A dominates B)": dom["all"]}))
        _step(t0, f"{what}: {first} - {second} = {row['mean_diff']:+.4f} "
                  f"[{row['hdi_0.95_low']:+.4f}, {row['hdi_0.95_high']:+.4f}], "
                  f"P(A>B) {row['P(A>B)']:.3f}, P(equal) {row['P(|A-B|<rope)']:.3f}, "
                  f"P(A<B) {row['P(A<B)']:.3f}, P(A dominates B) {dom['all']:.3f}")
    rel_scores = _relevance_walk(t0, log, topic_qrels, runs, qrels, args)
    sessions = _session_matrices(log, qrels)
    msm_scores = score_sessions(sessions, session_post, discount="log")
    mean_msm = msm_scores.mean("session").values.ravel()
    _step(t0, f"MsM (log discount) over {len(sessions)} judged sessions: mean "
              f"{mean_msm.mean():.4f} [{np.quantile(mean_msm, 0.025):.4f}, "
              f"{np.quantile(mean_msm, 0.975):.4f}] under the session posterior")

    table = pd.concat(tables, ignore_index=True)
    table.to_csv(out / "comparisons.csv", index=False)
    post.save(out / "posterior.nc", force=True)
    scores.to_dataframe().reset_index().to_csv(out / "scores.csv", index=False)
    rel_scores.to_dataframe().reset_index().to_csv(out / "scores_drwbm.csv", index=False)
    _figures(out, scores, check)
    _step(t0, f"wrote {out}/: posterior.nc, scores.csv, scores_drwbm.csv, comparisons.csv "
              f"and figures")
    print(EXPLANATION.format(measure=MEASURE, rope=args.rope))
    return 0


def _relevance_walk(t0: float, log, topic_qrels, runs, session_qrels, args):
    """Users whose next move depends on what the click found: fit the transitions after
    relevant and after other clicks (the track's qrels), then score under that walk."""
    import numpy as np

    from ..compare import compare, score
    from ..inference import fit

    post = fit(log, "rwbm-relevance", qrels=topic_qrels, draws=1000, chains=2,
               seed=args.seed)
    t = post.posterior["transition_by_relevance"].sel(rank=1)
    stop = t.sel(category=["stop", "reformulate"]).sum("category")
    diff = (stop.sel(relevance="relevant") - stop.sel(relevance="non-relevant")).values.ravel()
    _step(t0, f"transitions by relevance of the clicked document: leaving the page after a "
              f"relevant click {float(stop.sel(relevance='relevant').mean()):.3f}, after "
              f"another {float(stop.sel(relevance='non-relevant').mean()):.3f}; P(relevant "
              f"clicks end the page more often) {float(np.mean(diff > 0)):.3f}")
    measure = "PatH(model='drwbm', order=2)"
    scores = score(runs, session_qrels, measure, post)
    row = compare(scores.sel(run=["engine", "baseline"]), rope=args.rope).pairs.iloc[0]
    _step(t0, f"under the relevance-dependent walk ({measure}): {row['A']} - {row['B']} = "
              f"{row['mean_diff']:+.4f} [{row['hdi_0.95_low']:+.4f}, "
              f"{row['hdi_0.95_high']:+.4f}], P(A>B) {row['P(A>B)']:.3f}")
    return scores


def _figures(out: Path, scores, check) -> None:
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..plots import plot_forest, plot_predictive_check

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    plot_forest(axes[0], scores, title="P@H (SFBM, order 2)")
    plot_predictive_check(axes[1], check, label="share of backward moves")
    fig.tight_layout()
    fig.savefig(out / "demo.png", dpi=100)
    plt.close(fig)


EXPLANATION = """
How to read these numbers
  {measure}: expected relevance collected by a user who moves on after a click with the
    fitted forward probability of that rank, per document examined (P@H order 2).
  Every number is a posterior over user models fitted to the real clicks: the interval is
    the 95% highest-density interval of the mean-over-sessions difference A - B.
  P(A>B) / P(equal) / P(A<B): posterior probability that A's mean score is higher, within
    +-{rope} (practically equal), or lower.
  P(A dominates B): share of posterior user models under which A's whole distribution of
    P@H over users lies above B's, averaged over sessions (order 3 of the P@H paper).
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", default=None, help="data folder (default: the bundled data/)")
    p.add_argument("--out", default="bayeschain-demo",
                   help="output folder (default bayeschain-demo; a new numbered folder is "
                        "made when it exists, unless --force)")
    p.add_argument("--force", action="store_true", help="reuse --out even if it exists")
    p.add_argument("--seed", type=int, default=2026, help="random seed")
    p.add_argument("--rope", type=float, default=0.01,
                   help="region of practical equivalence (default 0.01)")
    p.add_argument("--no-nuts", dest="nuts", action="store_false",
                   help="skip the NUTS check of the exact posterior")
    p.add_argument("--toy", action="store_true",
                   help="instead, run the engine on the paper's two toy runs (no fitting)")
