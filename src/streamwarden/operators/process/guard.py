"""The guard around a user's :class:`~.processor.KeyedProcessor`: what streamwarden does for
each key and micro-batch, the same in Spark (:mod:`.spark_runtime`) and in the
:class:`~streamwarden.testing.ProcessorTester` (an in-memory :class:`Backend`).

For a key's rows of a batch (laid out as :mod:`.events` says): a control row passes by (a
rejected record becomes its dead letter; an idle tick only moved the watermark); an event behind
the watermark is ``too_late``; the others go to ``process`` in event-time order. The call works
on views of the key's states (:mod:`.views`) and is kept only if it returns: then the changed
states are written back and the emitted rows go out. If it raises, the key's events of the
batch are ``processor_error`` dead letters and nothing it did is kept.

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
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any, Protocol

from pyspark.sql import Row
from pyspark.sql import types as T

from streamwarden.operators.engine_rows import CONTROL_PREFIX, KIND_REJECTED
from streamwarden.operators.process.events import (
    ROW_CONTROL,
    ROW_RAW,
    ROW_TS,
    EventLayout,
    event_class,
)
from streamwarden.operators.process.processor import (
    Context,
    Events,
    KeyedProcessor,
    check_processor,
    declared_states,
    output_schema,
)
from streamwarden.operators.process.states import StateDeclaration
from streamwarden.operators.process.views import Clock, StateView
from streamwarden.validation.reasons import Reason

__all__ = [
    "CONTROL",
    "INPUT_COLUMNS",
    "KIND",
    "OUTPUT_KIND",
    "STATE_COLUMNS",
    "STATE_KIND",
    "STATE_ROWS_ADDED",
    "TIMERS_STATE",
    "Backend",
    "Guard",
    "combined_schema",
    "expiry_grid_ms",
]

#: The columns of the guard's input rows, in order, before the record as received (if the
#: layout carries it: ``raw``) and the event's fields (:mod:`.events`).
INPUT_COLUMNS = ("key", "ts_ms", "_sw_control")
#: A control row's record (JSON; null for an event): ``kind``, and a rejected record's ``raw``,
#: ``reason``, ``detail`` and ``user``.
CONTROL = INPUT_COLUMNS[ROW_CONTROL]
_TIME_OF = itemgetter(ROW_TS)
#: The combined output's columns around the processor's own: its kind first, a dead letter's
#: columns last.
KIND = "_sw_kind"
DEAD_COLUMNS = ("_sw_raw", "_sw_reason", "_sw_detail", "_sw_key", "_sw_ts_ms")
#: A state-rows row's columns, last: a state's name, and the rows a key's call added to it
#: (negative: freed), so that a batch's rows per state name are a sum over its output.
STATE_COLUMNS = ("_sw_state", "_sw_rows")
OUTPUT_KIND, DEAD_KIND, STATE_KIND = "output", "dead_letter", "state_rows"
#: The observed metric of the rows a batch added to a state (negative: freed): this prefix and
#: the state's name (what monitoring sums into rows per state name).
STATE_ROWS_ADDED = "state_rows_added_"
#: The guard's own state: the timers the processor set (its own expiry timer needs none).
TIMERS_STATE = "_sw_timers"
#: The expiry timers' grid is this share of the shortest ``expire_after`` ...
GRID_SHARE = 16
#: ... and at least this long (ms).
GRID_MIN_MS = 1000
_DETAIL_MAX = 500


def combined_schema(output: T.StructType) -> T.StructType:
    """The guard's output: ``_sw_kind``, the processor's columns, a dead letter's columns, a
    state-rows row's columns."""
    return T.StructType(
        [
            T.StructField(KIND, T.StringType()),
            *output.fields,
            *(T.StructField(c, T.StringType()) for c in DEAD_COLUMNS[:-1]),
            T.StructField(DEAD_COLUMNS[-1], T.LongType()),
            T.StructField(STATE_COLUMNS[0], T.StringType()),
            T.StructField(STATE_COLUMNS[1], T.LongType()),
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

    def __init__(
        self, processor: KeyedProcessor, key_type: T.DataType, layout: EventLayout
    ) -> None:
        check_processor(type(processor))
        self.processor = processor
        self.states = declared_states(type(processor))
        self.output = output_schema(type(processor))
        self._key_type = key_type
        self.use_layout(layout)
        self._row = Row(*combined_schema(self.output).names)
        self._blank_output = (None,) * len(self.output.fields)
        self._blank_dead = (None,) * len(DEAD_COLUMNS)
        self._grid = expiry_grid_ms(self.states)
        #: Whether the processor has timers of its own (its ``on_timer``).
        self._timers_used = type(processor).on_timer is not KeyedProcessor.on_timer

    def timer_for(self, deadline_ms: int) -> int:
        """The expiry timer of entries whose last deadline is ``deadline_ms``: the first point
        of the grid after it."""
        return (deadline_ms // self._grid + 1) * self._grid

    def use_layout(self, layout: EventLayout) -> None:
        """Reads events as ``layout`` says from now on."""
        self.layout = layout
        self._event = event_class(layout)

    def on_rows(
        self, backend: Backend, group: str, rows: Iterable[Any], watermark_ms: int
    ) -> Iterator[Any]:
        """The output of a key's rows of a batch (``group``: the key as text, or a control
        key)."""
        if group.startswith(CONTROL_PREFIX):
            for r in rows:
                yield from self._control(r)
            return
        ordered = sorted(map(self._event, rows), key=_TIME_OF)
        if not ordered:
            return
        cut = 0
        if ordered[0][ROW_TS] < watermark_ms:
            cut = bisect_left(ordered, watermark_ms, key=_TIME_OF)
        for e in ordered[:cut]:
            yield self.dead_letter(
                self._raw(e),
                Reason.TOO_LATE.value,
                f"event time {_shown(e[ROW_TS])} is behind the watermark {_shown(watermark_ms)}",
                group,
                e[ROW_TS],
            )
        current = ordered[cut:] if cut else ordered
        if not current:
            return
        key = self._key(group)
        clock = Clock(now_ms=current[0][ROW_TS], watermark_ms=watermark_ms)
        if self._timers_used:  # read the key's timers only if an entry would be dropped
            clock.lower = lambda: self._horizon(backend, watermark_ms)
        events = Events(current, clock)

        def call(ctx: Context) -> None:
            self.processor.process(key, events, ctx)
            events.finish()

        kept = self._call(backend, clock, call, watermark_ms)
        if isinstance(kept, BaseException):
            detail = _error_detail("process", kept)
            for e in current:
                yield self.dead_letter(
                    self._raw(e), Reason.PROCESSOR_ERROR.value, detail, group, e[ROW_TS]
                )
            return
        yield from self._keep(backend, kept)
        for i, why in sorted(events.capped.items()):
            e = current[i]
            yield self.dead_letter(self._raw(e), Reason.STATE_CAP.value, why, group, e[ROW_TS])

    def _control(self, row: Any) -> Iterator[Any]:
        """A control row's output: a rejected record's dead letter (an idle tick has none)."""
        control = row[ROW_CONTROL]
        record = json.loads(control) if control else {}
        if record.get("kind") == KIND_REJECTED:
            yield self.dead_letter(
                record.get("raw"),
                str(record.get("reason")),
                str(record.get("detail")),
                record.get("user"),
                row[ROW_TS],
            )

    def _raw(self, event: Any) -> str:
        """A dead letter's record: the one received, or (for typed events, which carry none)
        the event as JSON."""
        if self.layout.raw and event[ROW_RAW] is not None:
            return str(event[ROW_RAW])
        return json.dumps(event._asdict(), default=str, ensure_ascii=False)

    def on_timer(
        self, backend: Backend, group: str, at_ms: int, watermark_ms: int
    ) -> Iterator[Any]:
        """The output of a key's timer at ``at_ms`` firing under ``watermark_ms``."""
        if group.startswith(CONTROL_PREFIX):
            return
        mine = backend.user_timers()
        if at_ms in mine:
            mine = [t for t in mine if t != at_ms]
            backend.set_user_timers(mine)
            clock = Clock(now_ms=at_ms, watermark_ms=min([watermark_ms, *mine]))
            key = self._key(group)
            when = datetime.fromtimestamp(at_ms / 1000, UTC)
            kept = self._call(
                backend,
                clock,
                lambda ctx: self.processor.on_timer(key, when, ctx),
                watermark_ms,
            )
            if isinstance(kept, BaseException):
                # a timer has no record of its own: the error is one dead letter naming the key
                detail = _error_detail("on_timer", kept)
                yield self.dead_letter(None, Reason.PROCESSOR_ERROR.value, detail, group, at_ms)
            else:
                yield from self._keep(backend, kept)
        yield from self._purge(backend, watermark_ms)

    # -- a call and what is kept of it ---------------------------------------------------------

    def _horizon(self, backend: Backend, watermark_ms: int) -> int:
        """What entries past their deadline before can be dropped: the watermark (no event
        that is not late sees them), or the key's first timer still to fire before it, which
        may see them (Spark fires a batch's timers after its events, in time order)."""
        if not self._timers_used:
            return watermark_ms
        return min([watermark_ms, *backend.user_timers()])

    def _call(
        self,
        backend: Backend,
        clock: Clock,
        body: Callable[[Context], None],
        watermark_ms: int,
    ) -> _Call | BaseException:
        views = {d.name: d.view(clock, _loader(backend, d.name)) for d in self.states}
        ctx = Context(clock, self.output, watermark_ms)
        # each view hides its state's declaration on the instance for the call (a plain
        # attribute read per use, not a descriptor's)
        attributes = vars(self.processor)
        attributes.update(views)
        try:
            body(ctx)
        except Exception as exc:  # the processor's own code: its records become dead letters
            return exc
        finally:
            for name in views:
                attributes.pop(name, None)
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
            yield from self._rows_added(changed)
        if kept.ctx.timers:
            timers = sorted({*backend.user_timers(), *kept.ctx.timers})
            backend.set_user_timers(timers)
            for at in kept.ctx.timers:
                backend.register_timer(at)
        for values in kept.ctx.emitted:
            yield self._row(OUTPUT_KIND, *values, *self._blank_dead, None, None)

    def _rows_added(self, views: Iterable[StateView]) -> Iterator[Any]:
        """A state-rows row for each state whose rows changed."""
        for view in views:
            if added := view.rows_added:
                yield self._row(
                    STATE_KIND, *self._blank_output, *self._blank_dead, view.name, added
                )

    @staticmethod
    def _timed(views: Iterable[StateView]) -> bool:
        """Whether the key held an entry that expires before the call (so its expiry timer is
        set): the states the call read first, then, if need be, the others."""
        views = list(views)
        loaded = [v for v in views if v.loaded]
        if any(v.loaded_deadline_ms() is not None for v in loaded):
            return True
        return any(v.loaded_deadline_ms() is not None for v in views if v not in loaded)

    def _purge(self, backend: Backend, watermark_ms: int) -> Iterator[Any]:
        """A timer fired: drops every entry no event that is not late, nor a timer of the key
        still to fire, can see, and sets the expiry timer again for what is left (once more on
        the grid)."""
        horizon = self._horizon(backend, watermark_ms)
        clock = Clock(now_ms=horizon, watermark_ms=horizon)
        deadlines, purged = [], []
        for d in self.states:
            view = d.view(clock, _loader(backend, d.name))
            view.purge()
            if view.dirty:
                backend.save(d.name, view.stored())
                purged.append(view)
            deadlines.append(view.deadline_ms())
        left = _latest(deadlines)
        if left is not None:
            backend.register_timer(max(self.timer_for(left), watermark_ms + 1))
        yield from self._rows_added(purged)

    def dead_letter(
        self, raw: str | None, reason: str, detail: str, key: str | None, ts_ms: int | None
    ) -> Any:
        """A dead letter of the guard's output."""
        return self._row(
            DEAD_KIND, *self._blank_output, raw, reason, detail, key, ts_ms, None, None
        )

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
