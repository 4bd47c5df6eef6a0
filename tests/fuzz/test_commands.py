"""Fuzzing the commands: ``bayeschain.cli.main([...])`` in-process on mutated argument
values, measure strings and small mutated input files either exits 0 with finite numbers
in its output, or exits 2 with one line ``bayeschain CMD: error: ...`` on standard error --
never an uncaught exception, never another status.

Commands and inputs: ``eval`` (measure strings, ``-l``, ``-M``, ``-c``, ``-q``,
``--format``, ``--holding-rates``, mutated qrels and runs), ``stats`` (mutated canonical
click logs, ``--max-rank``, ``--errors``), ``score`` and ``compare`` with a tiny walk
posterior (20 draws, made by ``posterior_from_parameters`` and saved) and a mutated copy
of it, and argument lists with values dropped, swapped or replaced.  Mutations: numbers
replaced by ``nan``, ``inf``, huge, negative or empty values; characters inserted or
deleted; tokens and lines deleted, duplicated or swapped; files truncated.

Profiles (as in tests/fuzz/test_readers.py): the default runs 50 examples per test; the
long run is ``python3 -m pytest tests/fuzz -m fuzz --hypothesis-profile=fuzz`` (2,000 per
test), or ``BAYESCHAIN_FUZZ=long``; ``BAYESCHAIN_FUZZ_EXAMPLES=N`` runs N per test.
"""

from __future__ import annotations

import io
import math
import os
import re
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from bayeschain.cli import main
from tests.fuzz.profile import fuzz_settings

pytestmark = pytest.mark.fuzz

ROOT = Path(__file__).resolve().parents[2]
TREC = ROOT / "data" / "trec_eval"

FUZZ = fuzz_settings()

EVAL_MEASURES = ["AP", "P@10", "nDCG@10", "RBP(p=0.8)", "ERR@20", "DCG@5", "MP", "map",
                 "P_5", "ndcg_cut_10", "RBP(p=0.5, finite=True)", "MP(model='rwbm')",
                 "PatH(model='rwbm', p=0.5, q=0.25)", "PatH(model='sfbm', p=0.3, order=1)",
                 "nDCG(gains={0: 0, 1: 1, 2: 3})@5", "MPcont", "PatH(model='dfbm')@3"]
SCORE_MEASURES = ["PatH(model='rwbm', order=2)", "PatH(model='rwbm', order=1)",
                  "PatH(model='rwbm', order=2)@5", "PatH(model='drwbm')", "RBP", "MPcont",
                  "PatH(model='sfbm', order=2)", "AP", "MP", "PatH(model='rwbm', gains=[0, 1, 3])"]
NASTY = ["nan", "inf", "-inf", "-1", "0", "1", "2", "0.5", "1e308", "1e-320", "-0", "",
         "10000000000", "True", "None", "'x'", "[]", "{}", "1,2", "\t", "\x00", "é", "#",
         "99999999999999999999", "0x10", "1_0"]
NUMBER = re.compile(r"[-+]?\d+(\.\d*)?([eE][-+]?\d+)?")
TOKENS = re.compile(r"(\s+)")


