"""Shared test helpers: random chains and brute-force references written independently
of the solvers under test (dense inverses, explicit matrix powers, path enumeration)."""

from __future__ import annotations

import os

# The suite runs on two xdist workers (pyproject.toml), one per core.  NumPy's and SciPy's
# OpenBLAS would each start a thread per core in every worker and in every command a test
# runs; after a call those threads spin for work before they sleep, on the core the other
# worker needs.  One BLAS thread per process (unless the environment says otherwise).
# The whole suite, one run each, one after the other on 2026-12-01: 430.9 s (user CPU 801 s)
# against 444.6 s (831 s) with OPENBLAS_NUM_THREADS=2; the walk's Laplace tests, the topic
# model and the chain solvers in one process: 74.5 s of CPU against 82.5 s.  Set before
# NumPy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import pytest
from hypothesis import strategies as st

from bayeschain.chains import Tridiagonal


def random_substochastic(rng, batch_shape, n, *, max_exit=0.6, min_exit=0.05, density=1.0):
    """Random transient blocks whose every row leaves with probability >= min_exit."""
    m = rng.random(tuple(batch_shape) + (n, n)) * (rng.random((n, n)) < density)
    m = m + 1e-3 * np.eye(n)  # keep every row non-empty
    keep = 1.0 - rng.uniform(min_exit, max_exit, size=tuple(batch_shape) + (n, 1))
    return m / m.sum(axis=-1, keepdims=True) * keep


def random_walk(rng, batch_shape, n, *, min_exit=0.05):
    """Random forward/backward walk with stop probability >= min_exit in every state."""
    w = rng.random(tuple(batch_shape) + (n, 3))  # (backward, stop, forward) weights
    w[..., 0, 0] = 0.0   # no backward move from the first state
    w[..., -1, 2] = 0.0  # no forward move from the last state
    w = w / w.sum(axis=-1, keepdims=True)
    stop = np.maximum(w[..., 1], min_exit)
    moves = w[..., 0] + w[..., 2]
    scale = np.where(moves > 0, (1 - stop) / np.where(moves > 0, moves, 1), 0.0)
    return Tridiagonal(w[..., 0] * scale, np.zeros(w.shape[:-1]), w[..., 2] * scale)


def constant_walk(p, q, n, p_first=None, q_last=None):
    """The paper's Section 3 walk: forward p, backward q; rank 1 and rank N boundary rows."""
    lower = np.full(n, float(q))
    upper = np.full(n, float(p))
    lower[0] = 0.0
    upper[-1] = 0.0
    if p_first is not None:
        upper[0] = p_first
    if q_last is not None:
        lower[-1] = q_last
    return Tridiagonal(lower, np.zeros(n), upper)


def dense_fundamental(q):
    q = np.asarray(q, dtype=float)
    return np.linalg.inv(np.eye(q.shape[-1]) - q)


def brute_expected_ratio(q, rho, effort, start=0, n_max=400):
    """E[T/f(H)] = sum_n (1/f(n)) sum_{m<=n} e_s Q^(m-1) diag(rho) Q^(n-m) s, by matrix powers."""
    q = np.asarray(q, dtype=float)
    n_states = q.shape[0]
    s = 1 - q.sum(axis=1)
    powers = [np.eye(n_states)]
    for _ in range(n_max):
        powers.append(powers[-1] @ q)
    e = np.zeros(n_states)
    e[start] = 1
    total = 0.0
    for n in range(1, n_max + 1):
        acc = sum(e @ powers[m - 1] @ np.diag(rho) @ powers[n - m] @ s for m in range(1, n + 1))
        total += acc / effort(n)
    return total


