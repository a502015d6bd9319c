"""Record validation, compiled to Spark SQL expressions so that it runs natively (lesson L4).

Every raw record gets either a parsed, typed event or a reason code with a human-readable detail;
nothing is dropped here. Validation runs before any state, so bad input can never reach it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.classic.column import Column as ClassicColumn

from streamwarden.sources.base import SOURCE_POSITION, SOURCE_TIME
from streamwarden.spark.jvm import call_engine
from streamwarden.validation.reasons import Reason
from streamwarden.validation.settings import FieldNames, ValidationConfig

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "EVENT_TIME_RANGE",
    "MAX_EVENT_MS",
    "MIN_EVENT_MS",
    "QUARANTINED",
    "TICK_FIELD",
    "TICK_SOURCE",
    "VALIDATED_COLUMNS",
    "validate_records",
]

#: Field of the control records that move event time forward while input is idle.
TICK_FIELD = "streamwarden_tick_ms"
#: The boolean input column that marks the rows of the idle ticker's own source. Only those are
#: ticks: a landing record that happens to carry :data:`TICK_FIELD` is validated like any other.
TICK_SOURCE = "from_tick_source"
#: The optional input column with the ``poison`` detail of a record the supervisor's bisection
#: set aside (``pipeline.quarantine``); null for every other record.
QUARANTINED = "quarantined"
_CORRUPT = "_corrupt_record"
_INTEGER = r"^-?[0-9]{1,18}$"
#: The event times accepted, in epoch milliseconds (``EventTimes.java``): years 0001 to 9999,
#: which every later step (Spark timestamps in microseconds, deadlines = time + gap + lateness)
#: holds without overflow. A record outside is ``invalid_timestamp``, never a failed batch.
MIN_EVENT_MS, MAX_EVENT_MS = -62_135_596_800_000, 253_402_300_799_999
#: How those bounds read in a dead letter's detail and the docs.
EVENT_TIME_RANGE = "0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z"
_NOT_A_TIME = -(2**63)  # EventTimes.INVALID

#: Columns of :func:`validate_records`'s result.
VALIDATED_COLUMNS = (
    "raw",
    "user_id",
    "ts_ms",
    "page_number",
    "url",
    "size",
    "is_tick",
    "reason",
    "detail",
)


def validate_records(raw: DataFrame, fields: FieldNames, rules: ValidationConfig) -> DataFrame:
    """Parses the ``raw`` JSON string column of ``raw`` and checks each record.

    Returns one row per input row with :data:`VALIDATED_COLUMNS`; ``reason`` is null for a valid
    event. Ticks (control records written by the idle ticker, in rows whose :data:`TICK_SOURCE`
    column is true) have ``is_tick`` set. A source's own event time (``SOURCE_TIME``, e.g. the
    Kafka record timestamp) replaces the record's time field where present; a source's position
    (``SOURCE_POSITION``) is added to the detail of a rejected record.
    """
    from_ticks = (
        F.coalesce(F.col(TICK_SOURCE), F.lit(False)) if TICK_SOURCE in raw.columns else F.lit(False)
    )
    source_time = F.col(SOURCE_TIME) if SOURCE_TIME in raw.columns else F.lit(None)
    position = F.col(SOURCE_POSITION) if SOURCE_POSITION in raw.columns else F.lit(None)
    quarantined = F.col(QUARANTINED) if QUARANTINED in raw.columns else F.lit(None)
    parsed = raw.select(
        "raw",
        from_ticks.alias("from_ticks"),
        quarantined.cast("string").alias("quarantined"),
        source_time.cast("long").alias("source_time"),
        position.cast("string").alias("position"),
        parse_typed(raw, fields).alias("typed"),
    )
    typed = F.col("typed")
    text = _parse_text(parsed, fields)
    spark = raw.sparkSession
    # Fast path: a record whose fields have the expected JSON types parses once, with numbers
    # read as numbers. Anything else (a string timestamp, a quoted number, a float, malformed
    # JSON) is parsed again with every field as text, which the checks below classify; CASE
    # WHEN evaluates that second parse only for those records. Each step is its own projection
    # so that the checks refer to columns: one generated method instead of nested copies of
    # every expression (Spark falls back to interpreting projections that big).
    fast = typed.getField(_CORRUPT).isNull()
    names = (fields.user_id, fields.ts, fields.page_number, fields.url, TICK_FIELD, _CORRUPT)
    source_ts = F.col("source_time")
    as_text = parsed.select(
        "raw",
        "from_ticks",
        "position",
        "quarantined",
        "source_time",
        fast.alias("fast"),
        F.coalesce(source_ts, typed.getField(fields.ts)).alias("ts_number"),
        typed.getField(fields.page_number).alias("page_number_number"),
        *(
            F.when(fast, typed.getField(name).cast("string"))
            .otherwise(text.getField(name))
            .alias(f"text_{i}")
            for i, name in enumerate(names)
        ),
    )
    j = {name: F.col(f"text_{i}") for i, name in enumerate(names)}
    if SOURCE_TIME in raw.columns:  # the source's time wins over the field, when it has one
        j[fields.ts] = F.coalesce(source_ts.cast("string"), j[fields.ts])
    is_tick = F.col("from_ticks") & j[TICK_FIELD].isNotNull()
    ts_text, page_text = j[fields.ts], j[fields.page_number]
    iso_ms = _engine_column(spark, "event time parse", "eventMillis", ts_text)
    ts_ms = F.when(F.col("fast") | source_ts.isNotNull(), F.col("ts_number")).otherwise(
        F.when(ts_text.rlike(_INTEGER), ts_text.cast("long")).otherwise(
            F.when(iso_ms != _NOT_A_TIME, iso_ms)
        )
    )
    page_number = F.when(F.col("fast"), F.col("page_number_number")).otherwise(
        F.when(page_text.rlike(_INTEGER), page_text.cast("long"))
    )
    numbers = as_text.select("*", ts_ms.alias("event_ms"), page_number.alias("page"))
    ts_ms, page_number = F.col("event_ms"), F.col("page")
    valid_utf8 = F.is_valid_utf8("raw")
    checked = numbers.select(
        # a record that is not UTF-8 text keeps its exact bytes, in base64 (its reason says so)
        F.when(valid_utf8, F.col("raw")).otherwise(base64_line(F.col("raw"))).alias("raw"),
        # a key read from bytes that are not UTF-8 is not the producer's key: none is shown
        F.when(valid_utf8, j[fields.user_id]).alias("user_id"),
        F.when(is_tick, j[TICK_FIELD].cast("long"))
        .when(ts_ms.between(MIN_EVENT_MS, MAX_EVENT_MS), ts_ms)
        .alias("ts_ms"),
        page_number.alias("page_number"),
        j[fields.url].alias("url"),
        F.octet_length("raw").cast("long").alias("size"),
        is_tick.alias("is_tick"),
        _failure(j, fields, rules, ts_ms, page_number, is_tick, valid_utf8, spark).alias("failure"),
        "position",
        "quarantined",
    )
    set_aside = F.col("quarantined").isNotNull() & ~F.col("is_tick")
    reason = F.when(set_aside, F.lit(Reason.POISON.value)).otherwise(F.col("failure.reason"))
    detail = F.when(set_aside, F.col("quarantined")).otherwise(F.col("failure.detail"))
    if SOURCE_POSITION in raw.columns:
        detail = F.when(F.col("position").isNull(), detail).otherwise(
            F.concat(detail, F.lit(" (at "), F.col("position"), F.lit(")"))
        )
    return checked.select(*VALIDATED_COLUMNS[:-2], reason.alias("reason"), detail.alias("detail"))


def base64_line(value: Column) -> Column:
    """``value``'s bytes in base64 (RFC 4648) on one line: Spark's ``base64`` breaks its output
    into MIME lines of 76 characters unless ``spark.sql.chunkBase64String.enabled`` is off."""
    return F.regexp_replace(F.base64(value), r"[\r\n]", "")


def _schema(fields: FieldNames, number: str) -> str:
    return (
        f"`{fields.user_id}` string, `{fields.ts}` {number}, `{fields.page_number}` {number}, "
        f"`{fields.url}` string, `{TICK_FIELD}` {number}, `{_CORRUPT}` string"
    )


def _from_json(raw: DataFrame, schema: str) -> Column:
    return F.from_json(raw["raw"], schema, {"columnNameOfCorruptRecord": _CORRUPT})


def _parse_text(raw: DataFrame, fields: FieldNames) -> Column:
    """``raw`` parsed as JSON with every field as text: a number's text as written (the byte
    parser slices it from the record, where ``from_json`` would print the double it read), so
    that a dead letter's detail shows the value the producer sent."""
    return _json_from_bytes(raw, _schema(fields, "string"))


