"""Rank R-hat and bulk ESS of many quantities at once, against ArviZ (the peer).

    python3 benchmarks/bench_diagnostics.py [--quantities 1346 41073] [--draws 1200]
        [--arviz-up-to 50000]

A fit with attractiveness per document whose documents NUTS samples (``documents =
"sampled"``, or ``"auto"`` where they are many beside the log's impressions) checks every
document's R-hat and ESS while it samples, several times (``inference.walk.sampler``:
WSCD has 1,346 documents, CLARA2 41,073).  For 2 chains of ``--draws`` draws of ``Q``
quantities (autocorrelated, AR(1) with coefficients from -0.5 to 0.95, some tied), times
``bayeschain.posterior.diagnostics.rhat_and_ess`` and, in the same run, ArviZ's
``az.rhat(method="rank")`` and ``az.ess(method="bulk")`` on the same array (only up to
``--arviz-up-to`` quantities), and checks that they agree (largest relative difference).
Best of 3 (1 for more than 10,000 quantities).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402


def draws(chains: int, n: int, q: int, seed: int = 0) -> np.ndarray:
    """``(chains, n, q)`` AR(1) draws, coefficients spread over the quantities, every 7th
    quantity rounded (ties)."""
    rng = np.random.default_rng(seed)
    phi = np.linspace(-0.5, 0.95, q)
    x = np.empty((chains, n, q))
    x[:, 0] = rng.standard_normal((chains, q))
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + rng.standard_normal((chains, q))
    x[:, :, ::7] = np.round(x[:, :, ::7] * 2) / 2
    return x


def timed(fn, repeat: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quantities", type=int, nargs="+", default=[1346, 41073])
    p.add_argument("--draws", type=int, default=1200, help="per chain")
    p.add_argument("--arviz-up-to", type=int, default=50000)
    args = p.parse_args()
    import arviz as az

    from bayeschain.posterior.diagnostics import rhat_and_ess

    rhat_and_ess(draws(2, 50, 10))                 # imports and first calls
    print(f"{machine()}, ArviZ {az.__version__}")
    rows = []
    for q in args.quantities:
        x = draws(2, args.draws, q)
        repeat = 1 if q > 10_000 else 3
        ours, (rhat, ess) = timed(lambda x=x: rhat_and_ess(x), repeat)
        if q <= args.arviz_up_to:
            data = az.convert_to_dataset({"x": x})
            peer, (r_az, e_az) = timed(lambda d=data: (az.rhat(d, method="rank")["x"].values,
                                                       az.ess(d, method="bulk")["x"].values),
                                       repeat)
            diff = max(float(np.nanmax(np.abs(rhat / r_az - 1))),
                       float(np.nanmax(np.abs(ess / e_az - 1))))
            rows.append((f"{q:,}", f"2 x {args.draws:,}", f"{ours:.2f}", f"{peer:.2f}",
                         f"{peer / ours:.1f}x", f"{diff:.1e}"))
        else:
            rows.append((f"{q:,}", f"2 x {args.draws:,}", f"{ours:.2f}", "-", "-", "-"))
        print(rows[-1], flush=True)
    print(table(rows, ("quantities", "draws", "bayeschain s", "ArviZ s", "speed-up",
                       "largest rel. difference")))


if __name__ == "__main__":
    main()
