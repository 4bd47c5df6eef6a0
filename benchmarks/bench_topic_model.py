"""Simulation-based calibration of the topic model (``bayeschain.comparison.topic_model``).

    python3 benchmarks/bench_topic_model.py [--collections 100 --systems 4 --topics 30]

For each of ``--collections`` simulated collections: parameters drawn from the model's
prior, scores simulated by a NumPy zero-one-inflated Beta simulator written here (not the
code under test), the model fitted by NUTS (nutpie; compiled once, refitted with new data),
and for every quantity the rank of the truth among the posterior draws and whether the
central 90% interval holds it.  The quantity compared by ``compare`` is each system's
population mean score ``m_s``; its truth is computed here by Monte Carlo over 200,000 new
topics.  Calibrated intervals cover 90% (target 85-95%); SBC ranks are uniform (chi-square
p-value over 10 bins).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402

from bayeschain.comparison.topics import TopicModel, population_means  # noqa: E402


def expit(x):
    return 1.0 / (1.0 + np.exp(-x))


def prior_draw(rng, systems, topics):
    """The model's priors (bayeschain/comparison/topics.py docstring), drawn with NumPy."""
    return {"alpha": rng.normal(0, 1.5), "zeta": rng.normal(-2, 1.5),
            "eta": rng.normal(-4, 1.5), "log_phi": rng.normal(np.log(10), 1),
            "tau_system": abs(rng.normal(0, 0.5)), "tau_topic": abs(rng.normal(0, 1)),
            "tau_topic_zero": abs(rng.normal(0, 1)), "z_system": rng.normal(0, 1, systems),
            "system_zero": rng.normal(0, 1, systems), "z_topic": rng.normal(0, 1, topics),
            "z_topic_zero": rng.normal(0, 1, topics)}


def simulate(rng, th):
    """Scores of every system on every topic from the zero-one-inflated Beta model."""
    a = th["tau_system"] * th["z_system"][:, None]
    b = th["tau_topic"] * th["z_topic"][None, :]
    c = th["tau_topic_zero"] * th["z_topic_zero"][None, :]
    mu = expit(th["alpha"] + a + b)
    pi0 = expit(th["zeta"] + th["system_zero"][:, None] + c)
    pi1 = expit(th["eta"])
    phi = np.exp(th["log_phi"])
    u = rng.random(mu.shape)
    beta = rng.beta(np.maximum(mu * phi, 1e-300), np.maximum((1 - mu) * phi, 1e-300))
    x = np.where(u < pi0, 0.0, np.where(rng.random(mu.shape) < pi1, 1.0, beta))
    return np.clip(x, 0.0, 1.0)


def true_means(rng, th, n=200_000):
    """m_s by Monte Carlo over new topics (independent of population_means)."""
    b = th["tau_topic"] * rng.normal(size=n)
    c = th["tau_topic_zero"] * rng.normal(size=n)
    a = th["tau_system"] * th["z_system"]
    mu = expit(th["alpha"] + a[:, None] + b[None, :])
    pi0 = expit(th["zeta"] + th["system_zero"][:, None] + c[None, :])
    pi1 = expit(th["eta"])
    return np.mean((1 - pi0) * (pi1 + (1 - pi1) * mu), axis=1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--collections", type=int, default=100)
    ap.add_argument("--systems", type=int, default=4)
    ap.add_argument("--topics", type=int, default=30)
    ap.add_argument("--draws", type=int, default=1000)
    args = ap.parse_args()
    rng = np.random.default_rng(2026)
    t0 = time.perf_counter()
    model = TopicModel(args.systems, args.topics)
    compile_s = time.perf_counter() - t0
    names = ["m_s (population mean)", "alpha", "log_phi", "tau_topic", "zeta"]
    inside = {k: [] for k in names}
    ranks = {k: [] for k in names}
    divergences = 0
    t0 = time.perf_counter()
    for c in range(args.collections):
        th = prior_draw(rng, args.systems, args.topics)
        x = simulate(rng, th)
        post = model.sample(x, draws=args.draws // 2, tune=1000, chains=2, seed=c)
        divergences += post.pop("divergences")
        m = population_means(post, 1.0)
        pairs = [("m_s (population mean)", m, true_means(rng, th))] + \
            [(k, post[k][:, None], np.array([th[k]])) for k in names[1:]]
        for name, samples, truth in pairs:
            lo, hi = np.quantile(samples, [0.05, 0.95], axis=0)
            inside[name].extend(((truth >= lo) & (truth <= hi)).tolist())
            ranks[name].extend(np.mean(samples < truth, axis=0).tolist())
        if (c + 1) % 10 == 0:
            print(f"  {c + 1} collections, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    rows = []
    for name in names:
        r = np.asarray(ranks[name])
        counts = np.bincount(np.minimum((r * 10).astype(int), 9), minlength=10)
        p = stats.chisquare(counts).pvalue
        rows.append((name, len(inside[name]), f"{np.mean(inside[name]):.3f}", f"{p:.2f}"))
    print(machine())
    print(f"{args.collections} collections of {args.systems} systems x {args.topics} "
          f"topics; 2 chains x {args.draws // 2} draws after 1,000 tuning steps; compile "
          f"{compile_s:.1f} s, fits {time.perf_counter() - t0:.0f} s, {divergences} "
          f"divergences in all\n")
    print(table(rows, ("quantity", "intervals", "90% coverage", "SBC rank chi2 p")))


if __name__ == "__main__":
    main()
