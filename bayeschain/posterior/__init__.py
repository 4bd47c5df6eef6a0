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

from __future__ import annotations

from ..lazy import lazy_names

# names load on first use: a module that needs only the vocabulary (the walk likelihood, in
# the demo's compile children) does not import pandas and xarray with the container
_HOMES = {
    "Posterior": ".container",
    "draw_indices": ".draws",
    "draws_of": ".draws",
    "expected_clicks": ".walk",
    "expected_visits": ".walk",
    "posterior_from_parameters": ".construct",
    "session_parameters": ".walk",
    "walk_parameters": ".walk",
    "walk_summary": ".walk",
}

__all__ = sorted(_HOMES)

__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
