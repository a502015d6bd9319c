"""``detect``: keyed pattern detection on a (streaming) DataFrame."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.errors import PatternError, UsageError
from streamwarden.operators.arguments import shown
from streamwarden.operators.base import OperatorStep, writer_for
from streamwarden.operators.engine_rows import EngineRecords, typed_tick, with_typed_ticks
from streamwarden.operators.observed import OBSERVATION
from streamwarden.operators.patterns.compile import (
    CompiledPattern,
    compile_pattern,
    condition_problem,
    stage_condition,
)
from streamwarden.operators.patterns.observed import INPUT_OBSERVATION, input_counts, output_counts
from streamwarden.operators.patterns.options import PatternOptions
from streamwarden.operators.patterns.pattern import Pattern
from streamwarden.operators.patterns.rows import key_rejection, pattern_engine_rows
from streamwarden.schema.model import field_type
from streamwarden.sinks.base import OutputShape
from streamwarden.spark.jvm import call_engine
from streamwarden.validation.reasons import Reason

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession

    from streamwarden.settings.context import RunContext
    from streamwarden.sinks.writer import BatchWriter

__all__ = ["DetectResult", "PatternOptions", "detect"]


@dataclass(frozen=True)
class DetectResult:
    """The outputs of :func:`detect`, all views of one stateful step (``combined``, with a
    ``kind`` column); start one query on ``combined`` to get them all from one checkpoint, or
    run it as a pipeline runs its operator with :func:`streamwarden.run_query`."""

    operator: ClassVar[str] = "patterns"

    combined: DataFrame
    compiled: CompiledPattern
    #: The type of each carried field (``compiled.fields``), which the output restores.
    types: tuple[T.DataType, ...] = ()
    options: PatternOptions = field(default_factory=PatternOptions)
    #: The same query with ticks among its events (None: not built from typed events).
    rebuild: Callable[[DataFrame], DetectResult] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def matches(self) -> DataFrame:
        """One row per match: key, match id, start and end time, the matched events."""
        return match_rows(self.combined, self.compiled.fields, self.types)

    @property
    def timeouts(self) -> DataFrame:
        """Partial matches whose window closed (only with ``emit_timeouts``)."""
        return timeout_rows(self.combined, self.compiled.fields, self.types)

    @property
    def dead_letters(self) -> DataFrame:
        """Events that could not be evaluated: missing key or time, too late, or past the
        key's ``max_buffered_per_key``."""
        return dead_letter_rows(self.combined)

    @property
    def overflows(self) -> DataFrame:
        """Partial matches dropped because a key hit ``max_partials_per_key``."""
        return self.combined.where(F.col("kind") == "overflow").select("key", "dropped")

    def matches_of(self, batch: DataFrame) -> DataFrame:
        """The matches of one micro-batch of ``combined`` (the DataFrame a ``foreachBatch``
        function receives), with the columns of :attr:`matches`."""
        return match_rows(batch, self.compiled.fields, self.types)

    def timeouts_of(self, batch: DataFrame) -> DataFrame:
        """The timeouts of one micro-batch of ``combined``, as :attr:`timeouts`."""
        return timeout_rows(batch, self.compiled.fields, self.types)

    def dead_letters_of(self, batch: DataFrame) -> DataFrame:
        """The dead letters of one micro-batch of ``combined``, as :attr:`dead_letters`."""
        return dead_letter_rows(batch)

    @property
    def watermark_delay(self) -> timedelta:
        return self.options.max_out_of_orderness

    @property
    def drain_horizon(self) -> timedelta:
        window = self.compiled.pattern.window
        assert window is not None  # a pattern without one is refused when compiled
        return window + self.options.max_out_of_orderness

    def state_identity(self) -> dict[str, Any]:
        return {"pattern": self.compiled.plan}

    def writer(self, context: RunContext) -> BatchWriter:
        """The exactly-once writer of ``combined``'s batches to the run's ``matches``,
        ``timeouts`` and ``dead_letters`` sinks (those it has)."""
        carried, types = self.compiled.fields, self.types
        return writer_for(
            context,
            {
                "matches": lambda c: match_rows(c, carried, types),
                "timeouts": lambda c: timeout_rows(c, carried, types),
                "dead_letters": dead_letter_rows,
            },
            {
                "matches": OutputShape(time="match_start"),
                "timeouts": OutputShape(time="match_start"),
                "dead_letters": OutputShape(time="ingest_time"),
            },
        )

    def observed(self) -> DataFrame:
        """``combined`` with the per-batch output counts a run reads (``PatternBatchStats``)."""
        return self.combined.observe(OBSERVATION, *output_counts())

    def step(self, ticks: DataFrame, context: RunContext) -> OperatorStep:
        if self.rebuild is None:
            raise UsageError(
                "this detect result was not built from typed events by streamwarden.detect, "
                "so it cannot take idle ticks: build it with detect"
            )
        ticked = self.rebuild(ticks)
        return OperatorStep(ticked.observed(), ticked.writer(context))


