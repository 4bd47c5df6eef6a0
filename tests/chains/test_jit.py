"""A Numba cache that cannot be written (full disk, read-only folder) must not fail the
function it was compiled for: the call returns its value, only the cache is skipped."""

import errno
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")
resource = pytest.importorskip("resource")


def test_a_full_cache_folder_does_not_fail_the_call(tmp_path):
    module = tmp_path / "cached_sum.py"
    module.write_text(textwrap.dedent('''
        import numpy as np
        from bayeschain.chains.jit import jit

        def total(x):
            s = 0.0
            for v in x:
                s += v
            return s

        compiled = jit(total)
    '''))
    script = textwrap.dedent(f'''
        import resource, signal, sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))   # every cache write fails
        import cached_sum
        print(cached_sum.compiled(np.arange(5.0)))
    ''')
    cache = tmp_path / "cache"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={"NUMBA_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": ":".join(sys.path),
                               "PYTHONDONTWRITEBYTECODE": "1"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "10.0"
    # nothing half-written left behind: no temporary files, no data file over the limit
    leftovers = [p for p in cache.rglob("*") if p.is_file() and ".tmp." in p.name]
    assert leftovers == []


def test_the_same_compile_without_the_guard_fails_as_numba_does(tmp_path):
    """The fault the guard exists for is real (if Numba starts guarding it itself, this
    test says so and the guard can go)."""
    (tmp_path / "bare_sum.py").write_text("def total(x):\n    return x.sum()\n")
    script = textwrap.dedent(f'''
        import resource, signal, sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numba, numpy as np
        import bare_sum
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))
        try:
            numba.njit(cache=True)(bare_sum.total)(np.arange(5.0))
        except OSError as exc:
            print(exc.errno)
    ''')
    mod = tmp_path / "bare.py"
    mod.write_text(script)
    proc = subprocess.run([sys.executable, str(mod)], capture_output=True, text=True,
                          env={"NUMBA_CACHE_DIR": str(tmp_path / "cache"),
                               "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path),
                               "PYTHONDONTWRITEBYTECODE": "1"},
                          timeout=300)
    assert proc.stdout.strip() == str(errno.EFBIG), proc.stderr


def _write(path, text):
    """Write ``text`` to ``path`` unless it holds it already (its time left as it was)."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _callee(folder, value, base=0):
    """A callee file returning ``x + value + base_mod.base(x)``, and a third file
    ``base_mod`` (the callee's own callee) returning ``base``; a file whose text is the
    same is not written again."""
    _write(folder / "base_mod.py", textwrap.dedent(f'''
        from bayeschain.chains.jit import jit

        def base(x):
            return {base}.0

        base = jit(base)
    '''))
    _write(folder / "callee_mod.py", textwrap.dedent(f'''
        import base_mod
        from bayeschain.chains.jit import jit

        def value(x):
            return x + {value} + base_mod.base(x)

        value = jit(value)
    '''))


def _caller(folder):
    """A caller file (two compiled functions and a C callback) calling the callee, written
    the way the package's kernels are: the callee bound as a compiled global first."""
    (folder / "caller_mod.py").write_text(textwrap.dedent('''
        import numba
        import callee_mod
        from callee_mod import value as imported_value
        from bayeschain.chains.jit import cached_cfunc, jit

        def through_module(x):
            return callee_mod.value(x) * 10

        def through_global(x):
            return imported_value(x) * 100

        through_module = jit(through_module)
        through_global = jit(through_global)

        def callback(x):
            return imported_value(x) * 1000

        callback = cached_cfunc(numba.types.float64(numba.types.float64), callback)
    '''))


def _run(folder, script):
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={"NUMBA_CACHE_DIR": str(folder / "cache"),
                               "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": ":".join([str(folder), *sys.path]),
                               "PYTHONDONTWRITEBYTECODE": "1"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_a_cached_caller_runs_its_callees_current_source(tmp_path):
    """A compiled caller cached on disk, whose callee in another file is then edited
    (its value, and its file's size), runs the edited callee in the next process: through
    a module attribute, through an imported global and as a C callback; and so when the
    callee's own callee, in a third file, is edited.  Between the edits, a new process
    reads all three from the cache (no compile)."""
    script = ("import caller_mod; print(caller_mod.through_module(1.0), "
              "caller_mod.through_global(1.0), caller_mod.callback.ctypes(1.0), "
              "sum(caller_mod.through_module.stats.cache_hits.values()), "
              "sum(caller_mod.through_global.stats.cache_hits.values()), "
              "caller_mod.callback.cache_hits)")
    _callee(tmp_path, 1)
    _caller(tmp_path)
    assert _run(tmp_path, script) == ["20.0", "200.0", "2000.0", "0", "0", "0"]
    assert _run(tmp_path, script) == ["20.0", "200.0", "2000.0", "1", "1", "1"]
    _callee(tmp_path, 22)                       # the caller's file is left as it was
    assert _run(tmp_path, script) == ["230.0", "2300.0", "23000.0", "0", "0", "0"]
    assert _run(tmp_path, script) == ["230.0", "2300.0", "23000.0", "1", "1", "1"]
    before = (tmp_path / "callee_mod.py").stat().st_mtime_ns
    _callee(tmp_path, 22, base=300)             # only the third file changes
    assert (tmp_path / "callee_mod.py").stat().st_mtime_ns == before
    assert _run(tmp_path, script) == ["3230.0", "32300.0", "323000.0", "0", "0", "0"]


def test_numba_alone_keeps_the_callee_it_cached(tmp_path):
    """The fault the key exists for is real: ``numba.njit(cache=True)`` keys an entry by
    its own file only, and runs the callee it linked before the edit (if Numba starts
    keying callees itself, this test says so and the key can go)."""
    def callee(value):
        (tmp_path / "bare_callee.py").write_text(
            f"import numba\n\n@numba.njit(cache=True)\ndef value(x):\n    return x + {value}\n")

    (tmp_path / "bare_caller.py").write_text(
        "import numba\nfrom bare_callee import value\n\n"
        "@numba.njit(cache=True)\ndef call(x):\n    return value(x) * 10\n")
    script = "import bare_caller; print(bare_caller.call(1.0))"
    callee(1)
    assert _run(tmp_path, script) == ["20.0"]
    callee(22)
    assert _run(tmp_path, script) == ["20.0"]


def test_a_kernel_naming_numpys_deprecated_aliases_compiles_with_warnings_as_errors(tmp_path):
    """Reading a kernel's callees looks up the names its code uses on the modules it names:
    ``np.str`` warns (FutureWarning) in NumPy 1.26 and 2.x, and with warnings as errors
    (the compatibility stage) that lookup failed the compile (20 tests of the minimum
    environment).  The kernel compiles, runs and is cached."""
    (tmp_path / "alias_mod.py").write_text(textwrap.dedent('''
        import numpy as np
        from bayeschain.chains.jit import jit

        def kernel(x):
            s = 0.0
            for v in x:
                s += np.sqrt(v) if len(str(1)) == 1 else v
            return s

        kernel = jit(kernel)
    '''))
    script = ("import numpy as np, alias_mod; "
              "print(alias_mod.kernel(np.array([4.0, 9.0])))")
    proc = subprocess.run([sys.executable, "-W", "error::FutureWarning", "-W",
                           "error::DeprecationWarning", "-c", script], capture_output=True,
                          text=True, env={"NUMBA_CACHE_DIR": str(tmp_path / "cache"),
                                          "PATH": "/usr/bin:/bin",
                                          "PYTHONPATH": ":".join([str(tmp_path), *sys.path]),
                                          "PYTHONDONTWRITEBYTECODE": "1"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["5.0"]


def test_a_modules_kernels_are_compiled_all_or_none(monkeypatch):
    """When compiling one of a module's kernels fails, none is bound: the module keeps
    its Python functions and the next call compiles them all (a table filled part way
    answered the next call with a KeyError)."""
    from bayeschain.chains import jit as jit_module

    def first(x):
        return x + 1

    def second(x):
        return x * 2

    namespace = {"first": first, "second": second}
    failures = ["second"]

    def compile_once_failing(func, **options):
        if func.__name__ in failures:
            failures.remove(func.__name__)
            raise RuntimeError("the compiler failed")
        return ("compiled", func, options)

    monkeypatch.setattr(jit_module, "jit", compile_once_failing)
    with pytest.raises(RuntimeError, match="the compiler failed"):
        jit_module.jit_globals(namespace, ("first", "second"), nogil=True)
    assert namespace == {"first": first, "second": second}
    done = jit_module.jit_globals(namespace, ("first", "second"), nogil=True)
    assert done == {"first": ("compiled", first, {"nogil": True}),
                    "second": ("compiled", second, {"nogil": True})}
    assert namespace == done


def test_a_caller_runs_whichever_kernel_it_is_handed_the_address_of():
    """:func:`function_pointers`: one compiled caller runs two kernels of one signature by
    their addresses, with each kernel's own result (arrays passed and written through),
    compiled once for both, and without compiling a kernel itself (its code is not
    linked into the caller's)."""
    import numba
    import numpy as np
    from numba import types

    from bayeschain.chains.jit import function_pointers

    signature = types.float64(types.float64[:, ::1], types.float64[::1])
    address, function_at = function_pointers(signature)

    @numba.njit
    def total(a, out):
        for j in range(a.shape[1]):
            out[j] += a[:, j].sum()
        return a.sum()

    @numba.njit
    def largest(a, out):
        for j in range(a.shape[1]):
            out[j] = a[:, j].max()
        return a.max()

    @numba.njit
    def twice(kernel, a, out):
        run = function_at(kernel)
        return run(a, out) + run(a, out)

    a = np.arange(6.0).reshape(2, 3)
    out = np.zeros(3)
    twice.compile((types.intp, *signature.args))
    assert not total.signatures and not largest.signatures   # nothing of theirs linked in
    assert twice(address(total), a, out) == 30.0
    assert out.tolist() == [6.0, 10.0, 14.0]
    assert twice(address(largest), a, out) == 10.0
    assert out.tolist() == [3.0, 4.0, 5.0]
    assert len(twice.signatures) == 1
    assert total.signatures == largest.signatures == [signature.args]


@pytest.mark.parametrize("jobs", [0, 1, 7, 100, 1000])
def test_threads_run_every_job_exactly_once(jobs):
    import numpy as np

    from bayeschain.chains.jit import run_in_threads

    done = np.zeros(jobs, dtype=int)
    calls = []

    def kernel(out, first, last):
        calls.append((first, last))
        for j in range(first, last):
            out[j] += 1

    run_in_threads(kernel, jobs, done)
    np.testing.assert_array_equal(done, np.ones(jobs, dtype=int))
    assert all(first < last for first, last in calls) or jobs == 0


def test_threads_follow_the_cpus_the_process_may_run_on_not_the_machines():
    """Pinned to one CPU of a machine of several (``sched_setaffinity``, as a container or
    ``taskset`` does), a process counts one usable core and runs the jobs in one call."""
    import os

    if not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2:
        pytest.skip("needs CPU affinity and a machine of two CPUs or more")
    code = textwrap.dedent("""
        import os
        from bayeschain.chains.jit import run_in_threads, usable_cores
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        calls = []
        run_in_threads(lambda first, last: calls.append((first, last)), 100)
        print(usable_cores(), os.cpu_count(), calls)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    usable, machine, calls = done.stdout.split(maxsplit=2)
    assert int(usable) == 1 < int(machine)
    assert calls.strip() == "[(0, 100)]"
