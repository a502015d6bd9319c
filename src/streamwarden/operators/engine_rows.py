"""The row contract between Python and the Java engine, Python's side, and the one builder of
engine rows.

``EngineInput.java`` is the Java side: the same column order, kind codes, control keys and
reason codes, compared with these by ``tests/operators/test_engine_rows_contract.py`` through
``EngineInput.contractJson()``, so the two sides cannot drift apart.

Every operator's input starts with the common columns (:data:`COMMON_COLUMNS`), followed by the
operator's payload (:data:`SESSION_PAYLOAD`, :data:`PATTERN_PAYLOAD`). Valid events are keyed by
their key; rejected records and idle ticks get control keys (starting with NUL) so they travel
through the same stateful step without touching state: the engine turns rejected rows into dead
letters, and ticks only move event time. An operator says what its records are
(:class:`EngineRecords`) and supplies its payload; :func:`engine_rows` does the rest.

The watermark is declared on :data:`EVENT_TIME` and the column is then dropped
(:func:`with_watermark`): Spark would otherwise silently filter rows behind the watermark before
the operator sees them, and we want each late record counted and dead-lettered instead (lesson
L5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from streamwarden.validation.reasons import Reason

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = [
    "COMMON_COLUMNS",
    "CONTROL_PREFIX",
    "ENGINE_REASONS",
    "EVENT_TIME",
    "KIND_EVENT",
    "KIND_REJECTED",
    "KIND_TICK",
    "PATTERN_PAYLOAD",
    "REJECTED_KEY_PREFIX",
    "REJECTED_KEY_SPREAD",
    "SESSION_PAYLOAD",
    "TICK_KEY",
    "EngineRecords",
    "engine_rows",
    "reserved_detail",
    "reserved_key",
    "with_watermark",
]

#: The columns every operator's input starts with, in order (``EngineInput.KEY`` .. ``USER``).
COMMON_COLUMNS = ("key", "kind", "ts_ms", "raw", "reason", "detail", "user")
#: The sessions operator's columns after the common ones (``EngineInput.SIZE``), before its
#: plan's value columns (``value_0``, ...: ``EngineInput.SESSION_VALUES``).
SESSION_PAYLOAD = ("size",)
#: The patterns operator's columns after the common ones (``EngineInput.MASK``, ``VALUES``).
PATTERN_PAYLOAD = ("mask", "values")

KIND_EVENT, KIND_REJECTED, KIND_TICK = 0, 1, 2

#: What every control key starts with; an event's key must not (:func:`reserved_key`).
CONTROL_PREFIX = "\u0000"
TICK_KEY = CONTROL_PREFIX + "tick"
#: A rejected record's key: this prefix and a hash of its ``raw`` modulo the spread.
REJECTED_KEY_PREFIX = CONTROL_PREFIX + "rejected:"
#: Rejected records are spread over this many control keys so no one task gets them all.
REJECTED_KEY_SPREAD = 8

#: The reason codes the engine decides, after validation (the others are decided in Python).
ENGINE_REASONS = (
    Reason.TOO_LATE,
    Reason.SESSION_EVENT_CAP,
    Reason.SESSION_BYTE_CAP,
    Reason.KEY_BUFFER_FULL,
    Reason.POISON,
)

#: The event time as a timestamp, for the watermark; dropped before the engine.
EVENT_TIME = "_event_time"


def reserved_key(key: Column) -> Column:
    """Whether an event's key (a string column) starts with NUL, as the control keys do: the
    engine would take its events for control rows, so they are dead-lettered before it."""
    return key.startswith(CONTROL_PREFIX)


def reserved_detail(key: str) -> str:
    """The dead-letter detail for an event whose key :func:`reserved_key` refuses."""
    return (
        f"the key '{key}' starts with the NUL character (\\u0000), which streamwarden reserves "
        "for its control rows"
    )


@dataclass(frozen=True)
class EngineRecords:
    """What an operator's input rows are, as columns over them.

    ``key`` is an event's key (a string); ``rejected`` (never null) marks a record that becomes
    a dead letter with ``reason`` and ``detail`` and shows ``raw`` and ``user``; ``tick`` (never
    null; None when the input has no ticks) marks an idle tick, which goes before ``rejected``.
    ``ts_ms`` is the event time in epoch milliseconds as the engine gets it, and the watermark's
    event time: null where a row must not move it.
    """

    key: Column
    ts_ms: Column
    raw: Column
    reason: Column
    detail: Column
    user: Column
    rejected: Column
    tick: Column | None = None

    @property
    def kind(self) -> Column:
        """The kind code of each row."""
        kind = F.when(self.rejected, KIND_REJECTED).otherwise(KIND_EVENT)
        if self.tick is not None:
            kind = F.when(self.tick, KIND_TICK).otherwise(kind)
        return kind.cast("int")

    def engine_key(self) -> Column:
        """The key each row is grouped by: the event's own, or a control key."""
        spread = F.pmod(F.xxhash64(self.raw), F.lit(REJECTED_KEY_SPREAD))
        key = F.when(self.rejected, F.concat(F.lit(REJECTED_KEY_PREFIX), spread)).otherwise(
            self.key
        )
        return key if self.tick is None else F.when(self.tick, F.lit(TICK_KEY)).otherwise(key)


def engine_rows(
    frame: DataFrame,
    records: EngineRecords,
    payload_columns: Sequence[str],
    payload: Sequence[Column],
) -> DataFrame:
    """``frame``'s rows laid out as the engine reads them: :data:`COMMON_COLUMNS` from
    ``records``, then ``payload`` named ``payload_columns`` (:data:`SESSION_PAYLOAD` or
    :data:`PATTERN_PAYLOAD`), then :data:`EVENT_TIME` for :func:`with_watermark`."""
    # Only a rejected record needs its user (an event's key is its own); a null here keeps it
    # out of the shuffle for every valid event.
    common = (
        records.engine_key(),
        records.kind,
        records.ts_ms.cast("long"),
        records.raw,
        records.reason,
        records.detail,
        F.when(records.rejected, records.user),
    )
    return frame.select(
        *[c.alias(n) for n, c in zip(COMMON_COLUMNS, common, strict=True)],
        *[c.alias(n) for n, c in zip(payload_columns, payload, strict=True)],
        F.timestamp_millis(records.ts_ms.cast("long")).alias(EVENT_TIME),
    )


def with_watermark(
    rows: DataFrame,
    max_out_of_orderness: timedelta,
    then: Callable[[DataFrame], DataFrame] | None = None,
) -> DataFrame:
    """Declares the watermark on :data:`EVENT_TIME` of :func:`engine_rows`' output, applies
    ``then`` (what must follow the declaration, such as a filter that may read
    :data:`EVENT_TIME`), and drops the column, so that Spark does not silently filter late rows:
    the engine dead-letters them instead."""
    delay = f"{int(max_out_of_orderness.total_seconds() * 1000)} milliseconds"
    rows = rows.withWatermark(EVENT_TIME, delay)
    if then is not None:
        rows = then(rows)
    return rows.drop(EVENT_TIME)
