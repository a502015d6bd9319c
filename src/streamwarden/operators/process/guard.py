"""The guard around a user's :class:`~.processor.KeyedProcessor`: what streamwarden does for
each key and micro-batch, the same in Spark (:mod:`.spark_runtime`) and in the
:class:`~streamwarden.testing.ProcessorTester` (an in-memory :class:`Backend`).

For a key's rows of a batch: a control row passes by (a rejected record becomes its dead
letter; an idle tick only moved the watermark); an event behind the watermark is ``too_late``;
the others go to ``process`` in event-time order. The call works on views of the key's states
(:mod:`.states`) and is kept only if it returns: then the changed states are written back and
the emitted rows go out. If it raises, the key's events of the batch are ``processor_error``
dead letters and nothing it did is kept.

Storage is freed by one event-time timer per key (:meth:`Guard.timer_for`: the first point
after a deadline on a grid of a sixteenth of the shortest ``expire_after``, at least a second).
It is set when a key with no entry that expires writes one; when it fires, the guard drops what
no event that is not late can see and sets it again for what is left. A key that keeps writing
thus costs Spark a timer operation about once per ``expire_after``, not one per write, and its
storage is freed at most one ``expire_after`` (and a step) after an entry's deadline; what an
event sees is judged exactly, whenever storage is freed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from pyspark.sql import Row
from pyspark.sql import types as T

from streamwarden.operators.engine_rows import CONTROL_PREFIX, KIND_REJECTED
from streamwarden.operators.process.processor import (
    Context,
    Events,
    KeyedProcessor,
    as_event,
    check_processor,
    declared_states,
    output_schema,
)
from streamwarden.operators.process.states import Clock, StateDeclaration, StateView
from streamwarden.validation.reasons import Reason

__all__ = [
    "INPUT_COLUMNS",
    "KIND",
    "OUTPUT_KIND",
    "TIMERS_STATE",
    "Backend",
    "Guard",
    "combined_schema",
    "expiry_grid_ms",
]

#: The columns of the guard's input rows, in order, before the event's fields (``EVENT``).
INPUT_COLUMNS = ("key", "kind", "ts_ms", "raw", "reason", "detail", "user")
#: The input column holding the event's fields (a struct).
EVENT = "event"
#: The combined output's columns around the processor's own: its kind first, a dead letter's
#: columns last.
KIND = "_sw_kind"
DEAD_COLUMNS = ("_sw_raw", "_sw_reason", "_sw_detail", "_sw_key", "_sw_ts_ms")
OUTPUT_KIND, DEAD_KIND = "output", "dead_letter"
#: The guard's own state: the timers the processor set (its own expiry timer needs none).
TIMERS_STATE = "_sw_timers"
#: The expiry timers' grid is this share of the shortest ``expire_after`` ...
GRID_SHARE = 16
#: ... and at least this long (ms).
GRID_MIN_MS = 1000
_DETAIL_MAX = 500


def combined_schema(output: T.StructType) -> T.StructType:
    """The guard's output: ``_sw_kind``, the processor's columns, a dead letter's columns."""
    return T.StructType(
        [
            T.StructField(KIND, T.StringType()),
            *output.fields,
            *(T.StructField(c, T.StringType()) for c in DEAD_COLUMNS[:-1]),
            T.StructField(DEAD_COLUMNS[-1], T.LongType()),
        ]
    )


class Backend(Protocol):
    """One key's storage: Spark's state handle, or the tester's dictionaries."""

    def load(self, state: str) -> list[tuple[Any, ...]]: ...

    def save(self, state: str, rows: list[tuple[Any, ...]]) -> None:
        """Replaces the state's entries (none: removes the state)."""
        ...

    def user_timers(self) -> list[int]: ...

    def set_user_timers(self, timers: list[int]) -> None: ...

    def register_timer(self, at_ms: int) -> None: ...

    def delete_timer(self, at_ms: int) -> None: ...


