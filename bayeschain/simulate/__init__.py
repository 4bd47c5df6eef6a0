"""Monte-Carlo users and synthetic click logs.

``simulate_users`` (the independent check of the exact solvers; its home is
:mod:`bayeschain.chains.simulation`) and ``simulate_click_log`` (a canonical click log from
a known walk with clicks).  Names load on first use, so ``simulate_users`` does not pull in
pandas.
"""

from __future__ import annotations

from ..lazy import lazy_names

_HOMES = {
    "SimulatedUsers": "bayeschain.chains.simulation",
    "geometric_loss_gain": "bayeschain.chains.simulation",
    "simulate_users": "bayeschain.chains.simulation",
    "simulate_click_log": "bayeschain.simulate.clicklog",
}

__all__ = sorted(_HOMES)


__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
