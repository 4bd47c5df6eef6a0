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
