"""Canonical logs breaking one rule each, with the start of the error that names it:
a page announced by two query events, a click before its page's query in seq order (on
the page, or off it: no rank), a click moved into another session than its page's
query, two clicks of a session with the same seq (out of core their order is undefined)."""

import pandas as pd


def malformed_page_logs(events: pd.DataFrame) -> dict[str, tuple[pd.DataFrame, str]]:
    """``name -> (events, expected message)`` from well-formed ``events`` (sorted by seq,
    index 0..n-1, so that index + 1 is the Parquet row)."""
    queries = events.index[events["event"] == "query"]
    twice = events.copy()
    twice.loc[queries[3], "serp_id"] = twice.loc[queries[2], "serp_id"]
    click = events.index[events["event"] == "click"][0]
    serp = events.loc[click, "serp_id"]
    query_row = events.index[(events["event"] == "query") & (events["serp_id"] == serp)][0]
    early = events.copy()
    early.loc[click, "seq"], early.loc[query_row, "seq"] = (events.loc[query_row, "seq"],
                                                            events.loc[click, "seq"])
    off_page = early.copy()                       # the early click off the page (no rank)
    off_page.loc[click, "rank"] = None
    moved = events.copy()
    other = events.loc[events["session_id"] != events.loc[click, "session_id"], "session_id"]
    moved.loc[click, "session_id"] = other.iloc[-1]
    tied = events.copy()
    clicks = events[events["event"] == "click"]
    first, second = clicks.index[clicks["session_id"].duplicated(keep=False)][:2]
    assert events.loc[first, "session_id"] == events.loc[second, "session_id"]
    tied.loc[second, "seq"] = events.loc[first, "seq"]
    return {
        "tied": (tied, f"row {second + 1}: session {events.loc[first, 'session_id']} has two "
                       f"events with seq {events.loc[first, 'seq']}"),
        "twice": (twice, f"row {queries[3] + 1}: result page "
                         f"{events.loc[queries[2], 'serp_id']} is announced by a second "
                         f"query event"),
        "early": (early, f"row {click + 1}: a click on result page {serp} before its "
                         f"query event in seq order"),
        "off_page": (off_page, f"row {click + 1}: a click on result page {serp} before "
                               f"its query event in seq order"),
        "moved": (moved, f"row {click + 1}: result page {serp} has events in two sessions")}
