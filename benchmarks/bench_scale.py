"""From a sample to a search engine's log: the commands users run, at 10^4 .. 10^7 sessions.

    python3 benchmarks/bench_scale.py [--sizes 10000 100000 1000000 10000000]
                                      [--folder DIR] [--keep]
    python3 benchmarks/bench_scale.py --document-pairs 100000 [--sessions 1000000]
                                      [--spec walk-document-mode]

For each size, as fresh processes (the CLI as users run it), with wall time and the peak
resident memory of the command's whole process tree (sampled every 0.1 s with psutil:
Dask's worker processes count):

1. ``bayeschain simulate -o log.parquet --sessions N`` (the default walk; streamed);
2. ``bayeschain stats log.parquet --out-of-core --memory-limit 2GB`` (DuckDB);
3. ``bayeschain stats log.parquet --backend dask --workers 2`` (a local Dask cluster of
   2 worker processes): its printed statistics must equal DuckDB's line for line;
4. ``bayeschain fit log.parquet -o post.nc --quiet`` (the default spec, checks included;
   files over 32 MB are read out of core, the checks replaying 20,000 sessions), with its
   smallest bulk ESS per second.

Then the slope of each line (log time against log sessions, least squares over the sizes)
and where it lands at Baidu-ULTR's size (1.2 x 10^9 sessions).  Prints a Markdown table.

``--document-pairs P`` instead fits attractiveness per document at scale:
``bayeschain simulate --sessions N --topics P/30 --attractiveness-sd 1 --results pages``
(a session's k-th query is its topic's k-th formulation, each query showing 10 documents
of its own: about 30 (query, document) pairs per topic), then ``bayeschain fit log
--results pages -o post.nc`` with the defaults (the pairs recur, so the walk takes
attractiveness per document; the log is read into memory), reporting the pairs, the
fit's wall time and peak memory, its R-hat, bulk ESS and divergences.  ``--spec S`` fits
spec ``S`` instead (``walk-document-mode``: the documents integrated out by a Laplace
approximation, the walk sampled).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402

BAIDU_ULTR_SESSIONS = 1.2e9


def run(args: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall seconds, peak MB of the process tree, standard output.  The command's output
    goes to temporary files, not pipes: a pipe nobody reads while the command runs blocks
    it once 64 KB are written (10,000 runs scored print 0.5 MB)."""
    import psutil

    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "bayeschain", *args], cwd=cwd,
                                stdout=out_file, stderr=err_file, text=True)
        peak = 0
        root = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                tree = [root, *root.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
            except psutil.Error:
                pass
            time.sleep(0.1)
        wall = time.perf_counter() - start
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{args}: exit {proc.returncode}\n{err}")
    return wall, peak / 2**20, out


def slope(sizes, values) -> float:
    x, y = np.log10(np.asarray(sizes, float)), np.log10(np.asarray(values, float))
    return float(np.polyfit(x, y, 1)[0]) if len(x) > 1 else float("nan")


def documents(pairs: int, sessions: int, where: str | None, keep: bool,
              spec: str | None = None) -> None:
    """The per-document fit at scale (see the module docstring)."""
    import duckdb

    folder = Path(where or tempfile.mkdtemp(prefix="bench-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    log, pages, post = (folder / f"documents_{sessions}.parquet",
                        folder / f"documents_{sessions}_pages.parquet", folder / "post_doc.nc")
    try:
        for p in (log, pages, post):
            p.unlink(missing_ok=True)
        sim = run(["simulate", "-o", str(log), "--sessions", str(sessions), "--topics",
                   str(max(1, pairs // 30)), "--attractiveness-sd", "1", "--results",
                   str(pages)], folder)
        found = duckdb.connect().execute(
            f"SELECT COUNT(DISTINCT (q.query_id, r.doc_id)) FROM read_parquet('{pages}') r "
            f"JOIN read_parquet('{log}') q ON q.serp_id = r.serp_id AND q.event = 'query'"
        ).fetchone()[0]
        fit = run(["fit", str(log), "--results", str(pages), "-o", str(post),
                   *(["--spec", spec] if spec else [])], folder)
        diagnostics = re.search(r"NUTS: .*", fit[2])
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\n{machine()}\n")
    print(table([(spec or "walk (default)", f"{sessions:,}", f"{found:,}",
                  f"{sim[0]:.1f} / {sim[1]:,.0f}", f"{fit[0]:.1f} / {fit[1]:,.0f}",
                  diagnostics.group(0) if diagnostics else "(no NUTS line)")],
                ("spec", "sessions", "(query, document) pairs", "simulate s / MB", "fit s / MB",
                 "diagnostics")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+",
                    default=[10_000, 100_000, 1_000_000, 10_000_000])
    ap.add_argument("--folder", default=None, help="where the logs go (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the logs and posteriors")
    ap.add_argument("--document-pairs", type=int, default=None,
                    help="fit attractiveness per document on about this many pairs instead")
    ap.add_argument("--sessions", type=int, default=1_000_000,
                    help="sessions of the --document-pairs log")
    ap.add_argument("--spec", default=None, help="the --document-pairs fit's spec")
    a = ap.parse_args()
    if a.document_pairs:
        return documents(a.document_pairs, a.sessions, a.folder, a.keep, a.spec)
    folder = Path(a.folder or tempfile.mkdtemp(prefix="bench-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows, measured = [], {k: [] for k in ("simulate", "duckdb", "dask", "fit")}
    try:
        for n in a.sizes:
            log, post = folder / f"log_{n}.parquet", folder / f"post_{n}.nc"
            for p in (log, post):
                p.unlink(missing_ok=True)
            sim = run(["simulate", "-o", str(log), "--sessions", str(n)], folder)
            duck = run(["stats", str(log), "--out-of-core", "--memory-limit", "2GB"], folder)
            dask = run(["stats", str(log), "--backend", "dask", "--workers", "2"], folder)
            equal = duck[2].splitlines()[1:] == dask[2].splitlines()[1:]
            fit = run(["fit", str(log), "-o", str(post), "--quiet"], folder)
            ess = float(re.search(r"min bulk ESS (\d+)", fit[2]).group(1))
            sampled = "out of core" in fit[2]
            for key, m in (("simulate", sim), ("duckdb", duck), ("dask", dask), ("fit", fit)):
                measured[key].append(m[0])
            rows.append((f"{n:,}", f"{log.stat().st_size / 2**20:,.0f} MB",
                         f"{sim[0]:.1f} / {sim[1]:,.0f}", f"{duck[0]:.1f} / {duck[1]:,.0f}",
                         f"{dask[0]:.1f} / {dask[1]:,.0f}", "yes" if equal else "NO",
                         f"{fit[0]:.1f} / {fit[1]:,.0f}", f"{ess / fit[0]:.0f}",
                         "sample" if sampled else "all"))
            print(rows[-1], flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\n{machine()}\n")
    print(table(rows, ("sessions", "Parquet", "simulate s / MB", "stats DuckDB s / MB",
                       "stats Dask (2 workers) s / MB", "Dask = DuckDB", "fit s / MB",
                       "min bulk ESS / fit s", "checks on")))
    print("\nslope of log time against log sessions, and the time at Baidu-ULTR's 1.2e9 "
          "sessions on this machine, extrapolated from the two largest sizes:")
    for key, times in measured.items():
        s = slope(a.sizes, times)
        if len(times) > 1:
            k = np.log10(BAIDU_ULTR_SESSIONS / a.sizes[-1])
            tail = slope(a.sizes[-2:], times[-2:])
            at = times[-1] * 10 ** (tail * k)
            when = f"{at / 3600:.1f} h" if at >= 3600 else f"{at / 60:.0f} min"
            print(f"  {key}: slope {s:.2f} over all sizes, {tail:.2f} over the two largest; "
                  f"about {when} at 1.2e9 sessions")


if __name__ == "__main__":
    main()
