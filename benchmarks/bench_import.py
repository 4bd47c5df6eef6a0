"""Import time of ``bayeschain`` and which heavy modules it pulls in.

    python3 benchmarks/bench_import.py
"""

import subprocess
import sys

CODE = ("import time, sys; t = time.perf_counter(); import bayeschain; "
        "dt = time.perf_counter() - t; "
        "heavy = [m for m in ('numpy', 'scipy', 'pandas', 'xarray', 'pymc', 'arviz', 'duckdb', "
        "'dask', 'matplotlib') if m in sys.modules]; print(f'{dt:.4f} {heavy}')")


def main() -> None:
    times = []
    for _ in range(7):
        out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                             check=True).stdout.split(maxsplit=1)
        times.append(float(out[0]))
    wall = []
    import time
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import bayeschain"], check=True)
        wall.append(time.perf_counter() - t)
    print(f"import bayeschain: best {min(times) * 1000:.1f} ms, median "
          f"{sorted(times)[3] * 1000:.1f} ms; heavy modules loaded: {out[1].strip()}")
    print(f"python -c 'import bayeschain' wall time (interpreter start included): "
          f"best {min(wall) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
