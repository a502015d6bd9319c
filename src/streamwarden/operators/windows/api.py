"""The windows operator over validated records, as a pipeline runs it: each group's events go
through the Java engine (``WindowLogic``) as one string key, with the aggregates of sessions,
and come back as window rows under the group's own fields."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ValidationError
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.errors import ConfigError, UsageError
from streamwarden.operators.arguments import check_typed_events
from streamwarden.operators.base import OperatorStep, writer_for
from streamwarden.operators.engine_rows import (
    SESSION_PAYLOAD,
    EngineRecords,
    engine_rows,
    typed_records,
    validated_records,
    with_watermark,
)
from streamwarden.operators.observed import OBSERVATION, dead_letter_counts
from streamwarden.operators.sessions.aggregates import (
    Aggregate,
    AggregateError,
    engine_inputs,
    engine_plan,
    parse_aggregates,
)
from streamwarden.operators.sessions.api import DEAD_LETTER_SHAPE, dead_letter_rows
from streamwarden.operators.sessions.params import JAVA_LONG_MAX
from streamwarden.operators.windows.settings import MAX_WINDOW_BYTES, WindowsConfig
from streamwarden.schema.model import field_type
from streamwarden.settings import defaults
from streamwarden.settings.units import format_duration
from streamwarden.sinks.base import OutputShape
from streamwarden.spark.jvm import call_engine
from streamwarden.validation import validate_records
from streamwarden.validation.validate import KEY, SIZE

if TYPE_CHECKING:
    from datetime import timedelta

    from pyspark.sql import SparkSession

    from streamwarden.schema.model import Schema
    from streamwarden.settings.context import RunContext
    from streamwarden.sinks.writer import BatchWriter
    from streamwarden.validation.settings import ValidationConfig

__all__ = [
    "WINDOW_COLUMNS",
    "GroupKey",
    "WindowLayout",
    "WindowsResult",
    "aggregate_windows",
    "windows_records",
]

#: The columns of a window row after its group's fields and before its aggregates.
WINDOW_COLUMNS = ("window_start", "window_end", "revision", "event_count", "truncated", "window_id")


def _ms(value: timedelta) -> int:
    return int(value.total_seconds() * 1000)


@dataclass(frozen=True)
class GroupKey:
    """How a window's group (the ``by`` fields) travels through the engine as one string key
    and comes back as its fields: the schema's key as it is (validation has checked it), other
    fields as a JSON object (a null field is a group of its own, as in SQL's GROUP BY)."""

    #: (path in the schema, output column name, type) per field.
    fields: tuple[tuple[str, str, T.DataType], ...]
    is_schema_key: bool

    @classmethod
    def of(cls, schema: Schema, by: list[str] | None) -> GroupKey:
        paths = by or [schema.key]
        fields = []
        for path in paths:
            data_type = field_type(schema.struct, path)
            if data_type is None:
                raise ConfigError(
                    f"windows.by: {path!r} is not a field of the schema; its fields are "
                    f"{', '.join(repr(f.name) for f in schema.struct.fields)}"
                )
            fields.append((path, path.rsplit(".", 1)[-1], data_type))
        names = [name for _, name, _ in fields]
        if len(set(names)) != len(names):
            raise ConfigError(f"windows.by: {paths} gives two output columns the same name")
        return cls(tuple(fields), paths == [schema.key])

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for _, name, _ in self.fields)

    def key(self) -> Column:
        """The engine key of a validated row."""
        if self.is_schema_key:
            return F.col(KEY)
        return F.to_json(F.struct(*[F.col(path).alias(name) for path, name, _ in self.fields]))

    def columns(self, key: Column) -> list[Column]:
        """The group's fields, under their names and types, from the engine key."""
        if self.is_schema_key:
            (_, name, data_type), *_ = self.fields
            return [key.cast(data_type).alias(name)]
        struct = T.StructType([T.StructField(n, t) for _, n, t in self.fields])
        parsed = F.from_json(key, struct)
        return [parsed[name].alias(name) for _, name, _ in self.fields]


@dataclass(frozen=True)
class WindowLayout:
    """How the engine's window rows become the user's: the group's fields, the window's
    columns (:data:`WINDOW_COLUMNS`) and each aggregate under its name and declared type."""

    group: GroupKey
    aggregates: tuple[Aggregate, ...]

    def window_rows(self, combined: DataFrame) -> DataFrame:
        return combined.where(F.col("kind") == "session").select(
            *self.group.columns(F.col("key")),
            F.timestamp_millis("start_ms").alias("window_start"),
            F.timestamp_millis("end_ms").alias("window_end"),
            "revision",
            "event_count",
            "truncated",
            F.col("session_id").alias("window_id"),
            *(
                a.output_column(F.col(f"agg_{i}")).alias(a.name)
                for i, a in enumerate(self.aggregates)
            ),
        )

    @property
    def shape(self) -> OutputShape:
        """A window's revisions replace each other (the higher is the later); a table sink
        merges by ``window_id`` (one id per group and window start), dated by its start."""
        names = self.group.names
        return OutputShape(
            key="window_id",
            revision="revision",
            time="window_start",
            record_key=names[0] if len(names) == 1 else None,
        )


