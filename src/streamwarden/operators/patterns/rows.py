"""The pattern operator's engine rows (``EngineInput.java``'s layout), for both of its inputs:
any events (:func:`~streamwarden.operators.patterns.detect`) and validated records (the
pipeline). The common columns come from :func:`~streamwarden.operators.engine_rows.engine_rows`;
this adds the pattern's payload (stage bits and carried values), its rule for keys (a null or
NUL-led key is rejected), and the watermark, declared before events that meet no stage are
filtered out so that event time does not depend on the pattern.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.operators.engine_rows import (
    EVENT_TIME,
    KIND_EVENT,
    PATTERN_PAYLOAD,
    EngineRecords,
    engine_rows,
    reserved_detail,
    reserved_key,
    with_watermark,
)
from streamwarden.schema.model import field_type
from streamwarden.validation.reasons import Reason

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from streamwarden.operators.patterns.compile import CompiledPattern
    from streamwarden.operators.patterns.options import PatternOptions

__all__ = ["carried_text", "key_rejection", "pattern_engine_rows"]


def key_rejection(key: str, null_detail: str) -> tuple[Column, Column, Column]:
    """``(rejected, reason, detail)`` of the rule for the pattern's ``key`` column: a null key
    is ``missing_field`` (with ``null_detail``), a key starting with NUL is ``invalid_key`` (the
    engine would take it for a control key)."""
    missing = F.col(key).isNull()
    reserved = F.coalesce(reserved_key(F.col(key).cast("string")), F.lit(False))
    reason = F.when(missing, F.lit(Reason.MISSING_FIELD.value)).when(
        reserved, F.lit(Reason.INVALID_KEY.value)
    )
    detail = F.when(missing, F.lit(null_detail)).when(reserved, F.lit(reserved_detail(key)))
    return missing | reserved, reason, detail


def pattern_engine_rows(
    frame: DataFrame,
    records: EngineRecords,
    compiled: CompiledPattern,
    options: PatternOptions,
    event_raw: Column,
) -> DataFrame:
    """``frame``'s ``records`` with the pattern's payload, watermarked; with ``prefilter`` (and
    where it cannot change a match), events that meet no stage are dropped after the watermark
    is declared. An event on which a stage condition raised an error is a ``poison`` dead letter
    showing ``event_raw`` (the record, for events whose ``raw`` is only kept when rejected)."""
    records = _poison_on_condition_error(records, compiled, event_raw)
    payload = (
        F.when(records.kind == KIND_EVENT, compiled.mask).otherwise(F.lit(0)).cast("long"),
        F.array(*[carried_text(frame, f) for f in compiled.fields]).cast("array<string>"),
    )
    rows = engine_rows(frame, records, PATTERN_PAYLOAD, payload)
    prefilter = options.prefilter and compiled.prefilter_safe
    return with_watermark(rows, options.max_out_of_orderness, _relevant if prefilter else None)


def carried_text(frame: DataFrame, field: str) -> Column:
    """A carried field's value as text (a STRUCT, ARRAY or MAP as JSON), which the output
    restores to its type."""
    data_type = field_type(frame.schema, field)
    value = F.col(field)
    if isinstance(data_type, T.StructType | T.ArrayType | T.MapType):
        return F.to_json(value)
    return value.cast("string")


def _poison_on_condition_error(
    records: EngineRecords, compiled: CompiledPattern, event_raw: Column
) -> EngineRecords:
    if compiled.failed_stage is None:
        return records
    failed = (records.kind == KIND_EVENT) & compiled.failed_stage.isNotNull()
    threw = F.lit("an error") if compiled.failure is None else compiled.failure
    detail = F.concat(
        F.lit("the condition of stage '"),
        compiled.failed_stage,
        F.lit("' raised an error on this record: "),
        F.coalesce(threw, F.lit("an error that did not recur when evaluated again")),
        F.lit(
            "; the record was set aside here and the pipeline went on. Write conditions that "
            "cannot fail, with try_cast and the try_* functions"
        ),
    )
    return replace(
        records,
        raw=F.when(failed, event_raw).otherwise(records.raw),
        reason=F.when(failed, F.lit(Reason.POISON.value)).otherwise(records.reason),
        detail=F.when(failed, detail).otherwise(records.detail),
        rejected=records.rejected | failed,
    )


def _relevant(rows: DataFrame) -> DataFrame:
    """Drops events that meet no stage. After the watermark: they still move event time. The
    predicate names the event-time column so that Spark cannot push it below the watermark (it
    pushes filters that do not); that column is never null for events."""
    relevant = (F.col("mask") != 0) | (F.col("kind") != KIND_EVENT)
    return rows.where(relevant | F.col(EVENT_TIME).isNull())
