"""``bayeschain eval``: formats, several runs, errors on the command line."""

import json
import subprocess
import sys
from pathlib import Path

from bayeschain.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
QRELS, RUN, TRUNC = (str(DATA / n) for n in ("qrels.test", "results.test", "results.trunc"))


def test_text_output_is_trec_eval_like(capsys):
    assert main(["eval", QRELS, RUN, "-m", "map", "-m", "P@10"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "runid                 \tall\tSTANDARD"
    assert "AP                    \tall\t0.1785" in out
    assert "P@10                  \tall\t0.3000" in out


def test_json_and_several_runs(capsys):
    assert main(["eval", QRELS, RUN, TRUNC, "-m", "AP", "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    runs = {r["run"] for r in records}
    assert len(runs) == 2  # both are named STANDARD: disambiguated by file name
    assert all(r["topic"] == "all" for r in records)


def test_output_file_is_written_atomically_and_not_overwritten(tmp_path, capsys):
    out = tmp_path / "res.tsv"
    assert main(["eval", QRELS, RUN, "-m", "AP", "-o", str(out), "--format", "tsv"]) == 0
    first = out.read_text()
    assert first.startswith("run\ttopic\tmeasure\tvalue")
    assert main(["eval", QRELS, RUN, "-m", "P@5", "-o", str(out)]) == 2
    assert "exists" in capsys.readouterr().err
    assert out.read_text() == first
    assert main(["eval", QRELS, RUN, "-m", "AP", "-o", RUN, "--force"]) == 2
    assert "input file" in capsys.readouterr().err


def test_user_errors_are_one_line_with_status_2(tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("301 Q0 D1 1 x STANDARD\n")
    cases = [
        ([QRELS, str(tmp_path / "missing.run")], "No such file"),
        ([QRELS, str(bad)], "bad.run:1: score must be a number"),
        ([QRELS, RUN, "-m", "Nope"], "unknown measure 'Nope'"),
        ([QRELS, RUN, "-m", "RBP(p=2)"], "persistence"),
    ]
    for args, message in cases:
        proc = subprocess.run([sys.executable, "-m", "bayeschain", "eval", *args],
                              capture_output=True, text=True)
        assert proc.returncode == 2, args
        assert message in proc.stderr
        assert proc.stderr.strip().count("\n") == 0
        assert proc.stdout == ""


def test_markov_precision_on_the_command_line(capsys, tmp_path):
    rates = ",".join(["1"] * 1000)
    assert main(["eval", QRELS, RUN, "-m", "MP(model='GL_AD_ID')", "-m",
                 "MPcont(model='GL_AD_ID')", "--holding-rates", rates,
                 "-m", "MP(model='CONST', rescale='recall')", "-m", "AP"]) == 0
    out = capsys.readouterr().out
    values = {line.split("\t")[0].strip(): float(line.split("\t")[2])
              for line in out.splitlines()[1:] if not line.startswith("num_q")}
    # with every rate equal, MPcont is MP; the constant model with recall is AP
    assert values["MPcont(model='GL_AD_ID')"] == values["MP(model='GL_AD_ID')"]
    assert values["MP(model='CONST', rescale='recall')"] == values["AP"]
    assert main(["eval", QRELS, RUN, "-m", "MPcont"]) == 2
    assert "holding rates" in capsys.readouterr().err
    assert main(["eval", QRELS, RUN, "-m", "MPcont", "--holding-rates", "1,x"]) == 2