def enumerate_paths(q, rho, start, depth):
    """Every path of at most ``depth`` visits: dict (H, T) -> probability (exact, tiny chains)."""
    q = np.asarray(q, dtype=float)
    s = 1 - q.sum(axis=1)
    out: dict[tuple[int, int], float] = {}

    def walk(state, h, t, prob):
        t = t + int(rho[state])
        out[(h, t)] = out.get((h, t), 0.0) + prob * s[state]
        if h == depth:
            return
        for j in range(q.shape[0]):
            if q[state, j] > 0:
                walk(j, h + 1, t, prob * q[state, j])

    walk(start, 1, 0, 1.0)
    return out


@st.composite
def substochastic_matrices(draw, max_n=6):
    """Hypothesis strategy: a random (N, N) substochastic matrix with certain absorption."""
    n = draw(st.integers(1, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    density = draw(st.sampled_from([1.0, 0.5, 0.3]))
    rng = np.random.default_rng(seed)
    return random_substochastic(rng, (), n, density=density)


@pytest.fixture
def rng():
    return np.random.default_rng(20201014)


#: the test files that take longest (seconds of test time on 2 cores, ``--durations=0``
#: from an empty Numba cache, as CI runs, 2026-12-01), run first and in this order: a free
#: xdist worker takes the next unit of work in collection order (``--no-loadscope-reorder``
#: in pyproject.toml; by default xdist's loadgroup sorts the units by their number of
#: tests, and ran the split files' one-test units, the longest, last).  The dwell model's
#: file (PyMC) comes first: one worker starts on it while the other compiles the walk's
#: Numba kernels on its first fit; begun on two walk fits, both workers compiled them at
#: once (25-30 s each).  The two workers stay busy to the end in any order: the suite's
#: wall is about its CPU time over two (``benchmarks/RESULTS.md``)
LONGEST_FILES = ("tests/inference/dwell/test_model.py",             # 92
                 "tests/inference/walk/test_fit_documents.py",     # 203
                 "tests/test_notebooks.py",                         # 106
                 "tests/inference/walk/test_documents_at_mode.py",  # 62
                 "tests/cli/test_prewarm.py",                       # 54
                 "tests/inference/walk/test_decided_once.py",       # 48
                 "tests/cli/test_fit.py",                           # 47
                 "tests/faults/test_signals.py",                    # 47
                 "tests/inference/walk/test_sampler.py",            # 42
                 "tests/inference/walk/test_fit.py",                # 37
                 "tests/test_package.py",                           # 36
                 "tests/inference/walk/test_files.py",              # 32
                 "tests/cli/test_reliability.py")                   # 32
#: files whose tests share no costly fixture, handed to the workers test by test (each
#: notebook, the demo, each NUTS recovery is a minute alone); every other file stays on
#: one worker (``--dist loadgroup`` with the file as its group: its module fixtures, fits
#: among them, are computed once)
SPLIT_FILES = ("tests/test_notebooks.py", "tests/inference/walk/test_sampler.py",
               "tests/test_package.py", "tests/inference/walk/test_fit_documents.py")


@pytest.hookimpl(tryfirst=True)     # before xdist's worker reads the groups
def pytest_collection_modifyitems(config, items):
    """Longest files first (see :data:`LONGEST_FILES`), the rest in collection order; each
    file one xdist group but :data:`SPLIT_FILES`."""
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
    for item in items:
        path = item.nodeid.split("::")[0]
        if path not in SPLIT_FILES:
            item.add_marker(pytest.mark.xdist_group(path))


#: the environment variables that choose where compiled code is cached (and HOME, which
#: the defaults derive from): a test that leaves one changed sends every later child
#: process of its worker to compile afresh
CACHE_VARIABLES = ("HOME", "XDG_CACHE_HOME", "NUMBA_", "PYTENSOR", "BAYESCHAIN_")


def _cache_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(CACHE_VARIABLES)}


@pytest.fixture(autouse=True)
def _cache_environment_restored():
    """Each test leaves the cache variables as it found them (:data:`CACHE_VARIABLES`)."""
    before = _cache_environment()
    yield
    after = _cache_environment()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"the test left the environment changed: {changed}"
