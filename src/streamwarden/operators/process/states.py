"""A keyed processor's states: the declarations users write on their class (``ValueState``,
``ListState``, ``MapState``) and what ``self.<state>`` is while the processor runs (a view of
one key's entries).

Every state has a deadline in **event time**, or says it has none (``unbounded=True``): a state
declared with neither is refused when its class is defined (lesson L3). An entry written at
event time ``t`` is invisible to an event later than ``t + expire_after``, whether or not the
timer that frees its storage has fired yet, so results never depend on batching or on how fast
a backlog replays; the guard's own event-time timer frees the storage once the watermark has
passed every deadline (also for a key that never returns, and, through the idle ticks, when the
whole input idles).

Each state holds entries (a value, and for a map its key) with the event time they were written
at. A view (:mod:`.views`) loads a key's entries on first use, works on them in memory, and is
flushed by the guard only when the processor's call returned: a call that raises leaves the
state as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pyspark.sql import types as T

from streamwarden.errors import ConfigError
from streamwarden.operators.process.views import (
    Clock,
    Entry,
    ListView,
    MapView,
    StateView,
    ValueView,
)
from streamwarden.schema.ddl import DdlError, ddl_of, parse_fields

if TYPE_CHECKING:
    from pyspark.sql import Row

__all__ = [
    "WRITTEN",
    "Entry",
    "ListState",
    "MapState",
    "StateDeclaration",
    "StateView",
    "ValueState",
    "WhenFull",
]

#: The column of a stored entry that holds the event time it was written at (epoch ms).
WRITTEN = "_sw_written_ms"
#: The column prefix of a map entry's key in storage.
MAP_KEY = "_sw_key_"
WhenFull = Literal["drop_oldest", "dead_letter"]
#: The entries a list or map state holds per key unless ``max_items`` says otherwise.
DEFAULT_MAX_ITEMS = 1000


class StateDeclaration:
    """What every state declaration shares: its value's fields (Spark DDL), its deadline, its
    caps. Its name is the class attribute it is assigned to."""

    kind: ClassVar[str]

    def __init__(
        self,
        schema: str,
        *,
        expire_after: timedelta | None = None,
        unbounded: bool = False,
        max_items: int | None = None,
        max_bytes: int | None = None,
        when_full: WhenFull = "drop_oldest",
    ) -> None:
        self.schema_ddl = schema
        self.fields = _fields(schema, "schema")
        self.expire_after = expire_after
        self.unbounded = unbounded
        self.max_items = max_items
        self.max_bytes = max_bytes
        self.when_full = when_full
        self.name = "?"
        self._check()
        self._one_field = len(self.fields.fields) == 1
        self._times = _timestamps(self.fields)
        # read for every entry an event sees: worked out once, not per read
        self._ttl_ms = None if expire_after is None else expire_after // timedelta(milliseconds=1)

    def _check(self) -> None:
        where = f"{type(self).__name__}({self.schema_ddl!r})"
        if self.expire_after is not None:
            if not isinstance(self.expire_after, timedelta) or self.expire_after <= timedelta(0):
                raise ConfigError(
                    f"{where}: expire_after must be a timedelta > 0, got {self.expire_after!r}"
                )
            if self.unbounded:
                raise ConfigError(f"{where}: give expire_after or unbounded=True, not both")
        for cap in ("max_items", "max_bytes"):
            value = getattr(self, cap)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ConfigError(f"{where}: {cap} must be a whole number >= 1, got {value!r}")
        if self.when_full not in ("drop_oldest", "dead_letter"):
            raise ConfigError(
                f"{where}: when_full must be 'drop_oldest' or 'dead_letter', got {self.when_full!r}"
            )

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def check_deadline(self, owner: type) -> None:
        """Refuses a state declared with neither ``expire_after`` nor ``unbounded=True``."""
        if self.expire_after is None and not self.unbounded:
            raise ConfigError(
                f"state {self.name!r} of {owner.__name__} has no deadline: give it "
                "expire_after=timedelta(...) (event time after its last write), or "
                "unbounded=True to keep it until the key's code clears it (doctor then reports "
                "it and the leak alarm watches it); a state without a deadline grows forever "
                "when keys stop coming back"
            )

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        # While the guard runs the processor, the instance's own attribute of this name (its
        # view) hides this descriptor: so this runs outside a call only.
        if instance is None:
            return self
        raise RuntimeError(
            f"state {self.name!r} is only readable while streamwarden runs the processor "
            "(in process or on_timer)"
        )

    @property
    def expire_after_ms(self) -> int | None:
        return self._ttl_ms

    def storage_schema(self) -> T.StructType:
        """The schema of one stored entry: the value's fields, then when it was written."""
        return T.StructType([*self.fields.fields, T.StructField(WRITTEN, T.LongType())])

    def identity(self) -> dict[str, Any]:
        """What the stored entries' layout depends on (a change is refused on a checkpoint)."""
        return {"kind": self.kind, "schema": ddl_of(self.fields)}

    def encode(self, entry: Entry) -> tuple[Any, ...]:
        return (*_as_tuple(entry.value, self.fields), entry.written_ms)

    def decode(self, row: tuple[Any, ...]) -> Entry:
        return Entry(_as_value(_aware(row[:-1], self._times), self.fields), int(row[-1]))

    def as_read(self, value: Any) -> Any:
        """A value being written as a read gives it back, within the call as after it was
        stored: one field's value, or a Row of the fields."""
        if self._one_field:
            return value
        return _as_value(_as_tuple(value, self.fields), self.fields)

    def key_as_read(self, key: Any) -> Any:
        return key

    def decode_columns(self, rows: list[tuple[Any, ...]]) -> tuple[list[Any], list[Any], list[int]]:
        """Stored entries as columns: map keys (none for a value or list), values, write times."""
        if self._times:  # Spark hands a stored TIMESTAMP back without its zone
            rows = [_aware(r, self._times) for r in rows]
        if self._one_field:
            values = [r[0] for r in rows]
        else:
            values = [_as_value(r[:-1], self.fields) for r in rows]
        return [], values, [int(r[-1]) for r in rows]

    def encode_columns(
        self, keys: list[Any], values: list[Any], written: list[int]
    ) -> list[tuple[Any, ...]]:
        """Columns of entries as stored rows (``keys`` empty but for a map)."""
        if self._one_field:
            return list(zip(values, written, strict=True))
        fields = self.fields
        return [(*_as_tuple(v, fields), w) for v, w in zip(values, written, strict=True)]

    def view(self, clock: Clock, load: Callable[[], list[tuple[Any, ...]]]) -> StateView:
        raise NotImplementedError


