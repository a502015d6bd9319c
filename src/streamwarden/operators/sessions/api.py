"""``sessionize``: the public entry point of the session operator, over typed events of any
schema, and the same operator over validated records, as a pipeline runs it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.errors import UsageError
from streamwarden.operators.base import OperatorStep, writer_for
from streamwarden.operators.engine_rows import (
    SESSION_PAYLOAD,
    engine_rows,
    typed_records,
    validated_records,
    with_watermark,
)
from streamwarden.operators.observed import OBSERVATION, dead_letter_counts
from streamwarden.operators.sessions.aggregates import (
    SESSION_OUTPUT_COLUMNS,
    STATE_COLUMN,
    Aggregate,
    engine_inputs,
)
from streamwarden.operators.sessions.params import SessionParams
from streamwarden.settings import defaults
from streamwarden.sinks.base import OutputShape
from streamwarden.spark.jvm import call_engine
from streamwarden.validation import validate_records
from streamwarden.validation.validate import (
    SIZE,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streamwarden.schema.model import Schema
    from streamwarden.settings.context import RunContext
    from streamwarden.sinks.writer import BatchWriter, Prepare
    from streamwarden.validation.settings import ValidationConfig

__all__ = [
    "DEAD_LETTER_COLUMNS",
    "DEAD_LETTER_SHAPE",
    "SESSION_SHAPE",
    "SessionLayout",
    "SessionizeResult",
    "dead_letter_rows",
    "observed_counts",
    "sessionize",
    "sessionize_records",
]

DEAD_LETTER_COLUMNS = ("raw", "reason", "detail", "key", "event_time", "ingest_time")
#: A session's revisions replace each other (the higher one is the later), a merge ends the
#: sessions it absorbed, and a session is dated by its start: a later revision never starts
#: later (late events and merges only extend a session back), which table sinks may rely on.
SESSION_SHAPE = OutputShape(
    key="session_id", revision="revision", absorbed="merged_session_ids", time="session_start"
)
#: Each dead letter stands alone, dated by when it was rejected (a malformed record has no
#: event time).
DEAD_LETTER_SHAPE = OutputShape(time="ingest_time")


@dataclass(frozen=True)
class SessionLayout:
    """How the engine's session rows become the user's: the key under its own field name and
    type, and each aggregate under its name and declared type."""

    key_name: str
    key_type: T.DataType
    aggregates: tuple[Aggregate, ...] = ()

    def session_rows(self, combined: DataFrame, *, with_state: bool = False) -> DataFrame:
        """The session revisions of an engine output: the key, ``session_id``,
        ``session_start``, ``session_end``, ``event_count``, ``bytes``, ``revision``,
        ``truncated``, ``merged_session_ids``, then the aggregates; with ``with_state``, also
        :data:`STATE_COLUMN` (what a history store needs to merge late events later)."""
        columns = [
            F.col("key").cast(self.key_type).alias(self.key_name),
            F.col("session_id"),
            F.timestamp_millis("start_ms").alias("session_start"),
            F.timestamp_millis("end_ms").alias("session_end"),
            *(F.col(c) for c in SESSION_OUTPUT_COLUMNS[3:]),
            *(
                a.output_column(F.col(f"agg_{i}")).alias(a.name)
                for i, a in enumerate(self.aggregates)
            ),
        ]
        if with_state:
            columns.append(F.col("state").alias(STATE_COLUMN))
        return combined.where(F.col("kind") == "session").select(*columns)

    @property
    def columns(self) -> tuple[str, ...]:
        """The session rows' column names, in order (without the state)."""
        return (self.key_name, *SESSION_OUTPUT_COLUMNS, *(a.name for a in self.aggregates))