def text_mutations(text: str, draw, *, max_ops: int = 4) -> str:
    """``text`` with a few characters, numbers, tokens or lines changed."""
    for _ in range(draw(st.integers(0, max_ops))):
        op = draw(st.sampled_from(["number", "number", "insert", "delete", "token", "line",
                                   "duplicate", "truncate"]))
        if op == "number":
            spans = [m.span() for m in NUMBER.finditer(text)]
            if spans:
                a, b = draw(st.sampled_from(spans))
                text = text[:a] + draw(st.sampled_from(NASTY)) + text[b:]
        elif op == "insert":
            i = draw(st.integers(0, len(text)))
            text = text[:i] + draw(st.sampled_from(list("()[]{},=@'\".-_ 0123456789aZ\t\n"
                                                        "\\"))) + text[i:]
        elif op == "delete" and text:
            i = draw(st.integers(0, len(text) - 1))
            text = text[:i] + text[i + draw(st.integers(1, 4)):]
        elif op == "token":
            parts = TOKENS.split(text)
            k = 2 * draw(st.integers(0, (len(parts) - 1) // 2))
            parts[k] = draw(st.sampled_from(NASTY) | st.text(max_size=5))
            text = "".join(parts)
        elif op in ("line", "duplicate"):
            lines = text.split("\n")
            i = draw(st.integers(0, len(lines) - 1))
            if op == "line":
                del lines[i]
            else:
                lines.insert(draw(st.integers(0, len(lines))), lines[i])
            text = "\n".join(lines)
        elif op == "truncate" and text:
            text = text[:draw(st.integers(0, len(text)))]
    return text


@st.composite
def measure_strings(draw, seeds):
    return text_mutations(draw(st.sampled_from(seeds)), draw, max_ops=2)


def head(path: Path, n: int) -> str:
    return "".join(path.read_text().splitlines(keepends=True)[:n])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Seeds: the head of trec_eval's qrels and run, a small simulated click log, a tiny
    walk posterior with holding rates (and its text seeds for mutation)."""
    from bayeschain.io.clicklog import write_canonical
    from bayeschain.simulate import simulate_click_log
    from tests.faults.helpers import tiny_posterior

    pytest.importorskip("h5netcdf")
    folder = tmp_path_factory.mktemp("fuzz-commands")
    log = folder / "log.csv"
    write_canonical(simulate_click_log(15, seed=7), log)
    paths = {"qrels": folder / "qrels", "run": folder / "run", "run2": folder / "run2",
             "log": log, "posterior": tiny_posterior(folder / "post.nc")}
    paths["qrels"].write_text(head(TREC / "qrels.test", 400))
    run = head(TREC / "results.test", 60)
    paths["run"].write_text(run)
    paths["run2"].write_text(run.replace("STANDARD", "OTHER").replace(" 2.", " 1."))
    return paths


def run_command(args: list[str]) -> tuple[int, str, str]:
    """``main(args)`` with its output captured; any exception fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def check_outcome(args, code: int, out: str, err: str) -> None:
    """Exit 0 and finite numbers, or exit 2 and one error line."""
    command = str(args[0]) if args else ""
    if code == 0:
        event(f"{command}: ok")
        for line in out.splitlines():
            numbers = _numbers(command, line)
            assert all(math.isfinite(x) for x in numbers), (args, line)
        return
    event(f"{command}: error")
    assert code == 2, (args, code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, (args, err)
    assert re.match(r"bayeschain( \w+)?: error: \S", lines[0]), (args, err)
    assert "Traceback" not in err


def _numbers(command: str, line: str) -> list[float]:
    """The numbers a line of output reports (values, not names or ids)."""
    if command == "eval":
        if line.startswith(("runid", "num_q", "run\t")) or not line.strip():
            return []
        if "\t" in line:
            return [float(line.rsplit("\t", 1)[1])]
        found = re.findall(r'"value": ([^,}\s]+)', line)
        return [float(x) for x in found]
    if command == "score":
        m = re.search(r": (\S+) \[(\S+), (\S+)\]$", line)
        return [float(x) for x in m.groups()] if m else []
    if command == "stats":
        if line.startswith("click log"):
            return []
        assert not re.search(r"\b(nan|inf)\b", line, re.I), line
        return []
    return [float(x) for x in re.findall(r"(?<![\w.])-?\d+\.\d+(?![\w.])", line)]


@FUZZ
@given(data=st.data())
def test_eval_fuzzed(files, data):
    draw = data.draw
    args = ["eval", files["qrels"], files["run"]]
    for _ in range(draw(st.integers(0, 3))):
        args += ["-m", draw(measure_strings(EVAL_MEASURES))]
    if draw(st.booleans()):
        args += ["-l", draw(st.integers(-3, 5))]
    if draw(st.booleans()):
        args += ["-M", draw(st.integers(-2, 30))]
    args += draw(st.lists(st.sampled_from(["-q", "-c"]), max_size=2, unique=True))
    args += ["--format", draw(st.sampled_from(["text", "tsv", "json"]))]
    if draw(st.integers(0, 3)) == 0:
        rates = draw(st.lists(st.sampled_from(NASTY[:10]), min_size=1, max_size=12))
        args += ["--holding-rates", ",".join(rates) or "0"]
        args += ["-m", "MPcont"]
    with tempfile.TemporaryDirectory() as tmp:
        if draw(st.booleans()):           # mutated inputs
            for key in draw(st.lists(st.sampled_from(["qrels", "run"]), min_size=1,
                                     max_size=2, unique=True)):
                path = Path(tmp) / key
                path.write_text(text_mutations(files[key].read_text(), draw))
                args[{"qrels": 1, "run": 2}[key]] = path
        code, out, err = run_command(args)
    check_outcome(args, code, out, err)


@FUZZ
@given(data=st.data())
def test_stats_fuzzed(files, data):
    draw = data.draw
    args = ["stats", files["log"]]
    if draw(st.booleans()):
        args += ["--max-rank", draw(st.integers(-2, 40))]
    if draw(st.booleans()):
        args += ["--errors", draw(st.sampled_from(["raise", "skip"]))]
    if draw(st.booleans()):
        args += ["--backend", draw(st.sampled_from(["duckdb", "pandas"]))]
    with tempfile.TemporaryDirectory() as tmp:
        if draw(st.integers(0, 3)):
            path = Path(tmp) / draw(st.sampled_from(["log.csv", "log.tsv", "log.txt"]))
            text = text_mutations(files["log"].read_text(), draw, max_ops=5)
            if path.suffix == ".tsv":
                text = text.replace(",", "\t")
            path.write_text(text)
            args[1] = path
        code, out, err = run_command(args)
    check_outcome(args, code, out, err)


def _repeated_page(text: str) -> bool:
    """Two query events of one result page (``serp_id``) in a canonical CSV."""
    seen = set()
    for line in text.splitlines()[1:]:
        fields = line.split(",")
        if len(fields) > 3 and fields[3] == "query":
            if fields[2] in seen:
                return True
            seen.add(fields[2])
    return False


def test_stats_of_a_page_announced_twice(files, tmp_path):
    """Found by this fuzz: the canonical reader accepted a result page announced by two
    query events, and the click statistics then failed (a pandas ValueError); now the
    reader refuses it with the line."""
    lines = files["log"].read_text().splitlines()
    path = tmp_path / "log.csv"
    path.write_text("\n".join([lines[0], lines[1], *lines[1:]]) + "\n")
    assert _repeated_page(path.read_text())
    code, out, err = run_command(["stats", path])
    assert code == 2 and "second query event" in err and ".csv:3:" in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@FUZZ
@given(data=st.data())
def test_score_fuzzed(files, data):
    draw = data.draw
    command = draw(st.sampled_from(["score", "score", "compare"]))
    runs = [files["run"]] + ([files["run2"]] if command == "compare" else [])
    args = [command, files["qrels"], *runs, "--posterior", files["posterior"],
            "-m", draw(measure_strings(SCORE_MEASURES))]
    if draw(st.booleans()):
        args.append("--fixed-reference")
    if command == "compare":
        args += ["--rope", draw(st.sampled_from(["0", "0.01", "-1", "nan", "inf", "1e9"])),
                 "--topics", draw(st.sampled_from(["fixed", "bayesian-bootstrap"]))]
    with tempfile.TemporaryDirectory() as tmp:
        what = draw(st.sampled_from(["nothing", "nothing", "run", "qrels", "posterior"]))
        if what in ("run", "qrels"):
            path = Path(tmp) / what
            path.write_text(text_mutations(files[what].read_text(), draw))
            args[1 if what == "qrels" else 2] = path
        elif what == "posterior":
            args[args.index("--posterior") + 1] = _mutated_posterior(Path(tmp), files, draw)
        if draw(st.integers(0, 4)) == 0:
            args += ["-o", Path(tmp) / draw(st.sampled_from(["s.csv", "s.nc", "s.txt", "s.md",
                                                           "missing/s.csv", ""]))]
        code, out, err = run_command(args)
    check_outcome(args, code, out, err)


def _mutated_posterior(folder: Path, files, draw) -> Path:
    """The tiny posterior with its bytes cut or flipped, or its values edited (and the
    digest left as it was, or restamped so that only the domain checks can object)."""
    import xarray as xr

    from bayeschain.posterior.storage import DIGEST_ATTR, content_digest

    path = folder / "post.nc"
    raw = files["posterior"].read_bytes()
    kind = draw(st.sampled_from(["cut", "flip", "edit", "edit-restamp"]))
    if kind == "cut":
        path.write_bytes(raw[:draw(st.integers(0, len(raw) - 1))])
    elif kind == "flip":
        i = draw(st.integers(0, len(raw) - 1))
        path.write_bytes(raw[:i] + bytes([raw[i] ^ draw(st.integers(1, 255))]) + raw[i + 1:])
    else:
        tree = xr.open_datatree(files["posterior"], engine="h5netcdf").load()
        name = draw(st.sampled_from(["walk", "click", "holding_rate"]))
        values = tree["posterior"][name].values
        flat = values.reshape(-1)
        flat[draw(st.integers(0, flat.size - 1))] = draw(st.sampled_from(
            [np.nan, np.inf, -1.0, 0.0, 2.0, 1e-300, 0.5]))
        if kind == "edit-restamp":
            tree.attrs[DIGEST_ATTR] = content_digest(tree)
        tree.to_netcdf(path, engine="h5netcdf")
    return path


@FUZZ
@given(data=st.data())
def test_argument_lists_fuzzed(files, data):
    """Valid command lines with an argument dropped, duplicated, swapped or replaced."""
    draw = data.draw
    base = draw(st.sampled_from([
        ["eval", files["qrels"], files["run"], "-m", "AP", "-M", "10"],
        ["stats", files["log"], "--max-rank", "5"],
        ["score", files["qrels"], files["run"], "--posterior", files["posterior"]],
        ["compare", files["qrels"], files["run"], files["run2"], "--posterior",
         files["posterior"], "--rope", "0.01"],
        ["fit", files["log"], "--spec", "clicks-conjugate", "--draws", "5", "--quiet"],
    ]))
    args = [str(a) for a in base]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(args) - 1))
        op = draw(st.sampled_from(["drop", "duplicate", "swap", "replace", "replace"]))
        if op == "drop" and len(args) > 1:
            del args[i]
        elif op == "duplicate":
            args.insert(i, args[i])
        elif op == "swap":
            j = draw(st.integers(0, len(args) - 1))
            args[i], args[j] = args[j], args[i]
        else:
            args[i] = draw(st.sampled_from(NASTY + ["--force", "-o", "--draws", "-m",
                                                    "--quiet", "--", "-"]))
    if args and args[0] in ("-h", "--help", "--version") or any(
            a in ("-h", "--help", "--version") for a in args):
        return                                        # argparse's own exits (status 0)
    if not args or args[0] not in ("eval", "stats", "score", "compare", "fit"):
        event("not a command")
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)                 # a stray "-o" or output lands in a throw-away folder
        try:
            code, out, err = run_command(args)
        finally:
            os.chdir(cwd)
    check_outcome(args, code, out, err)


SIZES = st.sampled_from([0, -1, 10_001, 10**6, 10**9, 10**12, 10**18]) | st.integers(1, 30)


@FUZZ
@given(data=st.data())
def test_size_parameters_fuzzed(files, data):
    """Sizes known up front (sessions and ranks of ``simulate``, -M of ``eval``) beyond
    the limits or the memory budget: refused before allocating, one error line."""
    draw = data.draw
    sessions, ranks = draw(SIZES), draw(SIZES)
    if 0 < sessions * max(ranks, 1) <= 3_000 or sessions <= 0 or ranks <= 0 or \
            ranks > 10_000 or sessions * ranks > 10**12:
        with tempfile.TemporaryDirectory() as tmp:
            args = ["simulate", "-o", str(Path(tmp) / "log.csv"), "--sessions", sessions,
                    "--ranks", ranks]
            code, out, err = run_command(args)
        check_outcome(args, code, out, err)
    args = ["eval", files["qrels"], files["run"], "-m", "AP", "-M", draw(SIZES)]
    code, out, err = run_command(args)
    check_outcome(args, code, out, err)
