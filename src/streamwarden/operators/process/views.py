"""What ``self.<state>`` is while a processor runs: a view of one key's entries of one state
(declared in :mod:`.states`), and the :class:`Clock` it judges expiry by.

A view loads the key's entries on first use and works on them in memory; the guard writes it
back only when the processor's call returned (a call that raises leaves the state as it was).
An entry written at event time ``t`` is invisible to an event later than ``t + expire_after``;
entries no event that is not late can see any more (their deadline is behind the watermark) are
dropped on the next write or by the guard's timer.

The entries are held column by column (values, map keys, write times), not as an object each:
every event reads them, and the common case, where even the oldest entry is visible, costs one
comparison instead of one per entry.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Clock", "Declared", "Entry", "ListView", "MapView", "StateView", "ValueView"]

Loader = Callable[[], list[tuple[Any, ...]]]


class Declared(Protocol):
    """What a view needs of its state's declaration (a :class:`~.states.StateDeclaration`)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def max_items(self) -> int | None: ...
    @property
    def max_bytes(self) -> int | None: ...
    @property
    def when_full(self) -> str: ...
    @property
    def expire_after_ms(self) -> int | None: ...

    def as_read(self, value: Any) -> Any: ...

    def key_as_read(self, key: Any) -> Any: ...

    def decode_columns(
        self, rows: list[tuple[Any, ...]]
    ) -> tuple[list[Any], list[Any], list[int]]: ...

    def encode_columns(
        self, keys: list[Any], values: list[Any], written: list[int]
    ) -> list[tuple[Any, ...]]: ...


@dataclass
class Entry:
    """One stored value (and its map key), written at event time ``written_ms``."""

    value: Any
    written_ms: int
    key: Any = None


@dataclass(slots=True)
class Clock:
    """The event time of what the processor is working on (the event being processed, or the
    timer), and the watermark: entries past their deadline before it can be dropped, as no
    event that is not late can see them."""

    now_ms: int
    watermark_ms: int
    #: Set when a write was refused at a cap with ``when_full = "dead_letter"``.
    capped: str | None = None
    #: What may lower ``watermark_ms`` (a timer of the key still to fire may see an entry no
    #: event will), asked only once an entry would be dropped.
    lower: Callable[[], int] | None = None

    def horizon(self) -> int:
        """``watermark_ms``, lowered once by ``lower`` if given."""
        if self.lower is not None:
            self.watermark_ms = min(self.watermark_ms, self.lower())
            self.lower = None
        return self.watermark_ms


