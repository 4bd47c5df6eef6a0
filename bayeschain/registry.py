"""A small name -> object registry whose errors list the valid names.

Browsing models and measures register themselves here instead of being chosen by
if/elif chains, so adding one is a single decorated function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from .errors import ParameterError

T = TypeVar("T")


class Registry(Generic[T]):
    """Case-sensitive registry of named entries of one kind (``kind`` names it in errors)."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def add(entry: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = entry
            return entry

        return add

    def add(self, name: str, entry: T) -> None:
        self.register(name)(entry)

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            raise ParameterError(
                f"unknown {self.kind} {name!r}; valid names: {', '.join(sorted(self._entries))}"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def names(self) -> list[str]:
        return sorted(self._entries)
