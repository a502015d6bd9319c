"""A registry of named implementations: the one way a config name (an operator, a source
kind, a sink kind) selects the code behind it.

Each contract module (``operators/base.py``, ``sources/base.py``, ``sinks/base.py``) holds one
registry; each implementation registers itself beside it. Nothing else branches on the names.
"""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Implementations by name. ``what`` names one in messages (``"sink kind"``), ``plural``
    the known ones (``"kinds"``)."""

    def __init__(self, what: str, plural: str, *, default: str | None = None) -> None:
        self.what = what
        self.plural = plural
        #: The name a config that names none selects (a source's ``kind``, say), if any.
        self.default = default
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T) -> None:
        """Makes ``name`` select ``item``."""
        self._items[name] = item

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._items)

    def check(self, name: str) -> str:
        """``name`` if it is registered; else a ValueError naming the known ones (the config
        reports it under the setting that holds the name)."""
        if name not in self._items:
            raise ValueError(
                f"unknown {self.what} {name!r}; known {self.plural}: {', '.join(self.names())}"
            )
        return name

    def __getitem__(self, name: str) -> T:
        return self._items[self.check(name)]

    def items(self) -> list[tuple[str, T]]:
        """The registered names with their implementations, sorted by name."""
        return sorted(self._items.items())
