"""What a dwell fit needs beyond the per-rank statistics: each click's own dwell
observation, for the dwell model with ``censoring = "examination"``
(:mod:`bayeschain.inference.dwell.model`)."""

from __future__ import annotations

from ...errors import ParameterError
from ...io.clickstats_tables import ClickStats
from ..clicks.data import ModelData, model_data
from ..clicks.spec import categories
from ..sampling import as_log, statistics_of
from ..specs import ModelSpec


def dwell_model_data(log, spec: ModelSpec, trans) -> ModelData:
    """Per-rank counts plus each click's dwell observation (a dwell model on the log's
    own times needs the log, not its statistics)."""
    from dataclasses import replace

    from .data import dwell_observations

    if isinstance(log, ClickStats):
        raise ParameterError("a dwell model with censoring = 'examination' is fitted to the "
                             "click log itself (each click's times), not to aggregated "
                             "statistics")
    log = as_log(log)
    data = model_data(statistics_of(log, backend="pandas"), spec.ranks, categories(trans))
    return replace(data, dwell_obs=dwell_observations(log, spec.ranks))
