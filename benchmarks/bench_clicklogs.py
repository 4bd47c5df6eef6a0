"""Click-log statistics at scale: DuckDB against pandas on 10^7 click events.

    python3 benchmarks/bench_clicklogs.py [--sessions 5000000] [--keep DIR]

Writes a synthetic log (``simulate_click_log``, ids padded to the length of real ones so
the CSV exceeds 2 GB) as Parquet and CSV, then computes the sufficient statistics

* with DuckDB straight from each file (out of core, ``memory_limit=1.5GB``), and
* with pandas after loading the Parquet file into memory,

each in a fresh subprocess that reports its wall time and peak resident memory
(``VmHWM`` of /proc/self/status).  The tables of the two engines are compared.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, table  # noqa: E402

CHILD = r"""
import json, sys, time
import pandas as pd
from bayeschain.io.clickstats import click_statistics
from bayeschain.io.clickstats_pandas import statistics_pandas
from bayeschain.io.clickstats_tables import TABLES
engine, path, out, limit = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
t = time.perf_counter()
if engine == "duckdb":
    from bayeschain.io.clickstats_sql import statistics_duckdb
    from bayeschain.io.clickstats_tables import canonical as _finish
    stats = _finish(statistics_duckdb(path, memory_limit=limit, temp_directory=out + ".tmp"))
else:
    events = pd.read_parquet(path)
    stats = statistics_pandas(events)
seconds = time.perf_counter() - t
# VmHWM: this process's own peak resident memory (ru_maxrss would include the parent's,
# inherited across fork + exec)
peak = [int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")][0] / 1024
for name in TABLES:
    stats.table(name).to_parquet(f"{out}.{name}.parquet")
print(json.dumps({"seconds": seconds, "peak_mb": peak, "clicks":
                  int(stats.first_clicks["count"].sum() + stats.transitions["count"].sum())}))
"""


def write_log(folder: Path, sessions: int, chunk: int = 500_000):
    from bayeschain.simulate import simulate_click_log

    parquet, csv = folder / "log.parquet", folder / "log.csv"
    writer = None
    csv_sink = pa.OSFile(str(csv), "wb")
    csv_writer = None
    clicks = 0
    offset = 0
    for start in range(0, sessions, chunk):
        n = min(chunk, sessions - start)
        log = simulate_click_log(n, click=0.55, forward=0.7, backward=0.15, seed=start)
        ev = log.events
        clicks += int((ev["event"] == "click").sum())
        serp = ev["serp_id"].astype("int64") + offset
        offset = int(serp.max()) + 1
        ev = ev.assign(
            session_id="session-" + (ev["session_id"].astype("int64") + start)
            .astype(str).str.zfill(12),
            serp_id=serp,
            query_id="query " + ev["query_id"].astype(str) + " how to evaluate search",
            doc_id=ev["doc_id"].where(ev["doc_id"].isna(), "clueweb12-0000tw-"
                                      + serp.astype(str).str.zfill(9) + "-"
                                      + ev["rank"].astype(str)),
            seq=ev["seq"] + start * 100)
        table_ = pa.Table.from_pandas(ev, preserve_index=False)
        if writer is None:
            writer = pq.ParquetWriter(str(parquet), table_.schema)
            csv_writer = pacsv.CSVWriter(csv_sink, table_.schema)
        writer.write_table(table_)
        csv_writer.write_table(table_)
    writer.close()
    csv_writer.close()
    csv_sink.close()
    return parquet, csv, clicks


def run_child(engine: str, path: Path, out: Path, memory_limit: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, engine, str(path), str(out),
                           memory_limit],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=5_000_000)
    ap.add_argument("--keep", default=None, help="folder for the generated files")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse log.parquet / log.csv already in --keep")
    ap.add_argument("--memory-limit", default="1.5GB",
                    help="DuckDB memory_limit (default 1.5GB)")
    args = ap.parse_args()
    print(f"machine: {machine()}")
    folder = Path(args.keep or tempfile.mkdtemp(prefix="bayeschain-clicks-"))
    folder.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    if args.reuse and (folder / "log.parquet").exists() and (folder / "log.csv").exists():
        parquet, csv = folder / "log.parquet", folder / "log.csv"
        clicks = int(pq.read_table(str(parquet), columns=["event"])["event"].to_pandas()
                     .eq("click").sum())
    else:
        parquet, csv, clicks = write_log(folder, args.sessions)
    rows = pq.ParquetFile(str(parquet)).metadata.num_rows
    print(f"wrote {rows:,} events ({clicks:,} clicks): Parquet "
          f"{parquet.stat().st_size / 1e9:.2f} GB, CSV {csv.stat().st_size / 1e9:.2f} GB "
          f"({time.perf_counter() - t:.0f} s)\n")
    results = {}
    for engine, path in (("duckdb", csv), ("duckdb", parquet), ("pandas", parquet)):
        key = f"{engine} ({path.suffix[1:]})"
        results[key] = run_child(engine, path, folder / key.replace(" ", "_"),
                                 args.memory_limit)
    print(table([(k, f"{v['seconds']:.1f}", f"{v['peak_mb']:,.0f}") for k, v in results.items()],
                ("engine (input)", "seconds", "peak MB")))
    ratio = results["pandas (parquet)"]["seconds"] / results["duckdb (parquet)"]["seconds"]
    ratio_csv = results["pandas (parquet)"]["seconds"] / results["duckdb (csv)"]["seconds"]
    print(f"\nDuckDB is {ratio:.1f}x faster than pandas on Parquet, {ratio_csv:.1f}x reading the "
          f"CSV (target >= 3x); DuckDB peak memory on the "
          f"{csv.stat().st_size / 1e9:.1f} GB CSV: {results['duckdb (csv)']['peak_mb']:,.0f} MB "
          f"(target < 2,000)")
    import pandas as pd

    same = True
    for n in ("transitions", "last_clicks", "first_clicks", "dwell", "pages"):
        a = pd.read_parquet(folder / f"duckdb_(csv).{n}.parquet")
        b = pd.read_parquet(folder / f"pandas_(parquet).{n}.parquet")
        same &= a.shape == b.shape and bool(np.allclose(
            a.select_dtypes("number"), b.select_dtypes("number"), rtol=1e-9))
    print(f"tables identical across engines: {same}")


if __name__ == "__main__":
    main()
