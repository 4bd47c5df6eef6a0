"""The keys of ``[examination]`` (the walk that P@H scores) and their validation."""

from __future__ import annotations

from ...errors import FormatError
from ...posterior.vocabulary import BOUNDARIES
from ..keys import check_table

#: the keys of ``[examination]``: key -> (type, allowed values or None, default)
KEYS = {"moves": (str, ("pooled", "shared"), "pooled"),
                    "clicks": (str, ("auto", "pooled", "shared", "document"), "auto"),
                    "backward": (bool, None, True),
                    "click_moves": (bool, None, False),
                    "rank_offsets": (bool, None, False),
                    "reclicks": (str, ("fresh", "damped", "once"), "fresh"),
                    "documents": (str, ("auto", "sampled", "mode"), "auto"),
                    "min_impressions": (int, None, 10),
                    "readers": (str, ("one", "query", "topic"), "one"),
                    "reader_pages": (int, None, 100),
                    "boundary": (str, BOUNDARIES, "leave"),
                    "by_relevance": (bool, None, False),
                    "prior_sd": (float, None, 2.0),
                    "deviation_sd": (float, None, 0.5)}


def validate(section: dict, source: str = "<string>") -> dict:
    """The ``[examination]`` table with its defaults, or a
    :class:`~bayeschain.errors.FormatError` naming ``source`` and the key: the prior
    scales positive and finite."""
    clean = check_table("examination", section, KEYS, source)
    for key in ("prior_sd", "deviation_sd"):
        if not 0 < clean[key] < float("inf"):
            raise FormatError(f"[examination] {key} must be a positive number", file=source)
    if clean["reader_pages"] < 1:
        raise FormatError("[examination] reader_pages must be at least 1 (pages of a query "
                          "for it to get a reader of its own)", file=source)
    if clean["readers"] != "one" and (clean["by_relevance"] or clean["click_moves"]
                                      or clean["reclicks"] == "once"):
        raise FormatError(f"[examination] readers = '{clean['readers']}' takes moves that "
                          "depend neither on relevance (by_relevance) nor on the click "
                          "(click_moves), and fresh or damped re-clicks", file=source)
    if clean["min_impressions"] < 1:
        raise FormatError("[examination] min_impressions must be at least 1 (pages showing "
                          "a (query, document) pair for it to get its own attractiveness)",
                          file=source)
    return clean


def predictive_checks(section: dict) -> tuple[str, ...]:
    """The walk's check: its clicks and depths replayed on the log's pages."""
    return ("walk",)
