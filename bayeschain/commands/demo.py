"""``bayeschain demo --toy``: the exact engine on the paper's example, checked by simulation.

Scores the two runs of Section 5.2 of Ferrante & Ferro (ICTIR 2020) under the paper's
browsing models of Figure 1 and prints, for each, the exact expectations next to a
Monte-Carlo estimate.  Without ``--toy``, ``bayeschain demo`` runs the real-data pipeline of
:mod:`bayeschain.commands.session_demo`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import FormatError

if TYPE_CHECKING:  # NumPy loads when the demo runs, not for --help
    import numpy as np

    from ..chains import Tridiagonal

EXAMPLE = Path("examples") / "ictir2020_section5.tsv"


def bundled_data_dir() -> Path:
    """The ``data/`` folder next to the package (present in a source checkout)."""
    return Path(__file__).resolve().parents[2] / "data"


def read_relevance_table(path: Path) -> dict[str, np.ndarray]:
    """Read ``name<TAB>r1 r2 ... rN`` lines (``#`` comments allowed)."""
    import numpy as np

    runs: dict[str, np.ndarray] = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = text.split("\t")
            if len(parts) != 2:
                raise FormatError("expected 'run<TAB>relevance values'", file=path, line=lineno)
            try:
                runs[parts[0]] = np.array([float(v) for v in parts[1].split()])
            except ValueError:
                raise FormatError("relevance values must be numbers", file=path,
                                  line=lineno) from None
    if not runs:
        raise FormatError("no runs found", file=path)
    return runs


def walk(n: int, forward: float, backward: float, first_forward: float,
         last_backward: float) -> Tridiagonal:
    """A constant walk with the boundary rows of the paper's Section 3 matrix."""
    import numpy as np

    from ..chains import Tridiagonal

    upper = np.full(n, forward)
    lower = np.full(n, backward)
    upper[0], upper[-1] = first_forward, 0.0
    lower[0], lower[-1] = 0.0, last_backward
    return Tridiagonal(lower, np.zeros(n), upper)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .session_demo import add_arguments as session_arguments

    session_arguments(p)
    p.add_argument("--users", type=int, default=100_000,
                   help="--toy: simulated users for the Monte-Carlo check (default 100000)")


def run(args: argparse.Namespace) -> int:
    """``--toy``: the engine on the paper's toy runs; otherwise the real-data demo."""
    if getattr(args, "toy", False):
        return run_toy(args)
    from .session_demo import run as run_session_demo

    return run_session_demo(args)


def run_toy(args: argparse.Namespace) -> int:
    import numpy as np

    from ..chains import (
        expected_ratio,
        expected_reward,
        expected_stopping_time,
        geometric_loss_reward,
    )
    from ..simulate import simulate_users

    data = Path(args.data) if args.data else bundled_data_dir()
    runs = read_relevance_table(data / EXAMPLE)
    n = len(next(iter(runs.values())))
    models = [
        ("DFBM (Precision)", walk(n, 1.0, 0.0, 1.0, 0.0), 0.0),
        ("SFBM p=0.5 (RBP)", walk(n, 0.5, 0.0, 0.5, 0.0), 0.0),
        ("RWBM p=.5 q=.25", walk(n, 0.5, 0.25, 0.75, 0.25), 0.0),
        ("RWBM + 25% loss", walk(n, 0.5, 0.25, 0.75, 0.25), 0.25),
    ]
    print(f"bayeschain demo: runs of {data / EXAMPLE} under the browsing models of "
          f"Ferrante & Ferro (ICTIR 2020), Figure 1\n")
    header = (f"{'model':<20} {'run':<4} {'E[H]':>7} {'E[T(H)]':>8} {'order2':>8} "
              f"{'order1':>8} {'MC order1':>16}")
    print(header)
    print("-" * len(header))
    start = time.perf_counter()
    for label, chain, loss in models:
        e_h = float(expected_stopping_time(chain))
        for name, rel in runs.items():
            if loss:
                e_t = float(geometric_loss_reward(chain, rel, loss))
                order1 = float("nan")  # visit-dependent gains: order 1 only by simulation
            else:
                e_t = float(expected_reward(chain, rel))
                order1 = float(expected_ratio(chain, rel))
            sim = simulate_users(chain, args.users, rewards=rel, loss=loss or None,
                                 seed=args.seed).precision()
            se = sim.std() / np.sqrt(sim.size)
            o1 = "   (MC)" if np.isnan(order1) else f"{order1:8.4f}"
            print(f"{label:<20} {name:<4} {e_h:7.3f} {e_t:8.4f} {e_t / e_h:8.4f} {o1:>8} "
                  f"{sim.mean():8.4f}±{2 * se:.4f}")
    print(f"\n(exact solves and {args.users:,} simulated users per row in "
          f"{time.perf_counter() - start:.2f} s)")
    print("""
What the columns mean:
  E[H]      expected number of ranks a user visits before stopping (exact).
  E[T(H)]   expected accumulated relevance T(H) = sum of gains over visits (exact).
  order2    E[T(H)] / E[H], the P@H order <=2 (RBP's definition when the model is SFBM).
  order1    E[T(H) / H], the expected P@H (order <=1), exact by forward recursion.
  MC order1 the same expectation estimated from simulated users, +- 2 standard errors.
Under DFBM every user reads all 10 ranks: both runs score P@10 = 0.4. Under the forward and
random walks the runs separate; with utility loss, order 1 has no Markov closed form and is
estimated by simulation.""")
    return 0
