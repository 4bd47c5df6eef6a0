"""``bayeschain eval`` from the command line against pytrec_eval, each a fresh process; and
the compute stage against ranx's.

    pip install ranx pytrec-eval-terrier        # peers, for this benchmark only
    python3 benchmarks/bench_trec_eval_cli.py [--repeat 5] [--runs 20 100] [--lock FILE]

Data: :func:`bench_trec_eval.make_data` (50 topics with 500 graded judgements each; run
files of 50 topics x 1,000 documents written sorted by score): 20 runs = 1,000,000 lines,
100 runs = 5,000,000 lines.

End to end, each repetition starts two fresh processes on the same files, one after the
other (their order alternates):

* ``bayeschain eval QRELS RUN...`` (the console script next to this Python; its default
  measures AP, P@10, nDCG@10, RBP(p=0.8), ERR@20; text output, written to a file);
* a Python process that parses the qrels and every run with pytrec_eval's own
  ``parse_qrel`` / ``parse_run`` (Python loops over the lines), evaluates map, P_10 and
  ndcg_cut_10 with ``RelevanceEvaluator`` run by run, and prints each run's means.

Wall time is measured around the process, CPU (user + system) and peak resident memory
by GNU ``/usr/bin/time`` (the process and its threads).  The means both print are
compared.

Compute stage (5,000,000 lines): in one process each tool parses once, then five
repetitions time everything after parsing: bayeschain ``evaluate_runs`` (ranking, the
judgements, five measures) plus the means (``aggregate``) on ``read_qrels`` /
``read_runs`` frames; ranx ``evaluate`` of map, precision@10, rbp.8, ndcg@10 on each run
(its numba kernels compiled beforehand).  Each repetition's ratio is ours / ranx's.

``--lock FILE`` holds ``flock(FILE)`` around every timed run (for a machine shared with
other benchmarks).  Before each timed run the script waits (up to ``--quiet`` seconds) until
the CPUs have been idle for half a second, and a run during which other processes used more
than 5% of the CPUs (from /proc/stat, less the run's own CPU time) is repeated (up to
``--retries`` times; the notes say when one was kept anyway).  The package's
bytecode is compiled first (``compileall``), as an install does: with
``PYTHONDONTWRITEBYTECODE`` set, edited sources would otherwise be compiled in every fresh
process.
"""

from __future__ import annotations

import argparse
import compileall
import fcntl
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402
from bench_trec_eval import MEASURES, make_data  # noqa: E402

PEER = r"""
import sys
import pytrec_eval

qrels_path, runs = sys.argv[1], sys.argv[2:]
with open(qrels_path) as fh:
    qrels = pytrec_eval.parse_qrel(fh)
evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "P_10", "ndcg_cut_10"})
for path in runs:
    with open(path) as fh:
        run = pytrec_eval.parse_run(fh)
    per_topic = evaluator.evaluate(run)
    name = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    for measure in ("map", "P_10", "ndcg_cut_10"):
        mean = sum(v[measure] for v in per_topic.values()) / len(per_topic)
        print(f"{name}\t{measure}\t{mean:.4f}")
"""

NAMES = {"map": "AP", "P_10": "P@10", "ndcg_cut_10": "nDCG@10"}
TIME = "/usr/bin/time"                                  # GNU time: CPU and peak RSS


def _cpu_jiffies() -> tuple[int, int]:
    """(total, busy) CPU time of the machine so far, in clock ticks (/proc/stat)."""
    with open("/proc/stat") as fh:
        values = [int(x) for x in fh.readline().split()[1:]]
    total = sum(values)
    return total, total - values[3] - values[4]                # less idle and iowait


def cpu_busy(interval: float = 0.5) -> float:
    """Fraction of the CPUs' time spent busy over ``interval`` seconds."""
    total0, busy0 = _cpu_jiffies()
    time.sleep(interval)
    total1, busy1 = _cpu_jiffies()
    return (busy1 - busy0) / max(total1 - total0, 1)


