"""What a command spends after its work is done: Python's teardown, with and without
``gc.freeze()`` (``bayeschain.cli.program``).

    python3 benchmarks/bench_exit.py [--repeat 3]

Runs ``bayeschain fit`` on the bundled TREC Session 2013 log (100 tuning steps, 100
draws: the command imports what every fit imports) as a fresh process, alternately
through ``bayeschain.cli.main`` with the interpreter's usual teardown (the peer: what
``python -m bayeschain`` ran before) and through ``bayeschain.cli.program`` (what the
console script and ``python -m bayeschain`` run now).  An ``atexit`` handler registered
first (so run last) prints the monotonic clock; this script reads the clock again when
the process has ended.  The difference is the teardown after every ``atexit`` handler:
the seconds a user waits for the prompt after the last line of output.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "data" / "trec_session_2013" / "sessiontrack2013.xml.gz"

CODE = """
import atexit, sys, time
atexit.register(lambda: sys.stderr.write(f"\\nEXIT-HANDLERS-DONE {{time.perf_counter()!r}}\\n"))
from bayeschain.cli import {entry}
sys.argv[0] = "bayeschain"
sys.exit({entry}())
"""


def run(entry: str, out: Path) -> tuple[float, float]:
    """(the whole process, its teardown after the ``atexit`` handlers), seconds."""
    args = ["fit", str(LOG), "--tune", "100", "--draws", "100", "-o", str(out), "--quiet",
            "--force"]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CODE.format(entry=entry), *args],
                          cwd=ROOT, capture_output=True, text=True)
    end = time.perf_counter()
    if done.returncode != 0:
        raise SystemExit(f"{entry} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    mark = [line for line in done.stderr.splitlines() if line.startswith("EXIT-HANDLERS")]
    return end - start, end - float(mark[-1].split()[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    times: dict[str, list[tuple[float, float]]] = {"main": [], "program": []}
    with tempfile.TemporaryDirectory() as tmp:
        run("program", Path(tmp) / "warm.nc")                   # compile caches warm
        for _ in range(a.repeat):
            for entry in times:
                times[entry].append(run(entry, Path(tmp) / f"{entry}.nc"))
    print("| entry | process (s) | teardown after the atexit handlers (s) |")
    print("|---|---|---|")
    for entry, rows in times.items():
        whole = " / ".join(f"{w:.2f}" for w, _ in rows)
        tail = " / ".join(f"{t:.2f}" for _, t in rows)
        print(f"| `bayeschain.cli.{entry}` | {whole} | {tail} (median "
              f"{statistics.median(t for _, t in rows):.2f}) |")


if __name__ == "__main__":
    main()
