"""The commands' faults and the posterior's integrity.

One regression test per defect, named after the behaviour it holds, each failing on the code before
its fix; the faults that need a child process (signals, a full disk, concurrent runs) are
in ``tests/faults/``."""

import os
import signal
import stat
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from bayeschain.cli import main
from bayeschain.errors import BayeschainError
from bayeschain.inference import Posterior
from tests.faults.helpers import FAST_SPEC, TREC, make_inputs, snapshot, tiny_posterior
from tests.faults.helpers import one_line_error as _one_line

pytest.importorskip("h5netcdf")


@pytest.fixture
def inputs(tmp_path):
    return make_inputs(tmp_path / "work")


def _log_without_clicks(folder: Path) -> tuple[Path, Path]:
    """The simulated log with its clicks removed, and its header alone (no event)."""
    events = pd.read_csv(folder / "log.csv")
    no_clicks, empty = folder / "noclicks.csv", folder / "empty.csv"
    events[events["event"] != "click"].to_csv(no_clicks, index=False)
    events.iloc[:0].to_csv(empty, index=False)
    return no_clicks, empty


# d1: an interrupted fit --------------------------------------------------------------------

def _fake_sampler(short_by: int = 0, nan_chain: int | None = None, interrupt: bool = False):
    """A stand-in for walk_sampler.sample returning what nutpie returns after a Ctrl-C:
    fewer draws than asked, or the stopped chain padded with NaN; with ``interrupt`` it
    receives a SIGINT and swallows the KeyboardInterrupt as nutpie does."""
    import signal

    def sample(model, *, draws, chains, **_):
        if interrupt:
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                pass
        one = model.expand(model.initial_point(np.random.default_rng(0)))
        n = draws - short_by
        out = {k: np.broadcast_to(np.asarray(v), (chains, n) + np.shape(v)).copy()
               for k, v in one.items()}
        if nan_chain is not None:
            for v in out.values():
                v[nan_chain, n // 2:] = np.nan
        stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((chains, n), bool))})
        return out, stats

    return sample