def quiet_run(fn, args, notes: list, what: str):
    """``fn()`` (returning a dict with its ``wall`` and ``cpu`` seconds) as a timed run:
    under ``flock(args.lock)`` when given, after the CPUs have been idle for half a second
    (waiting up to ``args.quiet`` seconds), and again (up to ``args.retries`` times) when
    other processes used more than 5% of the CPUs meanwhile, which is then noted."""
    tick = os.sysconf("SC_CLK_TCK")
    fh = open(args.lock, "a") if args.lock else None      # noqa: SIM115 (closed below)
    try:
        if fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
        for _ in range(args.retries + 1):
            start = time.monotonic()
            while cpu_busy() > 0.10 and time.monotonic() - start < args.quiet:
                pass
            total0, busy0 = _cpu_jiffies()
            result = fn()
            total1, busy1 = _cpu_jiffies()
            others = (busy1 - busy0) / tick - result["cpu"]
            if others <= 0.05 + 0.05 * result["wall"] * os.cpu_count():
                return result
        notes.append(f"{what}: other processes used {others:.2f} CPU s during the last of "
                     f"{args.retries + 1} attempts; kept")
        return result
    finally:
        if fh:
            fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()


def timed_process(cmd: list[str], out: Path) -> dict:
    """Run ``cmd`` (stdout to ``out``) under ``/usr/bin/time``: wall (around it), CPU and
    peak RSS of the process.  (``wait4`` on a child of this process would report this
    process's own resident memory: a child's peak counts its memory before ``exec``.)"""
    err_path, usage_path = out.with_suffix(".err"), out.with_suffix(".usage")
    with open(out, "wb") as fh, open(err_path, "wb") as err:
        t = time.perf_counter()
        code = subprocess.call([TIME, "-o", str(usage_path), "-f", "%U %S %M", *cmd],
                               stdout=fh, stderr=err)
        wall = time.perf_counter() - t
    if code:
        raise RuntimeError(f"{cmd[0]} failed ({code}): {err_path.read_text().strip()}")
    user, system, rss = usage_path.read_text().split()[-3:]
    return {"wall": wall, "cpu": float(user) + float(system), "rss": int(rss) / 1024}


def ours_means(path: Path) -> dict:
    means, run = {}, None
    for line in path.read_text().splitlines():
        name, topic, value = (x.strip() for x in line.split("\t"))
        if name == "runid":
            run = value
        elif topic == "all" and name != "num_q":
            means[(run, name)] = float(value)
    return means


def peer_means(path: Path) -> dict:
    rows = (line.split("\t") for line in path.read_text().splitlines())
    return {(run, NAMES[m]): float(v) for run, m, v in rows}


def spread(values) -> str:
    values = sorted(values)
    return f"{values[0]:.2f} / {statistics.median(values):.2f} / {values[-1]:.2f}"


def spread3(values) -> str:
    values = sorted(values)
    return f"{values[0]:.3f} / {statistics.median(values):.3f} / {values[-1]:.3f}"


def end_to_end(folder: Path, n_runs: int, args, notes: list) -> list[tuple]:
    qrels, runs = make_data(folder, n_runs, 50, 1000)
    lines = n_runs * 50 * 1000
    bayeschain = Path(sys.executable).with_name("bayeschain")
    ours_cmd = [str(bayeschain), "eval", str(qrels), *map(str, runs)]
    peer_cmd = [sys.executable, "-c", PEER, str(qrels), *map(str, runs)]
    got: dict[str, list] = {"bayeschain": [], "pytrec_eval": []}
    for rep in range(args.repeat):
        order = ["bayeschain", "pytrec_eval"] if rep % 2 == 0 else ["pytrec_eval", "bayeschain"]
        for tool in order:
            cmd = ours_cmd if tool == "bayeschain" else peer_cmd
            got[tool].append(quiet_run(lambda c=cmd, t=tool: timed_process(
                c, folder / f"{t}.out"), args, notes, f"{lines:,} lines, {tool}"))
    ours, peer = ours_means(folder / "bayeschain.out"), peer_means(folder / "pytrec_eval.out")
    gap = max(abs(ours[k] - v) for k, v in peer.items())
    notes.append(f"{lines:,} lines: printed means of AP, P@10, nDCG@10 differ from "
                 f"pytrec_eval's by at most {gap:.4f} (4 printed decimals)")
    ratios = [o["wall"] / p["wall"] for o, p in zip(got["bayeschain"], got["pytrec_eval"],
                                                    strict=True)]
    rows = []
    for tool, runs_ in got.items():
        rows.append((f"{lines / 1e6:g} M", tool, spread([r["wall"] for r in runs_]),
                     spread([r["cpu"] for r in runs_]),
                     f"{min(r['rss'] for r in runs_):.0f} / {max(r['rss'] for r in runs_):.0f}",
                     spread3(ratios) if tool == "bayeschain" else ""))
    print(f"  {lines:,} lines: wall bayeschain {[round(r['wall'], 3) for r in got['bayeschain']]}"
          f", pytrec_eval {[round(r['wall'], 3) for r in got['pytrec_eval']]}, ratios "
          f"{[round(r, 3) for r in ratios]}", flush=True)
    return rows


