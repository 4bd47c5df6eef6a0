"""Where the documents' Laplace route (``[examination] documents = "mode"``) stands on a
log: the maximum of the exact Laplace marginal, and how the density the route samples
bends there against that marginal.

    python3 benchmarks/bench_laplace_point.py [--logs clara2 wscd] [--iterations 40]
        [--directions 2]

For each log (CLARA2 and WSCD from the shared samples, skipped when absent; the pages and
model of the default spec with ``documents = "mode"``: clicks per document, 10
impressions, every document by its standardised deviation), in process:

1. **The point.** From the sampler's start (seed 2026), Newton steps on the exact Laplace
   marginal of the sampled coordinates, ``F(theta) = log p(y, z_hat(theta), theta) - 1/2
   log det A_zz``: at each point the documents' mode afresh
   (:func:`~bayeschain.inference.walk.laplace.marginal`), the step
   :func:`~bayeschain.inference.walk.laplace.newton_step` takes (the Schur complement
   ``S = A_tt + A_tz R`` for the Hessian, its eigenvalues' absolute values, at most 1 on
   any coordinate, halved until ``F`` rises). Printed per iteration: time, ``F``,
   ``grad . step`` (the Newton decrement, of the step before it is cut to 1) and ``S``'s
   smallest eigenvalue.
2. **The bend.** At the last point, along the ``--directions`` eigenvectors of ``S`` with
   the smallest eigenvalues: ``F``'s second difference (steps 0.05 and 0.1, the documents
   at their mode at each end) beside ``-S``'s, which is the curvature of the density the
   route samples there but for the determinant's curvature along the trend of
   attractiveness (:class:`~bayeschain.inference.walk.documents.DocumentsAtMode`).
   Where they differ in sign, the sampled density bends up where the marginal bends down.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from click_model_peers import document_walk, load_log, shared_logs  # noqa: E402

from bayeschain.inference.walk import laplace  # noqa: E402
from bayeschain.inference.walk.documents import (  # noqa: E402
    document_layout,
    sampled_coordinates,
)


def newton(model, layout, free, iterations, out):
    """Newton steps on the exact Laplace marginal from the sampler's start
    (:func:`~bayeschain.inference.walk.laplace.newton_step`)."""
    theta = model.initial_point(np.random.default_rng(2026))
    value, theta, calls = laplace.marginal(model, theta, layout)
    start = time.perf_counter()
    for it in range(iterations):
        moved, new, at, decrement, more = laplace.newton_step(model, theta, value, layout,
                                                              free)
        calls += more
        print(f"  {time.perf_counter() - start:6.1f} s  iteration {it:2d}  F {value:.3f}  "
              f"grad.step {decrement:.3g}  smallest eigenvalue of S "
              f"{np.linalg.eigvalsh(at.schur).min():.3g}  ({calls} gradients)", file=out,
              flush=True)
        if decrement < 1e-3 or moved is theta:
            break
        theta, value = moved, new
    return theta, value


def bend(model, layout, free, theta, value, directions, out):
    at = laplace.second_order(model, theta, layout, free)
    vals, vecs = np.linalg.eigh(at.schur)
    for k in range(directions):
        v = vecs[:, k]
        named = ", ".join(f"{i}: {v[i]:+.2f}" for i in np.argsort(-np.abs(v))[:4])
        print(f"  direction {k} (its largest entries by sampled coordinate: {named})", file=out)
        for eps in (0.05, 0.1):
            ends = []
            for s in (eps, -eps):
                moved = theta.copy()
                moved[free] += s * v
                moved[layout.index] += s * (at.response @ v)
                ends.append(laplace.marginal(model, moved, layout)[0])
            print(f"    step {eps}: F'' {(ends[0] - 2 * value + ends[1]) / eps**2:9.2f}   "
                  f"the sampled density's (-S) {-vals[k]:9.2f}", file=out, flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", nargs="+", default=["clara2", "wscd"],
                        choices=["clara2", "wscd"])
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--directions", type=int, default=2)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    for name in shared_logs(args.logs):
        model = document_walk(load_log(name))
        layout, free = document_layout(model), sampled_coordinates(model)
        print(f"{name}: {model.ndim} coordinates, {free.size} sampled, {layout.index.size} "
              f"documents integrated out, up to {layout.n_places} a query", flush=True)
        theta, value = newton(model, layout, free, args.iterations, sys.stdout)
        bend(model, layout, free, theta, value, args.directions, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
