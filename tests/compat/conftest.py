"""The compatibility stage: tests that build fresh virtual environments (other Pythons,
the minimum versions pyproject.toml allows, one extra alone).  They take minutes and
download packages, so they run only when asked for:

    python3 -m pytest tests/compat -m compat -n 0

(CI's compatibility stage, ``.ci/run``).  ``BAYESCHAIN_COMPAT_DIR`` keeps the
environments between runs (default: a temporary folder of the session).
"""

import pytest


def pytest_collection_modifyitems(config, items):
    if "compat" in (config.getoption("markexpr", "") or ""):
        return
    skip = pytest.mark.skip(reason="builds fresh virtual environments: run with -m compat "
                                   "(CI's compatibility stage)")
    for item in items:
        if "compat" in item.keywords:
            item.add_marker(skip)