@dataclass(frozen=True)
class SessionizeResult:
    """The outputs of :func:`sessionize`, all derived from one stateful step.

    ``combined`` carries every kind of row (column ``kind``); a pipeline writes it from one
    query so that sessions and dead letters share one checkpoint. ``sessions`` and
    ``dead_letters`` are views of it: starting a query on each would run the operator twice.
    :func:`streamwarden.run_query` runs it as a pipeline runs its operator (idle ticks, drain,
    exactly-once sinks).
    """

    operator: ClassVar[str] = "sessions"

    combined: DataFrame
    layout: SessionLayout
    params: SessionParams = field(default_factory=SessionParams)
    #: The same query with ticks among its events (None: not built from typed events).
    rebuild: Callable[[DataFrame], SessionizeResult] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def sessions(self) -> DataFrame:
        """Session revisions: one row per emitted session or late update (``revision``)."""
        return self.layout.session_rows(self.combined)

    @property
    def dead_letters(self) -> DataFrame:
        """Rejected records: the original ``raw`` record, ``reason``, ``detail`` and times."""
        return dead_letter_rows(self.combined)

    def sessions_of(self, batch: DataFrame) -> DataFrame:
        """The session revisions of one micro-batch of ``combined`` (the DataFrame a
        ``foreachBatch`` function receives), with the columns of :attr:`sessions`."""
        return self.layout.session_rows(batch)

    def dead_letters_of(self, batch: DataFrame) -> DataFrame:
        """The dead letters of one micro-batch of ``combined``, as :attr:`dead_letters`."""
        return dead_letter_rows(batch)

    @property
    def watermark_delay(self) -> timedelta:
        return self.params.max_out_of_orderness

    @property
    def drain_horizon(self) -> timedelta:
        return self.params.drain_horizon

    def state_identity(self) -> dict[str, Any]:
        return {"sessions": {"key": self.layout.key_name, "aggregates": self.params.aggregates}}

    def writer(
        self, context: RunContext, *, with_state: bool = False, prepare: Prepare | None = None
    ) -> BatchWriter:
        """The exactly-once writer of ``combined``'s batches to the run's ``sessions`` and
        ``dead_letters`` sinks (those it has)."""
        return writer_for(
            context,
            {
                "sessions": lambda c: self.layout.session_rows(c, with_state=with_state),
                "dead_letters": dead_letter_rows,
            },
            {
                "sessions": replace(SESSION_SHAPE, record_key=self.layout.key_name),
                "dead_letters": DEAD_LETTER_SHAPE,
            },
            prepare,
        )

    def observed(self) -> DataFrame:
        """``combined`` with the per-batch counts a run reads (``SessionBatchStats``)."""
        return self.combined.observe(OBSERVATION, *observed_counts())

    def step(self, ticks: DataFrame, context: RunContext) -> OperatorStep:
        if self.rebuild is None:
            raise UsageError(
                "this sessionize result was not built from typed events by "
                "streamwarden.sessionize, so it cannot take idle ticks: build it with sessionize"
            )
        ticked = self.rebuild(ticks)
        return OperatorStep(ticked.observed(), ticked.writer(context))


def observed_counts() -> list[Column]:
    """Aggregates Spark computes on the fly for each batch (no extra job)."""
    is_session = F.col("kind") == "session"
    return [
        F.count(F.when(is_session, 1)).alias("sessions"),
        F.sum(F.when(is_session, F.col("event_count"))).alias("session_events"),
        F.count(F.when(F.col("kind") == "history", 1)).alias("history_events"),
        *dead_letter_counts(),
    ]


