"""bayeschain: evaluate search systems with Markov-chain user models learned from clicks.

``import bayeschain as bc``.  Public names are loaded on first use, so importing the package
is fast and pulls in none of the heavy libraries (not even NumPy) until they are needed.
"""

from __future__ import annotations

import warnings

from .lazy import lazy_names

__version__ = "0.1.0"

# ArviZ's last 0.x releases print a FutureWarning about their coming 1.x refactor on import
# (0.23.4: on the first import of each day, a stamp under the user's cache folder): nutpie
# and PyMC import ArviZ on every fit, so a user's first command of the day met a warning
# that asks nothing of them.  This one message is filtered; every other warning of ArviZ
# still reaches the user.
warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing a major refactor",
                        category=FutureWarning)

# public name -> module that defines it
_PUBLIC = {
    "chains": "bayeschain.chains",
    "browsing": "bayeschain.browsing",
    "measures": "bayeschain.measures",
    "io": "bayeschain.io",
    "evaluate": "bayeschain.measures",
    "parse_measure": "bayeschain.measures",
    "path_distribution": "bayeschain.measures",
    "stochastic_dominance": "bayeschain.measures",
    "read_qrels": "bayeschain.io",
    "read_run": "bayeschain.io",
    "read_clicks": "bayeschain.io",
    "click_statistics": "bayeschain.io",
    "ClickLog": "bayeschain.io",
    "simulate_click_log": "bayeschain.simulate",
    "inference": "bayeschain.inference",
    "fit": "bayeschain.inference",
    "load_spec": "bayeschain.inference",
    "Posterior": "bayeschain.inference",
    "score": "bayeschain.scoring",
    "score_sessions": "bayeschain.scoring",
    "path_cdf_bands": "bayeschain.scoring",
    "posterior_from_parameters": "bayeschain.inference",
    "dominance_probability": "bayeschain.comparison",
    "scoring": "bayeschain.scoring",
    "comparison": "bayeschain.comparison",
    "walk_parameters": "bayeschain.inference",
    "predict_clicks": "bayeschain.inference",
    "heldout_click_metrics": "bayeschain.inference",
    "heldout_click_arrays": "bayeschain.inference",
    "perplexity_difference": "bayeschain.inference",
    "compare": "bayeschain.comparison",
    "Comparison": "bayeschain.comparison",
    "evaluate_runs": "bayeschain.evaluation",
    "simulate": "bayeschain.simulate",
    "errors": "bayeschain.errors",
    "Tridiagonal": "bayeschain.chains",
    "simulate_users": "bayeschain.simulate",
    "BayeschainError": "bayeschain.errors",
    "ChainError": "bayeschain.errors",
    "FormatError": "bayeschain.errors",
    "ParameterError": "bayeschain.errors",
}

__all__ = sorted(_PUBLIC) + ["__version__"]


__getattr__, __dir__ = lazy_names(__name__, _PUBLIC, globals())
