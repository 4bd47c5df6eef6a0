"""Posterior scoring: every posterior draw of the user model pushed through the exact solvers.

``score`` (runs x topics), ``score_sessions`` (MsM of sessions), ``path_cdf_bands`` (the law
of P@H of one list, banded over draws).  Which measure takes which parameter from the
posterior is declared by the measure (:mod:`bayeschain.measures`); the map from a posterior
to the chain's parameters lives in :mod:`bayeschain.posterior.walk`.
"""

from .bands import path_cdf_bands
from .score import score
from .sessions import score_sessions

__all__ = ["path_cdf_bands", "score", "score_sessions"]
