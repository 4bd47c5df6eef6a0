"""What the documents' Laplace route costs before NUTS samples: the point and its
derivatives, with the documents' Newton search stopping as it does and as it did; and
NUTS's tuning in the walk's coordinates against coordinates whitened by the density's
precision at the point, at fixed draws.

    python3 benchmarks/bench_laplace_costs.py [--logs wscd] [--tune 500] [--draws 400]
        [--parts point tuning accept] [--seeds 2026 1] [--settings 500/0.9 500/0.8]

For each log (the shared WSCD sample by default, skipped when absent; its training split
``log.split(0.25, seed=0)[0]`` as in ``bench_click_models.py``; the default walk's pages
and model with the documents integrated out), in process:

1. **The point.** :func:`~bayeschain.inference.walk.documents.posterior_mode` and the
   route's derivatives there (:class:`~bayeschain.inference.walk.documents.
   DocumentsAtMode`), seed 2026: seconds, gradients, and each documents' search's
   gradients.  ``as before`` is the search's earlier rule, set by its constants: no
   stop on the Newton decrement (``MODE_DECREMENT = MODE_STALL = 0``) and the blocks
   measured at every step (``CHORD_RATE = 0``).
2. **Tuning.** nutpie (2 chains, ``--tune`` tuning steps and ``--draws`` draws, the
   sampler's low-rank adaptation, seed 1, warm-up kept) on the route's density in the
   walk's coordinates and whitened
   (:class:`~bayeschain.inference.walk.documents.Whitened`): seconds, gradients per
   chain in tuning, gradients per step of the first 100 tuning steps, and per draw.
3. **Tuning steps and target acceptance** (``--parts accept``, not by default). The
   whitened density sampled as ``fit`` samples it
   (:func:`~bayeschain.inference.walk.sampler.sample`: 2 chains, stopping once R-hat <=
   1.01 and bulk ESS >= 400, at most 4,000 draws) at each ``tune/target_accept`` of
   ``--settings`` (500/0.9 and 500/0.8 by default; the walk specs take 250/0.9 on this
   route since 2026-12-01, ``tune = "auto"``), at each of
   ``--seeds``: seconds, draws per chain, gradients per draw, divergences.  On
   2026-11-30, seeds 2026 and 1: 31.1 / 46.8 s at 0.9 against 19.5 / 26.9 s at 0.8, 15
   against 10-11 gradients per draw, no divergence (``benchmarks/RESULTS.md``; the walk
   specs keep 0.9: a small simulated log diverged at 0.8).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from click_model_peers import LOGS, document_walk, load_log, shared_logs  # noqa: E402

from bayeschain.inference.walk import documents, laplace  # noqa: E402
from bayeschain.inference.walk.sampler import _mass_matrix, _python_model  # noqa: E402

BEFORE = {"MODE_DECREMENT": 0.0, "MODE_STALL": 0.0, "CHORD_RATE": 0.0}


class Counted:
    """The model with its gradients counted."""

    def __init__(self, model):
        self.model, self.calls = model, 0

    def __getattr__(self, name):
        return getattr(self.model, name)

    def logp(self, theta):
        self.calls += 1
        return self.model.logp(theta)


def point(model, rule: str):
    saved = {k: getattr(laplace, k) for k in BEFORE}
    searches = []
    search = laplace.documents_mode

    def counted_search(*args, **kwargs):
        out = search(*args, **kwargs)
        searches.append(out[1])
        return out

    try:
        if rule == "as before":
            for k, v in BEFORE.items():
                setattr(laplace, k, v)
        laplace.documents_mode = counted_search
        counted = Counted(model)
        start = time.perf_counter()
        mode, info = documents.posterior_mode(counted, seed=2026)
        target = documents.DocumentsAtMode(counted, mode, measured=info["second_order"])
        seconds = time.perf_counter() - start
    finally:
        laplace.documents_mode = search
        for k, v in saved.items():
            setattr(laplace, k, v)
    print(f"  the point, {rule}: {seconds:.1f} s, {counted.calls:,} gradients, "
          f"{len(info['gains'])} rounds; the documents' searches' gradients: "
          f"{sorted(searches, reverse=True)[:5]} (the largest of {len(searches)})",
          flush=True)
    return target


def tuning(target, label: str, tune: int, draws: int):
    import nutpie

    start = time.perf_counter()
    trace = nutpie.sample(_python_model(target, None), draws=draws, tune=tune, chains=2,
                          cores=2, seed=1, progress_bar=False, save_warmup=True,
                          target_accept=0.9, **_mass_matrix(nutpie.sample, True))
    seconds = time.perf_counter() - start
    warm = trace.warmup_sample_stats["n_steps"].values
    kept = trace.sample_stats["n_steps"].values
    print(f"  tuning, {label}: {seconds:.1f} s; gradients per chain in tuning "
          f"{' / '.join(f'{n:,}' for n in warm.sum(axis=1))}; per step of the first 100 "
          f"{warm[:, :100].mean():.0f}; per draw after tuning {kept.mean():.1f}", flush=True)


def stopping(target, seeds, settings) -> None:
    """The whitened density sampled as ``fit`` samples it, at each ``tune/target_accept``
    of ``settings`` and each seed."""
    from bayeschain.inference.walk.sampler import sample

    for seed in seeds:
        for setting in settings:
            tune, accept = setting.split("/")
            start = time.perf_counter()
            _, stats = sample(target, draws=4000, tune=int(tune), seed=seed, min_ess=400,
                              target_accept=float(accept))
            steps = stats["n_steps"].values
            print(f"  tune {tune}, target_accept {accept}, seed {seed}: "
                  f"{time.perf_counter() - start:.1f} s, {steps.shape[1]:,} draws per chain, "
                  f"{steps.mean():.1f} gradients per draw, "
                  f"{int(stats['diverging'].values.sum())} divergences"
                  + (f" ({stats.attrs['resampled']})" if "resampled" in stats.attrs else ""),
                  flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", nargs="+", default=["wscd"], choices=sorted(LOGS))
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--parts", nargs="+", default=["point", "tuning"],
                        choices=["point", "tuning", "accept"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[2026, 1])
    parser.add_argument("--settings", nargs="+", default=["500/0.9", "500/0.8"],
                        help="tuning steps / target_accept of --parts accept")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    for name in shared_logs(args.logs):
        model = document_walk(load_log(name).split(0.25, seed=0)[0])
        print(f"{name}: {model.data.report['pages']:,} training pages, {model.ndim} "
              f"coordinates", flush=True)
        if "point" in args.parts:
            point(model, "as before")
        target = point(model, "now")
        print(f"  the density's precision at the point: eigenvalues "
              f"{np.linalg.eigvalsh(target.precision).min():.3g} to "
              f"{np.linalg.eigvalsh(target.precision).max():,.0f}", flush=True)
        if "tuning" in args.parts:
            tuning(target, "the walk's coordinates", args.tune, args.draws)
            tuning(target.whitened(), "whitened", args.tune, args.draws)
        if "accept" in args.parts:
            stopping(target.whitened(), args.seeds, args.settings)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
