"""``keyed_process``: a user's :class:`~.processor.KeyedProcessor` over a streaming DataFrame of
typed events, under its guard (:mod:`.guard`), on Spark's Python ``transformWithState``; and the
same step over a pipeline's validated records."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.errors import UsageError
from streamwarden.operators.base import OperatorStep, writer_for
from streamwarden.operators.engine_rows import (
    EVENT_TIME,
    KIND_EVENT,
    EngineRecords,
    typed_records,
    with_watermark,
)
from streamwarden.operators.observed import OBSERVATION, dead_letter_counts
from streamwarden.operators.process.events import EventLayout
from streamwarden.operators.process.guard import (
    DEAD_COLUMNS,
    DEAD_KIND,
    INPUT_COLUMNS,
    KIND,
    OUTPUT_KIND,
    STATE_COLUMNS,
    STATE_KIND,
    STATE_ROWS_ADDED,
    combined_schema,
    expiry_grid_ms,
)
from streamwarden.operators.process.processor import (
    KeyedProcessor,
    check_processor,
    declared_states,
    output_schema,
)
from streamwarden.settings import defaults
from streamwarden.sinks.base import OutputShape

if TYPE_CHECKING:
    from streamwarden.settings.context import RunContext
    from streamwarden.sinks.writer import BatchWriter

__all__ = ["ProcessResult", "keyed_process", "process_rows", "run_guarded"]


@dataclass(frozen=True)
class ProcessResult:
    """The outputs of :func:`keyed_process`, views of one stateful step (``combined``):
    ``output`` (the rows ``ctx.emit`` wrote, in the processor's ``output`` columns) and
    ``dead_letters``. Start one query on ``combined``, or run it with
    :func:`streamwarden.run_query`."""

    operator: ClassVar[str] = "process"

    combined: DataFrame
    processor: KeyedProcessor
    key_name: str
    max_out_of_orderness: timedelta = defaults.MAX_OUT_OF_ORDERNESS
    #: The same query with ticks among its events (None: not built from typed events).
    rebuild: Callable[[DataFrame], ProcessResult] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def output(self) -> DataFrame:
        return output_rows(self.combined, self.processor)

    @property
    def dead_letters(self) -> DataFrame:
        return process_dead_letters(self.combined)

    def output_of(self, batch: DataFrame) -> DataFrame:
        """The output rows of one micro-batch of ``combined``."""
        return output_rows(batch, self.processor)

    def dead_letters_of(self, batch: DataFrame) -> DataFrame:
        """The dead letters of one micro-batch of ``combined``."""
        return process_dead_letters(batch)

    @property
    def watermark_delay(self) -> timedelta:
        return self.max_out_of_orderness

    @property
    def drain_horizon(self) -> timedelta:
        return drain_horizon(self.processor, self.max_out_of_orderness)

    def state_identity(self) -> dict[str, Any]:
        return state_identity(self.processor, self.key_name)

    def writer(self, context: RunContext) -> BatchWriter:
        """The exactly-once writer of ``combined``'s batches to the run's ``output`` and
        ``dead_letters`` sinks."""
        return writer_for(
            context,
            {
                "output": lambda c: output_rows(c, self.processor),
                "dead_letters": process_dead_letters,
            },
            {"dead_letters": OutputShape(time="ingest_time")},
        )

    def observed(self) -> DataFrame:
        return self.combined.observe(OBSERVATION, *observed_counts(self.processor))

    def step(self, ticks: DataFrame, context: RunContext) -> OperatorStep:
        if self.rebuild is None:
            raise UsageError(
                "this result was not built from typed events by streamwarden.keyed_process, "
                "so it cannot take idle ticks: build it with keyed_process"
            )
        ticked = self.rebuild(ticks)
        return OperatorStep(ticked.observed(), ticked.writer(context))


def keyed_process(
    events: DataFrame,
    *,
    key: str,
    time: str,
    processor: KeyedProcessor,
    max_out_of_orderness: timedelta = defaults.MAX_OUT_OF_ORDERNESS,
) -> ProcessResult:
    """Runs ``processor`` per ``key`` over ``events``, a streaming DataFrame of typed events
    (``key`` a string or integer column, ``time`` a timestamp or epoch milliseconds): its
    ``process(key, events, ctx)`` gets each key's events of a micro-batch in event-time order,
    each an object whose attributes are the DataFrame's columns. An event behind the watermark
    (the latest event time less ``max_out_of_orderness``) is a ``too_late`` dead letter, as is
    an event whose key or time is null (``missing_field``).

    Every state the processor declares has a deadline in event time (``expire_after``) or says
    ``unbounded=True``; see :class:`~streamwarden.KeyedProcessor`. To write the result exactly
    once to sinks, with idle ticks and the drain, give it to :func:`streamwarden.run_query`
    (outputs ``output`` and ``dead_letters``); to try a processor on a few events, use
    :class:`streamwarden.testing.ProcessorTester`.
    """
    _check_arguments(events, key, time, processor)
    key_type = events.select(F.col(key)).schema.fields[0].dataType
    return _typed(events, key, time, processor, key_type, max_out_of_orderness, None)


def _typed(
    events: DataFrame,
    key: str,
    time: str,
    processor: KeyedProcessor,
    key_type: T.DataType,
    delay: timedelta,
    ticks: DataFrame | None,
) -> ProcessResult:
    frame, records, _ = typed_records(events, key, time, ticks)
    # a typed event carries no record as received: the guard writes the event as JSON for the
    # few events it dead-letters, rather than Spark for every event
    layout = EventLayout.of(events.schema, key, raw=False)
    rows = process_rows(frame, records, layout, delay)
    combined = run_guarded(rows, processor, key_type, layout)
    return ProcessResult(
        combined,
        processor,
        key.rsplit(".", 1)[-1],
        delay,
        rebuild=lambda t: _typed(events, key, time, processor, key_type, delay, t),
    )


def process_rows(
    frame: DataFrame, records: EngineRecords, layout: EventLayout, delay: timedelta
) -> DataFrame:
    """The guard's input, watermarked: the key, the event time, a control record (JSON, only
    on a control row), the record as received if ``layout`` says so (only on an event), then
    the event's fields ``layout`` carries as top-level columns (:mod:`.events`)."""
    ts_ms = records.ts_ms.cast("long")
    kind = records.kind
    control = F.when(
        kind != KIND_EVENT,
        F.to_json(
            F.struct(
                kind.alias("kind"),
                records.raw.alias("raw"),
                records.reason.alias("reason"),
                records.detail.alias("detail"),
                records.user.alias("user"),
            )
        ),
    )
    key, time, control_name = INPUT_COLUMNS
    raw = [F.when(kind == KIND_EVENT, records.raw).alias("raw")] if layout.raw else []
    fields = [F.col(f"`{n}`").alias(f"_sw_f{i}") for i, n in enumerate(layout.carried)]
    rows = frame.select(
        records.engine_key().alias(key),
        ts_ms.alias(time),
        control.alias(control_name),
        *raw,
        *fields,
        F.timestamp_millis(ts_ms).alias(EVENT_TIME),
    )
    return with_watermark(rows, delay)