@pytest.fixture
def sigint_handled():
    """Python's SIGINT handler for the test, even when the suite runs as a background job
    (``cmd &``, nohup), which starts with SIGINT ignored: bayeschain leaves an ignored
    SIGINT ignored, so a Ctrl-C could not be simulated."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")
@pytest.mark.parametrize("partial", [dict(short_by=30), dict(nan_chain=1),
                                     dict(interrupt=True)],
                         ids=["fewer-draws", "nan-padded", "swallowed-interrupt"])
def test_interrupt_during_sampling(inputs, monkeypatch, capsys, partial, sigint_handled):
    """A partial trace (the draws nutpie returns when it catches Ctrl-C) is refused:
    fit raises SamplingInterrupted, the command exits 130 and writes nothing.  (The
    signal itself, delivered to a real sampler: tests/faults/test_signals.py.)"""
    from bayeschain.inference import fit
    from bayeschain.inference.sampling import SamplingInterrupted
    from bayeschain.inference.walk import sampler as walk_sampler

    with pytest.raises(SamplingInterrupted):
        fit(str(inputs["log"]), str(inputs["spec"]), sampler=_fake_sampler(**partial))
    monkeypatch.setattr(walk_sampler, "sample", _fake_sampler(**partial))     # the CLI's
    work = inputs["log"].parent
    before = snapshot(work)
    assert main(["fit", str(inputs["log"]), "--spec", str(inputs["spec"]), "-o",
                 str(work / "post.nc"), "--quiet"]) == 130
    _one_line(capsys.readouterr().err, "fit", "interrupted")
    assert snapshot(work) == before
    complete = _fake_sampler()                                        # accepted
    assert fit(str(inputs["log"]), str(inputs["spec"]), sampler=complete).n_draws == 2 * 50


@pytest.mark.parametrize(("signum", "status", "word"),
                         [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")],
                         ids=["SIGTERM", "SIGINT"])
def test_a_signal_printed_by_c_code_that_caught_it_is_no_traceback(inputs, monkeypatch, capsys,
                                                                  sigint_handled, signum,
                                                                  status, word):
    """C code that catches a signal's exception may print it (``PyErr_Print``: NumPy's
    ``import_array`` does, in a C extension imported while the signal came, and then raises
    an ImportError of its own): still one error line and no traceback."""
    import ctypes

    from bayeschain import interrupts
    from bayeschain.inference.walk import sampler as walk_sampler

    def sample(*args, **kwargs):
        interrupts.RECEIVED.append(signum)          # as the command's handler records it
        kind = "Terminated(15)" if signum == signal.SIGTERM else "KeyboardInterrupt"
        ctypes.pythonapi.PyRun_SimpleString(      # raises, and prints it with PyErr_Print
            f"from bayeschain.interrupts import Terminated\nraise {kind}".encode())
        raise ImportError("numpy.core.multiarray failed to import")

    monkeypatch.setattr(walk_sampler, "sample", sample)
    work = inputs["log"].parent
    assert main(["fit", str(inputs["log"]), "--spec", str(inputs["spec"]), "-o",
                 str(work / "post.nc"), "--quiet"]) == status
    _one_line(capsys.readouterr().err, "fit", word)
    assert not interrupts.RECEIVED                 # reported, then forgotten


# d5: the demo writes all its outputs or none -----------------------------------------------

def _fake_demo(monkeypatch):
    """The demo's analysis replaced by the small one of tests/faults/child.py (restored
    after the test)."""
    from bayeschain.cli import demo
    from tests.faults import child

    monkeypatch.setattr(demo, "analyse", demo.analyse)      # remembers the real one
    child._fake_demo()


@pytest.mark.parametrize("fault", [KeyboardInterrupt, OSError, RuntimeError])
def test_demo_writes_all_or_nothing(tmp_path, monkeypatch, capsys, fault):
    """A fault while the demo writes one of its files leaves neither the output folder nor
    its hidden staging sibling (the demo used to write in place: a partial folder)."""
    _fake_demo(monkeypatch)
    real = pd.DataFrame.to_csv

    def failing(self, path=None, *args, **kwargs):
        if path is not None and Path(path).name == "comparisons.csv":
            raise fault(28, "No space left on device") if fault is OSError else fault()
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", failing)
    out = tmp_path / "demo-out"
    if fault is RuntimeError:              # a bug: raised, and still nothing left behind
        with pytest.raises(RuntimeError):
            main(["demo", "--out", str(out)])
    else:
        assert main(["demo", "--out", str(out)]) == (130 if fault is KeyboardInterrupt else 2)
        _one_line(capsys.readouterr().err, "demo")
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(pd.DataFrame, "to_csv", real)
    assert main(["demo", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "comparisons.csv", "demo.png", "posterior.nc", "report.html", "scores.nc",
        "scores_drwbm.nc"]
    assert Posterior.load(out / "posterior.nc").n_draws == 20
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~_umask()    # not mkdtemp's 0700
    assert [p.name for p in tmp_path.iterdir()] == ["demo-out"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# d8: clear errors ----------------------------------------------------------------------------

def test_score_without_common_topics(inputs, tmp_path, capsys):
    run = tmp_path / "other.run"
    run.write_text("999 Q0 doc1 1 1.0 x\n999 Q0 doc2 2 0.5 x\n")
    assert main(["score", str(inputs["qrels"]), str(run), "--posterior",
                 str(inputs["posterior"])]) == 2
    _one_line(capsys.readouterr().err, "score", "no topic of the runs is in the qrels")


def test_compare_with_an_empty_run(inputs, tmp_path, capsys):
    empty = tmp_path / "empty.run"
    empty.write_text("")
    out = tmp_path / "c.md"
    assert main(["compare", str(inputs["qrels"]), str(empty), str(inputs["run"]),
                 "--posterior", str(inputs["posterior"]), "-o", str(out)]) == 2
    _one_line(capsys.readouterr().err, "compare", "empty.run", "no rankings")
    assert not out.exists()


@pytest.mark.filterwarnings("ignore:NUTS diagnostics")
def test_mpcont_on_a_session_walk(inputs, capsys):
    """walk-session has no [holding]: MPcont's rates are missing, said so (a KeyError)."""
    pytest.importorskip("nutpie")
    work = inputs["log"].parent
    spec = work / "session.toml"
    spec.write_text(FAST_SPEC.format(draws=50, tune=50)
                    .replace('name = "walk-fast"', 'name = "walk-session-fast"')
                    .replace('moves = "pooled"', 'moves = "shared"\nboundary = "rescale"')
                    .split("[holding]")[0] + "[sampler]" + FAST_SPEC.split("[sampler]")[1]
                    .format(draws=50, tune=50))
    post = work / "session.nc"
    assert main(["fit", str(inputs["log"]), "--spec", str(spec), "-o", str(post),
                 "--quiet"]) == 0
    capsys.readouterr()
    for command in ("score", "compare"):
        runs = [str(inputs["run"])] + ([str(TREC / "results.trunc")] if command == "compare"
                                       else [])
        assert main([command, str(inputs["qrels"]), *runs, "--posterior", str(post), "-m",
                     "MPcont"]) == 2
        _one_line(capsys.readouterr().err, command, "no holding rates")


