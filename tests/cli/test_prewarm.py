"""The demo's compiling children: each ends saying what it compiled, and is stopped (not
left running) when the demo ends early."""

import json
import os
import subprocess
import sys

import pytest

from bayeschain.cli.prewarm import TASKS, Prewarm
from bayeschain.recipes import bundled_data_dir

pytest.importorskip("numba")


@pytest.mark.parametrize("task,options,said", [
    ("walk", [], ["walk"]), ("rehearse", [], ["kernel", "done"]),
    ("rehearse", ["--analysis"], ["kernel", "done"])])
def test_child_runs_to_its_end_saying_what_it_compiled(task, options, said):
    done = subprocess.run([sys.executable, "-m", TASKS[task], str(bundled_data_dir()),
                           *options], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == said


def test_the_analysis_is_rehearsed_only_on_cores_the_demo_leaves_idle(monkeypatch, capsys):
    from bayeschain.chains import jit
    from bayeschain.cli import demo, rehearsal

    calls = []
    monkeypatch.setattr(demo, "analyse", lambda *a, **k: calls.append(k["sampler"]))
    monkeypatch.setattr(os, "nice", lambda n: 0)
    for cores, rehearsed in ((1, 0), (2, 0), (3, 1), (8, 2)):
        monkeypatch.setattr(jit, "usable_cores", lambda n=cores: n)
        rehearsal.main(str(bundled_data_dir()))
        assert len(calls) == rehearsed, cores
    rehearsal.main(str(bundled_data_dir()), analysis=True)        # forced on any machine
    assert calls == [rehearsal._stand_in_sample] * 3
    assert capsys.readouterr().out.split() == ["kernel", "done"] * 5


def test_stop_ends_a_running_child():
    child = Prewarm("rehearse", bundled_data_dir())
    proc = child.proc
    assert proc is not None and proc.poll() is None
    child.stop()
    assert proc.poll() is not None and child.proc is None
    child.stop()                                   # twice is harmless
    child.wait_for("done")                         # and waiting on a stopped child returns


def test_the_types_compiled_ahead_are_those_the_walks_density_calls_with(tmp_path):
    """The children compile the density's callees ahead for declared argument types; a
    declaration that drifted from the code would compile a variant nobody calls.  On an
    empty cache, compiling the density the ordinary way (through the C entry) gives each
    callee exactly the declared signature, and the block kernels none: the drivers call
    them by address, so neither is compiled into the density; each is compiled for the
    declared types when its address is first asked for."""
    code = (
        "import json\n"
        "from bayeschain.inference.walk import bridge, likelihood, model\n"
        "kernels = ('block_loglik_kernel', 'narrow_block_loglik_kernel')\n"
        "declared = {**model.callee_types(),\n"
        "            'table_loglik_kernel': likelihood.table_driver_types(),\n"
        "            'block_loglik_kernel': likelihood.block_kernel_types(),\n"
        "            'narrow_block_loglik_kernel': likelihood.block_kernel_types()}\n"
        "found = {k: model.compiled(k).signatures for k in model.callee_types()}\n"
        "found['table_loglik_kernel'] = likelihood.compiled('table_loglik_kernel').signatures\n"
        "print(sum(len(likelihood.compiled(k).signatures) for k in kernels))\n"
        "for lanes in (likelihood.LANES, likelihood.NARROW_LANES):\n"
        "    likelihood.block_kernel_address(lanes)\n"
        "found.update({k: likelihood.compiled(k).signatures for k in kernels})\n"
        "print(json.dumps({k: [str(declared[k]), [str(s) for s in found[k]]]\n"
        "                  for k in declared}))\n")
    env = {k: v for k, v in os.environ.items() if k != "BAYESCHAIN_NUMBA_NO_CACHE"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env={**env, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    pairs = json.loads(done.stdout.splitlines()[-1])
    assert done.stdout.splitlines()[-2] == "0"     # no block kernel inside the density
    assert len(pairs) == 7
    for name, (declared, found) in pairs.items():
        assert found == [declared], name
