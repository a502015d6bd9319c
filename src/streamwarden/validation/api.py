"""``validate``: raw records against a declared schema, as a public function, usable before
either operator or before the user's own code."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from streamwarden.errors import UsageError
from streamwarden.schema.model import Schema
from streamwarden.validation.settings import ValidationConfig
from streamwarden.validation.validate import (
    DETAIL,
    IS_TICK,
    KEY,
    RAW,
    REASON,
    TS_MS,
    validate_records,
)

__all__ = ["Validated", "validate"]


@dataclass(frozen=True)
class Validated:
    """What :func:`validate` gives: ``all`` has a row per record (the declared fields, typed,
    then validation's own columns, named with the ``_sw_`` prefix that no field may take:
    ``_sw_raw``, ``_sw_reason``, ``_sw_detail``, ``_sw_key``, ``_sw_ts_ms``...); ``events``
    and ``dead_letters`` are its two parts."""

    all: DataFrame
    schema: Schema

    @property
    def events(self) -> DataFrame:
        """The valid records: the declared fields with their types (top-level columns; a
        struct's fields inside it), ready for :func:`streamwarden.sessionize`,
        :func:`streamwarden.detect` or the user's own code."""
        names = [f"`{f.name}`" for f in self.schema.struct.fields]
        return self.all.where(F.col(REASON).isNull()).select(*names)

    @property
    def dead_letters(self) -> DataFrame:
        """The rejected records: ``raw`` (as received), ``reason`` (a stable code), ``detail``
        (naming the field or rule), ``key`` (when it could be read), ``event_time`` (when it
        could be read) and ``ingest_time``, as a pipeline's dead-letter output has them."""
        return self.all.where(F.col(REASON).isNotNull()).select(
            F.col(RAW).alias("raw"),
            F.col(REASON).alias("reason"),
            F.col(DETAIL).alias("detail"),
            F.col(KEY).alias("key"),
            F.timestamp_millis(TS_MS).alias("event_time"),
            F.current_timestamp().alias("ingest_time"),
        )


def validate(
    records: DataFrame, schema: Schema, validation: ValidationConfig | None = None
) -> Validated:
    """Reads each record of ``records`` (one JSON object per row, in a string or binary column
    named ``raw`` or ``value``, as ``spark.readStream.text`` gives) into ``schema``'s fields and
    checks it, as a pipeline does: nothing is coerced, and every record is either an event or
    a dead letter with a reason (docs/concepts/dead-letters.md lists them). Works on streaming and
    batch DataFrames alike.

    Example::

        schema = Schema(key="account", time="at",
                        fields="account STRING, at TIMESTAMP, amount DOUBLE")
        checked = validate(spark.readStream.text("landing/"), schema)
        sessions = sessionize(checked.events, key="account", time="at", ...)
    """
    if not isinstance(records, DataFrame):
        raise UsageError(
            "validate(records, schema): records must be a Spark DataFrame of JSON records, "
            f"such as spark.readStream.text('landing/'), got a {type(records).__name__}"
        )
    if not isinstance(schema, Schema):
        raise UsageError(
            "validate(records, schema): schema must be a streamwarden.Schema such as "
            "Schema(key='account', time='at', fields='account STRING, at TIMESTAMP'), got a "
            f"{type(schema).__name__}"
        )
    column = next((c for c in ("raw", "value") if c in records.columns), None)
    if column is None:
        raise UsageError(
            "validate(records): records need a column 'raw' or 'value' of JSON text, one "
            f"object per row; its columns are {', '.join(map(repr, records.columns))}"
        )
    checked = validate_records(
        records.select(F.col(column).cast("string").alias("raw")), schema, validation
    )
    return Validated(checked.where(~F.col(IS_TICK)), schema)
