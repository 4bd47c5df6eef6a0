"""The compatibility stage: tests that build fresh virtual environments (other Pythons,
the minimum versions pyproject.toml allows, one extra alone).  They take minutes and
download packages, so they run only when asked for:

    python3 -m pytest tests/compat -m compat -n 0

(CI's compatibility stage, ``.ci/run``).  ``BAYESCHAIN_COMPAT_DIR`` keeps the
environments between runs (default: a temporary folder of the session, made here once for
every test worker and removed when the session ends).
"""

import os
import shutil
import tempfile

import pytest

_MADE: list[str] = []


def pytest_configure(config):
    """The session's folder of environments, shared by the workers (they inherit the
    variable): without it each worker would build every environment (5 GB) for itself."""
    if hasattr(config, "workerinput") or os.environ.get("BAYESCHAIN_COMPAT_DIR"):
        return
    if "compat" not in (config.getoption("markexpr", "") or ""):
        return
    _MADE.append(tempfile.mkdtemp(prefix="bayeschain-compat-"))
    os.environ["BAYESCHAIN_COMPAT_DIR"] = _MADE[-1]


def pytest_unconfigure(config):
    while _MADE:
        shutil.rmtree(_MADE.pop(), ignore_errors=True)
        os.environ.pop("BAYESCHAIN_COMPAT_DIR", None)


def pytest_collection_modifyitems(config, items):
    if "compat" in (config.getoption("markexpr", "") or ""):
        return
    skip = pytest.mark.skip(reason="builds fresh virtual environments: run with -m compat "
                                   "(CI's compatibility stage)")
    for item in items:
        if "compat" in item.keywords:
            item.add_marker(skip)
