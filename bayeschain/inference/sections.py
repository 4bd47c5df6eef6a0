"""The spec sections of the click-to-click and dwell models, one record each.

Each section of a spec is interpreted by its model family: its keys and validation in the
family's ``spec`` module, its formulas, exact conjugate posterior (or the
:class:`~bayeschain.errors.ParameterError` saying to use ``method='nuts'`` when there is
none) and PyMC graph in the section's own module:

* ``[transitions]``, what follows a click on rank ``i``: :mod:`.clicks.spec`,
  :mod:`.clicks.transitions`;
* ``[jumps]``, where the next click lands (Markov Precision): :mod:`.clicks.spec`,
  :mod:`.clicks.jumps`;
* ``[holding]``, the dwell time after a click: :mod:`.dwell.spec`, :mod:`.dwell.holding`.

A :class:`Section` gathers what the fits and the spec reader call. ``[examination]`` (the
walk that P@H scores) is not a section: :mod:`.walk` fits it on its page likelihood.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .clicks import jumps, transitions
from .clicks import spec as clicks_spec
from .dwell import holding
from .dwell import spec as dwell_spec
from .walk import spec as walk_spec


class Section(NamedTuple):
    """What one spec section offers the spec reader and the fits."""

    #: the keys of its table: key -> (type, allowed values or None, default)
    keys: dict
    #: ``validate(table, source)``: the table checked, with its defaults filled in, or a
    #: FormatError naming the spec file ``source`` and the key
    validate: Callable
    #: the names of the posterior variables a fit keeps
    variables: tuple[str, ...]
    #: ``predictive_checks(table)``: the posterior predictive checks of what it learns
    predictive_checks: Callable
    #: ``conjugate_draws(data, table, chains, draws, rng)``: exact posterior draws as
    #: DataArrays with dims ``(chain, draw, ...)``, keyed by variable name
    conjugate_draws: Callable
    #: ``add_to_model(data, table)``: its variables and likelihood in the current PyMC model
    add_to_model: Callable


#: section name -> its record, in the order the fits take them: conjugate draws share one
#: random stream in this order (so it fixes what a seed draws), and the PyMC variables are
#: created in it
SECTIONS = {
    "transitions": Section(clicks_spec.TRANSITION_KEYS, clicks_spec.validate_transitions,
                           clicks_spec.TRANSITION_VARIABLES,
                           clicks_spec.transition_predictive_checks,
                           transitions.conjugate_draws, transitions.add_to_model),
    "jumps": Section(clicks_spec.JUMP_KEYS, clicks_spec.validate_jumps,
                     clicks_spec.JUMP_VARIABLES, clicks_spec.jump_predictive_checks,
                     jumps.conjugate_draws, jumps.add_to_model),
    "holding": Section(dwell_spec.KEYS, dwell_spec.validate, dwell_spec.VARIABLES,
                       dwell_spec.predictive_checks, holding.conjugate_draws,
                       holding.add_to_model),
}


def sections_of(spec) -> list[tuple[Section, dict]]:
    """``(section, table)`` for each of :data:`SECTIONS` that ``spec`` has."""
    return [(section, spec.section(name)) for name, section in SECTIONS.items()
            if spec.section(name) is not None]


def predictive_checks(spec) -> tuple[str, ...]:
    """The posterior predictive checks of a fit of ``spec``, by the sections it has:
    ``"walk"`` ([examination]), ``"backward_share"`` ([transitions]), ``"dwell"``
    ([holding] with a likelihood)."""
    exam = spec.section("examination")
    checks = walk_spec.predictive_checks(exam) if exam is not None else ()
    for section, table in sections_of(spec):
        checks += section.predictive_checks(table)
    return checks
