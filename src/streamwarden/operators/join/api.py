"""The join operator over a pipeline's records from several sources: each side's records
validated against its own schema, keyed by the ``on`` fields, through the Java engine
(``JoinLogic``), and back as joined rows whose columns are ``<source>_<field>``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.errors import ConfigError
from streamwarden.operators.base import OperatorStep, writer_for
from streamwarden.operators.engine_rows import (
    JOIN_PAYLOAD,
    KIND_EVENT,
    EngineRecords,
    engine_rows,
    with_watermark,
)
from streamwarden.operators.join.settings import JoinConfig
from streamwarden.operators.observed import OBSERVATION, dead_letter_counts
from streamwarden.operators.patterns.observed import INPUT_OBSERVATION
from streamwarden.schema.model import field_type
from streamwarden.sinks.base import STANDALONE, OutputShape
from streamwarden.sources.several import records_of
from streamwarden.spark.jvm import call_engine
from streamwarden.validation import validate_records
from streamwarden.validation.reasons import Reason
from streamwarden.validation.validate import DETAIL, IS_TICK, KEY, RAW, REASON, TS_MS

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import timedelta

    from streamwarden.schema.model import Schema
    from streamwarden.settings.context import RunContext
    from streamwarden.sinks.writer import BatchWriter
    from streamwarden.validation.settings import ValidationConfig

__all__ = ["SIDES", "JoinLayout", "JoinResult", "join_records", "layout"]

#: The two sides, in the engine's order (``side`` 0 and 1).
SIDES = ("left", "right")
#: Each dead letter of a join names the source its record came from.
JOIN_DEAD_LETTER_SHAPE = OutputShape(time="ingest_time")


def _ms(value: timedelta) -> int:
    return int(value.total_seconds() * 1000)


@dataclass(frozen=True)
class Side:
    """One side of the join: its source's name and schema, and its ``on`` fields."""

    name: str
    schema: Schema
    on: tuple[str, ...]

    def key(self) -> Column:
        """The join key of a validated row (null when an ``on`` field is null)."""
        if len(self.on) == 1:
            return F.col(self.on[0]).cast("string")
        values = [F.col(f).cast("string") for f in self.on]
        return F.when(
            reduce(lambda a, b: a & b, [v.isNotNull() for v in values]), F.to_json(F.array(*values))
        )

    def columns(self, row: Column) -> list[Column]:
        """The side's fields, named ``<source>_<field>``, from the engine's JSON of the row."""
        parsed = F.from_json(row, self.schema.struct)
        return [parsed[f.name].alias(f"{self.name}_{f.name}") for f in self.schema.struct.fields]

    @property
    def output_names(self) -> list[str]:
        return [f"{self.name}_{f.name}" for f in self.schema.struct.fields]


@dataclass(frozen=True)
class JoinLayout:
    """The two sides and how the engine's rows become the user's."""

    left: Side
    right: Side

    def joined_rows(self, combined: DataFrame) -> DataFrame:
        """Every field of each side as ``<source>_<field>``, the left side's first."""
        return combined.where(F.col("kind") == "joined").select(
            *self.left.columns(F.col("left_row")), *self.right.columns(F.col("right_row"))
        )

    @staticmethod
    def dead_letter_rows(combined: DataFrame) -> DataFrame:
        """The dead letters, each with the ``source`` its record came from."""
        return combined.where(F.col("kind") == "dead_letter").select(
            "raw",
            "reason",
            "detail",
            "key",
            F.timestamp_millis("event_ts_ms").alias("event_time"),
            F.current_timestamp().alias("ingest_time"),
            F.col("side").alias("source"),
        )


def layout(schemas: Mapping[str, Schema], section: JoinConfig) -> JoinLayout:
    """The sides of ``section`` over ``schemas``; a :class:`ConfigError` names a source or a
    field the join cannot use."""
    sides = []
    for index, (role, name) in enumerate((("left", section.left), ("right", section.right))):
        schema = schemas.get(name)
        if schema is None:
            raise ConfigError(
                f"join.{role} = {name!r} is not one of the sources ({', '.join(schemas)})"
            )
        fields = tuple(pair[index] for pair in section.on)
        for f in fields:
            if field_type(schema.struct, f) is None:
                raise ConfigError(
                    f"join.on: {f!r} is not a field of [schemas.{name}] (its fields: "
                    f"{', '.join(x.name for x in schema.struct.fields)})"
                )
        sides.append(Side(name, schema, fields))
    left, right = sides
    for lf, rf in section.on:
        lt, rt = field_type(left.schema.struct, lf), field_type(right.schema.struct, rf)
        assert lt is not None and rt is not None
        if _kind(lt) != _kind(rt):
            raise ConfigError(
                f"join.on: {left.name}.{lf} is {lt.simpleString()} and {right.name}.{rf} is "
                f"{rt.simpleString()}; join fields of the same kind (text with text, numbers "
                "with numbers)"
            )
    clash = set(left.output_names) & set(right.output_names)
    if clash:
        raise ConfigError(f"join: output columns {sorted(clash)} would be written twice")
    return JoinLayout(left, right)


