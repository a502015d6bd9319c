"""``sessionize``: the public entry point of the session operator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from streamwarden.errors import UsageError
from streamwarden.operators.engine_rows import (
    SESSION_PAYLOAD,
    EngineRecords,
    engine_rows,
    with_watermark,
)
from streamwarden.operators.sessions.params import SessionParams
from streamwarden.sinks.base import OutputShape
from streamwarden.sources.base import SOURCE_POSITION, SOURCE_TIME
from streamwarden.spark.jvm import call_engine
from streamwarden.validation import QUARANTINED, TICK_SOURCE, validate_records
from streamwarden.validation.settings import FieldNames, ValidationConfig

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "DEAD_LETTER_COLUMNS",
    "DEAD_LETTER_SHAPE",
    "SESSION_COLUMNS",
    "SESSION_SHAPE",
    "SessionizeResult",
    "sessionize",
]

#: Output columns that differ from the engine's: epoch milliseconds become timestamps.
_DERIVED = {
    "session_start": lambda: F.timestamp_millis("start_ms"),
    "session_end": lambda: F.timestamp_millis("end_ms"),
    "event_time": lambda: F.timestamp_millis("event_ts_ms"),
    "ingest_time": F.current_timestamp,
}
SESSION_COLUMNS = (
    "user_id",
    "session_id",
    "session_start",
    "session_end",
    "page_count",
    "bytes",
    "first_url",
    "last_url",
    "urls",
    "revision",
    "truncated",
    "merged_session_ids",
)
DEAD_LETTER_COLUMNS = ("raw", "reason", "detail", "user_id", "event_time", "ingest_time")
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
class SessionizeResult:
    """The outputs of :func:`sessionize`, all derived from one stateful step.

    ``combined`` carries both kinds of row (column ``kind``); a pipeline writes it from one query
    so that sessions and dead letters share one checkpoint. ``sessions`` and ``dead_letters`` are
    views of it for interactive use; starting a query on each would run the operator twice.
    """

    combined: DataFrame

    @property
    def sessions(self) -> DataFrame:
        """Session revisions: one row per emitted session or late update (``revision``)."""
        return session_rows(self.combined)

    @property
    def dead_letters(self) -> DataFrame:
        """Rejected records: the original ``raw`` record, ``reason``, ``detail`` and times."""
        return dead_letter_rows(self.combined)


def sessionize(
    events: DataFrame,
    params: SessionParams | None = None,
    *,
    fields: FieldNames | None = None,
    validation: ValidationConfig | None = None,
) -> SessionizeResult:
    """Groups each user's pageviews into sessions.

    ``events`` is a streaming DataFrame (``spark.readStream...``) with either one string column
    ``raw`` (or ``value``, as ``spark.readStream.text`` gives) holding a JSON record per row, or
    typed columns named by ``fields``. Records are validated first; rejects become dead letters
    with a reason. A session is emitted once the watermark passes its end plus ``gap``, and
    updated (``revision`` + 1) by late events within ``allowed_lateness``.

    A batch DataFrame is refused with a :class:`UsageError`, as are arguments of the wrong
    type: sessions are closed by the watermark, which only a streaming query has. For a finite
    input, read its files as a stream and start the query with ``.trigger(availableNow=True)``;
    to try the rules on a few events, use :class:`streamwarden.testing.SessionTester`.

    Example::

        result = sessionize(spark.readStream.text("landing/"),
                            SessionParams(gap=timedelta(minutes=30)))
        result.combined.writeStream.foreachBatch(...).start()
    """
    _check_arguments(events, params, fields, validation)
    if params is None:  # the page cap is one setting: take it from validation when given there
        params = SessionParams(max_pages=validation.max_pages) if validation else SessionParams()
    fields = fields or FieldNames()
    if validation is not None and validation.max_pages != params.max_pages:
        raise UsageError(
            f"sessionize: validation.max_pages ({validation.max_pages}) and params.max_pages "
            f"({params.max_pages}) differ, but they are one setting (the highest page_number "
            "accepted and the per-session page cap); give both the same value"
        )
    validation = validation or ValidationConfig(max_pages=params.max_pages)
    _check_columns(events, fields)
    validated = validate_records(_as_raw(events, fields), fields, validation)
    spark: SparkSession = events.sparkSession
    jdf = call_engine(
        spark,
        "sessionize",
        lambda jvm: jvm.io.streamwarden.engine.Sessionizer.sessionize(
            session_engine_rows(validated, params)._jdf,
            params.to_plan_json(),
            params.slow_key_threshold_ms,
        ),
    )
    return SessionizeResult(DataFrame(jdf, spark))


def _check_arguments(events: object, params: object, fields: object, validation: object) -> None:
    if not isinstance(events, DataFrame):
        raise UsageError(
            "sessionize(events, ...): events must be a streaming Spark DataFrame such as "
            f"spark.readStream.text('landing/'), got a {type(events).__name__}; to try the "
            "session rules on a few events, use streamwarden.testing.SessionTester"
        )
    if params is not None and not isinstance(params, SessionParams):
        hint = "; for a dict of settings, pass SessionParams(**settings)"
        raise UsageError(
            "sessionize(events, params): params must be a SessionParams such as "
            f"SessionParams(gap=timedelta(minutes=30)), got a {type(params).__name__}"
            + (hint if isinstance(params, dict) else "")
        )
    if fields is not None and not isinstance(fields, FieldNames):
        raise UsageError(
            "sessionize(..., fields=...): fields must be a streamwarden.config.FieldNames such "
            f"as FieldNames(user_id='uid'), got a {type(fields).__name__}"
        )
    if validation is not None and not isinstance(validation, ValidationConfig):
        raise UsageError(
            "sessionize(..., validation=...): validation must be a "
            "streamwarden.config.ValidationConfig such as ValidationConfig(max_pages=100), got "
            f"a {type(validation).__name__}"
        )
    if not events.isStreaming:
        raise UsageError(
            "sessionize(events): events is a batch DataFrame, but sessionize needs a streaming "
            "one (spark.readStream...): sessions are closed by the watermark of a streaming "
            "query. For a finite input, read its files as a stream, e.g. "
            "spark.readStream.text('landing/'), and start the query with "
            ".trigger(availableNow=True); to try the session rules on a few events, use "
            "streamwarden.testing.SessionTester"
        )


#: The Spark types each typed input column may have (``simpleString`` prefixes): what
#: validation reads as a value of the field, as JSON would carry it.
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")
_TYPES = {
    "user_id": ("string", *_INTEGRAL),
    "ts": ("timestamp", "string", *_INTEGRAL),
    "page_number": ("string", *_INTEGRAL),
    "url": ("string",),
}


def _check_columns(events: DataFrame, fields: FieldNames) -> None:
    """Typed input must have the fields' columns, of types validation can read: otherwise every
    record would be dead-lettered for a mistake in the query, so it fails before it starts."""
    columns = events.columns
    if _is_raw(columns):
        return
    types = {f.name: f.dataType.simpleString() for f in events.schema.fields}
    names = {"user_id": fields.user_id, "ts": fields.ts, "page_number": fields.page_number}
    missing = [name for name in names.values() if name not in types]
    if missing:
        raise UsageError(
            f"sessionize(events): column(s) {', '.join(map(repr, missing))} missing from events, "
            f"whose columns are {', '.join(map(repr, columns))}; give one string column 'raw' "
            "(or 'value') of JSON records, or typed columns named by fields= (FieldNames)"
        )
    wrong = [
        f"{name!r} is {types[name]} (expected one of {', '.join(_TYPES[role])})"
        for role, name in (*names.items(), ("url", fields.url))
        if name in types and types[name] not in _TYPES[role]
    ]
    if wrong:
        raise UsageError(
            f"sessionize(events): {'; '.join(wrong)}; cast the column(s) before sessionize "
            "(an event time is a timestamp, epoch milliseconds or ISO-8601 text with a zone)"
        )


def _is_raw(columns: list[str]) -> bool:
    if "raw" in columns and TICK_SOURCE in columns:
        return True
    return any(name in columns and len(columns) == 1 for name in ("raw", "value"))


def session_engine_rows(validated: DataFrame, params: SessionParams) -> DataFrame:
    """The engine's input (``EngineInput.java``) from the rows of ``validate_records``: rejects
    pass through as dead letters and carry no event time (so they never move the watermark);
    ticks only move event time. The watermark is declared and its column dropped."""
    rejected = F.col("reason").isNotNull()
    records = EngineRecords(
        key=F.col("user_id"),
        ts_ms=F.when(~rejected, F.col("ts_ms")),
        raw=F.col("raw"),
        reason=F.col("reason"),
        detail=F.col("detail"),
        user=F.col("user_id"),
        rejected=rejected,
        tick=F.col("is_tick"),
    )
    payload = (F.coalesce(F.col("page_number"), F.lit(0)).cast("long"), F.col("url"), F.col("size"))
    rows = engine_rows(validated, records, SESSION_PAYLOAD, payload)
    return with_watermark(rows, params.max_out_of_orderness)


def _as_raw(events: DataFrame, fields: FieldNames) -> DataFrame:
    columns = events.columns
    if "raw" in columns and TICK_SOURCE in columns:  # a pipeline's source records and ticks
        kept = [c for c in (TICK_SOURCE, SOURCE_TIME, SOURCE_POSITION, QUARANTINED) if c in columns]
        return events.select(F.col("raw").cast("string").alias("raw"), *kept)
    for name in ("raw", "value"):
        if name in columns and len(columns) == 1:
            return events.select(F.col(name).cast("string").alias("raw"))
    return events.select(F.to_json(F.struct(*[F.col(c) for c in columns])).alias("raw"))


def session_rows(combined: DataFrame, *, url_times: bool = False) -> DataFrame:
    """The session revisions of an engine output, with times as timestamps; with
    ``url_times``, also the time of each of ``urls`` (after it), which a history store needs to
    merge late events into a stored session."""
    names: tuple[str, ...] = SESSION_COLUMNS
    if url_times:
        at = names.index("urls") + 1
        names = (*names[:at], "url_times", *names[at:])
    return combined.where(F.col("kind") == "session").select(*_columns(names))


def dead_letter_rows(combined: DataFrame) -> DataFrame:
    """The dead letters of an engine output, stamped with the batch's ingestion time."""
    return combined.where(F.col("kind") == "dead_letter").select(*_columns(DEAD_LETTER_COLUMNS))


def _columns(names: tuple[str, ...]) -> list[Column]:
    return [_DERIVED[n]().alias(n) if n in _DERIVED else F.col(n) for n in names]
