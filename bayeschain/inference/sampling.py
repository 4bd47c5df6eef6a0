"""What every fit shares around its sampler: the log's statistics, Ctrl-C during sampling
(:class:`SamplingInterrupted`), the check that a fit returned every draw it asked for, and
the NUTS diagnostics' warning."""

from __future__ import annotations

import signal
import threading
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..io.clicklog import ClickLog
from ..io.clickstats import click_statistics
from ..io.clickstats_tables import ClickStats
from ..posterior.container import Posterior

RHAT_LIMIT = 1.01


ESS_LIMIT = 400


class SamplingInterrupted(KeyboardInterrupt):
    """A NUTS fit was interrupted (or stopped short): no posterior is returned."""


@contextmanager
def interrupt_watch():
    """While sampling, note a SIGINT (and still raise ``KeyboardInterrupt`` as Python
    does): nutpie and PyMC catch it and return a partial trace, so the note is the only
    trace of the user's Ctrl-C.  Yields a dict whose ``"interrupted"`` says if one came."""
    seen = {"interrupted": False}
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous in (signal.SIG_IGN, None):
        yield seen
        return

    def handler(signum, frame):
        seen["interrupted"] = True
        if callable(previous):
            previous(signum, frame)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)


def check_complete(seen: dict, arrays, chains: int, draws: int) -> None:
    """Refuse a partial trace: an interrupt during sampling, fewer (chain, draw) cells than
    asked, or non-finite draws (nutpie pads the chains it stopped with NaN)."""
    if seen["interrupted"]:
        raise SamplingInterrupted("sampling was interrupted")
    for values in arrays:
        values = np.asarray(values)
        got = tuple(values.shape[:2])
        if got != (chains, draws):
            raise SamplingInterrupted(f"sampling stopped short: {got[0]} chains x "
                                      f"{got[1] if len(got) > 1 else 0} draws of "
                                      f"{chains} x {draws}")
        if values.dtype.kind == "f" and not np.isfinite(values).all():
            missing = int((~np.isfinite(values)).reshape(chains, draws, -1).any(axis=2).sum())
            raise SamplingInterrupted(f"sampling stopped short: {missing} of "
                                      f"{chains * draws} draws missing")


def statistics_of(log_or_stats, backend: str = "duckdb") -> ClickStats:
    """Accept a ClickStats, a ClickLog, a canonical DataFrame or a path."""
    if isinstance(log_or_stats, ClickStats):
        return log_or_stats
    if isinstance(log_or_stats, ClickLog | pd.DataFrame):
        return click_statistics(log_or_stats, backend=backend)
    from ..io.clickformats import read_clicks

    return click_statistics(read_clicks(log_or_stats), backend=backend)


def as_log(log) -> ClickLog:
    if isinstance(log, ClickLog):
        return log
    if isinstance(log, ClickStats):
        raise ParameterError("the examination walk is fitted to the click log itself (its "
                             "pages and their clicks), not to aggregated statistics")
    if isinstance(log, pd.DataFrame):
        return ClickLog(log)
    from ..io.clickformats import read_clicks

    return read_clicks(log)


def check_diagnostics(posterior: Posterior) -> pd.DataFrame:
    """R-hat, ESS and divergences of a NUTS fit, with a warning when any is off (for
    the sampled parameters: exact independent draws beside them have nothing to
    converge)."""
    table = posterior.diagnostics(sampled_only=True)
    problems = []
    if (table["max_rhat"] > RHAT_LIMIT).any():
        problems.append(f"R-hat up to {table['max_rhat'].max():.3f} (> {RHAT_LIMIT})")
    if (table["min_ess"] < ESS_LIMIT).any():
        problems.append(f"bulk ESS down to {table['min_ess'].min():.0f} (< {ESS_LIMIT})")
    if posterior.divergences():
        problems.append(f"{posterior.divergences()} divergent transitions")
    if problems:
        warnings.warn("NUTS diagnostics: " + "; ".join(problems) + ". Run more tuning or "
                      "draws, raise target_accept, or simplify the model.", stacklevel=2)
    return table