def compute_stage(folder: Path, args, notes: list) -> list[tuple]:
    from ranx import Qrels, Run, evaluate

    from bayeschain.evaluation import aggregate, evaluate_runs
    from bayeschain.io import read_qrels, read_runs

    qrels_path, run_paths = make_data(folder, 100, 50, 1000)
    metrics = ["map", "precision@10", "rbp.8", "ndcg@10"]
    evaluate(Qrels({"q": {"a": 1, "b": 0}}), Run({"q": {"a": 1.0, "b": 0.5}}), metrics)
    qrels = read_qrels(qrels_path)
    runs = dict(zip([p.stem for p in run_paths], read_runs(run_paths), strict=True))
    rq = Qrels.from_file(str(qrels_path), kind="trec")
    rr = [Run.from_file(str(p), kind="trec") for p in run_paths]
    def timed(fn):
        def run():
            cpu, t = time.process_time(), time.perf_counter()
            fn()
            return {"wall": time.perf_counter() - t, "cpu": time.process_time() - cpu}
        return run

    def bayeschain_compute():
        aggregate(evaluate_runs(qrels, runs, MEASURES))

    def ranx_compute():
        for run in rr:
            evaluate(rq, run, metrics, return_mean=False)

    ours, theirs = [], []
    for _ in range(args.repeat):
        ours.append(quiet_run(timed(bayeschain_compute), args, notes,
                              "compute, bayeschain")["wall"])
        theirs.append(quiet_run(timed(ranx_compute), args, notes, "compute, ranx")["wall"])
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    print(f"  compute: bayeschain {[round(x, 3) for x in ours]}, ranx "
          f"{[round(x, 3) for x in theirs]}, ratios {[round(r, 3) for r in ratios]}", flush=True)
    return [("bayeschain", spread3(ours), spread3(ratios)), ("ranx", spread3(theirs), "")]


def versions() -> str:
    from importlib.metadata import version

    names = ["bayeschain", "pytrec-eval-terrier", "ranx", "numpy", "pyarrow", "numba"]
    found = []
    for name in names:
        try:
            found.append(f"{name} {version(name)}")
        except Exception:  # noqa: BLE001 (a peer not installed)
            found.append(f"{name} (not installed)")
    return ", ".join(found)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--runs", type=int, nargs="+", default=[20, 100],
                    help="run files (x 50,000 lines) per end-to-end size")
    ap.add_argument("--lock", default=None, help="flock this file around every timed run")
    ap.add_argument("--quiet", type=float, default=120.0,
                    help="seconds to wait for idle CPUs before a timed run")
    ap.add_argument("--retries", type=int, default=3,
                    help="runs repeated when other processes used the CPUs meanwhile")
    ap.add_argument("--no-compute", action="store_true", help="skip the ranx comparison")
    args = ap.parse_args()
    import bayeschain

    compileall.compile_dir(str(Path(bayeschain.__file__).parent), quiet=1)
    print(f"machine: {machine()}\nversions: {versions()}\n", flush=True)
    notes: list[str] = []
    rows = []
    for n_runs in args.runs:
        with tempfile.TemporaryDirectory() as tmp:
            rows += end_to_end(Path(tmp), n_runs, args, notes)
    print("\nend to end, fresh processes (min / median / max of "
          f"{args.repeat}; ratio = bayeschain wall / pytrec_eval wall, per repetition):\n")
    print(table(rows, ("lines", "tool", "wall s", "CPU s", "peak RSS MB (min / max)",
                       "wall ratio")))
    if not args.no_compute and importlib.util.find_spec("ranx") is None:
        notes.append("compute stage skipped: its peer ranx is not installed "
                     "(pip install ranx)")
    elif not args.no_compute:
        with tempfile.TemporaryDirectory() as tmp:
            crows = compute_stage(Path(tmp), args, notes)
        print(f"\ncompute stage, 5,000,000 lines (min / median / max of {args.repeat}):\n")
        print(table(crows, ("tool", "compute s", "ratio to ranx")))
    for note in notes:
        print(f"- {note}")


if __name__ == "__main__":
    main()
