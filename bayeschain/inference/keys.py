"""The typed keys of a spec table, checked the same way in every section.

A table's keys are declared as ``key -> (type, allowed values or None, default)``; a
default of ``None`` makes the key required.  :func:`check_table` applies the declaration
(the spec file's name goes into every error); :func:`check_finite` refuses an infinite or
NaN number in a prior.  :mod:`~bayeschain.inference.specs` uses them for ``[model]``,
``[examination]`` and ``[sampler]``, each section module of
:mod:`~bayeschain.inference.sections` for its own table.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import FormatError

#: how the per-rank parameters of a section are tied: one set per rank, one for all ranks,
#: or shrunk towards a trend in log rank (hierarchical, NUTS only)
PARAMETRISATIONS = ("per-rank", "shared", "pooled")

#: key -> (type or tuple of types, allowed values or None, default; None: required)
Keys = dict[str, tuple]


def is_number(value) -> bool:
    """An int or a float, but not a bool (TOML ``true`` is no concentration)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_table(section: str, table: dict, keys: Keys, source: str) -> dict[str, Any]:
    """``table`` with its defaults filled in, or a :class:`FormatError` naming ``[section]``,
    the key and what was expected."""
    bad = sorted(set(table) - set(keys))
    if bad:
        raise FormatError(f"[{section}] has unknown key(s) {bad}; valid: {', '.join(keys)}",
                          file=source)
    clean = {}
    for key, (kind, allowed, default) in keys.items():
        value = table.get(key, default)
        if value is None:
            raise FormatError(f"[{section}] needs {key}", file=source)
        if kind is float and is_number(value):
            value = float(value)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            name = " or ".join(f"{'an' if k.__name__[0] in 'aeiou' else 'a'} {k.__name__}"
                               for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise FormatError(f"[{section}] {key} must be {name}, got {value!r}",
                              file=source)
        if allowed is not None:
            items = value if isinstance(value, list) else [value]
            wrong = [v for v in items if v not in allowed]
            if wrong:
                raise FormatError(f"[{section}] {key}: {wrong} not allowed; expected "
                                  f"{', '.join(map(str, allowed))}", file=source)
        clean[key] = value
    return clean


def check_finite(section: str, key: str, values: list, source: str) -> None:
    """Refuse an infinite or NaN entry of ``[section] key`` (a prior's parameters)."""
    wrong = [v for v in values if not math.isfinite(v)]
    if wrong:
        raise FormatError(f"[{section}] {key}: {wrong} not finite; every entry must be a "
                          f"finite number", file=source)
