"""The demo's compiling children: each ends saying what it compiled, and is stopped (not
left running) when the demo ends early."""

import subprocess
import sys

import pytest

from bayeschain.cli.prewarm import TASKS, Prewarm
from bayeschain.recipes import bundled_data_dir

pytest.importorskip("numba")


@pytest.mark.parametrize("task,last", [("walk", "walk"), ("rehearse", "done")])
def test_child_runs_to_its_end(task, last):
    done = subprocess.run([sys.executable, "-m", TASKS[task], str(bundled_data_dir())],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == last


def test_stop_ends_a_running_child():
    child = Prewarm("rehearse", bundled_data_dir())
    proc = child.proc
    assert proc is not None and proc.poll() is None
    child.stop()
    assert proc.poll() is not None and child.proc is None
    child.stop()                                   # twice is harmless
    child.wait_for("done")                         # and waiting on a stopped child returns