def _engine_column(spark: SparkSession, what: str, name: str, argument: Column) -> Column:
    """One of the engine's per-record checks (``ValidationColumns.java``) over ``argument``."""
    jcol = call_engine(
        spark,
        what,
        lambda jvm: getattr(jvm.io.streamwarden.engine.json.ValidationColumns, name)(argument._jc),
    )
    return ClassicColumn(jcol)


def parse_typed(raw: DataFrame, fields: FieldNames, *, engine: bool = True) -> Column:
    """``raw`` parsed with the expected types: by the engine's byte parser, or (``engine`` false,
    for comparison) by Spark's ``from_json``."""
    schema = _schema(fields, "long")
    return _json_from_bytes(raw, schema) if engine else _from_json(raw, schema)


def _json_from_bytes(raw: DataFrame, schema: str) -> Column:
    """``from_json`` of ``raw``'s UTF-8 bytes, without a text reader per record (the engine's
    ``JsonFromBytes``: the same parser as Spark's, ~15% less CPU on a pattern run). A record that
    it marks corrupt, invalid UTF-8 included, takes the text path like any other."""
    spark = raw.sparkSession
    jcol = call_engine(
        spark,
        "JSON parse",
        lambda jvm: jvm.io.streamwarden.engine.json.JsonFromBytes.column(
            raw["raw"]._jc, schema, _CORRUPT
        ),
    )
    return ClassicColumn(jcol)


