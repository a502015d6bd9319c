"""What a user writes: a :class:`KeyedProcessor` subclass with its states as class attributes,
its output as Spark DDL, and ``process`` (and optionally ``on_timer``); and the :class:`Context`
it emits through.

Example::

    class BigPaymentAlert(KeyedProcessor):
        output = "account STRING, at TIMESTAMP, amount DOUBLE, mean_before DOUBLE"
        last = ListState("amount DOUBLE", expire_after=timedelta(days=1), max_items=5,
                         when_full="drop_oldest")

        def process(self, key, events, ctx):
            for e in events:
                amounts = self.last.get()
                if len(amounts) == 5 and e.amount > 10 * (sum(amounts) / 5):
                    ctx.emit(account=key, at=e.at, amount=e.amount, mean_before=sum(amounts) / 5)
                self.last.append(e.amount)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from pyspark.sql import types as T

from streamwarden.errors import ConfigError, UsageError
from streamwarden.operators.process.events import ROW_TS, Fields, as_event
from streamwarden.operators.process.states import StateDeclaration
from streamwarden.operators.process.views import Clock
from streamwarden.schema.ddl import DdlError, ddl_of, parse_fields
from streamwarden.schema.model import RESERVED_PREFIX

__all__ = [
    "Context",
    "Events",
    "Fields",
    "KeyedProcessor",
    "as_event",
    "check_processor",
    "declared_states",
    "output_schema",
]


class KeyedProcessor:
    """Keyed logic of your own, whose state cannot leak.

    Declare ``output`` (Spark DDL of the rows ``ctx.emit`` writes) and each state as a class
    attribute (:class:`~streamwarden.ValueState`, :class:`~streamwarden.ListState`,
    :class:`~streamwarden.MapState`), each with its deadline (``expire_after``) or
    ``unbounded=True``; then ``process(self, key, events, ctx)``, called once per key and
    micro-batch with that key's events of the batch in event-time order (objects whose
    attributes are the schema's fields). ``on_timer(self, key, when, ctx)`` is called when a
    timer set with ``ctx.set_timer(when)`` fires (in event time: when the watermark passes it).

    If ``process`` or ``on_timer`` raises, the key's records of the batch go to the dead
    letters (``processor_error``, naming the exception), what the call wrote to state and
    emitted is undone, and the run goes on.
    """

    #: The rows ``ctx.emit`` writes, as Spark DDL (``"account STRING, amount DOUBLE"``).
    output: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A state declared without a deadline is refused here, when its class is defined."""
        super().__init_subclass__(**kwargs)
        for value in vars(cls).values():
            if isinstance(value, StateDeclaration):
                value.check_deadline(cls)

    def process(self, key: Any, events: Sequence[Any], ctx: Context) -> None:
        """This key's events of the batch, in event-time order."""
        raise NotImplementedError

    def on_timer(self, key: Any, when: datetime, ctx: Context) -> None:
        """A timer set with ``ctx.set_timer`` fired (``when``: its event time)."""


def check_processor(cls: type[KeyedProcessor]) -> None:
    """Refuses a processor class that cannot run, naming what is missing (a state without a
    deadline is refused earlier, when its class is defined)."""
    if cls.process is KeyedProcessor.process:
        raise ConfigError(f"{cls.__name__} must define process(self, key, events, ctx)")
    output_schema(cls)
    declared_states(cls)


def declared_states(cls: type[KeyedProcessor]) -> tuple[StateDeclaration, ...]:
    """The states ``cls`` declares (its own and its bases'), in declaration order."""
    seen: dict[str, StateDeclaration] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, StateDeclaration):
                seen[name] = value
    for name in seen:
        if name.startswith(RESERVED_PREFIX):
            raise ConfigError(
                f"state {name!r} of {cls.__name__}: names starting with {RESERVED_PREFIX!r} "
                "are streamwarden's; rename it"
            )
    return tuple(seen.values())


