"""``bayeschain demo``: the whole idea on the bundled TREC Session 2013 log, in minutes.

1. read the real log and summarise it;
2. fit the walk that P@H scores to its clicks (spec ``walk``: examinations hidden, exact
   page likelihood, NUTS), and show what it learned: E[H] and the expected examinations of
   ranks 1..10 next to the clicks the model predicts and the log's clicks per page;
3. build real systems from the log: the result pages of each session's *first* query and
   of its *last* reformulation, and the engine's first-query ranking against the same
   documents re-ranked by a simple baseline (query-term overlap with title and snippet);
4. score them under every posterior draw with P@H (the fitted walk) and MsM (MsM's session
   walk, ``walk-session``), judged with the track's qrels, and under a walk whose moves
   depend on the relevance of the examined document (``walk-relevance`` fitted with the
   qrels, ``PatH(model='drwbm')``);
5. compare: mean difference with its credible interval, P(A > B), P(practically equal),
   and the posterior probability that A's law of P@H dominates B's;
6. write the posterior, the tables, the figure and ``report.html`` (all of it on one page
   a browser opens) to an output folder: all of them, or (after an error or an interrupt)
   nothing at all.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BayeschainError

MEASURE = "PatH(model='rwbm', order=2)"
#: posterior draws per question for the exact laws of P@H (stochastic dominance)
DOMINANCE_DRAWS = 10
#: mass the exact laws of P@H may leave beyond their last step in the demo
LAW_TOL = 1e-4


#: the demo's walk fits: a warm-up, then draws until every quantity has R-hat <= 1.01 and
#: bulk ESS >= 400 (at most 3,000 per chain); see ``sample`` in inference.walk.sampler.
#: Measured with nutpie 0.16.8 and 0.16.11, seeds 2026 and 1-5: the walk with moves by
#: relevance and MsM's session walk had no divergence with 250 tuning steps and
#: target_accept 0.9.  The walk had 4-28 at seed 2026 before the low-rank mass matrix was
#: regularised (``MASS_MATRIX_GAMMA``); with it, none at seeds 2026 and 1-5 (nutpie
#: 0.16.8, 2026-11-28), in 2.6-4.5 s against 5.2 s at 400 and 0.95 (seed 2026)
SAMPLER = {"tune": 250, "min_ess": 400, "target_accept": 0.9, "draws": 3000}

#: the steps printed by this run, for report.html
_STEPS: list[str] = []


def _step(t0: float, text: str) -> None:
    print(f"[{time.perf_counter() - t0:5.1f} s] {text}", flush=True)
    _STEPS.append(text)


def _output_folder(base: Path, force: bool) -> Path:
    """Where the outputs go: ``base``, or ``base-2``, ``base-3``... when it exists, so
    that earlier results are never overwritten (``--force`` reuses ``base``).  Nothing is
    made here: :func:`_publish` moves the complete outputs into place."""
    if force or not base.exists():
        return base
    for k in range(2, 1000):
        cand = base.with_name(f"{base.name}-{k}")
        if not cand.exists():
            return cand
    raise BayeschainError("too many demo output folders; pass --force or another --out",
                          file=base)


def _publish(stage: Path, base: Path, force: bool) -> Path:
    """Rename the complete staging folder into place (:func:`_output_folder`); a folder
    made meanwhile by another run is never replaced: the next free name is taken."""
    from ..io.write import publish_folder

    for _ in range(100):
        out = _output_folder(base, force)
        try:
            return publish_folder(stage, out, force=force)
        except BayeschainError:
            if force or not out.exists():
                raise
    raise BayeschainError("could not find a free output folder", file=base)


class Background:
    """``fn(*args, **kwargs)`` run in a daemon thread (started at once, or when ``after``
    has finished); :meth:`result` waits and returns its value or raises its exception.
    A daemon: an interrupted demo exits without waiting for it (nutpie's threads end with
    the process, and a background fit writes nothing)."""

    def __init__(self, fn, *args, after: Background | None = None, **kwargs):
        import threading

        self._value = self._error = None

        def work():
            try:
                if after is not None:
                    after._thread.join()
                self._value = fn(*args, **kwargs)
            except BaseException as e:         # noqa: BLE001 - handed to result()
                self._error = e

        self._thread = threading.Thread(target=work, name="bayeschain-fit", daemon=True)
        self._thread.start()

    def result(self):
        while self._thread.is_alive():      # short joins: Ctrl-C reaches this thread
            self._thread.join(0.2)
        if self._error is not None:
            raise self._error
        return self._value


@dataclass
class Results:
    """What the demo writes: the walk's posterior, the scores under it and under the
    relevance-dependent walk, the comparisons and the replay check of the deepest click."""

    post: Any
    scores: Any
    rel_scores: Any
    table: Any
    check: Any


def run(args: argparse.Namespace) -> int:
    """``--toy``: the engine on the paper's toy runs; otherwise the real-data demo.

    The outputs are written to a hidden temporary sibling of the output folder and renamed
    into place once all are complete: an error or an interrupt leaves neither a partial
    file nor an empty folder."""
    if args.toy:
        from .toy_demo import run_toy

        return run_toy(args)
    from ..io.write import naming_os_errors, staging_folder
    from .progress import stage as progress_stage

    t0 = time.perf_counter()
    _STEPS.clear()
    base = Path(args.out)
    with staging_folder(base) as stage:      # checks now that the folder can be written
        children: list = []
        try:
            results = analyse(args, t0, children=children)
        finally:
            for child in children:
                child.stop()
        outputs = _outputs(results, args.rope, args.seed, csv=args.csv)
        with progress_stage("writing the posterior, the scores, the figure and the report"):
            for name, write in outputs.items():
                with naming_os_errors(base / name):
                    write(stage / name)
        out = _publish(stage, base, args.force)
    _step(t0, f"wrote {out}/: {', '.join(outputs)}")
    print(EXPLANATION.format(measure=MEASURE, rope=args.rope, draws=DOMINANCE_DRAWS,
                             law_tol=LAW_TOL))
    return 0


def _outputs(results: Results, rope: float = 0.01, seed=None, *,
             csv: bool = False) -> dict[str, Callable[[Path], object]]:
    """File name -> the function that writes it to a path (in the staging folder).  Every
    draw's scores as netCDF (``(chain, draw, run, topic)``, compressed; a few MB), and as
    long CSV tables too with ``--csv`` (tens of MB)."""

    def table(frame):
        return lambda path: frame.to_csv(path, index=False)

    def grid(scores):
        from ..io.write import netcdf_bytes

        return lambda path: path.write_bytes(netcdf_bytes(scores.rename("score")))

    outputs = {
        "posterior.nc": lambda path: path.write_bytes(results.post.to_netcdf_bytes()),
        "scores.nc": grid(results.scores),
        "scores_drwbm.nc": grid(results.rel_scores),
        "comparisons.csv": table(results.table),
    }
    if csv:
        outputs["scores.csv"] = table(results.scores.to_dataframe().reset_index())
        outputs["scores_drwbm.csv"] = table(results.rel_scores.to_dataframe().reset_index())
    if importlib.util.find_spec("matplotlib") is not None:
        outputs["demo.png"] = lambda path: _figure(path, results.scores, results.check)
        outputs["report.html"] = lambda path: _report(path, results, rope, seed)
    return outputs


def _report(path: Path, results: Results, rope: float, seed) -> None:
    """report.html: the steps, the walk, the comparisons, figures, meanings, provenance."""
    from ..recipes.reports import demo_report

    report = demo_report(steps=list(_STEPS), post=results.post, scores=results.scores,
                         table=results.table, check=results.check,
                         explanation=EXPLANATION.format(measure=MEASURE, rope=f"{rope:g}",
                                                        draws=DOMINANCE_DRAWS,
                                                        law_tol=LAW_TOL),
                         data_source="the TREC Session 2013 log (data/trec_session_2013)",
                         seed=seed)
    path.write_text(report.to_html(), encoding="utf-8")


def analyse(args: argparse.Namespace, t0: float, *, children: list | None = None,
            sampler=None) -> Results:
    """Steps 1-5 of the module docstring, printed as they go.  ``children``: a list to
    which the processes compiling the kernels are added (:mod:`~bayeschain.cli.prewarm`;
    the caller stops them): the walk's density from the start, the rehearsal once the log
    has been read (none for a folder without it).  ``sampler``: the walks' sampler
    (default NUTS by nutpie; the rehearsal passes a stand-in)."""
    from ..recipes import bundled_data_dir
    from .prewarm import Prewarm

    data = Path(args.data) if args.data else bundled_data_dir()
    if children is not None:    # first: the walk's density is the cold run's longest wait
        children.append(Prewarm("walk", data))
    import numpy as np
    import pandas as pd

    from ..comparison import compare, dominance_probability
    from ..comparison.dominance import LABELS, OUTCOMES, SUPERIORITY
    from ..inference import fit, predictive_walk_checks
    from ..io import read_clicks, read_qrels
    from ..recipes import session_matrices, session_qrels, systems_from_log
    from ..scoring import score, score_sessions
    from .progress import Stage, stage

    folder = data / "trec_session_2013"
    log = read_clicks(folder / "sessiontrack2013.xml.gz")
    if children is not None:
        children.append(Prewarm("rehearse", data))
    s = log.summary()
    _step(t0, f"read the TREC Session 2013 log: {s['sessions']} sessions, {s['pages']} result "
              f"pages, {s['clicks']} clicks ({s['missing_end_times']} clicks without end time,"
              f" {s['repeated_clicks']} repeated clicks, counted)")
    with stage("fitting the walk to the log's clicks (NUTS)") as st:
        # what needs no posterior, while the other process compiles the walk's density
        topic_qrels = read_qrels(folder / "qrels.txt")
        qrels = session_qrels(log, topic_qrels, folder / "qrels.txt")
        runs = systems_from_log(log)
        _preload()
        if children:
            children[0].wait_for("walk")      # the density and its C callback
            children[1].wait_for("kernel")    # the likelihood's block kernel
        post = fit(log, "walk", seed=args.seed, report=st.update, sampler=sampler,
                   **SAMPLER)
    _step(t0, f"fitted the walk P@H scores (spec walk: forward, backward and leave moves and "
              f"click probabilities per rank, examinations hidden; {post.n_draws:,} NUTS "
              f"draws, {post.divergences()} divergences)")
    _print_walk(post, log)
    # the other two walks sample while this thread replays, scores and compares: nutpie's
    # threads call the compiled density without the GIL (see inference.walk.bridge)
    rel_stage = Stage("fitting the walk with moves by relevance (NUTS)")
    session_stage = Stage("fitting MsM's session walk (NUTS)")
    rel_fit = Background(fit, log, "walk-relevance", qrels=topic_qrels, seed=args.seed,
                         sampler=sampler,
                         report=rel_stage.update, **SAMPLER)
    session_fit = Background(fit, log, "walk-session", seed=args.seed, sampler=sampler,
                             report=session_stage.update, after=rel_fit, **SAMPLER)
    with stage("replaying the fitted walk on the log's pages"):
        checks = predictive_walk_checks(post, log, seed=args.seed)
    deep = checks.deep_click_pages
    lo, hi = deep.interval()
    _step(t0, f"replaying the fitted walk on the log's pages: pages with a click at rank >= 5 "
              f"observed {deep.observed:.3f}, posterior predictive 95% [{lo:.3f}, {hi:.3f}]")
    _step(t0, f"systems from the log: {', '.join(runs)} "
              f"({runs['first query']['query_id'].nunique()} sessions with results)")
    with stage("scoring the systems under every posterior draw"):
        scores = score(runs, qrels, MEASURE, post)
    tables = []
    for a, b, what in (("last query", "first query", "did reformulating help?"),
                       ("engine", "baseline", "engine ranking vs term-overlap re-ranking")):
        with stage(f"comparing: {what} (exact laws of P@H)"):
            comp = compare(scores.sel(run=[a, b]), rope=args.rope, seed=args.seed)
            row = comp.pairs.iloc[0]
            first, second = (row["A"], row["B"])
            dom = dominance_probability(runs, qrels, MEASURE + "@10", post, first, second,
                                        max_draws=DOMINANCE_DRAWS, seed=args.seed,
                                        tol=10 * LAW_TOL, law_tol=LAW_TOL)
        sys_ = dom.system
        tables.append(comp.pairs.assign(
            question=what, **{LABELS[k]: sys_.outcome(k) for k in (*OUTCOMES, SUPERIORITY)}))
        widths = comp.decomposition.set_index("source")["hdi_width"]
        _step(t0, f"{what}: {first} - {second} = {row['mean_diff']:+.4f} "
                  f"[{row['hdi_0.95_low']:+.4f}, {row['hdi_0.95_high']:+.4f}]; "
                  f"P(A>B) {row['P(A>B)']:.3f}, P(|A-B|<={args.rope:g}) "
                  f"{row['P(|A-B|<=rope)']:.3f}, P(A-B>{args.rope:g}) {row['P(A-B>rope)']:.3f}, "
                  f"P(B-A>{args.rope:g}) {row['P(B-A>rope)']:.3f}")
        print(f"      interval width from the user model alone "
              f"{widths['user model (topics fixed)']:.4f}, from the topics alone "
              f"{widths['topics (posterior-mean scores)']:.4f}, both "
              f"{widths['user model + topics']:.4f}")
        lo_s, hi_s = sys_.superiority_interval
        print(f"      laws of P@H over users (random topic): P(A dom B) "
              f"{sys_.a_dominates:.3f}, P(B dom A) {sys_.b_dominates:.3f}, P(equal laws) "
              f"{sys_.equal:.3f}, P(crossing) {sys_.crossing:.3f} "
              f"(Monte-Carlo s.e. up to {max(sys_.standard_errors.values()):.3f}); "
              f"one user under A beats one under B: {sys_.superiority:.3f} "
              f"[{lo_s:.3f}, {hi_s:.3f}]")
    with rel_stage:
        rel_post = rel_fit.result()
    rel_scores = _relevance_walk(t0, rel_post, runs, qrels, args)
    with session_stage:
        session_post = session_fit.result()
    with stage("scoring the sessions with MsM"):
        sessions = session_matrices(log, qrels)
        msm_scores = score_sessions(sessions, session_post, discount="log")
    mean_msm = msm_scores.mean("session").values.ravel()
    _step(t0, f"MsM (log discount) over {len(sessions)} judged sessions: mean "
              f"{mean_msm.mean():.4f} [{np.quantile(mean_msm, 0.025):.4f}, "
              f"{np.quantile(mean_msm, 0.975):.4f}] under MsM's session walk fitted to the "
              f"log (walk-session)")

    return Results(post=post, scores=scores, rel_scores=rel_scores,
                   table=pd.concat(tables, ignore_index=True),
                   check=checks.deepest_clicked_rank)


def _preload() -> None:
    """Import what the later steps use (the sampler, the figures): done while the walk's
    density compiles in the other process rather than after."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401
    import nutpie  # noqa: F401


