"""The join operator over a pipeline's records from several sources: each side's records
validated against its own schema, keyed by the ``on`` fields, through the Java engine
(``JoinLogic``), and back as joined rows whose columns are ``<source>_<field>``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from functools import reduce
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ValidationError
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.errors import ConfigError, StreamwardenError, UsageError
from streamwarden.operators.arguments import check_typed_events
from streamwarden.operators.base import OperatorStep, writer_for
from streamwarden.operators.engine_rows import (
    JOIN_PAYLOAD,
    KIND_EVENT,
    EngineRecords,
    engine_rows,
    typed_records,
    with_watermark,
)
from streamwarden.operators.join.settings import MAX_ROWS_PER_KEY, JoinConfig
from streamwarden.operators.observed import OBSERVATION, dead_letter_counts
from streamwarden.operators.patterns.observed import INPUT_OBSERVATION
from streamwarden.schema.model import field_type
from streamwarden.settings import defaults
from streamwarden.settings.units import format_duration
from streamwarden.sinks.base import STANDALONE, OutputShape
from streamwarden.sources.several import records_of
from streamwarden.spark.jvm import call_engine
from streamwarden.validation import validate_records
from streamwarden.validation.reasons import Reason
from streamwarden.validation.validate import (
    DETAIL,
    IS_TICK,
    KEY,
    RAW,
    REASON,
    TICK_SOURCE,
    TS_MS,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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
    struct: T.StructType
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
        parsed = F.from_json(row, self.struct)
        return [parsed[f.name].alias(f"{self.name}_{f.name}") for f in self.struct.fields]

    @property
    def output_names(self) -> list[str]:
        return [f"{self.name}_{f.name}" for f in self.struct.fields]


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
    structs = {}
    for role, name in (("left", section.left), ("right", section.right)):
        schema = schemas.get(name)
        if schema is None:
            raise ConfigError(
                f"join.{role} = {name!r} is not one of the sources ({', '.join(schemas)})"
            )
        structs[name] = schema.struct
    return layout_of(structs, section, lambda name: f"[schemas.{name}]", ConfigError)


def layout_of(
    structs: Mapping[str, T.StructType],
    section: JoinConfig,
    where: Callable[[str], str],
    error: type[StreamwardenError],
) -> JoinLayout:
    """The sides of ``section`` over each side's fields (``structs`` by name); ``error`` names
    a field the join cannot use, in the words of ``where`` (``[schemas.payments]``)."""
    sides = []
    for index, name in enumerate((section.left, section.right)):
        struct = structs[name]
        fields = tuple(pair[index] for pair in section.on)
        for f in fields:
            if field_type(struct, f) is None:
                raise error(
                    f"join.on: {f!r} is not a field of {where(name)} (its fields: "
                    f"{', '.join(x.name for x in struct.fields)})"
                )
        sides.append(Side(name, struct, fields))
    left, right = sides
    for lf, rf in section.on:
        lt, rt = field_type(left.struct, lf), field_type(right.struct, rf)
        assert lt is not None and rt is not None
        if _kind(lt) != _kind(rt):
            raise error(
                f"join.on: {left.name}.{lf} is {lt.simpleString()} and {right.name}.{rf} is "
                f"{rt.simpleString()}; join fields of the same kind (text with text, numbers "
                "with numbers)"
            )
    clash = set(left.output_names) & set(right.output_names)
    if clash:
        raise error(f"join: output columns {sorted(clash)} would be written twice")
    return JoinLayout(left, right)


def _kind(data_type: T.DataType) -> str:
    if isinstance(data_type, T.StringType):
        return "text"
    if isinstance(data_type, T.NumericType):
        return "number"
    return data_type.simpleString()


@dataclass(frozen=True)
class JoinResult:
    """The engine's output (``kind``: ``joined`` or ``dead_letter``), its layout and settings.
    :func:`streamwarden.run_query` runs what :func:`interval_join` returns as a pipeline runs
    its operator."""

    operator: ClassVar[str] = "join"

    combined: DataFrame
    layout: JoinLayout
    section: JoinConfig
    #: The same query with ticks among the left side's events (None: not built from typed
    #: events).
    rebuild: Callable[[DataFrame], JoinResult] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def joined(self) -> DataFrame:
        """Joined rows: every field of each side as ``<name>_<field>``."""
        return self.layout.joined_rows(self.combined)

    @property
    def dead_letters(self) -> DataFrame:
        """Rows the join refused or that had no join field, with the ``source`` they came
        from."""
        return self.layout.dead_letter_rows(self.combined)

    @property
    def watermark_delay(self) -> timedelta:
        return self.section.max_out_of_orderness

    @property
    def drain_horizon(self) -> timedelta:
        return drain_horizon(self.section)

    def state_identity(self) -> dict[str, Any]:
        return state_identity(self.section)

    def step(self, ticks: DataFrame, context: RunContext) -> OperatorStep:
        if self.rebuild is None:
            raise UsageError(
                "this join result was not built from typed events by "
                "streamwarden.interval_join, so it cannot take idle ticks"
            )
        ticked = self.rebuild(ticks)
        return OperatorStep(ticked.observed(), ticked.writer(context))

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


def drain_horizon(section: JoinConfig) -> timedelta:
    """How far past the latest event time every row has been freed (and every unmatched left
    row written)."""
    return (
        section.horizon
        + section.allowed_lateness
        + section.max_out_of_orderness
        + timedelta(milliseconds=1)
    )


def state_identity(section: JoinConfig) -> dict[str, Any]:
    """What the layout of the join's stored rows depends on."""
    return {
        "join": {
            "left": section.left,
            "right": section.right,
            "on": [list(p) for p in section.on],
            "between": [_signed(d) for d in section.between],
        }
    }