def layout(schema: Schema, section: WindowsConfig) -> WindowLayout:
    """The window rows of ``section`` over ``schema``; a :class:`ConfigError` names a group
    field or an aggregate that cannot be computed."""
    group = GroupKey.of(schema, section.by)
    try:
        aggregates = parse_aggregates(
            section.aggregates, schema.struct, taken=(*group.names, *WINDOW_COLUMNS)
        )
    except AggregateError as exc:
        raise ConfigError(f"windows.{exc}") from None
    return WindowLayout(group, tuple(aggregates))


@dataclass(frozen=True)
class WindowsResult:
    """The engine's output (``kind``: ``session`` for a window row, ``dead_letter``), its
    layout and settings, and how a run writes and counts it. :func:`streamwarden.run_query`
    runs what :func:`aggregate_windows` returns as a pipeline runs its operator."""

    operator: ClassVar[str] = "windows"

    combined: DataFrame
    layout: WindowLayout
    section: WindowsConfig
    #: The same query with ticks among its events (None: not built from typed events).
    rebuild: Callable[[DataFrame], WindowsResult] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def windows(self) -> DataFrame:
        """Window rows: the group fields, :data:`WINDOW_COLUMNS` and the aggregates."""
        return self.layout.window_rows(self.combined)

    @property
    def dead_letters(self) -> DataFrame:
        """Rejected events: the ``raw`` event, ``reason``, ``detail`` and times."""
        return dead_letter_rows(self.combined)

    @property
    def watermark_delay(self) -> timedelta:
        return self.section.max_out_of_orderness

    @property
    def drain_horizon(self) -> timedelta:
        return drain_horizon(self.section)

    def state_identity(self) -> dict[str, Any]:
        return state_identity(self.section, self.layout.group.names)

    def writer(self, context: RunContext) -> BatchWriter:
        """The exactly-once writer of ``combined``'s batches to ``[sinks.windows]`` and the dead
        letters."""
        return writer_for(
            context,
            {"windows": self.layout.window_rows, "dead_letters": dead_letter_rows},
            {"windows": self.layout.shape, "dead_letters": DEAD_LETTER_SHAPE},
        )

    def observed(self) -> DataFrame:
        """``combined`` with the per-batch counts a run reads (``WindowBatchStats``)."""
        is_window = F.col("kind") == "session"
        return self.combined.observe(
            OBSERVATION,
            F.count(F.when(is_window, 1)).alias("windows"),
            F.sum(F.when(is_window, F.col("event_count"))).alias("window_events"),
            *dead_letter_counts(),
        )

    def step(self, ticks: DataFrame, context: RunContext) -> OperatorStep:
        if self.rebuild is None:
            raise UsageError(
                "this windows result was not built from typed events by "
                "streamwarden.aggregate_windows, so it cannot take idle ticks"
            )
        ticked = self.rebuild(ticks)
        return OperatorStep(ticked.observed(), ticked.writer(context))


def drain_horizon(section: WindowsConfig) -> timedelta:
    """How far past the latest event time every window has closed and been freed."""
    return section.size + section.allowed_lateness + section.max_out_of_orderness


def state_identity(section: WindowsConfig, group: tuple[str, ...]) -> dict[str, Any]:
    """What the layout of the windows' stored state depends on."""
    return {
        "windows": {
            "by": list(group),
            "size": format_duration(section.size),
            "slide": format_duration(section.slide_or_size),
            "aggregates": dict(section.aggregates),
        }
    }


def plan_json(section: WindowsConfig, aggregates: tuple[Aggregate, ...]) -> str:
    """The plan the Java ``WindowPlan.fromJson`` reads."""
    plan: dict[str, Any] = engine_plan(list(aggregates))
    return json.dumps(
        {
            "size_ms": _ms(section.size),
            "slide_ms": _ms(section.slide_or_size),
            "allowed_lateness_ms": _ms(section.allowed_lateness),
            "emit": section.emit,
            "max_events": JAVA_LONG_MAX if section.max_events is None else section.max_events,
            "max_window_bytes": section.max_window_bytes,
            "inputs": plan["inputs"],
            "aggregates": plan["aggregates"],
        }
    )


def windows_records(
    records: DataFrame,
    schema: Schema,
    section: WindowsConfig,
    validation: ValidationConfig | None = None,
) -> WindowsResult:
    """The operator over ``records`` (one ``raw`` JSON string per row, with the tick marker and
    the source's columns) validated against ``schema``: rejects pass through the engine as dead
    letters and never move the watermark; ticks only move event time."""
    shape = layout(schema, section)
    validated = validate_records(records, schema, validation)
    records_of = validated_records()
    if not shape.group.is_schema_key:
        records_of = replace(records_of, key=shape.group.key())
    rows = _engine_rows(validated, records_of, shape.aggregates, F.col(SIZE))
    return _run(records.sparkSession, rows, section, shape)


