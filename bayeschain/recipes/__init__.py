"""Recipes: the library pieces of the demos (systems and sessions built from a log; the
paper's toy example and the bundled data)."""

from .log_systems import session_matrices, session_qrels, systems_from_log
from .toy import bundled_data_dir, paper_walk, read_relevance_table

__all__ = ["bundled_data_dir", "paper_walk", "read_relevance_table", "session_matrices",
           "session_qrels", "systems_from_log"]
