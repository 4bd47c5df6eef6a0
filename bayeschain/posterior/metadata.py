"""The provenance of a posterior, read once from its attrs into a typed record.

A fit writes these attrs (netCDF attrs are strings and numbers); readers ask
:attr:`Posterior.metadata <bayeschain.posterior.Posterior.metadata>` rather than parsing
attrs themselves, so a name or default lives here only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Metadata:
    """What a posterior parametrises and how it was fitted."""

    #: ``"walk"``, ``"click-to-click"``, ``"dwell"``, or ``""`` when the file does not say
    parametrises: str = ""
    spec_name: str | None = None
    #: the spec's TOML text, and its digest
    spec: str | None = None
    method: str | None = None
    boundary: str = "leave"              # one of vocabulary.BOUNDARIES
    #: the lowest relevant grade of a walk by relevance; None when the moves do not
    #: depend on relevance
    relevance_level: int | None = None
    #: whether the log told next query and end of session apart
    sessions_observed: bool = True
    #: ``"rank"`` or ``"document"`` for a walk (click probabilities per rank or per
    #: (query, document)); None otherwise
    click_level: str | None = None
    jump_family: str | None = None
    #: the family of the dwell model fitted to each click's observation; None for
    #: exponential holding rates or no dwell parameters
    dwell_family: str | None = None
    #: dwell times the fit saw (0: the log had none, so no holding rates were fitted)
    dwell_observed: int | None = None
    #: where a block of draws starts among all the draws (per-draw random streams)
    draw_offset: int = 0

    @classmethod
    def from_attrs(cls, attrs: dict[str, Any]) -> Metadata:
        def text(key):
            value = attrs.get(key)
            return None if value is None or value == "" else str(value)

        level = int(attrs.get("relevance_level", -1))
        observed = attrs.get("dwell_observed")
        return cls(parametrises=str(attrs.get("parametrises", "")),
                   spec_name=text("spec_name"), spec=text("spec"),
                   method=text("method"),
                   boundary=str(attrs.get("boundary", "leave")),
                   relevance_level=None if level < 0 else level,
                   sessions_observed=bool(int(attrs.get("sessions_observed", 1))),
                   click_level=text("click_level"), jump_family=text("jump_family"),
                   dwell_family=text("dwell_family"),
                   dwell_observed=None if observed is None else int(observed),
                   draw_offset=int(attrs.get("draw_offset", 0)))