def sessionize(
    events: DataFrame,
    *,
    key: str,
    time: str,
    gap: timedelta = defaults.GAP,
    aggregates: Mapping[str, str] | None = None,
    allowed_lateness: timedelta = defaults.ALLOWED_LATENESS,
    max_out_of_orderness: timedelta = defaults.MAX_OUT_OF_ORDERNESS,
    max_events: int = defaults.MAX_EVENTS,
    max_session_bytes: int = defaults.MAX_SESSION_BYTES,
    slow_key_threshold: timedelta | None = defaults.SLOW_KEY_THRESHOLD,
) -> SessionizeResult:
    """Groups each key's events into sessions: a session ends after ``gap`` of event time
    without an event of its key.

    ``events`` is a streaming DataFrame (``spark.readStream...``) of typed events: a ``key``
    column (string or integer), a ``time`` column (a timestamp, or epoch milliseconds) and the
    fields the ``aggregates`` read (output column -> ``"function(field)"``, e.g.
    ``{"total": "sum(amount)", "merchants": "count_distinct(merchant)"}``; a dotted field
    reaches into a struct). To read raw JSON records against a declared schema first, use
    :func:`streamwarden.validate`. A session is emitted once the watermark passes its end plus
    ``gap``, and revised (``revision`` + 1) by late events within ``allowed_lateness``. An
    event whose key or time is null is a dead letter (``missing_field``), as is one past a cap.

    Sessions keep the key under its own name; every aggregate is exact and does not depend on
    how events were batched when their times differ (docs/guides/sessions.md gives each
    function's type and merge rule; ``streamwarden.AGGREGATE_FUNCTIONS`` the same).

    A batch DataFrame is refused with a :class:`UsageError`, as are columns it lacks: sessions
    are closed by the watermark, which only a streaming query has. To run the result to sinks
    exactly once, with idle ticks and, for a finite input, the drain that closes the last
    sessions, give it to :func:`streamwarden.run_query`; to try the rules on a few events, use
    :class:`streamwarden.testing.SessionTester`.

    Example::

        result = sessionize(payments, key="account", time="at", gap=timedelta(minutes=20),
                            aggregates={"total": "sum(amount)"})
        run_query(result, checkpoint="ck/payments", once=True, drain=True,
                  sinks={"sessions": {"path": "out/sessions"},
                         "dead_letters": {"path": "out/dead_letters"}})
    """
    if aggregates is not None and not isinstance(aggregates, Mapping):
        raise UsageError(
            "sessionize(..., aggregates=...): give a dict of output column -> "
            f"'function(field)', such as {{'total': 'sum(amount)'}}, got {aggregates!r}"
        )
    params = SessionParams(
        gap=gap,
        allowed_lateness=allowed_lateness,
        max_out_of_orderness=max_out_of_orderness,
        max_events=max_events,
        max_session_bytes=max_session_bytes,
        aggregates=dict(aggregates or {}),
        slow_key_threshold=slow_key_threshold,
    )
    _check_events(events, key, time)
    key_type = events.select(F.col(key)).schema.fields[0].dataType
    key_name = key.rsplit(".", 1)[-1]
    bound = tuple(params.bind(_struct_of(events), key_name=key_name, where="sessionize: "))
    return _typed(events, key, time, params, SessionLayout(key_name, key_type, bound), None)


def _typed(
    events: DataFrame,
    key: str,
    time: str,
    params: SessionParams,
    layout: SessionLayout,
    ticks: DataFrame | None,
) -> SessionizeResult:
    """The session step over typed ``events`` (with ``ticks`` among them, if given)."""
    frame, records, raw = typed_records(events, key, time, ticks)
    bound = layout.aggregates
    rows = engine_rows(frame, records, _payload_names(bound), _payload(bound, F.octet_length(raw)))
    result = _run(
        events.sparkSession, with_watermark(rows, params.max_out_of_orderness), params, layout
    )
    return replace(result, rebuild=lambda t: _typed(events, key, time, params, layout, t))


def sessionize_records(
    records: DataFrame,
    schema: Schema,
    params: SessionParams,
    validation: ValidationConfig | None = None,
    *,
    keep_state: bool = False,
) -> SessionizeResult:
    """The operator as a pipeline runs it: ``records`` (one ``raw`` JSON string per row, with
    the tick marker and the source's columns) validated against ``schema``; rejects pass
    through the engine as dead letters and carry no event time (so they never move the
    watermark); ticks only move event time. With ``keep_state``, session rows carry their
    aggregates' state (for a history store)."""
    bound = tuple(params.bind(schema.struct, key_name=schema.key_name))
    layout = SessionLayout(schema.key_name, schema.key_type, bound)
    validated = validate_records(records, schema, validation)
    rows = session_engine_rows(validated, bound, params.max_out_of_orderness)
    return _run(records.sparkSession, rows, params, layout, keep_state=keep_state)


