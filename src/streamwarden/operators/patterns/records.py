"""Pattern detection over raw records, as the pipeline runs it: records are validated against
the declared schema first (rejects keep their reason and travel through the same stateful step
as dead letters), idle ticks move event time, and the valid events go through the NFA.

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
from streamwarden.schema.model import field_type
from streamwarden.validation import validate_records
from streamwarden.validation.validate import DETAIL, IS_TICK, KEY, RAW, REASON, TS_MS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streamwarden.schema.model import Schema
    from streamwarden.validation.settings import ValidationConfig

__all__ = ["detect_validated", "validated_events"]


def validated_events(
    records: DataFrame, schema: Schema, validation: ValidationConfig | None = None
) -> DataFrame:
    """``records`` (one ``raw`` JSON string per row) validated against ``schema``: the declared
    fields as typed columns and validation's control columns; rejects keep their reason and
    detail, ticks are marked."""
    return validate_records(records, schema, validation)


def detect_validated(
    validated: DataFrame,
    pattern: Pattern,
    *,
    key: str,
    fields: Sequence[str] = (),
    options: PatternOptions | None = None,
) -> DetectResult:
    """Runs ``pattern`` per ``key`` over the rows of :func:`validated_events`. Validation
    rejects (and valid events whose key is null) come out as dead letters with their reason;
    events behind the watermark as ``too_late`` dead letters; ticks only move event time."""
    options = options or PatternOptions()
    for name in (key, *fields):
        if field_type(validated.schema, name) is None:
            raise PatternError(f"{name!r} is not a declared field of the schema")
    compiled = compile_for(validated, pattern, fields, options)
    return run_detector(validated_rows(validated, compiled, key, options), compiled, validated)


def validated_rows(
    validated: DataFrame, compiled: CompiledPattern, key: str, options: PatternOptions
) -> DataFrame:
    """Validation's rejects, and valid events whose ``key`` is null or reserved, are rejected
    with their reason; ticks only move event time."""
    tick = F.col(IS_TICK)
    key_rejected, key_reason, key_detail = key_rejection(key, f"the pattern key '{key}' is null")
    rejected = ~tick & (F.col(REASON).isNotNull() | key_rejected)
    records = EngineRecords(
        key=F.col(key).cast("string"),
        ts_ms=F.when(~rejected, F.col(TS_MS)),
        raw=F.col(RAW),
        reason=F.when(rejected, F.coalesce(F.col(REASON), key_reason)),
        detail=F.when(rejected, F.coalesce(F.col(DETAIL), key_detail)),
        user=F.col(KEY),
        rejected=rejected,
        tick=tick,
    )
    return pattern_engine_rows(validated, records, compiled, options, F.col(RAW))
