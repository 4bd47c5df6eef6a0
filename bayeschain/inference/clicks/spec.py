"""The keys of ``[transitions]`` and ``[jumps]`` and their validation: each table checked,
with its defaults filled in, or a :class:`~bayeschain.errors.FormatError` naming the spec
file and the key."""

from __future__ import annotations

from ...errors import FormatError, ParameterError
from ..keys import PARAMETRISATIONS, check_finite, check_table, is_number

#: what can follow a click: the next click lies below, lies above, the user stops, or
#: reformulates the query
CATEGORIES = ("forward", "backward", "stop", "reformulate")

#: the keys of ``[transitions]``: key -> (type, allowed values or None, default)
TRANSITION_KEYS = {"categories": (list, CATEGORIES, list(CATEGORIES)),
                   "parametrisation": (str, PARAMETRISATIONS, "per-rank"),
                   "prior": (list, None, None),
                   "by_relevance": (bool, None, False)}

#: posterior variables of the section
TRANSITION_VARIABLES = ("transition",)


def validate_transitions(section: dict, source: str = "<string>") -> dict:
    """The ``[transitions]`` table with its defaults, or a
    :class:`~bayeschain.errors.FormatError` naming ``source`` and the key: at least two
    distinct categories, one positive finite Dirichlet concentration per category."""
    clean = check_table("transitions", section, TRANSITION_KEYS, source)
    names, prior = clean["categories"], clean["prior"]
    if len(set(names)) != len(names) or len(names) < 2:
        raise FormatError("[transitions] categories must be at least two distinct names",
                          file=source)
    if len(prior) != len(names) or not all(is_number(a) and a > 0 for a in prior):
        raise FormatError("[transitions] prior must give one positive Dirichlet "
                          "concentration per category", file=source)
    check_finite("transitions", "prior", prior, source)
    return clean


def check_fit(section: dict) -> None:
    """Refuse what ``fit`` cannot do with the section: transitions by relevance."""
    if section["by_relevance"]:
        raise ParameterError("click-to-click transitions by relevance are not the walk's "
                             "moves; fit the walk by relevance with the spec "
                             "'walk-relevance'")


def categories(section: dict | None) -> tuple[str, ...]:
    """The categories to count: the section's, or all of them without the section."""
    return tuple(section["categories"]) if section is not None else CATEGORIES


def transition_predictive_checks(section: dict) -> tuple[str, ...]:
    return ("backward_share",)


#: free Dirichlet rows, or the paper's distance decays (inverse distance, log inverse)
JUMP_FAMILIES = ("free", "ID", "LID")

#: the keys of ``[jumps]``: key -> (type, allowed values or None, default)
JUMP_KEYS = {"family": (str, JUMP_FAMILIES, "free"),
             "prior": (list, None, [1.0])}

#: posterior variables of the section
JUMP_VARIABLES = ("jump", "jump_exponent")


def validate_jumps(section: dict, source: str = "<string>") -> dict:
    """The ``[jumps]`` table with its defaults, or a :class:`~bayeschain.errors.FormatError`
    naming ``source`` and the key: the prior is one positive finite concentration for
    ``free``, a Gamma(shape, rate) with positive finite parameters for ``ID`` / ``LID``."""
    clean = check_table("jumps", section, JUMP_KEYS, source)
    prior = clean["prior"]
    need = 1 if clean["family"] == "free" else 2
    if len(prior) != need or not all(is_number(a) and a > 0 for a in prior):
        raise FormatError("[jumps] prior: one positive Dirichlet concentration for "
                          "family 'free', Gamma(shape, rate) of the decay exponent for "
                          "'ID' / 'LID'", file=source)
    check_finite("jumps", "prior", prior, source)
    return clean


def jump_predictive_checks(section: dict) -> tuple[str, ...]:
    return ()