def run_guarded(
    rows: DataFrame, processor: KeyedProcessor, key_type: T.DataType, layout: EventLayout
) -> DataFrame:
    """``processor`` under its guard over :func:`process_rows`' output, grouped by key."""
    from streamwarden.operators.process.spark_runtime import GuardedProcessor

    _ship_by_value(type(processor))
    return rows.groupBy(INPUT_COLUMNS[0]).transformWithState(
        GuardedProcessor(processor, key_type, layout),
        combined_schema(output_schema(type(processor))),
        "Append",
        "EventTime",
    )


def _ship_by_value(cls: type) -> None:
    """Pickles the processor's module by value into the Python workers, which may not import
    it (a config's ``python_path``, a notebook's ``__main__``): its code travels with the
    query."""
    import sys

    from pyspark import cloudpickle

    module = sys.modules.get(cls.__module__)
    if module is None or cls.__module__ in ("__main__", "builtins"):
        return
    if cls.__module__.split(".")[0] == "streamwarden":
        return
    try:
        cloudpickle.register_pickle_by_value(module)  # type: ignore[no-untyped-call]
    except ValueError:  # a module cloudpickle cannot ship (a built-in one): imported there
        return


def output_rows(combined: DataFrame, processor: KeyedProcessor) -> DataFrame:
    names = [f.name for f in output_schema(type(processor)).fields]
    return combined.where(F.col(KIND) == OUTPUT_KIND).select(*[F.col(f"`{n}`") for n in names])


