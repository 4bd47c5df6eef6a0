"""Public names of a package loaded on first use (PEP 562), so that importing the package,
or one module of it, imports none of the modules its names live in (``import bayeschain``
pulls in no NumPy; a reader thread importing ``bayeschain.chains.checks`` does not import
every solver, which met Python's import-lock deadlock detection in ``bayeschain eval``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_names(package: str, homes: dict[str, str],
               namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list]]:
    """``(__getattr__, __dir__)`` for ``package``: ``homes`` maps each public name to the
    module that defines it (absolute, or relative to ``package`` with a leading dot); a
    name whose home is the package's module of that name is that module.  A name is
    looked up once and then kept in ``namespace`` (the package's globals); ``__dir__``
    lists the package's ``__all__``."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home, package)
        value = module if module.__name__ == f"{package}.{name}" else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return list(namespace.get("__all__", sorted(homes)))

    return __getattr__, __dir__
