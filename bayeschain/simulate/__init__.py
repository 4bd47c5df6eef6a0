"""Monte-Carlo users and synthetic click logs.

``simulate_users`` (the independent check of the exact solvers; its home is
:mod:`bayeschain.chains.simulation`) and ``simulate_click_log`` (a canonical click log from
a known walk with clicks).  Names load on first use, so ``simulate_users`` does not pull in
pandas.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "SimulatedUsers": "bayeschain.chains.simulation",
    "geometric_loss_gain": "bayeschain.chains.simulation",
    "simulate_users": "bayeschain.chains.simulation",
    "simulate_click_log": "bayeschain.simulate.clicklog",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'bayeschain.simulate' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
