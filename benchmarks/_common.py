"""Helpers shared by the benchmark scripts: timing and a machine description."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best wall time of ``repeat`` calls (seconds)."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def machine() -> str:
    import numpy as np

    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, NumPy {np.__version__}")


def table(rows: list[tuple], header: tuple) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    line = " | ".join(f"{h:<{w}}" for h, w in zip(header, widths, strict=True))
    out = [f"| {line} |", "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for r in rows:
        out.append("| " + " | ".join(f"{str(x):<{w}}" for x, w in zip(r, widths, strict=True))
                   + " |")
    return "\n".join(out)