def detect(
    events: DataFrame,
    pattern: Pattern,
    *,
    key: str,
    time: str,
    fields: Sequence[str] = (),
    options: PatternOptions | None = None,
) -> DetectResult:
    """Finds ``pattern`` in each key's events, in event-time order.

    ``events`` is a streaming DataFrame (``spark.readStream...``) with a key column, an
    event-time column (timestamp, or epoch milliseconds) and whatever the stage conditions use;
    ``fields`` are carried into each matched event of the output. A column named ``raw`` (the
    original record), if present, is what dead letters show.

    A batch DataFrame is refused with a :class:`UsageError`, as are arguments of the wrong
    type: partial matches expire by the watermark, which only a streaming query has. To run the
    result to sinks exactly once, with idle ticks and, for a finite input, the drain, give it to
    :func:`streamwarden.run_query`; to try a pattern on a few events, use
    :class:`streamwarden.testing.PatternTester`. Columns that ``key``, ``time``, ``fields``, a
    ``where_previous`` or a stage condition name but ``events`` lacks raise
    :class:`PatternError` before any query runs.

    Example::

        pattern = (Pattern.begin("first").where(F.col("page_number") == 1)
                   .followed_by("second").where(F.col("page_number") == 2)
                   .within(timedelta(minutes=30)))
        result = detect(events, pattern, key="user_id", time="ts", fields=["url"])
        run_query(result, checkpoint="ck/scans", sinks={"matches": {"path": "out/matches"},
                  "dead_letters": {"path": "out/dead_letters"}})
    """
    _check_arguments(events, pattern, key, time, fields, options)
    options = options or PatternOptions()
    for name in (key, time, *fields):
        if name not in events.columns:
            raise PatternError(
                f"column {name!r} is not in the events; columns: {', '.join(events.columns)}"
            )
    _check_time_type(events, time)
    check_stages(events, pattern)
    compiled = compile_for(events, pattern, fields, options)
    return _typed(events, compiled, key, time, options, None)


def _typed(
    events: DataFrame,
    compiled: CompiledPattern,
    key: str,
    time: str,
    options: PatternOptions,
    ticks: DataFrame | None,
) -> DetectResult:
    """The pattern step over typed ``events``; with ``ticks`` among them, its input counted
    as a pipeline's is (``PatternBatchStats``)."""
    rows = detect_rows(events, compiled, key, time, options, ticks)
    result = replace(run_detector(rows, compiled, events), options=options)
    return replace(result, rebuild=lambda t: _typed(events, compiled, key, time, options, t))


def _check_time_type(events: DataFrame, time: str) -> None:
    """The event time must be a timestamp or whole epoch milliseconds: text would be read as
    no time at all, and every event dead-lettered as missing one."""
    kind = events.schema[time].dataType
    if isinstance(kind, T.TimestampType | T.TimestampNTZType | T.LongType | T.IntegerType):
        return
    raise PatternError(
        f"column {time!r} (time) is {kind.simpleString()}; detect needs a timestamp or epoch "
        f"milliseconds: convert it first, e.g. events.withColumn({time!r}, "
        f"F.to_timestamp({time!r})) for ISO-8601 text"
    )


