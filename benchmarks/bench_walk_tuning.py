"""Where NUTS's tuning goes on the demo's three walks, and what changing it costs.

    python3 benchmarks/bench_walk_tuning.py [--specs walk walk-relevance walk-session]
        [--variants default laplace-start depth-6 early-switch-3] [--seeds 1 2]
        [--draws 500] [--trace] [--stopping]

Fits TREC Session 2013 (bundled) in process, warm compile caches, with the demo's sampler
settings (``bayeschain.cli.demo.SAMPLER``: 250 tuning steps, target_accept 0.9), once per
spec, variant and seed, and prints per chain the leapfrog steps (one gradient each) of
the tuning steps, of the first 25 of them, and of ``--draws`` draws after them (nutpie's
own statistics, ``save_warmup``).  ``--trace`` adds the steps and step size of each
chain's first 12 tuning steps.  ``--stopping`` instead fits with the demo's stopping rule
(draws until R-hat <= 1.01 and bulk ESS >= 400) and prints the CPU seconds, the draws per
chain, the leapfrog steps a draw and whether a divergence made the fit sample again at
target_accept 0.99.

Variants (the sampler's default is ``default``; the others are set here, in the
benchmark only):

* ``laplace-start``: every chain starts from a draw of the Gaussian approximation about
  the joint posterior mode (L-BFGS on the exact log density; its precision by central
  differences of the gradient), not near the prior's centre;
* ``depth-N``: nutpie's ``maxdepth`` N (at most ``2^N - 1`` leapfrog steps a draw; 10
  by default);
* ``early-switch-N``: nutpie's ``early_window_switch_freq`` N;
* ``set-NAME=VALUE``: any of nutpie's sampler settings (``nutpie.sample``'s keyword
  arguments, e.g. ``set-step_size_adapt_method=adam``, ``set-initial_step=0.01``;
  VALUE read as an int, a float, ``true`` / ``false`` or else a string).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "data" / "trec_session_2013"


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


#: what ``install`` replaces, as it was: the chains' start, ``nutpie.sample`` and the
#: sampler's reader of a trace
ORIGINAL: dict = {}


def laplace_start(model, rng):
    """A draw of ``N(mode, precision^-1)`` for the walk's density (computed once a model)."""
    from scipy.optimize import minimize

    if getattr(model, "_bench_laplace", None) is None:
        x0 = ORIGINAL["prior_start"](model, np.random.default_rng(0))
        mode = minimize(lambda x: tuple(-v for v in model.logp(x)), x0, jac=True,
                        method="L-BFGS-B", options={"maxiter": 3000}).x
        h, d = 1e-4, mode.size
        hess = np.empty((d, d))
        for i in range(d):
            e = np.zeros(d)
            e[i] = h
            hess[:, i] = (model.logp(mode + e)[1] - model.logp(mode - e)[1]) / (2 * h)
        vals, vecs = np.linalg.eigh(-0.5 * (hess + hess.T))
        model._bench_laplace = (mode, vecs / np.sqrt(np.maximum(vals, 1e-8)))
    mode, scale = model._bench_laplace
    return mode + scale @ rng.standard_normal(mode.size)


