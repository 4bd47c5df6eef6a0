"""Reproduce Figure 1 of Ferrante & Ferro (ICTIR 2020): CDFs of P@H for the runs
r = [1 0 0 1 0 0 1 0 0 1] and s = [0 1 1 1 1 0 0 0 0 0] under the four browsing models,
with order 1 (dashed) and order 2 (dotted).

    python3 notebooks/figure1_path_cdfs.py [OUTPUT.png]

Panels (a)-(c) are exact (joint law of (T(H), H)); panel (d) has a 25% utility loss on a
random walk, which makes the reward depend on visit counts, so its CDF and order 1 come
from 100,000 simulated users (as in the paper) while order 2 stays exact.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from bayeschain.measures import path_distribution, path_expectation  # noqa: E402
from bayeschain.plots import plot_path_cdfs  # noqa: E402

RUNS = {"r": np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1.0]),
        "s": np.array([0, 1, 1, 1, 1, 0, 0, 0, 0, 0.0])}
PANELS = [
    ("(a) DFBM à la Precision", "dfbm", {}),
    ("(b) SFBM à la AP", "ap", {}),
    ("(c) SFBM à la RBP, p = 0.5", "sfbm", {"p": 0.5}),
    ("(d) RWBM p=.5 q=.25, 25% utility loss", "rwbm",
     {"p": 0.5, "q": 0.25, "p1": 0.75, "loss": 0.25}),
]


def main(out: Path) -> Path:
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    for ax, (title, model, params) in zip(axes, PANELS, strict=True):
        laws = [path_distribution(rel, model, users=100_000, seed=2020, **params)
                for rel in RUNS.values()]
        o1 = [law.mean() for law in laws]
        o2 = [float(path_expectation(rel, model, order=2, **params)) for rel in RUNS.values()]
        labels = [f"{name}: order1 {a:.2f}, order2 {b:.2f}"
                  for name, a, b in zip(RUNS, o1, o2, strict=True)]
        plot_path_cdfs(ax, laws, labels, order1=o1, order2=o2, title=title)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name(
        "figures") / "ictir2020_figure1.png"
    print(f"wrote {main(target)}")
