"""``bayeschain stats`` on the bundled log, its figures, and its errors."""

import subprocess
import sys
from pathlib import Path

from bayeschain.cli import main

LOG = Path(__file__).resolve().parents[1] / "data" / "trec_session_2013" / \
    "sessiontrack2013.xml.gz"


def test_summary_and_figures(tmp_path, capsys):
    assert main(["stats", str(LOG), "--figures", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "sessions 133   pages 401   clicks 586" in out
    assert "backward transitions: 12.2%" in out
    assert "dwell seconds" in out
    for name in ("clicks_per_rank.png", "transitions.png", "dwell.png"):
        assert (tmp_path / name).stat().st_size > 5_000
    assert main(["stats", str(LOG), "--figures", str(tmp_path)]) == 2   # no overwrite
    assert "exists" in capsys.readouterr().err


def test_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.log"
    bad.write_text("0\t0\tQ\t7\t0.0\tu1\n0\tnoon\tC\tu1\n")
    for args, message in (([str(tmp_path / "missing")], "No such file"),
                          ([str(bad)], "bad.log:2: time must be a number"),
                          ([str(bad), "--format", "canonical"], "extension")):
        proc = subprocess.run([sys.executable, "-m", "bayeschain", "stats", *args],
                              capture_output=True, text=True)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert proc.stderr.strip().count("\n") == 0


def test_simulate_then_stats(tmp_path, capsys):
    out = tmp_path / "log.parquet"
    assert main(["simulate", "-o", str(out), "--sessions", "500", "--seed", "1"]) == 0
    assert "500 sessions" in capsys.readouterr().out
    assert main(["stats", str(out)]) == 0
    assert "sessions 500" in capsys.readouterr().out
    assert main(["simulate", "-o", str(out)]) == 2               # never overwrites
    assert "exists" in capsys.readouterr().err
