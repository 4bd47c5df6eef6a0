"""Input and output: TREC runs and qrels, ranked relevance matrices, safe writes.

Names are loaded on first use, so that ``from bayeschain.io.trec import read_run_table``
(what ``bayeschain eval`` reads runs with) pulls in neither pandas nor the click-log
readers.
"""

from __future__ import annotations

from ..lazy import lazy_names

# public name -> submodule that defines it
_PUBLIC = {
    "read_clicks": ".clickformats", "read_trec_session": ".clickformats",
    "read_wscd": ".clickformats", "read_yandex": ".clickformats",
    "ClickLog": ".clicklog", "read_canonical": ".clicklog", "write_canonical": ".clicklog",
    "click_statistics": ".clickstats",
    "observations": ".clickstats_pandas",
    "ClickStats": ".clickstats_tables",
    "RankedLists": ".lists", "ranked_lists": ".lists",
    "read_qrels": ".trec", "read_run": ".trec", "read_runs": ".trec",
    "atomic_write_text": ".write",
}

__all__ = ["ClickLog", "ClickStats", "RankedLists", "atomic_write_text", "click_statistics",
           "observations", "ranked_lists", "read_canonical", "read_clicks", "read_qrels",
           "read_run", "read_runs", "read_trec_session", "read_wscd", "read_yandex",
           "write_canonical"]


__getattr__, __dir__ = lazy_names(__name__, _PUBLIC, globals())