def aggregate_windows(
    events: DataFrame,
    *,
    by: str | Sequence[str],
    time: str,
    size: timedelta,
    slide: timedelta | None = None,
    aggregates: Mapping[str, str] | None = None,
    allowed_lateness: timedelta = defaults.ALLOWED_LATENESS,
    emit: str = "final",
    max_out_of_orderness: timedelta = defaults.MAX_OUT_OF_ORDERNESS,
    max_events: int | None = None,
    max_window_bytes: int = MAX_WINDOW_BYTES,
) -> WindowsResult:
    """Aggregates each group's events (``by``: one column or several) into event-time windows
    of ``size``: tumbling, or hopping every ``slide`` (which must divide ``size``), with the
    ``aggregates`` of sessions (output column -> ``"function(field)"``). The rules and the
    output columns are those of ``operator = "windows"`` (docs/guides/windows.md): a window
    takes late events until its end plus ``allowed_lateness``; ``emit = "final"`` writes it
    once then, ``"updates"`` once per micro-batch that changed it; later events are
    ``too_late`` dead letters.

    ``events`` is a streaming DataFrame of typed events with a ``time`` column (a timestamp, or
    epoch milliseconds); an event whose time is null is a ``missing_field`` dead letter. Give
    the result to :func:`streamwarden.run_query` to run it to sinks exactly once, with the idle
    ticks and the drain.

    Example::

        result = aggregate_windows(payments, by="merchant", time="at",
                                   size=timedelta(minutes=1),
                                   aggregates={"payments": "count()", "total": "sum(amount)"})
        run_query(result, checkpoint="ck/merchants", once=True, drain=True,
                  sinks={"windows": {"path": "out/windows"},
                         "dead_letters": {"path": "out/dead_letters"}})
    """
    fields = [by] if isinstance(by, str) else list(by)
    try:
        section = WindowsConfig.model_validate(
            {
                "size": size,
                "slide": slide,
                "by": fields,
                "aggregates": dict(aggregates or {}),
                "allowed_lateness": allowed_lateness,
                "emit": emit,
                "max_out_of_orderness": max_out_of_orderness,
                "max_events": max_events,
                "max_window_bytes": max_window_bytes,
            }
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"aggregate_windows: {problems}") from None
    check_typed_events(events, "aggregate_windows", (*fields, time))
    group = GroupKey(tuple((f, f.rsplit(".", 1)[-1], _type_of(events, f)) for f in fields), False)
    try:
        bound = parse_aggregates(
            section.aggregates, events.schema, taken=(*group.names, *WINDOW_COLUMNS)
        )
    except AggregateError as exc:
        raise UsageError(f"aggregate_windows: {exc}") from None
    return _typed(events, time, section, WindowLayout(group, tuple(bound)), None)


def _typed(
    events: DataFrame,
    time: str,
    section: WindowsConfig,
    shape: WindowLayout,
    ticks: DataFrame | None,
) -> WindowsResult:
    """The windows step over typed ``events`` (with ``ticks`` among them, if given)."""
    first = shape.group.fields[0][0]
    frame, records, raw = typed_records(events, first, time, ticks, group=shape.group.key())
    rows = _engine_rows(frame, records, shape.aggregates, F.octet_length(raw))
    result = _run(events.sparkSession, rows, section, shape)
    return replace(result, rebuild=lambda t: _typed(events, time, section, shape, t))


def _type_of(events: DataFrame, path: str) -> T.DataType:
    data_type = field_type(events.schema, path)
    assert data_type is not None  # check_typed_events has checked the column is there
    return data_type


def _engine_rows(
    frame: DataFrame, records: EngineRecords, aggregates: Sequence[Aggregate], size: Column
) -> DataFrame:
    inputs = engine_inputs(aggregates)
    return engine_rows(
        frame,
        records,
        (*SESSION_PAYLOAD, *(f"value_{i}" for i in range(len(inputs)))),
        (size.cast("long"), *(a.input_column() for a in inputs)),
    )


def _run(
    spark: SparkSession, rows: DataFrame, section: WindowsConfig, shape: WindowLayout
) -> WindowsResult:
    rows = with_watermark(rows, section.max_out_of_orderness)
    plan = plan_json(section, shape.aggregates)
    slow_ms = 0 if section.slow_key_threshold is None else _ms(section.slow_key_threshold)
    jdf = call_engine(
        spark,
        "windows",
        lambda jvm: jvm.io.streamwarden.engine.Windower.windows(rows._jdf, plan, slow_ms),
    )
    return WindowsResult(DataFrame(jdf, spark), shape, section)