# d9: a fit that fails writes nothing ---------------------------------------------------------

@pytest.mark.parametrize("spec", ["walk", "clicks-conjugate"])
def test_log_without_clicks_writes_nothing(inputs, capsys, spec):
    """A log without clicks (or without any event) is refused before sampling: no
    prior-only posterior saved, no traceback from the sampler."""
    if spec == "walk":
        pytest.importorskip("nutpie")
        spec = str(inputs["spec"])
    work = inputs["log"].parent
    for log in _log_without_clicks(work):
        before = snapshot(work)
        assert main(["fit", str(log), "--spec", spec, "-o", str(work / "post.nc"),
                     "--quiet"]) == 2
        err = capsys.readouterr().err
        _one_line(err, "fit")
        assert "no clicks" in err or "no result pages" in err
        assert snapshot(work) == before


# d10: permissions ------------------------------------------------------------------------------

def test_outputs_follow_the_umask(inputs, capsys):
    work = inputs["log"].parent
    out, scores = work / "post.nc", work / "scores.csv"
    old = os.umask(0o022)
    try:
        assert main(["fit", str(inputs["log"]), "--spec", "clicks-conjugate", "--draws", "20",
                     "-o", str(out), "--quiet"]) == 0
        assert main(["score", str(inputs["qrels"]), str(inputs["run"]), "--posterior",
                     str(inputs["posterior"]), "-o", str(scores)]) == 0
    finally:
        os.umask(old)
    for path in (out, scores):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    post = Posterior.load(out)
    assert post.n_draws == 4 * 20 and post.parametrises == "click-to-click"


# d15: an output folder that cannot be written is refused before the work -------------------

def _unwritable_folder(tmp_path) -> Path:
    """A folder where this process cannot create files: a read-only folder, or for root
    (whom permissions do not stop) /sys."""
    if os.geteuid() != 0:
        folder = tmp_path / "readonly"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    try:
        fd, name = tempfile.mkstemp(dir="/sys")
    except OSError:
        return Path("/sys")
    os.close(fd)
    os.unlink(name)
    pytest.skip("no folder this process cannot write to")