def _print_walk(post, log, ranks: int = 10) -> None:
    """E[H] and expected examinations per rank next to the model's and the log's clicks."""
    import numpy as np

    from ..inference import expected_visits
    from ..inference.walk.checks import observed_summary
    from ..posterior import expected_clicks

    visits = expected_visits(post, ranks)                          # (draws, ranks)
    clicks = expected_clicks(post, ranks)       # repeats of a click included
    h = visits.sum(axis=1)
    lo, hi = np.quantile(h, [0.025, 0.975])
    print(f"    E[H] on a 10-result page: {h.mean():.2f} examinations [{lo:.2f}, {hi:.2f}]")
    from ..inference.walk.data import page_data

    data = page_data(log)
    observed = observed_summary(log, data)
    full = data.lengths[data.page_config] >= ranks              # pages of >= 10 results
    page_of_click = np.repeat(np.arange(observed.clicks.size), observed.clicks)
    r = observed.click_ranks[full[page_of_click]]
    per_rank = np.bincount(r[r <= ranks] - 1, minlength=ranks) / max(full.sum(), 1)
    print("    rank  examinations (95%)     clicks per page: model (95%)      log")
    for i in range(ranks):
        v, c = visits[:, i], clicks[:, i]
        vl, vh = np.quantile(v, [0.025, 0.975])
        cl, ch = np.quantile(c, [0.025, 0.975])
        print(f"    {i + 1:>4}  {v.mean():5.2f} [{vl:4.2f}, {vh:4.2f}]     "
              f"{c.mean():.3f} [{cl:.3f}, {ch:.3f}]     {per_rank[i]:.3f}")