def check_stages(events: DataFrame, pattern: Pattern) -> None:
    """Raises :class:`PatternError` naming the stage if a ``where_previous`` compares a column
    that ``events`` lacks, or a stage condition cannot be evaluated over ``events`` (unknown
    column, wrong types) or is not a boolean. Spark only analyses the conditions here."""

    pattern.check()
    columns = ", ".join(events.columns)
    for stage in pattern.stages:
        for prev in stage.previous:
            if prev.field not in events.columns:
                raise PatternError(
                    f"stage {stage.name!r}: where_previous({prev.field!r}, {prev.op!r}, "
                    f"{prev.stage!r}) compares column {prev.field!r}, which is not in the "
                    f"events; columns: {columns}"
                )
        aggregates = [("where_aggregate", a) for a in stage.aggregates]
        aggregates += [("until_aggregate", a) for a in stage.until_aggregates]
        for method, agg in aggregates:
            if agg.field is not None and agg.field not in events.columns:
                raise PatternError(
                    f"stage {stage.name!r}: {method}({agg.agg!r}, {agg.field!r}, ...) "
                    f"aggregates column {agg.field!r}, which is not in the events; columns: "
                    f"{columns}"
                )
        named = [("condition", stage_condition(stage))]
        if stage.until is not None:
            named.append(("until condition", stage.until))
        for what, condition in named:
            problem = condition_problem(events, condition)
            if problem is not None:
                raise PatternError(
                    f"stage {stage.name!r}: its {what} {problem} (columns: {columns}); write a "
                    "boolean over those columns, such as F.col('url').startswith('/scan/')"
                )

    for group in pattern.groups:
        if group.until is not None:
            problem = condition_problem(events, group.until)
            if problem is not None:
                names = " ".join(s.name for s in pattern.stages[group.start : group.end])
                raise PatternError(
                    f"the group ({names}): its until condition {problem} (columns: "
                    f"{columns}); write a boolean over those columns"
                )


def _check_arguments(
    events: object, pattern: object, key: object, time: object, fields: object, options: object
) -> None:
    if not isinstance(events, DataFrame):
        raise UsageError(
            "detect(events, ...): events must be a streaming Spark DataFrame such as "
            f"spark.readStream.json('landing/', schema=...), got a {type(events).__name__}; to "
            "try a pattern on a few events, use streamwarden.testing.PatternTester"
        )
    if not isinstance(pattern, Pattern):
        raise UsageError(
            "detect(events, pattern): pattern must be a Pattern such as "
            "Pattern.begin('first').where(...).within(timedelta(minutes=30)), got a "
            f"{type(pattern).__name__}"
        )
    for name, value in (("key", key), ("time", time)):
        if not isinstance(value, str):
            raise UsageError(
                f"detect(..., {name}=...): {name} must be a column name (a str), got {shown(value)}"
            )
    names = fields if isinstance(fields, Sequence) and not isinstance(fields, str) else None
    if names is None or not all(isinstance(f, str) for f in names):
        raise UsageError(
            "detect(..., fields=...): fields must be a list of column names such as ['url'], "
            f"got {shown(fields)}"
        )
    if options is not None and not isinstance(options, PatternOptions):
        raise UsageError(
            "detect(..., options=...): options must be a PatternOptions such as "
            f"PatternOptions(emit_timeouts=True), got a {type(options).__name__}"
        )
    if not events.isStreaming:
        raise UsageError(
            "detect(events): events is a batch DataFrame, but detect needs a streaming one "
            "(spark.readStream...): partial matches expire by the watermark of a streaming "
            "query. For a finite input, read its files as a stream, e.g. "
            "spark.readStream.json('landing/', schema=...), and start the query with "
            ".trigger(availableNow=True); to try a pattern on a few events, use "
            "streamwarden.testing.PatternTester"
        )


def compile_for(
    events: DataFrame,
    pattern: Pattern,
    fields: Sequence[str],
    options: PatternOptions,
    *,
    keep_empty_state: bool = False,
) -> CompiledPattern:
    """Compiles ``pattern`` for ``events``: numeric columns are compared as numbers.
    ``keep_empty_state`` is for tests only (see :func:`compile_pattern`)."""
    used = [*fields, *(p.field for s in pattern.stages for p in s.previous)]
    used += [
        a.field
        for s in pattern.stages
        for a in (*s.aggregates, *s.until_aggregates)
        if a.field is not None
    ]
    numeric = frozenset(
        f.name for f in events.schema.fields if isinstance(f.dataType, T.NumericType)
    ) | frozenset(f for f in used if isinstance(field_type(events.schema, f), T.NumericType))
    return compile_pattern(
        pattern,
        fields,
        numeric,
        max_partials_per_key=options.max_partials_per_key,
        max_buffered_per_key=options.max_buffered_per_key,
        emit_timeouts=options.emit_timeouts,
        slow_key_threshold=options.slow_key_threshold,
        keep_empty_state=keep_empty_state,
    )


def run_detector(
    rows: DataFrame, compiled: CompiledPattern, events: DataFrame | None = None
) -> DetectResult:
    """Runs the engine over ``rows`` laid out as ``EngineInput.java`` defines them; the
    carried fields come out with their types in ``events``."""
    spark: SparkSession = rows.sparkSession
    jdf = call_engine(
        spark,
        "detect",
        lambda jvm: jvm.io.streamwarden.engine.PatternDetector.detect(
            rows._jdf, compiled.plan_json
        ),
    )
    types = () if events is None else carried_types(events, compiled.fields)
    return DetectResult(DataFrame(jdf, spark), compiled, types)


