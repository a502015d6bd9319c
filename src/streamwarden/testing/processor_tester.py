"""``ProcessorTester``: a :class:`~streamwarden.KeyedProcessor` under the same guard a pipeline
runs it in (:mod:`streamwarden.operators.process.guard`), in plain Python: no Spark, no JVM.
Deadlines, caps, dead letters and timers fire in tests as in production.

A batch is what Spark gives the processor: each key's events of the batch, under the watermark
of the batch before (an event behind it is ``too_late``), then every timer the batch's new
watermark passes (the guard's expiry timers free storage; the processor's call ``on_timer``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Literal

from pyspark.sql import types as T

from streamwarden.errors import UsageError
from streamwarden.operators.process.events import EventLayout
from streamwarden.operators.process.guard import (
    DEAD_COLUMNS,
    KIND,
    OUTPUT_KIND,
    STATE_COLUMNS,
    STATE_KIND,
    Guard,
)
from streamwarden.operators.process.processor import KeyedProcessor
from streamwarden.schema.model import Schema
from streamwarden.testing.records import DeadLetter
from streamwarden.testing.schema_values import field_value, python_record, time_ms
from streamwarden.testing.times import to_ms

__all__ = ["Emitted", "ProcessorOutput", "ProcessorTester"]


@dataclass(frozen=True)
class Emitted:
    """A row the processor emitted (``ctx.emit``), by output column."""

    kind: ClassVar[Literal["output"]] = "output"
    values: Mapping[str, Any] = field(default_factory=dict)


ProcessorOutput = Emitted | DeadLetter


@dataclass
class _Record:
    """A record as the tester reads it: its key (None: no key or no time), its guard input row
    (laid out as Spark's, :mod:`streamwarden.operators.process.events`)."""

    key: str | None
    user: str | None
    raw: str
    row: tuple[Any, ...]


class _Store:
    """Every key's states and timers, in memory."""

    def __init__(self) -> None:
        self.states: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
        self.user_timers: dict[str, list[int]] = {}
        self.timers: dict[str, set[int]] = {}

    def backend(self, key: str) -> _Backend:
        return _Backend(self, key)

    def rows(self) -> int:
        """Stored rows, as Spark's state store counts them: each state entry, and each of the
        processor's own timers (a timer itself is not a state row)."""
        entries = sum(len(v) for v in self.states.values())
        return entries + sum(len(t) for t in self.user_timers.values())


class _Backend:
    def __init__(self, store: _Store, key: str) -> None:
        self._store = store
        self._key = key

    def load(self, state: str) -> list[tuple[Any, ...]]:
        return list(self._store.states.get((self._key, state), []))

    def save(self, state: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            self._store.states[(self._key, state)] = list(rows)
        else:
            self._store.states.pop((self._key, state), None)

    def user_timers(self) -> list[int]:
        return list(self._store.user_timers.get(self._key, []))

    def set_user_timers(self, timers: list[int]) -> None:
        if timers:
            self._store.user_timers[self._key] = list(timers)
        else:
            self._store.user_timers.pop(self._key, None)

    def register_timer(self, at_ms: int) -> None:
        self._store.timers.setdefault(self._key, set()).add(at_ms)

    def delete_timer(self, at_ms: int) -> None:
        self._store.timers.get(self._key, set()).discard(at_ms)


class ProcessorTester:
    """Runs ``processor`` batch by batch on plain records (dicts).

    Give the records' ``schema`` (a :class:`~streamwarden.Schema`: its key and time fields, and
    ISO-8601 text in TIMESTAMP fields read as datetimes, as a pipeline does), or only the
    names of the ``key`` and ``time`` fields (a time is then an aware datetime, ISO-8601 text
    with a zone, or epoch milliseconds)::

        tester = ProcessorTester(BigPaymentAlert(), key="account", time="at")
        out = tester.run_batch([{"account": "a1", "at": "2026-01-01T09:00:00Z", "amount": 5.0}],
                               watermark=0)
        tester.advance_watermark("2026-01-03T00:00:00Z")   # the day's state expires
        assert tester.peek_state("a1") == {}
    """

    def __init__(
        self,
        processor: KeyedProcessor,
        schema: Schema | None = None,
        *,
        key: str = "key",
        time: str = "time",
    ) -> None:
        if not isinstance(processor, KeyedProcessor):
            raise UsageError(
                f"ProcessorTester(processor): give a KeyedProcessor instance, got {processor!r}"
            )
        self._schema = schema
        self._key = schema.key if schema is not None else key
        self._time = schema.time if schema is not None else time
        key_type = schema.key_type if schema is not None else T.StringType()
        # without a schema, an event's fields are those its records have shown so far
        self._fields: dict[str, None] = {}
        layout = (
            EventLayout.of(schema.struct, schema.key, raw=True)
            if schema is not None
            else EventLayout((), raw=True)
        )
        self._guard = Guard(processor, key_type, layout)
        self._names = (KIND, *self._guard.output.names, *DEAD_COLUMNS, *STATE_COLUMNS)
        self._counted: dict[str, int] = {}
        self._store = _Store()
        self._watermark = -(2**62)

    @property
    def watermark(self) -> int:
        """The current watermark (epoch ms)."""
        return self._watermark

    @property
    def state_rows(self) -> int:
        """How many rows the states hold over all keys (what Spark's state store would)."""
        return self._store.rows()

    @property
    def state_rows_by_state(self) -> dict[str, int]:
        """Rows per state name over all keys, as the guard counts them for monitoring (the sum
        of its state-rows rows; Prometheus and the progress log show the same)."""
        return {name: rows for name, rows in self._counted.items() if rows}

    def run_batch(
        self, records: Iterable[Mapping[str, Any]], watermark: datetime | str | int
    ) -> list[ProcessorOutput]:
        """One micro-batch: ``records`` judged against ``watermark`` (the batch's watermark
        for late events), then the timers it passes fire."""
        self._move_to(watermark)
        read = [self._record(r) for r in records]
        self._layout_for(read)
        by_key: dict[str, list[tuple[Any, ...]]] = {}
        out: list[ProcessorOutput] = []
        for record in read:
            if record.key is None:
                out += self._output(self._guard_dead(record))
                continue
            by_key.setdefault(record.key, []).append(self._row_of(record))
        for key, rows in by_key.items():
            for produced in self._guard.on_rows(
                self._store.backend(key), key, rows, self._watermark
            ):
                out += self._output(produced)
        return out + self._fire()

    def advance_watermark(self, watermark: datetime | str | int) -> list[ProcessorOutput]:
        """Moves the watermark on (never back) and fires the timers it passes."""
        self._move_to(watermark)
        return self._fire()

    def peek_state(self, key: Any) -> dict[str, Any]:
        """What each of the key's states holds in storage (expired entries not yet freed
        among them): a value state's value, a list's values, a map's items as a dict."""
        out: dict[str, Any] = {}
        for d in self._guard.states:
            rows = self._store.states.get((str(key), d.name))
            if not rows:
                continue
            entries = [d.decode(r) for r in rows]
            if d.kind == "value":
                out[d.name] = entries[-1].value
            elif d.kind == "list":
                out[d.name] = [e.value for e in entries]
            else:
                out[d.name] = {e.key: e.value for e in entries}
        return out

    # -- internals ---------------------------------------------------------------------------

    def _move_to(self, watermark: datetime | str | int) -> None:
        ms = _ms(watermark)
        self._watermark = max(self._watermark, ms)

    def _fire(self) -> list[ProcessorOutput]:
        out: list[ProcessorOutput] = []
        while True:
            due = sorted(
                (at, key)
                for key, timers in self._store.timers.items()
                for at in timers
                if at <= self._watermark
            )
            if not due:
                return out
            at, key = due[0]
            self._store.timers[key].discard(at)
            backend = self._store.backend(key)
            for produced in self._guard.on_timer(backend, key, at, self._watermark):
                out += self._output(produced)

    def _record(self, record: Mapping[str, Any]) -> _Record:
        if not isinstance(record, Mapping):
            raise UsageError(f"a record is a dict of its fields, got {record!r}")
        event = dict(record)
        if self._schema is not None:
            event = python_record(record, self._schema.struct)
        key = field_value(record, self._key)
        value = field_value(record, self._time)
        ts = None
        if value is not None:
            ts = time_ms(value, self._schema) if self._schema is not None else _ms(value)
        text = None if key is None or ts is None else str(key)
        raw = json.dumps(record, default=str)
        return _Record(text, None if key is None else str(key), raw, (text, ts or 0, event))

    def _layout_for(self, records: list[_Record]) -> None:
        """Without a schema, the event's fields grow with the fields records show."""
        if self._schema is not None:
            return
        before = len(self._fields)
        for r in records:
            self._fields.update(dict.fromkeys(r.row[2]))
        if len(self._fields) != before:
            self._guard.use_layout(EventLayout(tuple(self._fields), raw=True))

    def _row_of(self, record: _Record) -> tuple[Any, ...]:
        """The guard input row of an event, as Spark hands it over (no control record)."""
        key, ts, event = record.row
        layout = self._guard.layout
        return (key, ts, None, record.raw, *(event.get(f) for f in layout.carried))

    def _guard_dead(self, record: _Record) -> Any:
        missing = self._key if record.user is None else self._time
        detail = f"the field '{missing}' is null"
        return self._guard.dead_letter(record.raw, "missing_field", detail, record.user, None)

    def _output(self, produced: Any) -> list[ProcessorOutput]:
        """A row of the guard's output as the test sees it (a state-rows row is counted)."""
        values = dict(zip(self._names, produced, strict=True))
        if values[KIND] == OUTPUT_KIND:
            return [Emitted({n: values[n] for n in self._guard.output.names})]
        if values[KIND] == STATE_KIND:
            state, rows = (values[c] for c in STATE_COLUMNS)
            self._counted[state] = self._counted.get(state, 0) + rows
            return []
        raw, reason, detail, key, ts = (values[c] for c in DEAD_COLUMNS)
        return [DeadLetter(key=key, event_ts_ms=ts, raw=raw, reason=reason, detail=detail)]


def _ms(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        return to_ms(datetime.fromisoformat(value.replace("Z", "+00:00")))
    return to_ms(value)
