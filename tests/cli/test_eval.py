"""``bayeschain eval``: formats, several runs, errors on the command line.

Values written are read back and checked against trec_eval's own printed output
(``data/trec_eval/expected``, 4 decimals)."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from bayeschain.cli import main

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"
QRELS, RUN, TRUNC = (str(DATA / n) for n in ("qrels.test", "results.test", "results.trunc"))
PRINTED = 5e-5 + 1e-9          # half a unit of trec_eval's 4th decimal


def trec_eval_output(name: str) -> dict[tuple[str, str], float]:
    """trec_eval 9.0.8's printed values: (measure, topic) -> value."""
    rows = {}
    for line in (DATA / "expected" / "v9.0.8" / name).read_text().splitlines():
        measure, topic, value = (x.strip() for x in line.split("\t"))
        if measure not in ("runid", "relstring"):
            rows[(measure, topic)] = float(value)
    return rows


def test_text_output_is_trec_eval_like(capsys):
    assert main(["eval", QRELS, RUN, "-m", "map", "-m", "P@10"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "runid                 \tall\tSTANDARD"
    assert "AP                    \tall\t0.1785" in out
    assert "P@10                  \tall\t0.3000" in out


def test_json_and_several_runs(capsys):
    assert main(["eval", QRELS, RUN, TRUNC, "-m", "AP", "-m", "P@10", "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    # both are named STANDARD: disambiguated by file name; one record per run and measure
    got = {(r["run"], r["measure"]): r["value"] for r in records}
    assert len(got) == len(records) == 4
    assert {r for r, _ in got} == {"STANDARD:results.test", "STANDARD:results.trunc"}
    assert all(r["topic"] == "all" for r in records)
    assert all(math.isfinite(v) and 0 <= v <= 1 for v in got.values())
    # trec_eval: results.test over its three topics; results.trunc, without -c, over the
    # two topics it ranks (301, 303), the mean of trec_eval's per-topic values
    full, trunc = trec_eval_output("out.test"), trec_eval_output("out.test.aqc")
    assert got[("STANDARD:results.test", "AP")] == pytest.approx(full[("map", "all")],
                                                                 abs=PRINTED)
    assert got[("STANDARD:results.test", "P@10")] == pytest.approx(full[("P_10", "all")],
                                                                   abs=PRINTED)
    for ours, theirs in (("AP", "map"), ("P@10", "P_10")):
        mean = (trunc[(theirs, "301")] + trunc[(theirs, "303")]) / 2
        assert got[("STANDARD:results.trunc", ours)] == pytest.approx(mean, abs=PRINTED)


def test_output_file_is_written_atomically_and_not_overwritten(tmp_path, capsys):
    out = tmp_path / "res.tsv"
    assert main(["eval", QRELS, RUN, "-m", "AP", "-q", "-o", str(out), "--format", "tsv"]) == 0
    first = out.read_text()
    header, *lines = first.splitlines()
    assert header == "run\ttopic\tmeasure\tvalue"
    rows = [line.split("\t") for line in lines]
    assert [(run, topic, measure) for run, topic, measure, _ in rows] == \
        [("STANDARD", t, "AP") for t in ("301", "302", "303", "all")]
    values = {topic: float(value) for _, topic, _, value in rows}
    want = trec_eval_output("out.test.aq")
    for topic, value in values.items():
        assert value == pytest.approx(want[("map", topic)], abs=PRINTED), topic
    assert values["all"] == pytest.approx(sum(values[t] for t in ("301", "302", "303")) / 3,
                                          abs=1e-6)          # the file rounds to 6 decimals
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
    assert len(values) == 4 and all(0 <= v <= 1 for v in values.values())
    assert values["AP"] == pytest.approx(trec_eval_output("out.test")[("map", "all")],
                                         abs=PRINTED)
    # with every rate equal, MPcont is MP; the constant model with recall is AP
    assert values["MPcont(model='GL_AD_ID')"] == values["MP(model='GL_AD_ID')"]
    assert values["MP(model='CONST', rescale='recall')"] == values["AP"]
    assert 0 < values["MP(model='GL_AD_ID')"] < 1
    assert main(["eval", QRELS, RUN, "-m", "MPcont"]) == 2
    assert "holding rates" in capsys.readouterr().err
    assert main(["eval", QRELS, RUN, "-m", "MPcont", "--holding-rates", "1,x"]) == 2