class ValueState(StateDeclaration):
    """One value per key (``get``, ``set``, ``clear``)."""

    kind = "value"

    def __init__(
        self,
        schema: str,
        *,
        expire_after: timedelta | None = None,
        unbounded: bool = False,
        max_bytes: int | None = None,
        when_full: WhenFull = "dead_letter",
    ) -> None:
        super().__init__(
            schema,
            expire_after=expire_after,
            unbounded=unbounded,
            max_bytes=max_bytes,
            when_full=when_full,
        )

    def view(self, clock: Clock, load: Callable[[], list[tuple[Any, ...]]]) -> ValueView:
        return ValueView(self, clock, load)


class ListState(StateDeclaration):
    """A list per key, in the order of appends (``get``, ``append``, ``set``, ``clear``); at
    ``max_items`` (1000 unless given) ``when_full`` decides: drop the oldest entry, or refuse the
    append and send the record being processed to the dead letters (``state_cap``)."""

    kind = "list"

    def __init__(
        self,
        schema: str,
        *,
        expire_after: timedelta | None = None,
        unbounded: bool = False,
        max_items: int = DEFAULT_MAX_ITEMS,
        max_bytes: int | None = None,
        when_full: WhenFull = "drop_oldest",
    ) -> None:
        super().__init__(
            schema,
            expire_after=expire_after,
            unbounded=unbounded,
            max_items=max_items,
            max_bytes=max_bytes,
            when_full=when_full,
        )

    def view(self, clock: Clock, load: Callable[[], list[tuple[Any, ...]]]) -> ListView:
        return ListView(self, clock, load)