def _signed(duration: timedelta) -> str:
    return (
        f"-{format_duration(-duration)}" if duration < timedelta(0) else format_duration(duration)
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
    records: DataFrame,
    side: Side,
    schema: Schema,
    index: int,
    validation: ValidationConfig | None,
) -> DataFrame:
    """One side's records as the engine's rows: validated against the side's schema; an event
    whose ``on`` fields are null is ``missing_field`` (it can match nothing); the left side
    carries the idle ticks."""
    ticks = F.coalesce(F.col(TICK_SOURCE), F.lit(False)) if index == 0 else None
    own = records_of(records, side.name, also=ticks)
    validated = validate_records(own, schema, validation)
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
    row = F.to_json(F.struct(*[F.col(f"`{f.name}`") for f in side.struct.fields]))
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
    left = _side_rows(records, shape.left, schemas[section.left], 0, validation)
    right = _side_rows(records, shape.right, schemas[section.right], 1, validation)
    return _run(records.sparkSession, left, right, section, shape)


def _run(
    spark: SparkSession, left: DataFrame, right: DataFrame, section: JoinConfig, shape: JoinLayout
) -> JoinResult:
    """The engine over both sides' rows, with each side's input counted."""
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
    jdf = call_engine(
        spark, "join", lambda jvm: jvm.io.streamwarden.engine.Joiner.join(rows._jdf, plan, slow_ms)
    )
    return JoinResult(DataFrame(jdf, spark), shape, section)


def interval_join(
    left: DataFrame,
    right: DataFrame,
    *,
    on: str | Sequence[str] | Sequence[tuple[str, str]],
    time: str | tuple[str, str],
    between: tuple[timedelta, timedelta],
    type: str = "inner",
    names: tuple[str, str] = ("left", "right"),
    allowed_lateness: timedelta = defaults.ALLOWED_LATENESS,
    max_out_of_orderness: timedelta = defaults.MAX_OUT_OF_ORDERNESS,
    max_rows_per_key: int = MAX_ROWS_PER_KEY,
) -> JoinResult:
    """Joins two streams of typed events within a time bound, as ``operator = "join"`` does
    (docs/guides/joins.md): a ``left`` row and a ``right`` row with equal ``on`` fields (one
    name for both sides, or pairs ``(left field, right field)``) join when the right row's
    ``time`` is within ``between`` of the left row's: ``right.time in [left.time + from,
    left.time + to]``. ``type = "left_outer"`` also writes each left row without a match,
    once no row can match it any more. Every row is kept only while it can match; a row more
    than ``allowed_lateness`` behind the watermark is a ``too_late`` dead letter.

    The output has every column of each side as ``<name>_<column>`` (``names``: the two
    sides' names, also in the dead letters' ``source``). ``time`` is one column name for both
    sides or a pair, each a timestamp or epoch milliseconds. Give the result to
    :func:`streamwarden.run_query` to run it to sinks ``joined`` and ``dead_letters`` exactly
    once, with the idle ticks and the drain.

    Example::

        result = interval_join(payments, refunds, on="payment_id", time="at",
                               between=(timedelta(0), timedelta(days=1)),
                               names=("payments", "refunds"), type="left_outer")
    """
    pairs = _pairs(on)
    times = (time, time) if isinstance(time, str) else tuple(time)
    try:
        section = JoinConfig.model_validate(
            {
                "left": names[0],
                "right": names[1],
                "on": [list(p) for p in pairs],
                "between": list(between),
                "type": type,
                "allowed_lateness": allowed_lateness,
                "max_out_of_orderness": max_out_of_orderness,
                "max_rows_per_key": max_rows_per_key,
            }
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"interval_join: {problems}") from None
    for index, events in enumerate((left, right)):
        fields = [p[index] for p in pairs]
        check_typed_events(events, "interval_join", (*fields, times[index]))
    shape = layout_of(
        {names[0]: left.schema, names[1]: right.schema},
        section,
        lambda name: f"the {name} events",
        UsageError,
    )
    return _typed(left, right, times, section, shape, None)


def _pairs(on: str | Sequence[str] | Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    if isinstance(on, str):
        return [(on, on)]
    pairs = [(o, o) if isinstance(o, str) else tuple(o) for o in on]
    if not pairs or any(len(p) != 2 for p in pairs):
        raise UsageError(
            "interval_join(..., on=...): give a column name, a list of them, or pairs "
            f"(left column, right column), got {on!r}"
        )
    return [(p[0], p[1]) for p in pairs]


def _typed(
    left: DataFrame,
    right: DataFrame,
    times: tuple[str, ...],
    section: JoinConfig,
    shape: JoinLayout,
    ticks: DataFrame | None,
) -> JoinResult:
    """The join over typed events (the ticks, if given, among the left side's)."""
    rows = []
    for index, (events, side) in enumerate(((left, shape.left), (right, shape.right))):
        frame, records, raw = typed_records(
            events, side.on[0], times[index], ticks if index == 0 else None, group=side.key()
        )
        rows.append(engine_rows(frame, records, JOIN_PAYLOAD, (F.lit(index), raw)))
    result = _run(left.sparkSession, rows[0], rows[1], section, shape)
    return replace(result, rebuild=lambda t: _typed(left, right, times, section, shape, t))
