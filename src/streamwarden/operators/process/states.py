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
at. A view loads a key's entries on first use, works on them in memory, and is flushed by the
guard only when the processor's call returned: a call that raises leaves the state as it was.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pyspark.sql import types as T

from streamwarden.errors import ConfigError
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


@dataclass
class Entry:
    """One stored value (and its map key), written at event time ``written_ms``."""

    value: Any
    written_ms: int
    key: Any = None


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
        if instance is None:
            return self
        views = getattr(instance, "_sw_views", None)
        if views is None:
            raise RuntimeError(
                f"state {self.name!r} is only readable while streamwarden runs the processor "
                "(in process or on_timer)"
            )
        return views[self.name]

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
        return Entry(_as_value(row[:-1], self.fields), int(row[-1]))

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
        entry.key = _as_value(row[:n], self.key_fields)
        return entry

    def view(self, clock: Clock, load: Callable[[], list[tuple[Any, ...]]]) -> MapView:
        return MapView(self, clock, load)


@dataclass
class Clock:
    """The event time of what the processor is working on (the event being processed, or the
    timer), and the watermark: entries past their deadline before it can be dropped, as no
    event that is not late can see them."""

    now_ms: int
    watermark_ms: int
    #: Set when a write was refused at a cap with ``when_full = "dead_letter"``.
    capped: str | None = None


class StateView:
    """A state of one key while the processor runs: its entries, loaded on first use."""

    def __init__(
        self,
        declaration: StateDeclaration,
        clock: Clock,
        load: Callable[[], list[tuple[Any, ...]]],
    ) -> None:
        self._declaration = declaration
        self._clock = clock
        self._load = load
        self._entries: list[Entry] | None = None
        #: The latest deadline of the entries as loaded (None: not loaded, or none expire).
        self._loaded_deadline: int | None = None
        #: Changed since it was loaded: the guard writes it back.
        self.dirty = False

    @property
    def name(self) -> str:
        return self._declaration.name

    @property
    def entries(self) -> list[Entry]:
        if self._entries is None:
            self._entries = [self._declaration.decode(row) for row in self._load()]
            self._loaded_deadline = self.deadline_ms()
        return self._entries

    def loaded_deadline_ms(self) -> int | None:
        """The latest deadline of the entries as they were loaded (loading them now if the
        call did not)."""
        _ = self.entries
        return self._loaded_deadline

    @property
    def loaded(self) -> bool:
        return self._entries is not None

    def _visible(self, entry: Entry) -> bool:
        ttl = self._declaration.expire_after_ms
        return ttl is None or self._clock.now_ms <= entry.written_ms + ttl

    def _live(self) -> list[Entry]:
        return [e for e in self.entries if self._visible(e)]

    def _prune(self) -> None:
        """Drops the entries no event that is not late can see any more."""
        ttl = self._declaration.expire_after_ms
        if ttl is None:
            return
        kept = [e for e in self.entries if e.written_ms + ttl >= self._clock.watermark_ms]
        if len(kept) != len(self.entries):
            self._entries = kept
            self.dirty = True

    def _fits(self, adding: Entry, replacing: Entry | None = None) -> bool:
        """Makes room for ``adding`` as ``when_full`` says; False if the write is refused."""
        d = self._declaration
        self._prune()
        live = [e for e in self._live() if e is not replacing]
        while _over(d, live, adding):
            if d.when_full == "dead_letter" or not live:
                self._clock.capped = (
                    f"state {d.name!r} is full ({_limits(d)}) and when_full is "
                    f"{d.when_full!r}: the write was refused"
                )
                return False
            oldest = min(live, key=lambda e: e.written_ms)
            live.remove(oldest)
            self.entries.remove(oldest)
        return True

    def _written(self, value: Any, key: Any = None) -> Entry:
        return Entry(value, self._clock.now_ms, key)

    def deadline_ms(self) -> int | None:
        """When the last of its entries expires (None: it has none that expire)."""
        ttl = self._declaration.expire_after_ms
        if ttl is None or not self.entries:
            return None
        return max(e.written_ms for e in self.entries) + ttl

    def stored(self) -> list[tuple[Any, ...]]:
        return [self._declaration.encode(e) for e in self.entries]

    def purge(self) -> None:
        """Drops what has expired before the watermark (a timer's work)."""
        self._prune()


class ValueView(StateView):
    def get(self) -> Any:
        """The value, or None if none was set (or it expired for the event being processed)."""
        live = self._live()
        return live[-1].value if live else None

    def set(self, value: Any) -> None:
        entry = self._written(value)
        current = self.entries[-1] if self.entries else None
        if self._fits(entry, replacing=current):
            self._entries = [entry]
            self.dirty = True

    def clear(self) -> None:
        if self.entries:
            self._entries = []
            self.dirty = True


class ListView(StateView):
    def get(self) -> list[Any]:
        """The values, oldest first, that the event being processed can see."""
        return [e.value for e in self._live()]

    def append(self, value: Any) -> None:
        entry = self._written(value)
        if self._fits(entry):
            self.entries.append(entry)
            self.dirty = True

    def set(self, values: list[Any]) -> None:
        """Replaces the list (each value written now)."""
        self._entries = []
        self.dirty = True
        for value in values:
            self.append(value)

    def clear(self) -> None:
        if self.entries:
            self._entries = []
            self.dirty = True

    def __len__(self) -> int:
        return len(self._live())

    def __iter__(self) -> Iterator[Any]:
        return iter(self.get())


class MapView(StateView):
    def get(self, key: Any, default: Any = None) -> Any:
        for e in self._live():
            if e.key == key:
                return e.value
        return default

    def set(self, key: Any, value: Any) -> None:
        entry = self._written(value, key)
        old = next((e for e in self.entries if e.key == key), None)
        if self._fits(entry, replacing=old):
            if old is not None and old in self.entries:
                self.entries.remove(old)
            self.entries.append(entry)
            self.dirty = True

    def remove(self, key: Any) -> None:
        kept = [e for e in self.entries if e.key != key]
        if len(kept) != len(self.entries):
            self._entries = kept
            self.dirty = True

    def clear(self) -> None:
        if self.entries:
            self._entries = []
            self.dirty = True

    def items(self) -> list[tuple[Any, Any]]:
        return [(e.key, e.value) for e in self._live()]

    def keys(self) -> list[Any]:
        return [e.key for e in self._live()]

    def values(self) -> list[Any]:
        return [e.value for e in self._live()]

    def __contains__(self, key: object) -> bool:
        return any(e.key == key for e in self._live())

    def __len__(self) -> int:
        return len(self._live())


def _over(d: StateDeclaration, live: list[Entry], adding: Entry) -> bool:
    if d.max_items is not None and len(live) + 1 > d.max_items:
        return True
    if d.max_bytes is not None:
        return sum(_size(e) for e in (*live, adding)) > d.max_bytes
    return False


def _size(entry: Entry) -> int:
    """The bytes an entry weighs toward ``max_bytes`` (its pickled value and key)."""
    return len(pickle.dumps((entry.key, entry.value), protocol=5))


def _limits(d: StateDeclaration) -> str:
    caps = [f"{c} {getattr(d, c)}" for c in ("max_items", "max_bytes") if getattr(d, c)]
    return ", ".join(caps)


def _fields(ddl: str, what: str) -> T.StructType:
    if not isinstance(ddl, str):
        raise ConfigError(
            f"a state's {what} is Spark DDL text such as 'amount DOUBLE', got {ddl!r}"
        )
    try:
        return parse_fields(ddl)
    except DdlError as exc:
        raise ConfigError(f"a state's {what} {ddl!r}: {exc}") from None


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
