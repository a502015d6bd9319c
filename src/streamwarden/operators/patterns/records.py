"""Pattern detection over raw pageview records, as the pipeline runs it: records are validated
first (rejects keep their reason and travel through the same stateful step as dead letters),
idle ticks move event time, and the valid events go through the NFA.

The watermark is declared on every valid event and tick *before* events that meet no stage
condition are filtered out, so event time (and with it ``too_late`` and every deadline) does not
depend on the pattern.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from streamwarden.config.model import FieldNames, ValidationConfig
from streamwarden.errors import PatternError
from streamwarden.operators.engine_input import (
    KIND_EVENT,
    KIND_REJECTED,
    KIND_TICK,
    REJECTED_KEY_SPREAD,
    reserved_detail,
    reserved_key,
)
from streamwarden.operators.patterns.api import (
    DetectResult,
    PatternOptions,
    compile_for,
    run_detector,
    with_watermark,
)
from streamwarden.operators.patterns.compile import CompiledPattern
from streamwarden.operators.patterns.pattern import Pattern
from streamwarden.validation import validate_records
from streamwarden.validation.reasons import Reason

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["EVENT_COLUMNS", "detect_validated", "validated_events"]

#: Columns a stage condition (and ``key``/``fields``) may use, besides the control columns.
EVENT_COLUMNS = ("user_id", "event_time", "ts_ms", "page_number", "url", "size", "raw")


def validated_events(
    records: DataFrame, fields: FieldNames, validation: ValidationConfig
) -> DataFrame:
    """``records`` (one ``raw`` JSON string per row) validated, with ``event_time`` added as a
    timestamp; rejects keep ``reason`` and ``detail``, ticks have ``is_tick`` set."""
    validated = validate_records(records, fields, validation)
    return validated.withColumn("event_time", F.timestamp_millis("ts_ms"))


def detect_validated(
    validated: DataFrame,
    pattern: Pattern,
    *,
    key: str = "user_id",
    fields: Sequence[str] = (),
    options: PatternOptions | None = None,
) -> DetectResult:
    """Runs ``pattern`` per ``key`` over the rows of :func:`validated_events`. Validation
    rejects (and valid events whose key is null) come out as dead letters with their reason;
    events behind the watermark as ``too_late`` dead letters; ticks only move event time."""
    options = options or PatternOptions()
    for name in (key, *fields):
        if name not in validated.columns:
            raise PatternError(
                f"column {name!r} is not a validated event column; use one of "
                f"{', '.join(EVENT_COLUMNS)}"
            )
    compiled = compile_for(validated, pattern, fields, options)
    return run_detector(_engine_rows(validated, compiled, key, options), compiled)


def _engine_rows(
    validated: DataFrame, compiled: CompiledPattern, key: str, options: PatternOptions
) -> DataFrame:
    tick = F.col("is_tick")
    reserved = reserved_key(F.col(key).cast("string"))
    rejected = ~tick & (F.col("reason").isNotNull() | F.col(key).isNull() | reserved)
    spread = F.pmod(F.xxhash64("raw"), F.lit(REJECTED_KEY_SPREAD))
    kind = F.when(tick, KIND_TICK).when(rejected, KIND_REJECTED).otherwise(KIND_EVENT)
    timed = ~rejected
    rows = validated.select(
        F.when(tick, F.lit("\u0000tick"))
        .when(rejected, F.concat(F.lit("\u0000rejected:"), spread))
        .otherwise(F.col(key).cast("string"))
        .alias("key"),
        kind.cast("int").alias("kind"),
        F.when(timed, F.col("ts_ms")).cast("long").alias("ts_ms"),
        F.when(kind == KIND_EVENT, compiled.mask).otherwise(F.lit(0)).cast("long").alias("mask"),
        F.array(*[F.col(f).cast("string") for f in compiled.fields])
        .cast("array<string>")
        .alias("values"),
        F.col("raw"),
        F.when(
            rejected,
            F.coalesce(
                "reason",
                F.when(reserved, F.lit(Reason.INVALID_KEY.value)),
                F.lit(Reason.MISSING_FIELD.value),
            ),
        ).alias("reason"),
        F.when(
            rejected,
            F.coalesce(
                "detail",
                F.when(reserved, F.lit(reserved_detail(key))),
                F.lit(f"the pattern key '{key}' is null"),
            ),
        ).alias("detail"),
        F.col("user_id").cast("string").alias("user"),
        F.timestamp_millis(F.when(timed, F.col("ts_ms"))).alias("_event_time"),
    )
    return with_watermark(rows, compiled, options)
