"""The spec sections of the click-to-click and dwell models, one module each.

Each section of a spec is interpreted in exactly one module, which holds its keys and their
validation, its formulas, its exact conjugate posterior (or the
:class:`~bayeschain.errors.ParameterError` saying to use ``method='nuts'`` when there is
none) and its PyMC graph:

* :mod:`.transitions`: ``[transitions]``, what follows a click on rank ``i``;
* :mod:`.jumps`: ``[jumps]``, where the next click lands (Markov Precision);
* :mod:`.holding`: ``[holding]``, the dwell time after a click.

Every section module offers

* ``KEYS`` and ``validate(section, source)``: the keys of its table (type, allowed values,
  default) and the table checked, with its defaults filled in, or a
  :class:`~bayeschain.errors.FormatError` naming the spec file ``source`` and the key
  (:mod:`.keys` holds the checks the sections share);
* ``conjugate_draws(data, section, chains, draws, rng)``: exact posterior draws as
  DataArrays with dims ``(chain, draw, ...)``, keyed by variable name;
* ``add_to_model(data, section)``: its variables and likelihood in the current PyMC model;
* ``VARIABLES``: the names of the posterior variables a fit keeps;
* ``predictive_checks(section)``: the posterior predictive checks of what it parametrises.

``[examination]`` (the walk that P@H scores) is not here: :mod:`~bayeschain.inference.specs`
validates its table, the page likelihood of :mod:`~bayeschain.inference.walk.model` fits
it, and it is checked by replaying the walk.
"""

from __future__ import annotations

from types import ModuleType

from .clicks import jumps, transitions
from .dwell import holding

#: section name -> its module, in the order the fits take them: conjugate draws share one
#: random stream in this order (so it fixes what a seed draws), and the PyMC variables are
#: created in it
SECTIONS = {"transitions": transitions, "jumps": jumps, "holding": holding}

#: the check of the walk ([examination]): its clicks and depths replayed on the log's pages
WALK_CHECKS = ("walk",)


def sections_of(spec) -> list[tuple[ModuleType, dict]]:
    """``(module, section table)`` for each of :data:`SECTIONS` that ``spec`` has."""
    return [(module, spec.section(name)) for name, module in SECTIONS.items()
            if spec.section(name) is not None]


def predictive_checks(spec) -> tuple[str, ...]:
    """The posterior predictive checks of a fit of ``spec``, by the sections it has:
    ``"walk"`` ([examination]), ``"backward_share"`` ([transitions]), ``"dwell"``
    ([holding] with a likelihood)."""
    checks = WALK_CHECKS if spec.section("examination") is not None else ()
    for module, section in sections_of(spec):
        checks += module.predictive_checks(section)
    return checks
