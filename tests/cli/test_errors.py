"""Every command: a missing file, a malformed file, a wrong measure name and an impossible
parameter give a one-line error, a non-zero exit status and no partial output file.  The
cases run through ``main`` in this process (22 child processes cost about 29 s of CPU),
and one through ``python -m bayeschain`` as a user's shell runs it."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.helpers import FAST_SPEC

ROOT = Path(__file__).resolve().parents[2]
TREC = ROOT / "data" / "trec_eval"
LOG = ROOT / "data" / "trec_session_2013" / "sessiontrack2013.xml.gz"


@pytest.fixture(scope="module")
def posterior(tmp_path_factory):
    pytest.importorskip("h5netcdf")
    folder = tmp_path_factory.mktemp("post")
    path, spec = folder / "post.nc", folder / "fast.toml"
    spec.write_text(FAST_SPEC.format(draws=50, tune=50))       # a real fit, a short one
    proc = subprocess.run([sys.executable, "-m", "bayeschain", "fit", str(LOG), "--spec",
                           str(spec), "-o", str(path), "--quiet"], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    return path


def run(*args):
    return subprocess.run([sys.executable, "-m", "bayeschain", *map(str, args)],
                          capture_output=True, text=True)


def cases(tmp, post):
    bad_run = tmp / "bad.run"
    bad_run.write_text("301 Q0 D1 1 high STANDARD\n")
    bad_log = tmp / "bad.log"
    bad_log.write_text("0\t0\tQ\t7\t0.0\tu1\n0\tsoon\tC\tu1\n")
    qrels, good, other = TREC / "qrels.test", TREC / "results.test", TREC / "results.trunc"
    out = tmp / "out.file"
    return [
        # (arguments, expected message, output that must not appear)
        (["eval", qrels, tmp / "missing.run", "-o", out], "No such file", out),
        (["eval", qrels, bad_run, "-o", out], "bad.run:1:", out),
        (["eval", qrels, good, "-m", "Nope", "-o", out], "unknown measure 'Nope'", out),
        (["eval", qrels, good, "-m", "RBP(p=3)", "-o", out], "persistence", out),
        (["stats", tmp / "missing.log"], "No such file", None),
        (["stats", bad_log], "bad.log:2:", None),
        (["fit", tmp / "missing.log", "-o", tmp / "p.nc"], "No such file", tmp / "p.nc"),
        (["fit", bad_log, "-o", tmp / "p.nc"], "bad.log:2:", tmp / "p.nc"),
        (["fit", LOG, "--spec", "nope", "-o", tmp / "p.nc"], "unknown model spec", tmp / "p.nc"),
        (["score", qrels, good, "--posterior", tmp / "missing.nc", "-o", tmp / "s.csv"],
         "No such file", tmp / "s.csv"),
        (["score", qrels, bad_run, "--posterior", post, "-o", tmp / "s.csv"], "bad.run:1:",
         tmp / "s.csv"),
        (["score", qrels, good, "--posterior", post, "-m", "Nope", "-o", tmp / "s.csv"],
         "unknown measure", tmp / "s.csv"),
        (["score", qrels, good, "--posterior", post, "-m", "PatH(model='sfbm', p=0.5)",
          "-o", tmp / "s.csv"], "come from the posterior", tmp / "s.csv"),
        (["compare", qrels, good, tmp / "missing.run", "--posterior", post, "-o",
          tmp / "c.md"], "No such file", tmp / "c.md"),
        (["compare", qrels, good, other, "--posterior", post, "-m", "Nope", "-o",
          tmp / "c.md"], "unknown measure", tmp / "c.md"),
        (["compare", qrels, good, bad_run, "--posterior", post, "-o", tmp / "c.md"],
         "bad.run:1:", tmp / "c.md"),
        (["compare", qrels, good, other, "--posterior", post, "--rope", "-1", "-o",
          tmp / "c.md"], "rope", tmp / "c.md"),
        (["demo", "--toy", "--data", tmp / "nowhere"], "No such file", None),
        (["simulate", "-o", tmp / "log.xml"], "extension", tmp / "log.xml"),
        (["simulate", "-o", tmp / "log.csv", "--sessions", "0"], "positive", tmp / "log.csv"),
        (["simulate", "-o", tmp / "log.csv", "--forward", "0.9", "--backward", "0.3"],
         "p + q + r <= 1", tmp / "log.csv"),
        (["demo", "--data", tmp / "nowhere", "--out", tmp / "demo"], "No such file",
         tmp / "demo" / "comparisons.csv"),
    ]


def test_user_mistakes_are_one_line_errors(tmp_path, posterior, capsys):
    from bayeschain.cli import main

    for args, message, output in cases(tmp_path, posterior):
        code = main([str(a) for a in args])
        err = capsys.readouterr().err.strip()
        assert code != 0, args
        assert message in err, (args, err)
        assert err.count("\n") == 0, (args, err)
        assert "Traceback" not in err
        if output is not None:
            assert not Path(output).exists(), args


def test_a_user_mistake_in_a_fresh_process_is_one_line(tmp_path, posterior):
    args, message, output = next(case for case in cases(tmp_path, posterior)
                                 if case[0][0] == "score" and case[1] == "bad.run:1:")
    proc = run(*args)
    assert proc.returncode == 2, args
    err = proc.stderr.strip()
    assert message in err and err.count("\n") == 0 and "Traceback" not in err, err
    assert not Path(output).exists()
