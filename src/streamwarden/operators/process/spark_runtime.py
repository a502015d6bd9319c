"""The guard on Spark's Python ``transformWithState`` (the Row API of 4.2): a
``StatefulProcessor`` whose handle's states are the :class:`~.guard.Backend` of each key.

Each declared state is one Spark list state of entries (its value's fields and when each was
written; a value state holds at most one); the processor's own timers are one more. Spark
calls ``handleInputRows`` once per key and batch, with the watermark for late events, and
``handleExpiredTimer`` for each timer the eviction watermark passed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql import types as T
from pyspark.sql.streaming.stateful_processor import (
    ExpiredTimerInfo,
    StatefulProcessor,
    StatefulProcessorHandle,
    TimerValues,
)

from streamwarden.operators.process.events import EventLayout
from streamwarden.operators.process.guard import TIMERS_STATE, Guard
from streamwarden.operators.process.processor import KeyedProcessor

__all__ = ["GuardedProcessor"]

_TIME = T.StructType([T.StructField("at_ms", T.LongType())])


class _SparkBackend:
    """One key's states through Spark's handle (the handle is set to the key by Spark)."""

    def __init__(
        self, handle: StatefulProcessorHandle, names: list[str], schemas: list[T.StructType]
    ) -> None:
        self._handle = handle
        self._states = {n: handle.getListState(n, s) for n, s in zip(names, schemas, strict=True)}
        self._timers = handle.getListState(TIMERS_STATE, _TIME)

    def load(self, state: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self._states[state].get()]

    def save(self, state: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            self._states[state].put(rows)
        else:
            self._states[state].clear()

    def user_timers(self) -> list[int]:
        return [int(r[0]) for r in self._timers.get()]

    def set_user_timers(self, timers: list[int]) -> None:
        if timers:
            self._timers.put([(t,) for t in timers])
        else:
            self._timers.clear()

    def register_timer(self, at_ms: int) -> None:
        self._handle.registerTimer(at_ms)

    def delete_timer(self, at_ms: int) -> None:
        self._handle.deleteTimer(at_ms)


class GuardedProcessor(StatefulProcessor):
    """A :class:`KeyedProcessor` under its guard, as Spark runs it."""

    def __init__(
        self, processor: KeyedProcessor, key_type: T.DataType, layout: EventLayout
    ) -> None:
        self._processor = processor
        self._key_type = key_type
        self._layout = layout

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._guard = Guard(self._processor, self._key_type, self._layout)
        states = self._guard.states
        self._backend = _SparkBackend(
            handle, [d.name for d in states], [d.storage_schema() for d in states]
        )

    def handleInputRows(
        self, key: Any, rows: Iterator[Any], timerValues: TimerValues
    ) -> Iterator[Any]:
        watermark = timerValues.getCurrentWatermarkInMs()
        yield from self._guard.on_rows(self._backend, key[0], rows, watermark)

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[Any]:
        at = expiredTimerInfo.getExpiryTimeInMs()
        watermark = timerValues.getCurrentWatermarkInMs()
        yield from self._guard.on_timer(self._backend, key[0], at, watermark)

    def close(self) -> None:
        pass