def carried_types(events: DataFrame, fields: Sequence[str]) -> tuple[T.DataType, ...]:
    """The type of each of ``fields`` (dotted into structs) in ``events``."""
    return tuple(field_type(events.schema, f) or T.StringType() for f in fields)


def restored_value(text: Column, data_type: T.DataType) -> Column:
    """A carried field's text back as ``data_type``."""
    if isinstance(data_type, T.StructType | T.ArrayType):
        return F.from_json(text, data_type)
    if isinstance(data_type, T.MapType):
        return F.from_json(text, data_type.simpleString())
    return text.cast(data_type)


def detect_rows(
    events: DataFrame,
    compiled: CompiledPattern,
    key: str,
    time: str,
    options: PatternOptions,
    ticks: DataFrame | None = None,
) -> DataFrame:
    """The engine's rows for ``events`` (and ``ticks`` among them, if given): an event without
    a key or a time, or with a reserved key, is rejected (a dead letter showing its ``raw``, or
    the event as JSON)."""
    ts_type = events.schema[time].dataType
    ts_ms: Column = (
        F.unix_millis(F.col(time))
        if isinstance(ts_type, T.TimestampType | T.TimestampNTZType | T.DateType)
        else F.col(time).cast("long")
    )
    key_rejected, key_reason, key_detail = key_rejection(key, f"field '{key}' is null")
    no_time = F.col(key).isNotNull() & ts_ms.isNull()
    raw = F.col("raw") if "raw" in events.columns else F.to_json(F.struct(*events.columns))
    frame = events if ticks is None else with_typed_ticks(events, ticks)
    is_tick, tick_ms = typed_tick(frame)
    rejected = key_rejected | ts_ms.isNull()
    if is_tick is not None and tick_ms is not None:
        rejected = ~is_tick & rejected
        ts_ms = F.when(is_tick, tick_ms).otherwise(ts_ms)
        frame = frame.observe(INPUT_OBSERVATION, *input_counts(~is_tick, ~rejected))
    records = EngineRecords(
        key=F.col(key).cast("string"),
        ts_ms=ts_ms,
        raw=F.when(rejected, raw),
        reason=F.when(no_time, F.lit(Reason.MISSING_FIELD.value)).otherwise(key_reason),
        detail=F.when(no_time, F.lit(f"field '{time}' is null")).otherwise(key_detail),
        user=F.col(key).cast("string"),
        rejected=rejected,
        tick=is_tick,
    )
    return pattern_engine_rows(frame, records, compiled, options, raw)


def _events(fields: Sequence[str], types: Sequence[T.DataType] = ()) -> Column:
    zipped = F.arrays_zip("ev_stage", "ev_ts_ms", "ev_values")
    kinds = list(types) or [T.StringType()] * len(fields)
    return F.transform(
        zipped,
        lambda z: F.struct(
            z["ev_stage"].alias("stage"),
            F.timestamp_millis(z["ev_ts_ms"]).alias("event_time"),
            *[restored_value(z["ev_values"][i], kinds[i]).alias(f) for i, f in enumerate(fields)],
        ),
    )


def match_rows(
    combined: DataFrame, fields: Sequence[str], types: Sequence[T.DataType] = ()
) -> DataFrame:
    return combined.where(F.col("kind") == "match").select(
        "key",
        "match_id",
        F.timestamp_millis("start_ms").alias("match_start"),
        F.timestamp_millis("end_ms").alias("match_end"),
        _events(fields, types).alias("events"),
    )


def timeout_rows(
    combined: DataFrame, fields: Sequence[str], types: Sequence[T.DataType] = ()
) -> DataFrame:
    return combined.where(F.col("kind") == "timeout").select(
        "key",
        "match_id",
        F.timestamp_millis("start_ms").alias("match_start"),
        F.timestamp_millis("end_ms").alias("match_end"),
        F.timestamp_millis("deadline_ms").alias("deadline"),
        _events(fields, types).alias("events"),
    )


def dead_letter_rows(combined: DataFrame) -> DataFrame:
    return combined.where(F.col("kind") == "dead_letter").select(
        "raw",
        "reason",
        "detail",
        "key",
        F.timestamp_millis("event_ts_ms").alias("event_time"),
        F.current_timestamp().alias("ingest_time"),
    )
