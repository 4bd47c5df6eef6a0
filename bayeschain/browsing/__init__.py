"""Browsing models: parameters (+ relevance) -> absorbing chains over ranks.

Registered names: ``dfbm``, ``sfbm``, ``rwbm``, ``dcg`` (static) and ``ap``, ``err``,
``drwbm`` (dynamic).  ``build_chain(name, n_ranks, relevance=None, **params)`` builds one.
"""

from . import dynamic, static  # noqa: F401  (registration)
from .base import MODELS, REQUIRED, BrowsingModel, build_chain, get_model, per_rank
from .dynamic import err_satisfaction
from .static import log_discount

__all__ = ["MODELS", "REQUIRED", "BrowsingModel", "build_chain", "err_satisfaction",
           "get_model", "log_discount", "per_rank"]