def setting(text: str):
    """A ``set-`` variant's value: an int, a float, a bool or the string itself."""
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def install(variant: str, record: list) -> None:
    """nutpie's options and the chains' start for ``variant``; the tuning statistics of
    every trace read go to ``record``."""
    import nutpie

    from bayeschain.inference.walk import sampler
    from bayeschain.inference.walk.model import WalkModel

    ORIGINAL.setdefault("prior_start", WalkModel.initial_point)
    ORIGINAL.setdefault("sample", nutpie.sample)
    ORIGINAL.setdefault("raw", sampler._raw_draws)
    WalkModel.initial_point = (laplace_start if variant == "laplace-start"
                               else ORIGINAL["prior_start"])
    extra = {}
    if variant.startswith("depth-"):
        extra["maxdepth"] = int(variant.split("-")[1])
    elif variant.startswith("early-switch-"):
        extra["early_window_switch_freq"] = int(variant.split("-")[2])
    elif variant.startswith("set-"):
        for part in variant[4:].split(","):
            name, value = part.split("=")
            extra[name] = setting(value)

    def sample(*args, **kwargs):
        return ORIGINAL["sample"](*args, **{**kwargs, "save_warmup": True, **extra})

    class Read:                      # a nutpie trace can be read once: read here
        def __init__(self, batches):
            self.batches = batches

        def get_arrow_trace(self):
            return self.batches

    def raw(trace):
        batches = trace.get_arrow_trace()
        stat_batches = batches[1]
        record.clear()
        for stat in stat_batches:
            tuning = sampler._column(stat, "tuning").astype(bool)
            steps = sampler._column(stat, "n_steps")
            size = sampler._column(stat, "step_size")
            record.append((steps[tuning], size[tuning], steps[~tuning]))
        return ORIGINAL["raw"](Read(batches))

    nutpie.sample = sample
    sampler._raw_draws = raw


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", nargs="+", default=["walk", "walk-relevance", "walk-session"])
    ap.add_argument("--variants", nargs="+",
                    default=["default", "laplace-start", "depth-6", "early-switch-3"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--stopping", action="store_true")
    a = ap.parse_args()
    for v in a.variants:
        if v != "default" and v != "laplace-start" and not (
                v.startswith(("depth-", "early-switch-", "set-"))):
            sys.exit(f"unknown variant {v!r}")
    warnings.simplefilter("ignore")
    from bayeschain.cli.demo import SAMPLER
    from bayeschain.inference import fit
    from bayeschain.io import read_clicks, read_qrels

    log = read_clicks(FOLDER / "sessiontrack2013.xml.gz")
    qrels = read_qrels(FOLDER / "qrels.txt")
    settings = {k: SAMPLER[k] for k in ("tune", "target_accept")}
    fit(log, "walk", seed=0, draws=50, tune=50, min_ess=0)          # compile caches warm
    if a.stopping:
        print("| spec | variant | seed | CPU s | draws per chain | steps a draw | "
              "sampled again |")
        print("|---|---|---|---|---|---|---|")
    else:
        print("| spec | variant | seed | tuning steps' gradients per chain | first 25 | "
              f"{a.draws} draws' |")
        print("|---|---|---|---|---|---|")
    for spec in a.specs:
        extra = {"qrels": qrels} if spec == "walk-relevance" else {}
        for variant in a.variants:
            for seed in a.seeds:
                record: list = []
                install(variant, record)
                c = cpu()
                if a.stopping:
                    post = fit(log, spec, seed=seed, draws=SAMPLER["draws"],
                               min_ess=SAMPLER["min_ess"], **settings, **extra)
                    kept = post.posterior.sizes["draw"]       # the draws checked
                    steps = np.concatenate([r[2][:kept] for r in record])
                    again = "yes" if "resampled" in post.attrs else ""
                    print(f"| {spec} | {variant} | {seed} | {cpu() - c:.1f} | "
                          f"{kept:,} | "
                          f"{steps.mean():.1f} | {again} |", flush=True)
                    continue
                fit(log, spec, seed=seed, draws=a.draws, min_ess=0, **settings, **extra)
                cell = [" / ".join(f"{int(part.sum()):,}" for part in parts)
                        for parts in zip(*[(r[0], r[0][:25], r[2]) for r in record],
                                         strict=True)]
                print(f"| {spec} | {variant} | {seed} | {' | '.join(cell)} |", flush=True)
                if a.trace:
                    for k, (steps, size, _) in enumerate(record):
                        print(f"  chain {k}: first tuning steps' leapfrog steps "
                              f"{steps[:12].tolist()}, step sizes "
                              f"{np.round(size[:12], 3).tolist()}")
    install("default", [])


if __name__ == "__main__":
    t = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t:.0f} s)")