def output_schema(cls: type[KeyedProcessor]) -> T.StructType:
    """The processor's ``output``, parsed; a :class:`ConfigError` names a missing or wrong one."""
    ddl = getattr(cls, "output", None)
    if not isinstance(ddl, str):
        raise ConfigError(
            f"{cls.__name__} must declare output, the rows ctx.emit writes, as Spark DDL, e.g. "
            'output = "account STRING, at TIMESTAMP, amount DOUBLE"'
        )
    try:
        fields = parse_fields(ddl)
    except DdlError as exc:
        raise ConfigError(f"{cls.__name__}.output {ddl!r}: {exc}") from None
    for field in fields.fields:
        if field.name.startswith(RESERVED_PREFIX):
            raise ConfigError(
                f"{cls.__name__}.output: column {field.name!r} starts with {RESERVED_PREFIX!r}, "
                "which streamwarden reserves; rename it"
            )
    return fields


class Context:
    """What ``process`` and ``on_timer`` write through: output rows, timers, the time."""

    def __init__(self, clock: Clock, output: T.StructType, watermark_ms: int) -> None:
        self._clock = clock
        self._watermark_ms = watermark_ms
        self._output = output
        self._order = tuple(output.names)
        self._names = frozenset(self._order)
        #: The rows emitted, as tuples in the output's column order.
        self.emitted: list[tuple[Any, ...]] = []
        #: Timers set (event time, epoch ms).
        self.timers: list[int] = []

    def emit(self, **columns: Any) -> None:
        """Writes one output row; a column not given is null."""
        if not self._names.issuperset(columns):
            unknown = set(columns) - self._names
            raise UsageError(
                f"ctx.emit: {', '.join(sorted(unknown))} not in the output ("
                + ", ".join(f"{f.name} {ddl_of(f.dataType)}" for f in self._output.fields)
                + ")"
            )
        self.emitted.append(tuple(map(columns.get, self._order)))

    def set_timer(self, when: datetime | int) -> None:
        """Calls ``on_timer(key, when, ctx)`` once the watermark passes ``when`` (an aware
        datetime, or epoch milliseconds)."""
        self.timers.append(_epoch_ms(when))

    @property
    def event_time(self) -> datetime:
        """The event time of what is being processed (the event, or the timer)."""
        return datetime.fromtimestamp(self._clock.now_ms / 1000, UTC)

    @property
    def watermark(self) -> datetime:
        """The watermark the batch runs under: an event before it would be ``too_late``."""
        return datetime.fromtimestamp(max(self._watermark_ms, 0) / 1000, UTC)


class Events(Sequence[Any]):
    """A key's events of the batch, in event-time order (each carrying its time at
    :data:`~.events.ROW_TS`). Iterating moves the clock to each event's time, so that states
    judge expiry against the event being processed; a write refused at a cap
    (``when_full = "dead_letter"``) marks the event being processed."""

    def __init__(self, events: list[Any], clock: Clock) -> None:
        self._events = events
        self._clock = clock
        #: Indexes of events whose write was refused at a cap, with why.
        self.capped: dict[int, str] = {}
        self._current = 0

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, index: Any) -> Any:
        return self._events[index]

    def __iter__(self) -> Iterator[Any]:
        clock = self._clock
        for i, event in enumerate(self._events):
            if clock.capped is not None:
                self._note_cap()
            self._current = i
            clock.now_ms = event[ROW_TS]
            yield event
        self._note_cap()

    def _note_cap(self) -> None:
        if self._clock.capped is not None:
            self.capped.setdefault(self._current, self._clock.capped)
            self._clock.capped = None

    def finish(self) -> None:
        """Records a cap hit after the last iteration (or without iterating)."""
        self._note_cap()


def _epoch_ms(when: datetime | int) -> int:
    if isinstance(when, bool) or not isinstance(when, datetime | int):
        raise UsageError(f"a timer is an aware datetime or epoch milliseconds, got {when!r}")
    if isinstance(when, int):
        return when
    if when.tzinfo is None:
        raise UsageError(f"a timer's datetime needs a time zone (tzinfo), got {when!r}")
    return int(when.timestamp() * 1000)