def _kind(data_type: T.DataType) -> str:
    if isinstance(data_type, T.StringType):
        return "text"
    if isinstance(data_type, T.NumericType):
        return "number"
    return data_type.simpleString()


@dataclass(frozen=True)
class JoinResult:
    """The engine's output (``kind``: ``joined`` or ``dead_letter``) and its layout."""

    combined: DataFrame
    layout: JoinLayout

    def writer(self, context: RunContext) -> BatchWriter:
        """The exactly-once writer of ``combined``'s batches to ``[sinks.joined]`` and the dead
        letters."""
        return writer_for(
            context,
            {"joined": self.layout.joined_rows, "dead_letters": self.layout.dead_letter_rows},
            {"joined": STANDALONE, "dead_letters": JOIN_DEAD_LETTER_SHAPE},
        )

    def observed(self) -> DataFrame:
        """``combined`` with the per-batch counts a run reads (``JoinBatchStats``)."""
        return self.combined.observe(
            OBSERVATION,
            F.count(F.when(F.col("kind") == "joined", 1)).alias("joined"),
            F.count(F.when((F.col("kind") == "joined") & F.col("right_row").isNull(), 1)).alias(
                "unmatched"
            ),
            *dead_letter_counts(),
        )


def plan_json(section: JoinConfig) -> str:
    """The plan the Java ``JoinPlan.fromJson`` reads."""
    low, high = section.between
    return json.dumps(
        {
            "lower_ms": _ms(low),
            "upper_ms": _ms(high),
            "allowed_lateness_ms": _ms(section.allowed_lateness),
            "left_outer": section.type == "left_outer",
            "max_rows_per_key": section.max_rows_per_key,
            "left_name": section.left,
            "right_name": section.right,
        }
    )


def _side_rows(
    records: DataFrame, side: Side, index: int, validation: ValidationConfig | None
) -> DataFrame:
    """One side's records as the engine's rows: validated against the side's schema; an event
    whose ``on`` fields are null is ``missing_field`` (it can match nothing); the left side
    carries the idle ticks."""
    own = records_of(records, side.name, with_ticks=index == 0)
    validated = validate_records(own, side.schema, validation)
    tick = F.col(IS_TICK)
    key = side.key()
    invalid = F.col(REASON).isNotNull()
    no_key = ~invalid & key.isNull()
    rejected = ~tick & (invalid | no_key)
    fields = ", ".join(side.on)
    engine = EngineRecords(
        key=key,
        ts_ms=F.when(~rejected, F.col(TS_MS)),
        raw=F.col(RAW),
        reason=F.when(no_key, F.lit(Reason.MISSING_FIELD.value)).otherwise(F.col(REASON)),
        detail=F.when(
            no_key, F.lit(f"a join field ({fields}) is null: it can match no row")
        ).otherwise(F.col(DETAIL)),
        user=F.col(KEY),
        rejected=rejected,
        tick=tick,
    )
    row = F.to_json(F.struct(*[F.col(f"`{f.name}`") for f in side.schema.struct.fields]))
    return engine_rows(validated, engine, JOIN_PAYLOAD, (F.lit(index), row))


def join_records(
    records: DataFrame,
    schemas: Mapping[str, Schema],
    section: JoinConfig,
    validation: ValidationConfig | None = None,
) -> JoinResult:
    """The operator over ``records`` (one ``raw`` JSON string per row, with
    :data:`~streamwarden.sources.base.SOURCE_NAME`, the tick marker and the sources' columns):
    each side validated against its own schema; rejects pass through the engine as dead
    letters and never move the watermark; ticks only move event time."""
    shape = layout(schemas, section)
    left = _side_rows(records, shape.left, 0, validation)
    right = _side_rows(records, shape.right, 1, validation)
    rows = left.unionByName(right)
    is_event = F.col("kind") == KIND_EVENT
    counts = []
    for index, role in enumerate(SIDES):
        on_side = F.col("side") == index
        counts += [
            F.count(F.when(on_side & is_event, 1)).alias(f"{role}_events"),
            F.count(F.when(on_side & (F.col("kind") == 1), 1)).alias(f"{role}_rejected"),
        ]
    rows = rows.observe(INPUT_OBSERVATION, *counts)
    rows = with_watermark(rows, section.max_out_of_orderness)
    plan = plan_json(section)
    slow_ms = 0 if section.slow_key_threshold is None else _ms(section.slow_key_threshold)
    spark = records.sparkSession
    jdf = call_engine(
        spark, "join", lambda jvm: jvm.io.streamwarden.engine.Joiner.join(rows._jdf, plan, slow_ms)
    )
    return JoinResult(DataFrame(jdf, spark), shape)


def step(result: JoinResult, context: RunContext) -> OperatorStep:
    return OperatorStep(result.observed(), result.writer(context))
