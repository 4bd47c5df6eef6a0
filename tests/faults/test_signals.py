"""Fault injection: SIGINT and SIGTERM delivered to a running command (``fit`` while NUTS
samples and while it saves, ``score`` while it writes, the demo while it writes its
folder), and two commands racing for one output.

Each command runs in a child process (:mod:`tests.faults.child`) that announces the
moment (a marker on its output) and holds a write half done until the signal has come.
Expected: exit status 130 (SIGINT) or 143 (SIGTERM), one line ``bayeschain CMD: error:
...``, no output, no partial or hidden temporary file, the inputs unchanged byte for byte.
"""

import signal

import pytest

from .helpers import Child, assert_one_line_error, make_inputs, snapshot

pytest.importorskip("h5netcdf")

SIGNALS = [pytest.param(signal.SIGINT, 130, "interrupted", id="SIGINT"),
           pytest.param(signal.SIGTERM, 143, "terminated", id="SIGTERM")]


@pytest.fixture
def inputs(tmp_path):
    paths = make_inputs(tmp_path / "work")
    return paths


def _interrupt(child: Child, marker: str, sig, *, delay: float = 0.0) -> tuple[int, str]:
    child.wait_for(marker)
    if delay:
        import time

        time.sleep(delay)
    child.proc.send_signal(sig)
    return child.finish()


@pytest.mark.parametrize(("sig", "status", "word"), SIGNALS)
def test_interrupt_during_sampling(inputs, sig, status, word):
    """nutpie catches KeyboardInterrupt and returns the draws made so far; fit refuses
    them: no posterior of a fraction of the draws, exit 130 / 143."""
    pytest.importorskip("nutpie")
    work = inputs["log"].parent
    before = snapshot(work)
    child = Child(["fit", inputs["log"], "--spec", inputs["slow_spec"], "-o", "post.nc",
                   "--quiet"], cwd=work, sampling=1)
    code, err = _interrupt(child, "SAMPLING", sig, delay=1.0)
    assert code == status, err
    assert_one_line_error(err, "fit", word)
    assert snapshot(work) == before          # no post.nc, no .post.*, inputs unchanged


@pytest.mark.parametrize(("sig", "status", "word"), SIGNALS)
def test_signal_during_fit_save(inputs, sig, status, word):
    """The posterior half written to its temporary file when the signal comes."""
    pytest.importorskip("nutpie")
    work = inputs["log"].parent
    before = snapshot(work)
    child = Child(["fit", inputs["log"], "--spec", inputs["spec"], "-o", "post.nc",
                   "--quiet", "--figures", "figs"], cwd=work, pause="post")
    code, err = _interrupt(child, "PAUSED .post.", sig)
    assert code == status, err
    assert_one_line_error(err, "fit", word)
    assert snapshot(work) == before          # nor the figures folder made for the run


def test_sigterm_during_save_leaves_no_temp_file(inputs):
    """SIGTERM raises (main's handler), so atomic_output's cleanup runs: the hidden
    temporary file of the posterior being written is removed."""
    work = inputs["log"].parent
    before = snapshot(work)
    child = Child(["fit", inputs["log"], "--spec", "clicks-conjugate", "--draws", "50",
                   "-o", "post.nc", "--quiet"], cwd=work, pause="post")
    child.wait_for("PAUSED .post.")
    assert any(name.startswith(".post.") for name in snapshot(work))   # half written
    child.proc.send_signal(signal.SIGTERM)
    code, err = child.finish()
    assert code == 143, err
    assert_one_line_error(err, "fit", "terminated")
    assert snapshot(work) == before


@pytest.mark.parametrize("output", ["scores.csv", "scores.nc"])
@pytest.mark.parametrize(("sig", "status", "word"), SIGNALS)
def test_signal_during_score_write(inputs, sig, status, word, output):
    work = inputs["log"].parent
    before = snapshot(work)
    child = Child(["score", inputs["qrels"], inputs["run"], "--posterior",
                   inputs["posterior"], "-o", output], cwd=work, pause="scores")
    code, err = _interrupt(child, "PAUSED .scores.", sig)
    assert code == status, err
    assert_one_line_error(err, "score", word)
    assert snapshot(work) == before


@pytest.mark.parametrize("pause", ["posterior", "comparisons", "demo"])
@pytest.mark.parametrize(("sig", "status", "word"), SIGNALS)
def test_signal_during_demo_writes(tmp_path, sig, status, word, pause):
    """The demo writes its folder as a hidden sibling and renames it at the end: a signal
    during any of its writes leaves neither the folder nor the sibling."""
    before = snapshot(tmp_path)
    child = Child(["demo", "--out", "demo-out"], cwd=tmp_path, pause=pause, fake_demo=1)
    code, err = _interrupt(child, f"PAUSED {pause}", sig)
    assert code == status, err
    assert_one_line_error(err, "demo", word)
    assert snapshot(tmp_path) == before


def test_demo_through_the_child_writes_its_folder(tmp_path):
    """The same stand-in demo, not interrupted, publishes a complete folder (so the
    tests above interrupt a run that would have written one)."""
    child = Child(["demo", "--out", "demo-out"], cwd=tmp_path, fake_demo=1)
    child.wait_for("ANALYSED")
    code, err = child.finish()
    assert code == 0, err
    assert sorted(snapshot(tmp_path)) == ["demo-out", "demo-out/comparisons.csv",
                                          "demo-out/demo.png", "demo-out/posterior.nc",
                                          "demo-out/report.html", "demo-out/scores.nc",
                                          "demo-out/scores_drwbm.nc"]


def test_concurrent_runs_never_overwrite_each_other(inputs, tmp_path):
    """Two `score -o` runs to the same file, both past the existence check and half-way
    through writing: exactly one succeeds, the other exits 2 with a one-line error, and
    the file is the winner's, whole."""
    import pandas as pd

    work = inputs["log"].parent
    lines = inputs["run"].read_text().splitlines()
    runs = []
    for name, topic in (("A", "301"), ("B", "303")):       # one topic each, named apart
        path = work / f"{name}.run"
        path.write_text("".join(" ".join(line.split()[:5] + [name]) + "\n"
                                for line in lines if line.split()[0] == topic))
        runs.append(path)
    gate = tmp_path / "go"
    children = [Child(["score", inputs["qrels"], run, "--posterior", inputs["posterior"],
                       "-o", "scores.csv"], cwd=work, pause="scores", gate=gate)
                for run in runs]
    for child in children:
        child.wait_for("PAUSED .scores.")
    assert not (work / "scores.csv").exists()
    gate.touch()                                 # both finish their writes now
    results = [child.finish() for child in children]
    assert sorted(code for code, _ in results) == [0, 2], results
    loser = next(err for code, err in results if code == 2)
    assert_one_line_error(loser, "score", "appeared while writing")
    winner = "AB"[[code for code, _ in results].index(0)]
    table = pd.read_csv(work / "scores.csv", dtype={"run": str, "topic": str})
    assert set(table["run"]) == {winner}
    assert set(table["topic"]) == {"301" if winner == "A" else "303"}
    assert len(table) == 20 and table["score"].between(0, 1).all()      # 20 draws, whole
    assert not [n for n in snapshot(work) if n.startswith(".")]
