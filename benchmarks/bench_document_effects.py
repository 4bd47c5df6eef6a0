"""Attractiveness per document: the documents integrated out by a Laplace approximation
(``documents = "mode"``) judged against full NUTS over every coordinate on a subset of a
log.

    python3 benchmarks/bench_document_effects.py [--log clara2|wscd] [--fraction 0.1]
        [--spec walk-reclick] [--whole]

Fits the walk with attractiveness per document to a random share of the log's sessions
(``ClickLog.split``) twice: ``documents = "mode"`` (the documents integrated out about
their mode, NUTS on the rest) and ``documents = "sampled"`` (NUTS on every
coordinate), then reports, per route, the fit time and diagnostics, and between them the
largest difference of the posterior means and of the 5% and 95% quantiles (the 90%
interval) of every move probability per rank, of E[H] on a 10-result page, of the click
trend, and of P@H (rwbm, order 2) of three synthetic runs on five topics (gains drawn
once with a fixed seed), with kappa and the click offsets by rank where the spec has
them; the difference of the means also in full NUTS's posterior standard deviations.
``--whole`` then fits the whole log by the Laplace route (time, diagnostics).
``--spec NAME`` fits that spec instead of the plain walk below (its own
``[examination]`` and sampler, with ``clicks = "document"`` and each route), e.g. the walk
with damped re-clicks and click offsets by rank.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from click_model_peers import load_log  # noqa: E402

SPEC = """[model]
name = "walk-{route}"
ranks = 10
[examination]
moves = "pooled"
clicks = "document"
documents = "{route}"
[sampler]
method = "nuts"
draws = 4000
min_ess = 400
chains = 2
tune = 1000
seed = 2026
target_accept = 0.95
"""


def runs_and_qrels(seed: int = 0):
    rng = np.random.default_rng(seed)
    qrels, runs = [], {}
    for t in range(5):
        for d in range(20):
            qrels.append((str(t), f"d{d}", int(rng.integers(0, 3))))
    for r in range(3):
        rows = []
        for t in range(5):
            for i, d in enumerate(rng.permutation(20)[:10]):
                rows.append((str(t), f"d{d}", i + 1, 10.0 - i, f"run{r}"))
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "rank", "score",
                                                      "run_id"])
    return runs, pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])


def summaries(post, runs, qrels) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    import bayeschain as bc
    from bayeschain.posterior.walk import expected_visits

    out = {}
    walk = post.posterior["walk"].stack(sample=("chain", "draw")).transpose("sample", ...)
    values = walk.values.reshape(walk.shape[0], -1)
    out["moves"] = values
    out["E[H]"] = expected_visits(post, 10).sum(axis=1)[:, None]
    trend = post.posterior["click_trend"].stack(sample=("chain", "draw"))
    out["click trend"] = trend.transpose("sample", ...).values
    for name in ("reclick", "click_offset"):      # the variants' own quantities
        if name in post.posterior:
            v = post.posterior[name].stack(sample=("chain", "draw")).transpose("sample", ...)
            out[name] = v.values.reshape(v.shape[0], -1)
    scores = bc.score(runs, qrels, "PatH(model='rwbm', order=2)", post)
    mean = scores.mean("topic").stack(sample=("chain", "draw")).transpose("sample", ...)
    out["P@H of 3 runs"] = mean.values
    return {k: (v.mean(0), np.quantile(v, 0.05, axis=0), np.quantile(v, 0.95, axis=0),
                v.std(0)) for k, v in out.items()}


def fit(log, route: str, folder: Path, base: str | None = None):
    import bayeschain as bc

    if base is None:
        spec = folder / f"walk-{route}.toml"
        spec.write_text(SPEC.format(route=route))
        spec = str(spec)
    else:
        spec = bc.load_spec(base).with_keys("examination", clicks="document",
                                            documents=route)
    t = time.perf_counter()
    post = bc.fit(log, spec)
    wall = time.perf_counter() - t
    d = post.diagnostics(sampled_only=True)     # the mode route's documents: Laplace draws
    return post, (f"{wall:.1f} s, R-hat {float(d['max_rhat'].max()):.3f}, bulk ESS "
                  f"{float(d['min_ess'].min()):.0f}, {post.divergences()} divergences, "
                  f"{post.posterior['attractiveness'].sizes['document']:,} documents")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", default="clara2", choices=["clara2", "wscd"])
    ap.add_argument("--fraction", type=float, default=0.1)
    ap.add_argument("--whole", action="store_true", help="also fit the whole log (mode)")
    ap.add_argument("--spec", default=None,
                    help="a walk spec to fit instead of the plain walk (e.g. walk-reclick)")
    a = ap.parse_args()
    log = load_log(a.log)
    _, subset = log.split(a.fraction, seed=1)
    runs, qrels = runs_and_qrels()
    folder = Path(tempfile.mkdtemp(prefix="bench-documents-"))
    print(f"{a.log}: subset of {subset.summary()['pages']:,} pages "
          f"({a.fraction:.0%} of the sessions), spec {a.spec or 'walk (above)'}")
    posts = {}
    for route in ("mode", "sampled"):
        posts[route], line = fit(subset, route, folder, a.spec)
        print(f"  {route}: {line}", flush=True)
    s_mode, s_full = (summaries(posts[r], runs, qrels) for r in ("mode", "sampled"))
    print("largest |mode - sampled| of the posterior means and 5% / 95% quantiles, and "
          "of the means in full NUTS's posterior sds:")
    for key in s_mode:
        diffs = [np.abs(s_mode[key][i] - s_full[key][i]) for i in range(3)]
        names = ("mean", "5%", "95%")
        worst = ", ".join(f"{n} {float(np.max(x)):.4f}" for n, x in zip(names, diffs,
                                                                          strict=True))
        sds = np.where(s_full[key][3] > 0, s_full[key][3], np.inf)
        print(f"  {key}: {worst}; mean {float(np.max(diffs[0] / sds)):.2f} sd")
    if a.whole:
        _, line = fit(log, "mode", folder, a.spec)
        print(f"whole {a.log} ({log.summary()['pages']:,} pages), documents integrated out "
              f"by Laplace: {line}")


if __name__ == "__main__":
    main()