def test_unwritable_output_folder_is_refused_first(inputs, tmp_path, capsys):
    folder = _unwritable_folder(tmp_path)
    try:
        cases = [
            (["score", str(inputs["qrels"]), str(inputs["run"]), "--posterior",
              str(inputs["posterior"]), "-o", str(folder / "s.csv")], "score"),
            (["fit", str(inputs["log"]), "--spec", "clicks-conjugate", "-o",
              str(folder / "p.nc"), "--quiet"], "fit"),
            (["eval", str(inputs["qrels"]), str(inputs["run"]), "-o",
              str(folder / "e.txt")], "eval"),
            (["stats", str(inputs["log"]), "--figures", str(folder / "figs")], "stats"),
            (["demo", "--out", str(folder / "demo")], "demo"),
        ]
        for args, command in cases:
            assert main(args) == 2, args
            captured = capsys.readouterr()
            assert captured.out == "", args      # refused before any work was printed
            _one_line(captured.err, command, str(folder))
            assert "writable" in captured.err or "cannot create" in captured.err
    finally:
        if folder.parent == tmp_path:
            folder.chmod(0o755)


# d16: the integrity of posterior files -------------------------------------------------------

def _rewrite(path: Path, target: Path, edit, *, digest: str = "keep") -> Path:
    """Copy a posterior file with ``edit(tree)`` applied; its digest kept as it was
    (``"keep"``: the file now disagrees with it), removed (``"drop"``: a file from before
    digests) or recomputed (``"restamp"``: only the domain checks can object)."""
    from bayeschain.posterior.storage import DIGEST_ATTR, content_digest

    tree = xr.open_datatree(path, engine="h5netcdf").load()
    edit(tree)
    if digest == "drop":
        del tree.attrs[DIGEST_ATTR]
    elif digest == "restamp":
        tree.attrs[DIGEST_ATTR] = content_digest(tree)
    tree.to_netcdf(target, engine="h5netcdf")
    return target


def _halve_forward(tree) -> None:
    tree["posterior"]["walk"].values[..., 0] *= 0.5


def test_tampered_posterior_is_refused(inputs, tmp_path, capsys):
    """Forward probabilities halved in the file: the digest no longer matches (error
    naming the file); without the digest, the walk's rows no longer sum to 1 (error
    naming the variable); the command says so on one line instead of scoring."""
    good = inputs["posterior"]
    assert Posterior.load(good).attrs["content_digest"].startswith("sha256:")
    bad = _rewrite(good, tmp_path / "halved.nc", _halve_forward)
    with pytest.raises(BayeschainError, match="digest") as info:
        Posterior.load(bad)
    assert str(bad) in str(info.value)
    assert main(["score", str(inputs["qrels"]), str(inputs["run"]), "--posterior",
                 str(bad)]) == 2
    _one_line(capsys.readouterr().err, "score", "halved.nc", "digest")
    legacy = _rewrite(good, tmp_path / "legacy.nc", _halve_forward, digest="drop")
    with pytest.raises(BayeschainError, match="'walk'.*sum to 1"), \
            pytest.warns(UserWarning, match="no content digest"):
        Posterior.load(legacy)
    attr = _rewrite(good, tmp_path / "attr.nc",
                    lambda t: t.attrs.update(boundary="rescale"))   # metadata counts too
    with pytest.raises(BayeschainError, match="digest"):
        Posterior.load(attr)