@dataclass
class _Call:
    """One call of the processor, and what it left to keep."""

    clock: Clock
    views: dict[str, StateView]
    ctx: Context


class Guard:
    """The guard of one processor instance (see the module's description)."""

    def __init__(self, processor: KeyedProcessor, key_type: T.DataType) -> None:
        check_processor(type(processor))
        self.processor = processor
        self.states = declared_states(type(processor))
        self.output = output_schema(type(processor))
        self._key_type = key_type
        self._row = Row(*combined_schema(self.output).names)
        self._blank_output = (None,) * len(self.output.fields)
        self._grid = expiry_grid_ms(self.states)

    def timer_for(self, deadline_ms: int) -> int:
        """The expiry timer of entries whose last deadline is ``deadline_ms``: the first point
        of the grid after it."""
        return (deadline_ms // self._grid + 1) * self._grid

    def on_rows(
        self, backend: Backend, group: str, rows: Iterable[Any], watermark_ms: int
    ) -> Iterator[Any]:
        """The output of a key's rows of a batch (``group``: the key as text, or a control
        key)."""
        if group.startswith(CONTROL_PREFIX):
            for r in rows:
                if r.kind == KIND_REJECTED:
                    yield self.dead_letter(r.raw, r.reason, r.detail, r.user, r.ts_ms)
            return
        ordered = sorted(rows, key=lambda r: r.ts_ms)
        late = [r for r in ordered if r.ts_ms < watermark_ms]
        for r in late:
            yield self.dead_letter(
                _raw(r),
                Reason.TOO_LATE.value,
                f"event time {_shown(r.ts_ms)} is behind the watermark {_shown(watermark_ms)}",
                group,
                r.ts_ms,
            )
        current = ordered[len(late) :]
        if not current:
            return
        key = self._key(group)
        times = [r.ts_ms for r in current]
        clock = Clock(now_ms=times[0], watermark_ms=watermark_ms)
        events = Events([as_event(r.event) for r in current], times, clock)

        def call(ctx: Context) -> None:
            self.processor.process(key, events, ctx)
            events.finish()

        kept = self._call(backend, clock, call)
        if isinstance(kept, BaseException):
            detail = _error_detail("process", kept)
            for r in current:
                yield self.dead_letter(
                    _raw(r), Reason.PROCESSOR_ERROR.value, detail, group, r.ts_ms
                )
            return
        yield from self._keep(backend, kept)
        for i, why in sorted(events.capped.items()):
            r = current[i]
            yield self.dead_letter(_raw(r), Reason.STATE_CAP.value, why, group, r.ts_ms)

    def on_timer(
        self, backend: Backend, group: str, at_ms: int, watermark_ms: int
    ) -> Iterator[Any]:
        """The output of a key's timer at ``at_ms`` firing under ``watermark_ms``."""
        if group.startswith(CONTROL_PREFIX):
            return
        mine = backend.user_timers()
        if at_ms in mine:
            backend.set_user_timers([t for t in mine if t != at_ms])
            clock = Clock(now_ms=at_ms, watermark_ms=watermark_ms)
            key = self._key(group)
            when = datetime.fromtimestamp(at_ms / 1000, UTC)
            kept = self._call(backend, clock, lambda ctx: self.processor.on_timer(key, when, ctx))
            if isinstance(kept, BaseException):
                # a timer has no record of its own: the error is one dead letter naming the key
                detail = _error_detail("on_timer", kept)
                yield self.dead_letter(None, Reason.PROCESSOR_ERROR.value, detail, group, at_ms)
            else:
                yield from self._keep(backend, kept)
        self._purge(backend, watermark_ms)

    # -- a call and what is kept of it ---------------------------------------------------------

    def _call(
        self, backend: Backend, clock: Clock, body: Callable[[Context], None]
    ) -> _Call | BaseException:
        views = {d.name: d.view(clock, _loader(backend, d.name)) for d in self.states}
        ctx = Context(clock, self.output)
        self.processor._sw_views = views  # type: ignore[attr-defined]
        try:
            body(ctx)
        except Exception as exc:  # the processor's own code: its records become dead letters
            return exc
        finally:
            self.processor._sw_views = None  # type: ignore[attr-defined]
        return _Call(clock, views, ctx)

    def _keep(self, backend: Backend, kept: _Call) -> Iterator[Any]:
        changed = [v for v in kept.views.values() if v.dirty]
        if changed:
            timed = self._timed(kept.views.values())  # before the writes: a timer is set
            for view in changed:
                backend.save(view.name, view.stored())
            after = _latest(v.deadline_ms() for v in kept.views.values())
            if not timed and after is not None:
                backend.register_timer(self.timer_for(after))
        if kept.ctx.timers:
            timers = sorted({*backend.user_timers(), *kept.ctx.timers})
            backend.set_user_timers(timers)
            for at in kept.ctx.timers:
                backend.register_timer(at)
        for values in kept.ctx.emitted:
            yield self._row(OUTPUT_KIND, *values, None, None, None, None, None)

    @staticmethod
    def _timed(views: Iterable[StateView]) -> bool:
        """Whether the key held an entry that expires before the call (so its expiry timer is
        set): the states the call read first, then, if need be, the others."""
        views = list(views)
        loaded = [v for v in views if v.loaded]
        if any(v.loaded_deadline_ms() is not None for v in loaded):
            return True
        return any(v.loaded_deadline_ms() is not None for v in views if v not in loaded)

    def _purge(self, backend: Backend, watermark_ms: int) -> None:
        """A timer fired: drops every entry no event that is not late can see, and sets the
        expiry timer again for what is left (once more on the grid)."""
        clock = Clock(now_ms=watermark_ms, watermark_ms=watermark_ms)
        deadlines = []
        for d in self.states:
            view = d.view(clock, _loader(backend, d.name))
            view.purge()
            if view.dirty:
                backend.save(d.name, view.stored())
            deadlines.append(view.deadline_ms())
        left = _latest(deadlines)
        if left is not None:
            backend.register_timer(max(self.timer_for(left), watermark_ms + 1))

    def dead_letter(
        self, raw: str | None, reason: str, detail: str, key: str | None, ts_ms: int | None
    ) -> Any:
        """A dead letter of the guard's output."""
        return self._row(DEAD_KIND, *self._blank_output, raw, reason, detail, key, ts_ms)

    def _key(self, group: str) -> Any:
        """The key as its field's type (the engine groups by its text)."""
        if isinstance(self._key_type, T.StringType):
            return group
        return int(group)


def expiry_grid_ms(states: Iterable[StateDeclaration]) -> int:
    """The step of the expiry timers' grid: a sixteenth of the shortest ``expire_after``, at
    least :data:`GRID_MIN_MS`."""
    ttls = [d.expire_after_ms for d in states if d.expire_after_ms is not None]
    return max(GRID_MIN_MS, min(ttls) // GRID_SHARE) if ttls else GRID_MIN_MS


def _latest(deadlines: Iterable[int | None]) -> int | None:
    known = [d for d in deadlines if d is not None]
    return max(known) if known else None


def _raw(row: Any) -> str:
    """A dead letter's record: the one received, or (for typed events, which carry none) the
    event as JSON."""
    if row.raw is not None:
        return str(row.raw)
    return json.dumps(row.event, default=str, ensure_ascii=False)


def _loader(backend: Backend, name: str) -> Callable[[], list[tuple[Any, ...]]]:
    return lambda: backend.load(name)


def _error_detail(where: str, exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    detail = f"{where} raised {type(exc).__name__}: {text}"
    return detail if len(detail) <= _DETAIL_MAX else detail[: _DETAIL_MAX - 3] + "..."


def _shown(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (OverflowError, ValueError, OSError):
        return f"{ms} ms"