class StateView:
    """A state of one key while the processor runs: its entries, loaded on first use."""

    def __init__(self, declaration: Declared, clock: Clock, load: Loader) -> None:
        self._declaration = declaration
        self._clock = clock
        self._load = load
        self._ttl = declaration.expire_after_ms
        self._is_map = declaration.kind == "map"
        #: The entries, column by column (None: not loaded yet).
        self._values: list[Any] | None = None
        self._keys: list[Any] = []
        self._written: list[int] = []
        #: The earliest write time of the entries (None: to be worked out again).
        self._oldest: int | None = None
        #: The latest deadline of the entries as loaded (None: none expire).
        self._loaded_deadline: int | None = None
        #: How many entries were loaded.
        self._loaded_rows = 0
        #: Changed since it was loaded: the guard writes it back.
        self.dirty = False

    @property
    def name(self) -> str:
        return self._declaration.name

    def _columns(self) -> list[Any]:
        """The values, loading the entries on first use."""
        values = self._values
        if values is None:
            self._keys, values, self._written = self._declaration.decode_columns(self._load())
            self._values = values
            self._loaded_deadline = self.deadline_ms()
            self._loaded_rows = len(values)
        return values

    @property
    def entries(self) -> list[Entry]:
        """The entries held, visible or not (a copy)."""
        values = self._columns()
        keys = self._keys if self._is_map else [None] * len(values)
        return [Entry(v, w, k) for v, w, k in zip(values, self._written, keys, strict=True)]

    @property
    def loaded(self) -> bool:
        return self._values is not None

    @property
    def rows_added(self) -> int:
        """The entries held now less those loaded (negative: freed); 0 if never loaded."""
        return 0 if self._values is None else len(self._values) - self._loaded_rows

    def loaded_deadline_ms(self) -> int | None:
        """The latest deadline of the entries as they were loaded (loading them now if the
        call did not)."""
        self._columns()
        return self._loaded_deadline

    def _earliest(self) -> int | None:
        if self._oldest is None and self._written:
            self._oldest = min(self._written)
        return self._oldest

    def _all_visible(self) -> bool:
        """Whether every entry is visible to the event being processed (the usual case)."""
        if self._ttl is None:
            return True
        oldest = self._earliest()
        return oldest is None or self._clock.now_ms <= oldest + self._ttl

    def _live(self) -> list[int]:
        """The indexes of the entries visible to the event being processed."""
        written = self._written
        if self._all_visible():
            return list(range(len(written)))
        floor = self._clock.now_ms - self._ttl  # type: ignore[operator]
        return [i for i, w in enumerate(written) if w >= floor]

    def _live_values(self) -> list[Any]:
        values = self._columns()
        if self._all_visible():
            return list(values)
        floor = self._clock.now_ms - self._ttl  # type: ignore[operator]
        return [v for v, w in zip(values, self._written, strict=True) if w >= floor]

    def _keep_only(self, indexes: list[int]) -> None:
        values = self._columns()
        self._values = [values[i] for i in indexes]
        if self._is_map:
            self._keys = [self._keys[i] for i in indexes]
        self._written = [self._written[i] for i in indexes]
        self._oldest = None
        self.dirty = True

    def _delete(self, index: int) -> None:
        del self._values[index]  # type: ignore[union-attr]
        if self._is_map:
            del self._keys[index]
        del self._written[index]
        self._oldest = None
        self.dirty = True

    def _add(self, value: Any, key: Any = None) -> None:
        """Adds an entry written now (the entries are loaded)."""
        now = self._clock.now_ms
        self._values.append(value)  # type: ignore[union-attr]
        if self._is_map:
            self._keys.append(key)
        self._written.append(now)
        if self._oldest is not None and now < self._oldest:
            self._oldest = now
        self.dirty = True

    def _set_empty(self) -> None:
        self._values, self._keys, self._written, self._oldest = [], [], [], None
        self.dirty = True

    def _prune(self) -> None:
        """Drops the entries no event that is not late can see any more (they are loaded)."""
        if self._ttl is None:
            return
        oldest = self._earliest()
        if oldest is None or oldest >= self._clock.watermark_ms - self._ttl:
            return
        floor = self._clock.horizon() - self._ttl
        if oldest >= floor:
            return
        self._keep_only([i for i, w in enumerate(self._written) if w >= floor])

    def _fits(self, value: Any, key: Any = None, replacing: int | None = None) -> bool:
        """Makes room for a new entry as ``when_full`` says; False if the write is refused.
        ``replacing``: the index of the entry the write replaces (not counted). The entries
        are loaded."""
        d = self._declaration
        cap = d.max_items
        if d.max_bytes is None and (cap is None or replacing is None):
            # the usual cases, without building the list of live entries
            self._prune()
            if cap is None:
                return True
            written = self._written
            if self._all_visible():
                if len(written) < cap:
                    return True
                if d.when_full == "drop_oldest":
                    while len(written) >= cap:
                        self._delete(written.index(min(written)))
                    return True
            elif len(self._live()) < cap:
                return True
        if replacing is not None:
            replaced_written = self._written[replacing]
            before = len(self._written)
        self._prune()
        if replacing is not None and len(self._written) != before:
            # the prune moved the entries: find the one replaced again (or it was dropped)
            replacing = self._index_of(replaced_written, key)
        live = [i for i in self._live() if i != replacing]
        while _over(d, self, live, value, key):
            if d.when_full == "dead_letter" or not live:
                self._clock.capped = (
                    f"state {d.name!r} is full ({_limits(d)}) and when_full is "
                    f"{d.when_full!r}: the write was refused"
                )
                return False
            written = self._written
            oldest = min(live, key=written.__getitem__)
            self._delete(oldest)
            live = [i - (i > oldest) for i in live if i != oldest]
        return True

    def _index_of(self, written_ms: int, key: Any) -> int | None:
        """The index of the entry written at ``written_ms`` (for a map, of ``key``)."""
        for i, w in enumerate(self._written):
            if w == written_ms and (not self._is_map or self._keys[i] == key):
                return i
        return None

    def deadline_ms(self) -> int | None:
        """When the last of its entries expires (None: it has none that expire)."""
        if self._ttl is None or not self._written:
            return None
        return max(self._written) + self._ttl

    def stored(self) -> list[tuple[Any, ...]]:
        values = self._columns()
        return self._declaration.encode_columns(self._keys, values, self._written)

    def purge(self) -> None:
        """Drops what has expired before the watermark (a timer's work)."""
        self._columns()
        self._prune()