def _failure(
    j: dict[str, Column],
    f: FieldNames,
    rules: ValidationConfig,
    ts_ms: Column,
    page_number: Column,
    is_tick: Column,
    valid_utf8: Column,
    spark: SparkSession,
) -> Column:
    """A struct(reason, detail) for the first failed check, or null when all pass."""
    raw_size = F.octet_length("raw")
    user, ts, page, url = j[f.user_id], j[f.ts], j[f.page_number], j[f.url]

    def json_container(value: Column) -> Column:
        return F.substring(value, 1, 1).isin("{", "[")

    checks: list[tuple[Column, Reason | None, Column]] = [
        (
            ~valid_utf8,
            Reason.INVALID_UTF8,
            F.lit(
                "record is not valid UTF-8 text, so it is not JSON and its user id could not be "
                "told apart from another's; raw holds its exact bytes in base64"
            ),
        ),
        (
            raw_size > rules.max_record_bytes,
            Reason.RECORD_TOO_LARGE,
            F.format_string(
                f"record is %d bytes, over max_record_bytes {rules.max_record_bytes}", raw_size
            ),
        ),
        (
            j[_CORRUPT].isNotNull(),
            Reason.MALFORMED_JSON,
            F.coalesce(
                _engine_column(spark, "record shape", "shapeProblem", F.col("raw")),
                F.lit(
                    "record is not valid JSON (RFC 8259: double-quoted strings, no NaN), or "
                    "names a field twice"
                ),
            ),
        ),
        (is_tick, None, F.lit(None)),  # ticks pass; is_tick marks them
        (user.isNull(), Reason.MISSING_FIELD, F.lit(f"required field '{f.user_id}' is missing")),
        (ts.isNull(), Reason.MISSING_FIELD, F.lit(f"required field '{f.ts}' is missing")),
        (
            page.isNull(),
            Reason.MISSING_FIELD,
            F.lit(f"required field '{f.page_number}' is missing"),
        ),
        (
            json_container(user) | F.coalesce(json_container(url), F.lit(False)),
            Reason.WRONG_TYPE,
            F.lit(f"'{f.user_id}' and '{f.url}' must be strings"),
        ),
        (
            page_number.isNull(),
            Reason.WRONG_TYPE,
            F.format_string(f"'{f.page_number}' must be an integer, got %s", page),
        ),
        (
            user.rlike(r"^(?U)\s*$"),  # any whitespace (tabs, line breaks, Unicode spaces)
            Reason.INVALID_USER_ID,
            F.lit(f"'{f.user_id}' is empty or only whitespace"),
        ),
        (
            F.instr(user, "\u0000") > 0,
            Reason.INVALID_USER_ID,
            F.lit(f"'{f.user_id}' contains the NUL character (\\u0000)"),
        ),
        (
            F.length(user) > rules.max_user_id_length,
            Reason.INVALID_USER_ID,
            F.format_string(
                f"'{f.user_id}' has %d characters, over {rules.max_user_id_length}", F.length(user)
            ),
        ),
        (
            ts_ms.isNull(),
            Reason.INVALID_TIMESTAMP,
            F.format_string(
                f"'{f.ts}' %s is neither epoch milliseconds nor an ISO-8601 time "
                "with a zone (e.g. 2026-01-01T12:00:00Z)",
                ts,
            ),
        ),
        (
            (ts_ms < MIN_EVENT_MS) | (ts_ms > MAX_EVENT_MS),
            Reason.INVALID_TIMESTAMP,
            F.format_string(
                f"'{f.ts}' %s is outside the event times accepted, {EVENT_TIME_RANGE} "
                f"(epoch milliseconds {MIN_EVENT_MS} .. {MAX_EVENT_MS})",
                ts,
            ),
        ),
    ]
    if rules.max_future_skew is not None:
        skew_ms = int(rules.max_future_skew.total_seconds() * 1000)
        checks.append(
            (
                ts_ms > F.unix_millis(F.current_timestamp()) + skew_ms,
                Reason.TIMESTAMP_IN_FUTURE,
                F.format_string(
                    f"'{f.ts}' %s is more than {skew_ms} ms ahead of ingestion time", ts
                ),
            )
        )
    checks += [
        (
            page_number < 1,
            Reason.PAGE_NUMBER_OUT_OF_RANGE,
            F.format_string(f"'{f.page_number}' must be >= 1, got %s", page),
        ),
        (
            page_number > rules.max_pages,
            Reason.PAGE_NUMBER_OVER_MAX,
            F.format_string(f"'{f.page_number}' %s is over max_pages {rules.max_pages}", page),
        ),
    ]
    result: Column = F.lit(None).cast("struct<reason:string,detail:string>")
    for condition, reason, detail in reversed(checks):
        outcome = (
            F.lit(None).cast("struct<reason:string,detail:string>")
            if reason is None
            else F.struct(F.lit(reason.value).alias("reason"), detail.alias("detail"))
        )
        result = F.when(F.coalesce(condition, F.lit(False)), outcome).otherwise(result)
    return result
