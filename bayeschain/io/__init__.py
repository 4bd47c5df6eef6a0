"""Input and output: TREC runs and qrels, ranked relevance matrices, safe writes."""

from .lists import RankedLists, ranked_lists
from .trec import read_qrels, read_run, read_runs
from .write import atomic_write_text

__all__ = ["RankedLists", "atomic_write_text", "ranked_lists", "read_qrels", "read_run",
           "read_runs"]
