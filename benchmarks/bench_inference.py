"""Calibration, speed and real-log fits of the Bayesian layer.

    python3 benchmarks/bench_inference.py [--datasets 100] [--skip-nuts]

1. **Calibration**: over ``--datasets`` simulated logs (2,000 sessions each, 10 ranks, true
   parameters fixed), the share of true values inside the 90% credible intervals of the
   conjugate click-to-click and holding-time models (nominal 0.90; target 0.85-0.95).
   True click-to-click transition laws come exactly from the walk
   (``tests/reference/click_transitions.py``), conditioned on "not a repeat" as the model's
   categories are.
2. **Speed**: the conjugate fit of the statistics of 10^6 sessions, and a NUTS fit of the
   per-rank click-to-click + holding-time model (10 ranks, PyMC), cold (empty PyTensor
   compile cache, fresh process) and warm (same cache, fresh process).  The walk's own fits
   are timed by ``bench_click_models.py``.
3. **Real logs**: TREC Session 2013 (bundled) and CLARA2 (../shared, when present): NUTS
   divergences, the posterior share of backward click-to-click moves, per-rank holding
   rates with 95% intervals.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402

from bayeschain.inference import fit  # noqa: E402
from bayeschain.io import click_statistics, read_clicks  # noqa: E402
from bayeschain.simulate import simulate_click_log  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.inference.truth import click_transition_truth  # noqa: E402

N, P, Q, R = 10, 0.6, 0.15, 0.05
C = np.linspace(0.45, 0.2, N)
MU = np.linspace(0.02, 0.2, N)


def transition_truth() -> np.ndarray:
    """True click-to-click laws of the simulated walk (forward, backward, stop,
    reformulate), conditioned on "not a repeat"."""
    return click_transition_truth(N, P, Q, R, C)


def calibration(n_datasets: int) -> dict:
    truth = transition_truth()
    hits_t, hits_mu, total_t, total_mu = 0, 0, 0, 0
    for k in range(n_datasets):
        log = simulate_click_log(2000, n_ranks=N, forward=P, backward=Q, reformulate=R,
                                 click=C, holding_rates=MU, examine_time=0.0,
                                 max_queries=200, seed=1000 + k)
        post = fit(click_statistics(log), "clicks-conjugate", draws=1000, chains=1, seed=k)
        theta = post.transition_probabilities()
        lo = theta.quantile(0.05, dim=("chain", "draw")).values
        hi = theta.quantile(0.95, dim=("chain", "draw")).values
        free = truth > 0          # structural zeros (rank 1 backward, rank N forward) excluded
        hits_t += int(((lo <= truth) & (truth <= hi))[free].sum())
        total_t += int(free.sum())
        mu = post.holding_rates()
        lo = mu.quantile(0.05, dim=("chain", "draw")).values
        hi = mu.quantile(0.95, dim=("chain", "draw")).values
        hits_mu += int(((lo <= MU) & (MU <= hi)).sum())
        total_mu += N
    return {"transitions": hits_t / total_t, "holding": hits_mu / total_mu,
            "n_transition_params": total_t, "n_holding_params": total_mu}


NUTS_CHILD = r"""
import time, sys, warnings
warnings.simplefilter("ignore")
from bayeschain.inference import fit
from bayeschain.io import read_clicks, click_statistics
stats = click_statistics(read_clicks(sys.argv[1]))
t = time.perf_counter()
post = fit(stats, "clicks-nuts", draws=1000, chains=2)
print(f"{time.perf_counter() - t:.1f} {post.divergences()}")
"""


def nuts_timing(log_path: Path) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, PYTENSOR_FLAGS=f"compiledir={cache}")
        times = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", NUTS_CHILD, str(log_path)], env=env,
                                 capture_output=True, text=True, check=True)
            times.append(float(out.stdout.split()[-2]))
    return times[0], times[1]


def real_log_fits(skip_nuts: bool) -> list[tuple]:
    logs = {"TREC Session 2013": ROOT / "data" / "trec_session_2013" /
            "sessiontrack2013.xml.gz",
            "CLARA2": ROOT.parent / "shared" / "data" / "clara2" / "CLARA2SearchLog_beta"}
    rows = []
    for name, path in logs.items():
        if not path.exists():
            rows.append((name, "absent", "", "", ""))
            continue
        stats = click_statistics(read_clicks(path))
        post = fit(stats, "clicks-conjugate" if skip_nuts else "clicks-nuts", draws=1000,
                   chains=2)
        theta = post.transition_probabilities()
        # clicks per rank weight each rank's backward / (forward + backward) probability
        import xarray as xr

        from bayeschain.inference import model_data

        w = xr.DataArray(model_data(stats, N).transitions.sum(1), dims="rank",
                         coords={"rank": theta["rank"]})
        moves = theta.sel(category=["forward", "backward"]).sum("category")
        share = (w * theta.sel(category="backward")).sum("rank") / (w * moves).sum("rank")
        weights = int(w.sum())
        lo, hi = share.quantile([0.025, 0.975], dim=("chain", "draw")).values
        mu = post.holding_rates()
        m = mu.mean(("chain", "draw")).values
        mlo, mhi = mu.quantile([0.025, 0.975], dim=("chain", "draw")).values
        rates = "; ".join(f"{i + 1}: {m[i]:.3f} [{mlo[i]:.3f}, {mhi[i]:.3f}]" for i in range(3))
        rows.append((name, post.attrs["method"], str(post.divergences()),
                     f"{float(share.mean()):.3f} [{lo:.3f}, {hi:.3f}] ({weights:,} clicks)",
                     rates))
    return rows


def walk_truth() -> np.ndarray:
    """The simulated walk's rows per rank (forward, backward, reformulate, stop); rank 1
    has no backward move (its mass ends the session), and the last rank's forward move
    is NaN: pages of 10 results never show it (its mass leaves the page)."""
    rows = np.tile([P, Q, R, 1 - P - Q - R], (N, 1))
    rows[0] = [P, 0.0, R, 1 - P - R]
    rows[-1, 0] = np.nan
    return rows


def recovery(sessions: int) -> list[tuple]:
    """Every model on one log of ``sessions`` sessions from known parameters: how many true
    values fall inside their marginal 95% credible intervals, and inside the model's joint
    95% band (``Posterior.simultaneous_interval``: all parameters at once)."""
    log = simulate_click_log(sessions, n_ranks=N, forward=P, backward=Q, reformulate=R,
                             click=C, holding_rates=MU, examine_time=0.0, max_queries=200,
                             seed=77)
    stats = click_statistics(log)
    transitions = transition_truth()
    truths = {
        "clicks-conjugate": {"transition": transitions, "holding_rate": MU},
        "clicks-nuts": {"transition": transitions, "holding_rate": MU},
        "clicks-pooled": {"transition": transitions, "holding_rate": MU},
        "walk": {"walk": walk_truth(), "click": C},
        "dwell-lognormal": {"log_dwell_mean": -np.log(MU) - np.euler_gamma},
    }
    rows = []
    for name, truth in truths.items():
        t = time.perf_counter()
        post = fit(log if name == "walk" else stats, name, draws=1000, chains=2)
        inside = total = joint = 0
        band = post.simultaneous_interval(list(truth), 0.95)
        for var, value in truth.items():
            draws = post.posterior[var]
            lo = draws.quantile(0.025, dim=("chain", "draw")).values
            hi = draws.quantile(0.975, dim=("chain", "draw")).values
            value = np.asarray(value)
            free = (value > 0) if var in ("transition", "walk") else np.ones(value.shape, bool)
            if var == "walk":          # the last rank's forward move is not on a 10-result page
                free &= np.isfinite(value)
            ok = (lo <= value) & (value <= hi)
            inside += int(ok[free].sum())
            total += int(free.sum())
            blo, bhi = band[var]
            joint += int(((blo <= value) & (value <= bhi))[free].sum())
        rows.append((name, post.attrs["method"], f"{inside}/{total}", f"{joint}/{total}",
                     str(post.divergences()), f"{time.perf_counter() - t:.0f}"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", type=int, default=100)
    ap.add_argument("--skip-nuts", action="store_true")
    ap.add_argument("--recovery-only", action="store_true",
                    help="only the parameter-recovery table (10^5 sessions, every model)")
    args = ap.parse_args()
    if args.recovery_only:
        print(f"machine: {machine()}\n")
        print("parameter recovery, one log of 100,000 sessions (95% intervals; the log-normal "
              "model is checked against E[log T] of the exponential dwell)")
        print(table(recovery(100_000), ("spec", "method", "inside marginal 95%",
                                        "inside joint 95% band", "divergences", "seconds")))
        return
    print(f"machine: {machine()}\n")
    t = time.perf_counter()
    cal = calibration(args.datasets)
    print(f"calibration over {args.datasets} data sets ({time.perf_counter() - t:.0f} s): "
          f"90% intervals cover {cal['transitions']:.3f} of {cal['n_transition_params']:,} "
          f"transition probabilities and {cal['holding']:.3f} of "
          f"{cal['n_holding_params']:,} holding rates, all data sets together "
          f"(target 0.85-0.95)")
    log = simulate_click_log(1_000_000, n_ranks=N, forward=P, backward=Q, reformulate=R,
                             click=C, holding_rates=MU, seed=7)
    stats = click_statistics(log)
    fit(stats, "clicks-conjugate", draws=10, chains=1)        # warm imports
    t = time.perf_counter()
    post = fit(stats, "clicks-conjugate")
    conj = time.perf_counter() - t
    print(f"conjugate fit of 10^6 sessions' statistics ({post.n_draws:,} draws): "
          f"{conj * 1000:.0f} ms (target < 1 s)")
    if not args.skip_nuts:
        small = Path(tempfile.mkdtemp()) / "log.parquet"
        from bayeschain.io import write_canonical

        write_canonical(simulate_click_log(20_000, n_ranks=N, forward=P, backward=Q,
                                           reformulate=R, click=C, holding_rates=MU,
                                           seed=8), small)
        cold, warm = nuts_timing(small)
        print(f"NUTS fit, per-rank transitions + holding rates, 10 ranks, 2 x 1000 draws "
              f"after 1000 tuning: cold {cold:.1f} s, warm {warm:.1f} s (target warm < 30 s)")
    print()
    print(table(real_log_fits(args.skip_nuts), ("log", "method", "divergences",
                                                 "backward share (95%)",
                                                 "holding rates mu, ranks 1-3 (95%)")))


if __name__ == "__main__":
    main()