def _relevance_walk(t0: float, post, runs, session_qrels, args):
    """Users whose next move depends on the relevance of the examined document: the walk
    fitted by relevance class (the track's qrels), then used to score."""
    import numpy as np

    from ..comparison import compare
    from ..scoring import score
    from .progress import stage

    w = post.posterior["walk"].sel(rank=2)
    leave = w.sel(move=["stop", "reformulate"]).sum("move")
    diff = (leave.sel(relevance="relevant") - leave.sel(relevance="non-relevant")).values.ravel()
    rel, other = (float(leave.sel(relevance=c).mean()) for c in ("relevant", "non-relevant"))
    _step(t0, f"moves by relevance of the examined document (walk-relevance): leaving the page "
              f"from rank 2 after a relevant document {rel:.3f}, after another {other:.3f}; "
              f"P(relevant documents end the page more often) {float(np.mean(diff > 0)):.3f}")
    measure = "PatH(model='drwbm', order=2)"
    with stage("scoring under the relevance-dependent walk"):
        scores = score(runs, session_qrels, measure, post)
    row = compare(scores.sel(run=["engine", "baseline"]), rope=args.rope,
                  seed=args.seed).pairs.iloc[0]
    _step(t0, f"under the relevance-dependent walk ({measure}): {row['A']} - {row['B']} = "
              f"{row['mean_diff']:+.4f} [{row['hdi_0.95_low']:+.4f}, "
              f"{row['hdi_0.95_high']:+.4f}], P(A>B) {row['P(A>B)']:.3f}")
    return scores