def session_engine_rows(
    validated: DataFrame, aggregates: Sequence[Aggregate], max_out_of_orderness: timedelta
) -> DataFrame:
    """The engine's input (``EngineInput.java``) from the rows of ``validate_records``, with
    the aggregates' input fields: rejects pass through as dead letters and carry no event time
    (so they never move the watermark); ticks only move event time. The watermark is declared
    and its column dropped."""
    engine_records = validated_records()
    rows = engine_rows(
        validated, engine_records, _payload_names(aggregates), _payload(aggregates, F.col(SIZE))
    )
    return with_watermark(rows, max_out_of_orderness)


def _run(
    spark: SparkSession,
    rows: DataFrame,
    params: SessionParams,
    layout: SessionLayout,
    *,
    keep_state: bool = False,
) -> SessionizeResult:
    plan = params.to_plan_json(list(layout.aggregates), keep_state=keep_state)
    jdf = call_engine(
        spark,
        "sessionize",
        lambda jvm: jvm.io.streamwarden.engine.Sessionizer.sessionize(
            rows._jdf, plan, params.slow_key_threshold_ms
        ),
    )
    return SessionizeResult(DataFrame(jdf, spark), layout, params)


def _payload_names(aggregates: Sequence[Aggregate]) -> tuple[str, ...]:
    return (*SESSION_PAYLOAD, *(f"value_{i}" for i in range(len(engine_inputs(aggregates)))))


def _payload(aggregates: Sequence[Aggregate], size: Column) -> tuple[Column, ...]:
    return (size.cast("long"), *(a.input_column() for a in engine_inputs(aggregates)))


def _struct_of(events: DataFrame) -> T.StructType:
    return events.schema


def _check_events(events: object, key: str, time: str) -> None:
    if not isinstance(events, DataFrame):
        raise UsageError(
            "sessionize(events, ...): events must be a streaming Spark DataFrame of typed "
            f"events, got a {type(events).__name__}; to read raw JSON records against a schema "
            "first, use streamwarden.validate; to try the session rules on a few events, use "
            "streamwarden.testing.SessionTester"
        )
    for name, value in (("key", key), ("time", time)):
        if not isinstance(value, str):
            raise UsageError(f"sessionize(..., {name}=...): give a column name, got {value!r}")
    if not events.isStreaming:
        raise UsageError(
            "sessionize(events): events is a batch DataFrame, but sessionize needs a streaming "
            "one (spark.readStream...): sessions are closed by the watermark of a streaming "
            "query. For a finite input, read its files as a stream and start the query with "
            ".trigger(availableNow=True); to try the session rules on a few events, use "
            "streamwarden.testing.SessionTester"
        )
    from streamwarden.schema.model import INTEGRAL, field_type

    struct = events.schema
    key_type = field_type(struct, key)
    time_type = field_type(struct, time)
    if key_type is None or time_type is None:
        missing = key if key_type is None else time
        raise UsageError(
            f"sessionize(events): column {missing!r} is not in events, whose columns are "
            f"{', '.join(map(repr, events.columns))}"
        )
    if not isinstance(key_type, (T.StringType, *INTEGRAL)):
        raise UsageError(
            f"sessionize(events): the key {key!r} is {key_type.simpleString()}; a key is a "
            "string or an integer column"
        )
    if not isinstance(time_type, T.TimestampType | T.LongType | T.IntegerType):
        raise UsageError(
            f"sessionize(events): the time {time!r} is {time_type.simpleString()}; an event "
            "time is a timestamp or epoch milliseconds (bigint or int): convert it first, e.g. "
            f"events.withColumn({time!r}, F.to_timestamp({time!r})) for ISO-8601 text"
        )


def dead_letter_rows(combined: DataFrame) -> DataFrame:
    """The dead letters of an engine output, stamped with the batch's ingestion time."""
    return combined.where(F.col("kind") == "dead_letter").select(
        "raw",
        "reason",
        "detail",
        "key",
        F.timestamp_millis("event_ts_ms").alias("event_time"),
        F.current_timestamp().alias("ingest_time"),
    )
