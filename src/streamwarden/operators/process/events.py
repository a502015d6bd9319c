"""An event as ``process`` sees it, and how the guard's input rows carry it.

A guard input row is a flat tuple: the key (as text, or a control key), the event time in epoch
ms, a control record (null for an event), the record as received if the layout carries it,
then the event's fields as top-level columns, the key's field left out (the key is the row's
first column already). Spark's Row API converts each column of each row on its own, so fewer
and flatter columns are what makes the hand-over cheap.

The event is that row under a class made for its fields (:func:`event_class`): each field is
an attribute read straight from the row, no copy into a dict and no per-event object but the
row's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from pyspark.sql import types as T

__all__ = ["EventLayout", "Fields", "as_event", "event_class"]

#: The columns every guard input row starts with, by index.
ROW_KEY, ROW_TS, ROW_CONTROL, ROW_RAW = 0, 1, 2, 3


@dataclass(frozen=True)
class EventLayout:
    """How the guard's input rows carry an event: its ``fields`` in order; ``key_field``, the
    field that is the row's key (not carried twice: the key's text, or an integer key's
    digits); ``nested``, the struct fields (read as objects with attributes); ``raw``, whether a
    row carries the record as received (a pipeline's) after the control column."""

    fields: tuple[str, ...]
    key_field: str | None = None
    key_is_text: bool = True
    nested: frozenset[str] = field(default_factory=frozenset)
    raw: bool = False

    @classmethod
    def of(cls, struct: T.StructType, key: str | None, *, raw: bool) -> EventLayout:
        """The layout of events of ``struct`` keyed by its top-level field ``key`` (a string or
        integer field; other keys are carried as fields like the rest)."""
        from streamwarden.schema.model import INTEGRAL

        key_field, key_is_text = None, True
        for f in struct.fields:
            if f.name == key and isinstance(f.dataType, (T.StringType, *INTEGRAL)):
                key_field, key_is_text = f.name, isinstance(f.dataType, T.StringType)
        nested = frozenset(f.name for f in struct.fields if isinstance(f.dataType, T.StructType))
        return cls(tuple(struct.names), key_field, key_is_text, nested, raw)

    @property
    def first(self) -> int:
        """The index of the first field's column in a row."""
        return ROW_RAW + 1 if self.raw else ROW_RAW

    @property
    def carried(self) -> tuple[str, ...]:
        """The fields a row carries as columns, in order (all but the key's field)."""
        return tuple(f for f in self.fields if f != self.key_field)


class Fields(dict[str, Any]):
    """A struct field of an event: its fields as attributes (``e.geo.city``), and as a dict."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            value = self[name]
        except KeyError:
            raise AttributeError(
                f"the event has no field {name!r} (its fields: {', '.join(self)})"
            ) from None
        return Fields(value) if isinstance(value, dict) else value


def as_event(value: Any) -> Any:
    """A struct value as ``process`` sees it: Spark hands a struct over as a dict."""
    return Fields(value) if isinstance(value, dict) else value


class _Event(tuple[Any, ...]):
    """An event: a guard input row whose fields are attributes (see :func:`event_class`)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"the event has no field {name!r} (its fields: {', '.join(self._fields)})"
        )

    def _asdict(self) -> dict[str, Any]:
        """The event's fields as a dict, in order."""
        return {n: getattr(self, n) for n in self._fields}

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"Event({shown})"


def event_class(layout: EventLayout) -> type[tuple[Any, ...]]:
    """The class of events carried as ``layout`` says: ``cls(row)`` is the event of a row."""
    attributes: dict[str, Any] = {"__slots__": (), "_fields": layout.fields}
    index = layout.first
    for name in layout.fields:
        getter: Callable[[Any], Any]
        if name == layout.key_field:
            getter = itemgetter(ROW_KEY) if layout.key_is_text else _integer_key
        elif name in layout.nested:
            getter = _nested_getter(index)
            index += 1
        else:
            getter = itemgetter(index)
            index += 1
        attributes[name] = property(getter)
    return type("Event", (_Event,), attributes)


def _integer_key(row: tuple[Any, ...]) -> int:
    return int(row[ROW_KEY])


def _nested_getter(index: int) -> Callable[[Any], Any]:
    return lambda row: as_event(row[index])