def _figure(path: Path, scores, check) -> None:
    """The scores' forest plot next to the replay check of the deepest clicked rank."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io.write import save_figure
    from ..plots import plot_distribution_check, plot_forest

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    plot_forest(axes[0], scores, title="P@H (fitted walk, order 2)")
    plot_distribution_check(axes[1], check)
    fig.tight_layout()
    save_figure(fig, path)


EXPLANATION = """
How to read these numbers
  {measure}: expected relevance collected per document examined (P@H order 2) by a user
    who walks the ranking with the forward, backward and leave probabilities the walk
    learned from the log's clicks (examinations hidden; the same chain is scored).
  A - B: the difference of the mean scores over the population of sessions; its interval
    is the 95% highest-density interval under both sources of uncertainty: the user model
    (posterior draws of the walk) and the sample of sessions (Bayesian bootstrap, each draw
    with its own session weights).  The widths from each source alone are printed below it.
  P(A>B): posterior probability that A's mean is higher.  P(|A-B|<={rope}): practically
    equal.  P(A-B>{rope}) / P(B-A>{rope}): better by more than the rope.
  Laws of P@H over users: under each of {draws} posterior draws, the distribution of P@H
    over users on a random session (exact but for a mass <= {law_tol:g}); P(A dom B): A's
    distribution lies above B's (every user percentile at least as good), P(equal laws),
    P(crossing): neither; with the largest Monte-Carlo standard error of the four.
    "One user under A beats one under B":
    P(X_A > X_B) + P(X_A = X_B)/2 for two independent users, the user-to-user variability
    a mean hides.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .arguments import seed

    p.add_argument("--data", default=None, help="data folder (default: the bundled data/)")
    p.add_argument("--out", default="bayeschain-demo",
                   help="output folder (default bayeschain-demo; a new numbered folder is "
                        "made when it exists, unless --force)")
    p.add_argument("--force", action="store_true", help="reuse --out even if it exists")
    p.add_argument("--seed", type=seed, default=2026, help="random seed")
    p.add_argument("--rope", type=float, default=0.01,
                   help="region of practical equivalence (default 0.01)")
    p.add_argument("--csv", action="store_true",
                   help="also write every draw's scores as CSV tables (scores.csv, "
                        "scores_drwbm.csv; tens of MB) next to the netCDF files")
    p.add_argument("--toy", action="store_true",
                   help="instead, run the engine on the paper's two toy runs (no fitting)")
    p.add_argument("--users", type=int, default=100_000,
                   help="--toy: simulated users for the Monte-Carlo check (default 100000)")
