"""Held-out click prediction: the fitted walk against the classic click models.

    python3 benchmarks/bench_click_models.py [--logs trec clara2 wscd] [--pyclick PATH]
        [--specs walk walk-reclick walk-document-mode walk-once]
        [--clicks auto pooled document] [--min-impressions 5 10 20]
        [--documents auto|sampled|mode] [--rank-offsets] [--all-test-pages]

On each log (TREC Session 2013, bundled; CLARA2; WSCD = PyClick's trainSample +
testSample, 56,477 pages), the split of the click-model field: ``log.split(0.25, seed=0)``
by session, models fitted on the 75%, scored on the same held-out pages (pages of exactly
10 results whose query occurs in the training part's: ``heldout_serps``), ranks 1..10,
with PyClick's definitions (``bayeschain.inference.click_metrics``: log-likelihood per
rank of the conditional click probabilities, perplexity of the unconditional ones,
conditional perplexity).

* **walk**: ``bayeschain.fit(train)`` (the default spec ``walk`` as it is: NUTS by nutpie
  until the diagnostics pass, attractiveness per document where documents recur, those
  documents integrated out by Laplace where ``documents = "auto"`` chooses it, the note
  column says so; warm Numba cache), scored by
  ``heldout_click_metrics`` (posterior predictive over 200 draws).  ``walk-fresh`` is the
  same fit as users run it: ``bayeschain fit`` of the training log as a fresh process.
  Each walk's perplexity is then set against the best peer's with a paired bootstrap over
  the held-out pages (the 90% interval of the difference: what the pages can resolve).
* **RCTR, PBM, CM, UBM, DBN, SDBN**: ``click_model_peers.py`` (textbook EM, vectorised
  NumPy, PyClick's conventions), best of three fits.
* **PyClick UBM** (``--pyclick PATH`` to a PyClick checkout, GPL, not part of this
  project): PyClick's own pure-Python EM on the same pages (``pyclick_peer.py``), the
  speed reference of the issue ("fit at least 10x faster than PyClick's UBM").

CLARA2 and WSCD are not part of the project (``../shared/data``); without them the script
says so and runs on TREC Session alone.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402
from click_model_peers import (  # noqa: E402
    LOGS,
    MODELS,
    heldout_serps,
    load_log,
    present_logs,
    run,
    split_pages,
)

import bayeschain as bc  # noqa: E402
from bayeschain.inference import (  # noqa: E402
    click_metrics,
    heldout_click_arrays,
    perplexity_difference,
)
from bayeschain.inference.choose import documents_route  # noqa: E402
from bayeschain.io import write_canonical  # noqa: E402

HERE = Path(__file__).resolve().parent


def walk_spec(clicks: str, name: str = "walk", min_impressions: int | None = None,
              documents: str | None = None, rank_offsets: bool | None = None,
              extra: dict | None = None):
    """The walk spec ``name`` (default: the default spec ``walk``), with its clicks per
    rank, per document or chosen from the log (``auto``, the default), the pages a
    (query, document) pair needs for an attractiveness of its own (``min_impressions``),
    how its documents are fitted (``documents``) and click offsets by rank
    (``rank_offsets``), and ``extra`` keys (``readers``, ``reader_pages``, ``reclicks``);
    None: the spec's."""
    spec = bc.load_spec(name)
    if clicks != "auto" and spec.section("examination")["clicks"] != "auto":
        raise SystemExit(f"--clicks {clicks}: spec {name} fixes its clicks; fit it with "
                         f"--clicks auto")
    return spec.with_keys("examination", clicks=None if clicks == "auto" else clicks,
                          min_impressions=min_impressions, documents=documents,
                          rank_offsets=rank_offsets, **(extra or {}))