def test_posterior_without_digest_loads_with_a_warning(inputs, tmp_path):
    """A file written before digests were stored loads (its draws checked) with one
    warning line; re-saving it adds the digest."""
    old = _rewrite(inputs["posterior"], tmp_path / "old.nc", lambda t: None, digest="drop")
    with pytest.warns(UserWarning, match="no content digest"):
        post = Posterior.load(old)
    new = post.save(tmp_path / "new.nc")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Posterior.load(new).n_draws == 20
    proc = subprocess.run([sys.executable, "-m", "bayeschain", "score", str(inputs["qrels"]),
                           str(inputs["run"]), "--posterior", str(old)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bayeschain score: warning: "), err
    assert "no content digest" in err[0] and "STANDARD" in proc.stdout


@pytest.mark.parametrize(("variable", "edit", "message"), [
    ("walk", lambda v: v.__setitem__((0, 3, 2), np.nan), "non-finite"),
    ("click", lambda v: v.__setitem__((0, 0, 0), 1.5), "probabilities"),
    ("holding_rate", lambda v: v.__setitem__((0, 1, 4), -0.1), "positive"),
    ("holding_rate", lambda v: v.__setitem__((0, 1, 4), np.inf), "non-finite"),
    ("walk", lambda v: v.__setitem__((0, 2, 5), [0.5, 0.1, 0.1, 0.2]), "sum to 1"),
])
def test_draws_outside_their_domain_are_refused(inputs, tmp_path, variable,
                                                             edit, message):
    """Digest restamped, so that only the domain checks can object: each names the
    variable."""
    bad = _rewrite(inputs["posterior"], tmp_path / "bad.nc",
                   lambda t: edit(t["posterior"][variable].values), digest="restamp")
    with pytest.raises(BayeschainError, match=f"'{variable}'.*{message}") as info:
        Posterior.load(bad)
    assert str(bad) in str(info.value)


def test_invalid_draws_are_never_saved(tmp_path):
    from bayeschain.inference import posterior_from_parameters

    walk = np.full((5, 10, 4), 0.25)
    click = np.full((5, 10), 0.3)
    click[2, 3] = np.nan
    post = posterior_from_parameters({"walk": walk, "click": click})
    with pytest.raises(BayeschainError, match="'click'.*non-finite"):
        post.save(tmp_path / "p.nc")
    assert list(tmp_path.iterdir()) == []


# d18: commands ------------------------------------------------------------------------------

def test_fit_output_must_be_netcdf(inputs, capsys):
    work = inputs["log"].parent
    before = snapshot(work)
    assert main(["fit", str(inputs["log"]), "--spec", "clicks-conjugate", "-o",
                 str(work / "post.csv"), "--quiet"]) == 2
    captured = capsys.readouterr()
    _one_line(captured.err, "fit", ".nc")
    assert "fitting" not in captured.out             # refused before the fit
    assert snapshot(work) == before
    with pytest.raises(BayeschainError, match=r"\.nc"):
        Posterior.load(inputs["posterior"]).save(work / "post.h5")


def test_stats_of_an_empty_log_prints_no_nan(inputs, capsys):
    for log in _log_without_clicks(inputs["log"].parent):
        assert main(["stats", str(log)]) == 0
        out = capsys.readouterr().out
        assert "nan" not in out.lower(), out
        assert "no click-to-click moves" in out


def test_empty_run_is_an_error(inputs, tmp_path, capsys):
    empty = tmp_path / "empty.run"
    empty.write_text("")
    for args in (["eval", str(inputs["qrels"]), str(empty)],
                 ["eval", str(inputs["qrels"]), str(inputs["run"]), str(empty)],
                 ["score", str(inputs["qrels"]), str(empty), "--posterior",
                  str(inputs["posterior"])]):
        assert main(args) == 2, args
        captured = capsys.readouterr()
        assert captured.out == "", args              # no blank report
        _one_line(captured.err, args[0], "empty.run", "no rankings")


def test_usage_errors_are_one_line(capsys):
    """argparse's mistakes too: one line, status 2, returned (not a SystemExit)."""
    for args in (["fit"], ["score", "q"], ["eval", "q", "r", "-M", "x"], ["nope"],
                 ["fit", "log", "--method", "magic"]):
        assert main(args) == 2, args
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and ": error: " in err, (args, err)


def test_tiny_posterior_helper_round_trips(tmp_path):
    path = tiny_posterior(tmp_path / "t.nc", draws=7)
    post = Posterior.load(path)
    assert post.n_draws == 7 and post.attrs["bayeschain_version"]
    np.testing.assert_allclose(post.posterior["walk"].sum("move"), 1, atol=1e-12)
