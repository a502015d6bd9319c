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

from streamwarden.errors import PatternError
from streamwarden.operators.engine_rows import EngineRecords
from streamwarden.operators.patterns.api import DetectResult, compile_for, run_detector
from streamwarden.operators.patterns.compile import CompiledPattern
from streamwarden.operators.patterns.options import PatternOptions
from streamwarden.operators.patterns.pattern import Pattern
from streamwarden.operators.patterns.rows import key_rejection, pattern_engine_rows
from streamwarden.validation import validate_records
from streamwarden.validation.settings import FieldNames, ValidationConfig

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
    return run_detector(validated_rows(validated, compiled, key, options), compiled)


def validated_rows(
    validated: DataFrame, compiled: CompiledPattern, key: str, options: PatternOptions
) -> DataFrame:
    """Validation's rejects, and valid events whose ``key`` is null or reserved, are rejected
    with their reason; ticks only move event time."""
    tick = F.col("is_tick")
    key_rejected, key_reason, key_detail = key_rejection(key, f"the pattern key '{key}' is null")
    rejected = ~tick & (F.col("reason").isNotNull() | key_rejected)
    records = EngineRecords(
        key=F.col(key).cast("string"),
        ts_ms=F.when(~rejected, F.col("ts_ms")),
        raw=F.col("raw"),
        reason=F.when(rejected, F.coalesce(F.col("reason"), key_reason)),
        detail=F.when(rejected, F.coalesce(F.col("detail"), key_detail)),
        user=F.col("user_id").cast("string"),
        rejected=rejected,
        tick=tick,
    )
    return pattern_engine_rows(validated, records, compiled, options, F.col("raw"))
