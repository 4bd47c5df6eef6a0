"""The posterior: the contract between fitting and scoring.

A fit (:mod:`bayeschain.inference`) writes a :class:`Posterior`; scoring, comparison and
simulation read one.  This package holds everything both sides share and nothing of how a
posterior is fitted (no PyMC, no nutpie):

* :mod:`.container` the :class:`Posterior` (draws, provenance, summaries) and
  :mod:`.storage` its file (content digest, domain checks);
* :mod:`.vocabulary` the names of variables, dims and moves;
* :mod:`.metadata` the provenance attrs, read once into a typed record;
* :mod:`.draws` flattened draws, draw subsets and blocks;
* the parameters each measure family reads: :mod:`.walk` (P@H's walk, drwbm, MsM's
  session walk, the walk's tables per page), :mod:`.jumps` (Markov Precision's jump
  kernel), :mod:`.dwell` (holding rates, the dwell model's means and laws);
* :mod:`.construct` a posterior from given parameters;
* :mod:`.diagnostics` split-R-hat and bulk ESS.
"""

from .construct import posterior_from_parameters
from .container import Posterior
from .draws import draw_indices, draws_of
from .walk import (
           expected_clicks,
           expected_visits,
           session_parameters,
           walk_parameters,
           walk_summary,
)

__all__ = ["Posterior", "draw_indices", "draws_of", "expected_clicks", "expected_visits",
           "posterior_from_parameters", "session_parameters", "walk_parameters",
           "walk_summary"]
