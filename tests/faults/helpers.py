"""Helpers of the fault-injection tests: inputs made once per test, the child process
(:mod:`tests.faults.child`) started with its faults, its output read line by line with a
timeout, and snapshots of a folder (names and SHA-256 of every entry, hidden ones too)."""

from __future__ import annotations

import hashlib
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("child.py")
TREC = ROOT / "data" / "trec_eval"

#: the walk with few draws: a fit of a 200-session log takes seconds
FAST_SPEC = """[model]
name = "walk-fast"
description = "the walk with few draws (fault tests)"
ranks = 10

[examination]
moves = "pooled"
clicks = "pooled"

[holding]
likelihood = "exponential"
parametrisation = "per-rank"
prior = [1.0, 20.0]

[sampler]
method = "nuts"
draws = {draws}
chains = 2
tune = {tune}
seed = 2026
target_accept = 0.9
"""


def tiny_posterior(path: Path, draws: int = 20, seed: int = 0) -> Path:
    """A saved walk posterior of ``draws`` draws with holding rates (scores P@H, MPcont)."""
    from bayeschain.inference import posterior_from_parameters

    rng = np.random.default_rng(seed)
    walk = rng.dirichlet([5, 1, 1, 2], size=(draws, 10))
    walk[:, 0, 1] = 0
    walk /= walk.sum(-1, keepdims=True)
    post = posterior_from_parameters({"walk": walk, "click": rng.uniform(0.2, 0.4, (draws, 10)),
                                      "holding_rate": rng.gamma(2.0, 0.05, (draws, 10))})
    return post.save(path)


def make_inputs(folder: Path) -> dict[str, Path]:
    """A simulated log (200 sessions), spec files (50 and 20,000 draws), a tiny posterior
    and copies of the bundled qrels and run, all in ``folder``."""
    from bayeschain.io.clicklog import write_canonical
    from bayeschain.simulate import simulate_click_log

    folder.mkdir(parents=True, exist_ok=True)
    paths = {"log": folder / "log.csv", "spec": folder / "fast.toml",
             "slow_spec": folder / "slow.toml", "posterior": folder / "tiny.nc",
             "qrels": folder / "qrels.test", "run": folder / "results.test"}
    write_canonical(simulate_click_log(200, seed=3), paths["log"])
    paths["spec"].write_text(FAST_SPEC.format(draws=50, tune=50))
    paths["slow_spec"].write_text(FAST_SPEC.format(draws=20_000, tune=200))
    tiny_posterior(paths["posterior"])
    paths["qrels"].write_bytes((TREC / "qrels.test").read_bytes())
    paths["run"].write_bytes((TREC / "results.test").read_bytes())
    return paths


def one_line_error(err: str, command: str, *words: str) -> None:
    """``err`` is one line ``bayeschain COMMAND: error: ...`` holding every one of ``words``."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"bayeschain {command}: error: "), err
    for word in words:
        assert word in lines[0], (word, err)


def snapshot(folder: Path) -> dict[str, str]:
    """Relative path -> SHA-256 (``"dir"`` for folders) of everything under ``folder``."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        out[rel] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


class Child:
    """A ``bayeschain`` command in a child process with faults (:mod:`tests.faults.child`),
    its standard output read by a thread so that a marker can be awaited."""

    def __init__(self, args, *, cwd: Path, **faults: str):
        env = {**os.environ, "PYTHONUNBUFFERED": "1",
               **{f"FAULT_{k.upper()}": str(v) for k, v in faults.items()}}
        self.proc = subprocess.Popen([sys.executable, str(CHILD), *map(str, args)],
                                     cwd=cwd, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, marker: str, timeout: float = 180) -> str:
        """The first output line starting with ``marker``; fails if the child ends or the
        time runs out first."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                self.proc.kill()
                raise AssertionError(f"no {marker!r} within {timeout} s: {self.lines}") \
                    from None
            if line is None:
                raise AssertionError(f"child ended before {marker!r}: {self.lines}\n"
                                     f"{self.proc.stderr.read()}")
            self.lines.append(line)
            if line.startswith(marker):
                return line

    def finish(self, timeout: float = 120) -> tuple[int, str]:
        """Exit status and standard error."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        return code, self.proc.stderr.read()


def run_child(args, *, cwd: Path, timeout: float = 300, **faults) -> tuple[int, str, str]:
    """Run to the end: (exit status, stdout, stderr)."""
    env = {**os.environ, **{f"FAULT_{k.upper()}": str(v) for k, v in faults.items()}}
    proc = subprocess.run([sys.executable, str(CHILD), *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def assert_one_line_error(stderr: str, command: str, *words: str) -> None:
    """Exactly one error line, ``bayeschain COMMAND: error: ...`` with ``words``, and no
    traceback (warnings, one line each, may come before it)."""
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1, stderr
    assert errors[0].startswith(f"bayeschain {command}: error: "), stderr
    for word in words:
        assert word in errors[0], (word, stderr)
    assert all(line.startswith("bayeschain ") for line in stderr.splitlines()), stderr
