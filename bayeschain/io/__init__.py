"""Input and output: TREC runs and qrels, ranked relevance matrices, safe writes.

Names are loaded on first use, so that ``from bayeschain.io.trec import read_run_table``
(what ``bayeschain eval`` reads runs with) pulls in neither pandas nor the click-log
readers.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> submodule that defines it
_PUBLIC = {
    "read_clicks": "clickformats", "read_trec_session": "clickformats",
    "read_wscd": "clickformats", "read_yandex": "clickformats",
    "ClickLog": "clicklog", "read_canonical": "clicklog", "write_canonical": "clicklog",
    "click_statistics": "clickstats",
    "observations": "clickstats_pandas",
    "ClickStats": "clickstats_tables",
    "RankedLists": "lists", "ranked_lists": "lists",
    "read_qrels": "trec", "read_run": "trec", "read_runs": "trec",
    "atomic_write_text": "write",
}

__all__ = ["ClickLog", "ClickStats", "RankedLists", "atomic_write_text", "click_statistics",
           "observations", "ranked_lists", "read_canonical", "read_clicks", "read_qrels",
           "read_run", "read_runs", "read_trec_session", "read_wscd", "read_yandex",
           "write_canonical"]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'bayeschain.io' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(__all__) | {n for n in globals() if not n.startswith("_")})