class MapState(StateDeclaration):
    """A map per key (``get``, ``set``, ``remove``, ``clear``, ``items``), its keys of
    ``key_schema``; ``max_items`` (1000 unless given) and ``when_full`` as for a list (the
    oldest is the entry written longest ago)."""

    kind = "map"

    def __init__(
        self,
        key_schema: str,
        schema: str,
        *,
        expire_after: timedelta | None = None,
        unbounded: bool = False,
        max_items: int = DEFAULT_MAX_ITEMS,
        max_bytes: int | None = None,
        when_full: WhenFull = "drop_oldest",
    ) -> None:
        self.key_ddl = key_schema
        self.key_fields = _fields(key_schema, "key_schema")
        super().__init__(
            schema,
            expire_after=expire_after,
            unbounded=unbounded,
            max_items=max_items,
            max_bytes=max_bytes,
            when_full=when_full,
        )

    def storage_schema(self) -> T.StructType:
        keys = [T.StructField(MAP_KEY + f.name, f.dataType) for f in self.key_fields.fields]
        return T.StructType([*keys, *super().storage_schema().fields])

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "key": ddl_of(self.key_fields)}

    def encode(self, entry: Entry) -> tuple[Any, ...]:
        return (*_as_tuple(entry.key, self.key_fields), *super().encode(entry))

    def decode(self, row: tuple[Any, ...]) -> Entry:
        n = len(self.key_fields.fields)
        entry = super().decode(row[n:])
        entry.key = _as_value(_aware(row[:n], _timestamps(self.key_fields)), self.key_fields)
        return entry

    def key_as_read(self, key: Any) -> Any:
        if len(self.key_fields.fields) == 1:
            return key
        return _as_value(_as_tuple(key, self.key_fields), self.key_fields)

    def decode_columns(self, rows: list[tuple[Any, ...]]) -> tuple[list[Any], list[Any], list[int]]:
        n = len(self.key_fields.fields)
        _, values, written = super().decode_columns([r[n:] for r in rows])
        times = _timestamps(self.key_fields)
        return [_as_value(_aware(r[:n], times), self.key_fields) for r in rows], values, written

    def encode_columns(
        self, keys: list[Any], values: list[Any], written: list[int]
    ) -> list[tuple[Any, ...]]:
        stored = super().encode_columns([], values, written)
        kf = self.key_fields
        return [(*_as_tuple(k, kf), *row) for k, row in zip(keys, stored, strict=True)]

    def view(self, clock: Clock, load: Callable[[], list[tuple[Any, ...]]]) -> MapView:
        return MapView(self, clock, load)


def _fields(ddl: str, what: str) -> T.StructType:
    if not isinstance(ddl, str):
        raise ConfigError(
            f"a state's {what} is Spark DDL text such as 'amount DOUBLE', got {ddl!r}"
        )
    try:
        return parse_fields(ddl)
    except DdlError as exc:
        raise ConfigError(f"a state's {what} {ddl!r}: {exc}") from None


def _timestamps(fields: T.StructType) -> tuple[int, ...]:
    """The positions of the TIMESTAMP fields among ``fields``."""
    return tuple(i for i, f in enumerate(fields.fields) if isinstance(f.dataType, T.TimestampType))


def _aware(row: tuple[Any, ...], positions: tuple[int, ...]) -> tuple[Any, ...]:
    """``row`` with its TIMESTAMP values at ``positions`` zoned in UTC, as events' are: Spark
    gives a stored one back as the worker's local time without a zone."""
    if not positions:
        return row
    values = list(row)
    for i in positions:
        value = values[i]
        if isinstance(value, datetime) and value.tzinfo is None:
            values[i] = value.astimezone(UTC)
    return tuple(values)


def _as_tuple(value: Any, fields: T.StructType) -> tuple[Any, ...]:
    """A value as its stored fields: one field's value is the value itself."""
    if len(fields.fields) == 1:
        return (value,)
    if isinstance(value, dict):
        return tuple(value.get(f.name) for f in fields.fields)
    return tuple(value)


def _as_value(stored: tuple[Any, ...], fields: T.StructType) -> Any:
    """Stored fields as the value the processor wrote: one field's value, or a Row."""
    if len(fields.fields) == 1:
        return stored[0]
    from pyspark.sql import Row

    row: Row = Row(**{f.name: v for f, v in zip(fields.fields, stored, strict=True)})
    return row