def walk_rows(name: str, log, clicks: str, known: bool = True,
              spec_name: str = "walk", min_impressions: int | None = None,
              documents: str | None = None, rank_offsets: bool | None = None,
              predictions: list | None = None, extra: dict | None = None) -> list[tuple]:
    """The walk fitted in this process and (the spec as it is: clicks ``auto``, no other
    key changed) as a fresh ``bayeschain fit`` process; ``predictions`` gets the label,
    held-out click vectors and ``P(C_r = 1)`` of the fit (for the paired comparison with
    the best peer)."""
    train, test = log.split(0.25, seed=0)
    extra = {k: v for k, v in (extra or {}).items() if v is not None}
    spec = walk_spec(clicks, spec_name, min_impressions, documents, rank_offsets, extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:                                                            # warm caches
            bc.fit(train.split(0.9, seed=1)[1], spec, draws=50, tune=50)
        except bc.errors.ParameterError:   # a tenth of TREC has no topic of reader_pages
            bc.fit(train.split(0.9, seed=1)[1], spec.with_keys("examination", readers="one"),
                   draws=50, tune=50)
        t = time.perf_counter()
        post = bc.fit(train, spec)
        seconds = time.perf_counter() - t
    arrays = heldout_click_arrays(post, test, pages=heldout_serps(log, known=known), seed=0)
    m = click_metrics(*arrays)
    diag = post.diagnostics(sampled_only=True)
    laplace = documents_route(post) == "Laplace"
    note = (f"{post.attrs['click_level']} clicks"
            f"{' (integrated out by Laplace)' if laplace else ''}; "
            f"{post.posterior.sizes['chain']} x {post.posterior.sizes['draw']:,} draws, "
            f"R-hat <= {diag['max_rhat'].max():.3f}, "
            f"ESS >= {diag['min_ess'].min():.0f}, {post.divergences()} div.")
    label = f"{spec_name}, clicks {clicks}" + (f" ({post.attrs['click_level']})"
                                               if clicks == "auto" else "") + \
        (f", min_impressions {min_impressions}" if min_impressions is not None else "") + \
        (f", documents {documents}" if documents is not None else "") + \
        (", click offsets by rank" if rank_offsets else "") + \
        "".join(f", {k} {v}" for k, v in extra.items())
    if predictions is not None:
        predictions.append((label, arrays[0], arrays[1]))
    rows = [(name, label, post.attrs["pages"], m.pages, f"{seconds:.1f}",
             f"{m.log_likelihood:.4f}", f"{m.perplexity:.4f}",
             f"{m.conditional_perplexity:.4f}", note)]
    if clicks != "auto" or min_impressions is not None or documents is not None \
            or rank_offsets is not None or extra:
        return rows
    with tempfile.TemporaryDirectory() as tmp:
        events, pages = Path(tmp) / "train.parquet", Path(tmp) / "pages.parquet"
        write_canonical(train, events)
        train.results.to_parquet(pages, index=False)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "bayeschain", "fit", str(events),
                               "--results", str(pages), "-o", str(Path(tmp) / "post.nc"),
                               "--spec", spec_name, "--quiet"], capture_output=True,
                              text=True)
        if proc.returncode:
            raise SystemExit(f"bayeschain fit failed: {proc.stderr.strip()}")
        fresh = time.perf_counter() - t
    rows.append((name, f"{spec_name}, `bayeschain fit` as a fresh process", post.attrs["pages"],
                 "", f"{fresh:.1f}", "", "", "", "read, fit, checks, save"))
    return rows


def peer_rows(name: str, models: list[str], known: bool = True) -> list[tuple]:
    """The NumPy peers, best of three fits (``click_model_peers.run``)."""
    return [row + ("NumPy EM",) for row in run(name, models, repeat=3, known=known)]


def gaps_to_best_peer(name: str, log, peers: list[tuple], walks: list[tuple],
                      known: bool = True) -> list[str]:
    """Each walk's held-out perplexity minus the best peer's (the lowest of ``peers``,
    rows of :func:`peer_rows`), with a paired bootstrap over the held-out pages
    (``bayeschain.inference.perplexity_difference``): how much of a difference the pages can
    resolve."""
    best = min(peers, key=lambda r: float(r[6]))[1]
    train, test = split_pages(log, known=known)
    p_peer = MODELS[best]().fit(*train).predict(*test)[0]
    out = []
    for label, clicked, p_click in walks:
        if clicked.shape != p_peer.shape or not (clicked == test[2]).all():
            raise SystemExit(f"{name}: the walk's held-out pages are not {best}'s")
        out.append(f"{name}, {label}: perplexity against {best}'s (the best peer) "
                   + str(perplexity_difference(clicked, p_click, p_peer, seed=0)))
    return out


