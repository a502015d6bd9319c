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
from streamwarden.validation.validate import DETAIL, IS_TICK, KEY, RAW, REASON, TICK_FIELD, TS_MS

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = [
    "COMMON_COLUMNS",
    "CONTROL_PREFIX",
    "ENGINE_REASONS",
    "EVENT_TIME",
    "JOIN_PAYLOAD",
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
    "typed_records",
    "typed_tick",
    "validated_records",
    "with_typed_ticks",
    "with_watermark",
]

#: The columns every operator's input starts with, in order (``EngineInput.KEY`` .. ``USER``).
COMMON_COLUMNS = ("key", "kind", "ts_ms", "raw", "reason", "detail", "user")
#: The sessions operator's columns after the common ones (``EngineInput.SIZE``), before its
#: plan's value columns (``value_0``, ...: ``EngineInput.SESSION_VALUES``).
SESSION_PAYLOAD = ("size",)
#: The patterns operator's columns after the common ones (``EngineInput.MASK``, ``VALUES``).
PATTERN_PAYLOAD = ("mask", "values")
#: The join operator's columns after the common ones (``EngineInput.JOIN_SIDE``, ``JOIN_ROW``):
#: the side (0 left, 1 right) and the event's typed fields as a JSON object.
JOIN_PAYLOAD = ("side", "row")

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
    Reason.WINDOW_EVENT_CAP,
    Reason.WINDOW_BYTE_CAP,
    Reason.KEY_BUFFER_FULL,
    Reason.POISON,
)

#: The event time as a timestamp, for the watermark; dropped before the engine.
EVENT_TIME = "_event_time"
#: A tick's event time (epoch ms) among typed events (:func:`with_typed_ticks`); null on events.
TICK_MS = "_sw_tick_ms"


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


def with_typed_ticks(events: DataFrame, ticks: DataFrame | None) -> DataFrame:
    """A user's typed ``events`` with the idle ticks among them (``ticks``: the tick stream's
    rows, a ``raw`` JSON string each, as ``pipeline.idle.read_ticks`` reads them), told apart by
    two columns of ours: ``IS_TICK`` (never null) and :data:`TICK_MS` (a tick's event time).
    A tick's user columns are null; :func:`typed_tick` reads the two back. Without ``ticks``,
    ``events`` gains the columns only, as an input that never idles."""
    marked = events.select(
        "*", F.lit(False).alias(IS_TICK), F.lit(None).cast("long").alias(TICK_MS)
    )
    if ticks is None:
        return marked
    tick_ms = F.get_json_object(F.col("raw"), f"$.{TICK_FIELD}").cast("long")
    return marked.unionByName(
        ticks.select(F.lit(True).alias(IS_TICK), tick_ms.alias(TICK_MS)), allowMissingColumns=True
    )


def typed_tick(events: DataFrame) -> tuple[Column | None, Column | None]:
    """``(is_tick, tick_ms)`` of :func:`with_typed_ticks`' rows; ``(None, None)`` for events
    without ticks."""
    if TICK_MS not in events.columns:
        return None, None
    return F.col(IS_TICK), F.col(TICK_MS)


def typed_records(
    events: DataFrame,
    key: str,
    time: str,
    ticks: DataFrame | None,
    group: Column | None = None,
) -> tuple[DataFrame, EngineRecords, Column]:
    """A user's typed ``events`` (and ``ticks`` among them) as the engine's records: an event
    whose key or time is null is a ``missing_field`` dead letter, one whose key starts with NUL
    ``invalid_key``; ``raw`` is each event as JSON. Returns the frame to build the rows over,
    its records, and ``raw``. ``time`` is a timestamp or epoch milliseconds. ``group``, if
    given, is the key instead of column ``key`` (a text column over the events, such as the
    JSON of several fields)."""
    from pyspark.sql import types as T

    time_type = events.select(F.col(time)).schema.fields[0].dataType
    ts_ms = F.unix_millis(F.col(time)) if isinstance(time_type, T.TimestampType) else F.col(time)
    raw = F.to_json(F.struct(*[F.col(f"`{c}`") for c in events.columns]))
    frame = with_typed_ticks(events, ticks)
    is_tick, tick_ms = typed_tick(frame)
    assert is_tick is not None and tick_ms is not None  # with_typed_ticks added them
    key_text = F.col(key).cast("string") if group is None else group
    missing = key_text.isNull() | ts_ms.isNull()
    reserved = F.coalesce(reserved_key(key_text), F.lit(False))
    rejected = ~is_tick & (missing | reserved)
    records = EngineRecords(
        key=key_text,
        ts_ms=F.when(is_tick, tick_ms).when(~rejected, ts_ms.cast("long")),
        raw=raw,
        reason=F.when(missing, F.lit(Reason.MISSING_FIELD.value)).when(
            reserved, F.lit(Reason.INVALID_KEY.value)
        ),
        detail=F.when(key_text.isNull(), F.lit(f"the key '{key}' is null"))
        .when(ts_ms.isNull(), F.lit(f"the time '{time}' is null"))
        .when(reserved, F.concat(F.lit(reserved_detail(key)))),
        user=key_text,
        rejected=rejected,
        tick=is_tick,
    )
    return frame, records, raw


def validated_records() -> EngineRecords:
    """The rows of ``validate_records`` as the engine takes them: validation's rejects pass
    through as dead letters and carry no event time (so they never move the watermark); ticks
    only move event time."""
    tick = F.col(IS_TICK)
    rejected = ~tick & F.col(REASON).isNotNull()
    return EngineRecords(
        key=F.col(KEY),
        ts_ms=F.when(~rejected, F.col(TS_MS)),
        raw=F.col(RAW),
        reason=F.col(REASON),
        detail=F.col(DETAIL),
        user=F.col(KEY),
        rejected=rejected,
        tick=tick,
    )