class ValueView(StateView):
    def get(self) -> Any:
        """The value, or None if none was set (or it expired for the event being processed)."""
        values = self._columns()
        if not values:
            return None
        if self._ttl is None or self._clock.now_ms <= self._written[-1] + self._ttl:
            return values[-1]
        live = self._live()
        return values[live[-1]] if live else None

    def set(self, value: Any) -> None:
        value = self._declaration.as_read(value)
        values = self._columns()
        current = len(values) - 1 if values else None
        if self._fits(value, replacing=current):
            self._set_empty()
            self._add(value)

    def clear(self) -> None:
        if self._columns():
            self._set_empty()


class ListView(StateView):
    def get(self) -> list[Any]:
        """The values, oldest first, that the event being processed can see."""
        return self._live_values()

    def append(self, value: Any) -> None:
        value = self._declaration.as_read(value)
        self._columns()
        if self._fits(value):
            self._add(value)

    def set(self, values: list[Any]) -> None:
        """Replaces the list (each value written now)."""
        self._columns()
        self._set_empty()
        for value in values:
            self.append(value)

    def clear(self) -> None:
        if self._columns():
            self._set_empty()

    def __len__(self) -> int:
        self._columns()
        if self._all_visible():
            return len(self._written)
        return len(self._live())

    def __iter__(self) -> Iterator[Any]:
        return iter(self.get())


class MapView(StateView):
    def get(self, key: Any, default: Any = None) -> Any:
        values = self._columns()
        for i in self._live():
            if self._keys[i] == key:
                return values[i]
        return default

    def set(self, key: Any, value: Any) -> None:
        value = self._declaration.as_read(value)
        key = self._declaration.key_as_read(key)
        self._columns()
        old = next((i for i, k in enumerate(self._keys) if k == key), None)
        if old is not None:
            old_written = self._written[old]
        if self._fits(value, key, replacing=old):
            if old is not None:
                # the room made may have moved it (or a prune dropped it)
                again = self._index_of(old_written, key)
                if again is not None:
                    self._delete(again)
            self._add(value, key)

    def remove(self, key: Any) -> None:
        self._columns()
        kept = [i for i, k in enumerate(self._keys) if k != key]
        if len(kept) != len(self._keys):
            self._keep_only(kept)

    def clear(self) -> None:
        if self._columns():
            self._set_empty()

    def items(self) -> list[tuple[Any, Any]]:
        values = self._columns()
        return [(self._keys[i], values[i]) for i in self._live()]

    def keys(self) -> list[Any]:
        self._columns()
        return [self._keys[i] for i in self._live()]

    def values(self) -> list[Any]:
        return self._live_values()

    def __contains__(self, key: object) -> bool:
        self._columns()
        return any(self._keys[i] == key for i in self._live())

    def __len__(self) -> int:
        self._columns()
        return len(self._live())


def _over(d: Declared, view: StateView, live: list[int], value: Any, key: Any) -> bool:
    if d.max_items is not None and len(live) + 1 > d.max_items:
        return True
    if d.max_bytes is not None:
        values = view._columns()
        keys = view._keys if view._is_map else [None] * len(values)
        sizes = sum(_size(keys[i], values[i]) for i in live)
        return sizes + _size(key, value) > d.max_bytes
    return False


def _size(key: Any, value: Any) -> int:
    """The bytes an entry weighs toward ``max_bytes`` (its pickled value and key)."""
    return len(pickle.dumps((key, value), protocol=5))


def _limits(d: Declared) -> str:
    caps = [f"{c} {getattr(d, c)}" for c in ("max_items", "max_bytes") if getattr(d, c)]
    return ", ".join(caps)