def process_dead_letters(combined: DataFrame) -> DataFrame:
    """The dead letters of a guard's output, stamped with the batch's ingestion time."""
    raw, reason, detail, key, ts = DEAD_COLUMNS
    return combined.where(F.col(KIND) == DEAD_KIND).select(
        F.col(raw).alias("raw"),
        F.col(reason).alias("reason"),
        F.col(detail).alias("detail"),
        F.col(key).alias("key"),
        F.timestamp_millis(ts).alias("event_time"),
        F.current_timestamp().alias("ingest_time"),
    )


def observed_counts(processor: KeyedProcessor) -> list[Column]:
    """Output rows, dead letters by reason, and the rows added to each state (negative:
    freed), per batch."""
    state, rows = STATE_COLUMNS
    is_state = F.col(KIND) == STATE_KIND
    added = [
        F.coalesce(F.sum(F.when(is_state & (F.col(state) == d.name), F.col(rows))), F.lit(0))
        .cast("long")
        .alias(STATE_ROWS_ADDED + d.name)
        for d in declared_states(type(processor))
    ]
    return [
        F.count(F.when(F.col(KIND) == OUTPUT_KIND, 1)).alias("output"),
        *dead_letter_counts(KIND, DEAD_COLUMNS[1]),
        *added,
    ]


def drain_horizon(processor: KeyedProcessor, delay: timedelta) -> timedelta:
    """How far past the latest event time every bounded state has expired and been freed (its
    expiry timer is up to a step of its grid after the deadline)."""
    states = declared_states(type(processor))
    longest = max((d.expire_after for d in states if d.expire_after), default=timedelta(0))
    return longest + timedelta(milliseconds=expiry_grid_ms(states)) + delay


def state_identity(processor: KeyedProcessor, key: str) -> dict[str, Any]:
    """What the stored state's layout depends on: each state's kind and types, and the key."""
    states = {d.name: d.identity() for d in declared_states(type(processor))}
    return {"process": {"key": key, "states": states}}


def _check_arguments(events: object, key: str, time: str, processor: object) -> None:
    if not isinstance(processor, KeyedProcessor):
        raise UsageError(
            "keyed_process(..., processor=...): give an instance of a KeyedProcessor subclass, "
            f"got {processor!r}"
        )
    if not isinstance(events, DataFrame) or not events.isStreaming:
        raise UsageError(
            "keyed_process(events, ...): events must be a streaming Spark DataFrame of typed "
            "events (spark.readStream...); to try a processor on a few events, use "
            "streamwarden.testing.ProcessorTester"
        )
    from streamwarden.schema.model import INTEGRAL, field_type

    for name, value in (("key", key), ("time", time)):
        if not isinstance(value, str) or field_type(events.schema, value) is None:
            raise UsageError(
                f"keyed_process(..., {name}=...): {value!r} is not a column of events, whose "
                f"columns are {', '.join(map(repr, events.columns))}"
            )
    key_type = field_type(events.schema, key)
    if not isinstance(key_type, (T.StringType, *INTEGRAL)):
        raise UsageError(f"keyed_process: the key {key!r} must be a string or integer column")
    time_type = field_type(events.schema, time)
    if not isinstance(time_type, T.TimestampType | T.LongType | T.IntegerType):
        raise UsageError(
            f"keyed_process: the time {time!r} must be a timestamp or epoch milliseconds"
        )
    check_processor(type(processor))
