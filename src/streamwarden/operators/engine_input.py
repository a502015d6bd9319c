"""Builds the fixed column layout the Java engine reads (``EngineInput.java``).

Valid events are keyed by user; rejected records and idle ticks get control keys (starting with
NUL) so they travel through the same stateful step without touching state. The watermark is
declared on the event time and the column is then dropped: Spark would otherwise silently filter
rows behind the watermark before the operator sees them, and we want each late record counted
and dead-lettered instead (lesson L5).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = [
    "KIND_EVENT",
    "KIND_REJECTED",
    "KIND_TICK",
    "REJECTED_KEY_SPREAD",
    "engine_input",
    "reserved_detail",
    "reserved_key",
]

KIND_EVENT, KIND_REJECTED, KIND_TICK = 0, 1, 2
#: Rejected records are spread over this many control keys so no one task gets them all.
REJECTED_KEY_SPREAD = 8


def reserved_key(key: Column) -> Column:
    """Whether an event's key (a string column) starts with NUL, as the control keys do: the
    engine would take its events for control rows, so they are dead-lettered before it."""
    return key.startswith("\u0000")


def reserved_detail(key: str) -> str:
    """The dead-letter detail for an event whose key :func:`reserved_key` refuses."""
    return (
        f"the key '{key}' starts with the NUL character (\\u0000), which streamwarden reserves "
        "for its control rows"
    )


def engine_input(validated: DataFrame, max_out_of_orderness: timedelta) -> DataFrame:
    """``validated`` has the columns of ``validate_records``; returns engine rows."""
    rejected = F.col("reason").isNotNull()
    tick = F.col("is_tick")
    key = (
        F.when(tick, F.lit("\u0000tick"))
        .when(
            rejected,
            F.concat(
                F.lit("\u0000rejected:"), F.pmod(F.xxhash64("raw"), F.lit(REJECTED_KEY_SPREAD))
            ),
        )
        .otherwise(F.col("user_id"))
    )
    kind = F.when(tick, KIND_TICK).when(rejected, KIND_REJECTED).otherwise(KIND_EVENT)
    rows = validated.select(
        key.alias("key"),
        kind.cast("int").alias("kind"),
        F.when(rejected, F.lit(None)).otherwise(F.col("ts_ms")).cast("long").alias("ts_ms"),
        F.coalesce(F.col("page_number"), F.lit(0)).cast("long").alias("page"),
        F.col("url"),
        F.col("size"),
        F.col("raw"),
        F.col("reason"),
        F.col("detail"),
        # Only a rejected record needs its parsed user id (a valid event's key is its user id);
        # a null here keeps it out of the shuffle for every valid event.
        F.when(rejected, F.col("user_id")).alias("user_id"),
        F.timestamp_millis(F.when(rejected, F.lit(None)).otherwise(F.col("ts_ms"))).alias(
            "_event_time"
        ),
    )
    delay = f"{int(max_out_of_orderness.total_seconds() * 1000)} milliseconds"
    return rows.withWatermark("_event_time", delay).drop("_event_time")
