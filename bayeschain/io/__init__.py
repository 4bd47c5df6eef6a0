"""Input and output: TREC runs and qrels, ranked relevance matrices, safe writes."""

from .clickformats import read_clicks, read_trec_session, read_wscd, read_yandex
from .clicklog import ClickLog, read_canonical, write_canonical
from .clickstats import click_statistics
from .clickstats_pandas import observations
from .clickstats_tables import ClickStats
from .lists import RankedLists, ranked_lists
from .trec import read_qrels, read_run, read_runs
from .write import atomic_write_text

__all__ = ["ClickLog", "ClickStats", "RankedLists", "atomic_write_text", "click_statistics",
           "observations", "ranked_lists", "read_canonical", "read_clicks", "read_qrels",
           "read_run", "read_runs", "read_trec_session", "read_wscd", "read_yandex",
           "write_canonical"]