def pyclick_rows(name: str, pyclick: Path, known: bool = True) -> list[tuple]:
    out = subprocess.run([sys.executable, str(HERE / "pyclick_peer.py"), "--pyclick",
                          str(pyclick), "--log", name, "--models", "UBM",
                          *([] if known else ["--all-test-pages"])], check=True,
                         capture_output=True, text=True)
    res = json.loads(out.stdout)
    rows = []
    for model, r in res["pyclick"].items():
        rows.append((name, f"PyClick {model}", res["train_pages"], res["test_pages"],
                     f"{r['fit_seconds']:.0f}", f"{r['log_likelihood']:.4f}",
                     f"{r['perplexity']:.4f}", f"{r['conditional_perplexity']:.4f}",
                     "pure-Python EM"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", nargs="+", default=list(LOGS), choices=list(LOGS))
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--pyclick", type=Path, default=None,
                    help="a PyClick checkout: time its UBM on the same split")
    ap.add_argument("--clicks", nargs="+", default=["auto"],
                    choices=["auto", "pooled", "document"],
                    help="the walk's click model: auto (the default spec), pooled (per "
                         "rank) or document (attractiveness per query-document pair)")
    ap.add_argument("--specs", nargs="+", default=["walk"],
                    choices=["walk", "walk-click", "walk-reclick", "walk-document-mode",
                             "walk-once", "walk-query"],
                    help="the walk specs fitted (default: the default spec walk)")
    ap.add_argument("--min-impressions", nargs="+", type=int, default=[None],
                    help="fit the walk with these [examination] min_impressions (pages a "
                         "(query, document) pair needs for an attractiveness of its own; "
                         "rarer pairs share a click chance per rank), in process only")
    ap.add_argument("--documents", choices=["auto", "sampled", "mode"], default=None,
                    help="the walk's [examination] documents (default: the spec's), in "
                         "process only")
    ap.add_argument("--rank-offsets", action="store_true", default=None,
                    help="fit the walk with [examination] rank_offsets = true (click "
                         "offsets by rank for documents), in process only")
    ap.add_argument("--readers", choices=["one", "query", "topic"], default=None,
                    help="the walk's [examination] readers (default: the spec's; "
                         "walk-query's is query), in process only")
    ap.add_argument("--reader-pages", type=int, default=None,
                    help="the walk's [examination] reader_pages (pages a query or topic "
                         "needs for a reader of its own; default: the spec's), in process "
                         "only")
    ap.add_argument("--reclicks", choices=["fresh", "damped"], default=None,
                    help="the walk's [examination] reclicks (default: the spec's), in "
                         "process only")
    ap.add_argument("--all-test-pages", action="store_true",
                    help="score every held-out page of 10 results, not only those whose "
                         "query occurs in training (a pair never seen in training gets the "
                         "peers' prior value 0.5): TREC Session's queries rarely recur")
    args = ap.parse_args()
    known = not args.all_test_pages
    args.logs = present_logs(args.logs)
    print(f"machine: {machine()}")
    print("split: log.split(0.25, seed=0) by session; held-out pages of 10 results"
          + ("" if args.all_test_pages else " whose query occurs in training")
          + "; ranks 1..10\n")
    rows, gaps = [], []
    for name in args.logs:
        log = load_log(name)
        walks = []
        for spec_name in args.specs:
            for clicks in args.clicks:
                for least in args.min_impressions:
                    rows += walk_rows(name, log, clicks, known, spec_name, least,
                                      args.documents, args.rank_offsets, walks,
                                      {"readers": args.readers,
                                       "reader_pages": args.reader_pages,
                                       "reclicks": args.reclicks})
        peers = peer_rows(name, args.models, known)
        rows += peers
        gaps += gaps_to_best_peer(name, log, peers, walks, known)
        if args.pyclick is not None:
            rows += pyclick_rows(name, args.pyclick, known)
    print(table(rows, ("log", "model", "train pages", "test pages", "fit s", "LL",
                       "perplexity", "cond. perplexity", "note")))
    best = {}
    for r in rows:
        if r[6]:
            best.setdefault(r[0], []).append((float(r[6]), r[1]))
    for name, scores in best.items():
        print(f"{name}: lowest perplexity {min(scores)[0]:.4f} ({min(scores)[1]})")
    print("\n".join(gaps))


if __name__ == "__main__":
    main()
