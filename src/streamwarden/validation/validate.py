"""Record validation against the declared schema, compiled to Spark SQL expressions and one
engine reader so that it runs natively (lesson L4).

Every raw record gets either a typed event (the declared fields as columns of their types) or a
reason code with a human-readable detail naming the field or rule; nothing is dropped here.
Validation runs before any state, so bad input can never reach it. The checks, in order (the
first that fails gives the reason): UTF-8 (``invalid_utf8``), size (``record_too_large``), the
engine's one-pass typed read (``malformed_json``, ``missing_field``, ``wrong_type``,
``invalid_timestamp``: ``RecordReader.java``), the key (``invalid_key``), the event time against
the clock and the earliest time (``timestamp_in_future``, ``invalid_timestamp``), each field's
checks in declared order (``out_of_range``, ``not_allowed``, ``too_long``,
``pattern_mismatch``), then each rule (``rule_failed``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pyspark.errors import AnalysisException, ParseException
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.classic.column import Column as ClassicColumn

from streamwarden.errors import ConfigError
from streamwarden.schema.ddl import ddl_of
from streamwarden.schema.model import FieldChecks, Schema
from streamwarden.sources.base import SOURCE_KEY, SOURCE_POSITION, SOURCE_TIME
from streamwarden.spark.jvm import call_engine
from streamwarden.validation.reasons import Reason
from streamwarden.validation.settings import ValidationConfig

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "CONTROL_COLUMNS",
    "DETAIL",
    "EVENT_TIME_RANGE",
    "IS_TICK",
    "KEY",
    "MAX_EVENT_MS",
    "MIN_EVENT_MS",
    "QUARANTINED",
    "RAW",
    "REASON",
    "SIZE",
    "TICK_FIELD",
    "TICK_SOURCE",
    "TS_MS",
    "base64_line",
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
#: The event times accepted, in epoch milliseconds (``EventTimes.java``): years 0001 to 9999,
#: which every later step (Spark timestamps in microseconds, deadlines = time + gap + lateness)
#: holds without overflow. A record outside is ``invalid_timestamp``, never a failed batch.
MIN_EVENT_MS, MAX_EVENT_MS = -62_135_596_800_000, 253_402_300_799_999
#: How those bounds read in a dead letter's detail and the docs.
EVENT_TIME_RANGE = "0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z"

# The columns validation adds beside the declared fields (no field may start with ``_sw_``):
#: the record as received (base64 when it is not UTF-8 text);
RAW = "_sw_raw"
#: the key's value as text (what state is keyed by), null when the record has none;
KEY = "_sw_key"
#: the event time in epoch milliseconds (a tick's time for a tick);
TS_MS = "_sw_ts_ms"
#: the record's size in bytes;
SIZE = "_sw_size"
#: whether the row is an idle tick;
IS_TICK = "_sw_tick"
#: the reason code and the detail of a rejected record (null for a valid one).
REASON = "_sw_reason"
DETAIL = "_sw_detail"
CONTROL_COLUMNS = (RAW, KEY, TS_MS, SIZE, IS_TICK, REASON, DETAIL)

_FAILURE = "struct<reason:string,detail:string>"


def validate_records(
    raw: DataFrame, schema: Schema, rules: ValidationConfig | None = None
) -> DataFrame:
    """Reads the ``raw`` JSON string column of ``raw`` into ``schema``'s fields and checks each
    record.

    Returns one row per input row: the declared top-level fields (typed), then
    :data:`CONTROL_COLUMNS`; :data:`REASON` is null for a valid event. Ticks (control records
    written by the idle ticker, in rows whose :data:`TICK_SOURCE` column is true) have
    :data:`IS_TICK` set. A source's own event time or key (``SOURCE_TIME``, ``SOURCE_KEY``: the
    Kafka record's timestamp or key) replaces the record's field where present; a source's
    position (``SOURCE_POSITION``) is added to the detail of a rejected record. A rule that is
    not valid Spark SQL over the fields raises :class:`ConfigError` naming it.
    """
    rules = rules or ValidationConfig()
    columns = raw.columns
    from_ticks = (
        F.coalesce(F.col(TICK_SOURCE), F.lit(False)) if TICK_SOURCE in columns else F.lit(False)
    )
    source_time = SOURCE_TIME in columns
    source_key = SOURCE_KEY in columns
    optional = {
        "_source_time": F.col(SOURCE_TIME).cast("long") if source_time else F.lit(None),
        "_source_key": F.col(SOURCE_KEY).cast("string")
        if source_key
        else F.lit(None).cast("string"),
        "_position": F.col(SOURCE_POSITION).cast("string")
        if SOURCE_POSITION in columns
        else F.lit(None).cast("string"),
        "_quarantined": F.col(QUARANTINED).cast("string")
        if QUARANTINED in columns
        else F.lit(None).cast("string"),
    }
    spec = reader_spec(schema, time_from_source=source_time, key_from_source=source_key)
    read = raw.select(
        F.col("raw").cast("string").alias("_raw"),
        from_ticks.alias("_from_ticks"),
        *(c.alias(n) for n, c in optional.items()),
        _record_reader(raw, json.dumps(spec)).alias("_read"),
    )
    record = F.col("_read")
    fields = []
    for f in schema.struct.fields:
        value = record.getField(f.name)
        if source_time and f.name == schema.time:
            value = _time_value(F.col("_source_time"), f.dataType, schema.time_unit)
        if source_key and f.name == schema.key:
            value = F.coalesce(F.col("_source_key").try_cast(f.dataType), value)
        fields.append(value.alias(f.name))
    tick_ms = F.when(
        F.col("_from_ticks"), F.get_json_object("_raw", f"$.{TICK_FIELD}").cast("long")
    )
    ts_ms = F.col("_source_time") if source_time else record.getField("_sw_ts_ms")
    typed = read.select(
        *fields,
        "_raw",
        "_position",
        "_quarantined",
        "_source_key",
        (F.col("_from_ticks") & tick_ms.isNotNull()).alias(IS_TICK),
        F.coalesce(tick_ms, ts_ms).alias(TS_MS),
        record.getField("_sw_reason").alias("_read_reason"),
        record.getField("_sw_detail").alias("_read_detail"),
    )
    _check_rules(typed, schema)
    key = F.col(schema.key).cast("string")
    valid_utf8 = F.is_valid_utf8("_raw")
    failure = _failure(schema, rules, key, valid_utf8, raw.sparkSession, source_key, source_time)
    checked = typed.select(
        *(F.col(f"`{f.name}`") for f in schema.struct.fields),
        # a record that is not UTF-8 text keeps its exact bytes, in base64 (its reason says so)
        F.when(valid_utf8, F.col("_raw")).otherwise(base64_line(F.col("_raw"))).alias(RAW),
        # a key read from bytes that are not UTF-8 is not the producer's key: none is shown
        F.when(valid_utf8 & F.coalesce(F.is_valid_utf8("_source_key"), F.lit(True)), key).alias(
            KEY
        ),
        TS_MS,
        F.octet_length("_raw").cast("long").alias(SIZE),
        IS_TICK,
        failure.alias("_failure"),
        "_position",
        "_quarantined",
    )
    set_aside = F.col("_quarantined").isNotNull() & ~F.col(IS_TICK)
    reason = F.when(set_aside, F.lit(Reason.POISON.value)).otherwise(F.col("_failure.reason"))
    detail = F.when(set_aside, F.col("_quarantined")).otherwise(F.col("_failure.detail"))
    detail = F.when(F.col("_position").isNull(), detail).otherwise(
        F.concat(detail, F.lit(" (at "), F.col("_position"), F.lit(")"))
    )
    names = [f"`{f.name}`" for f in schema.struct.fields]
    return checked.select(*names, *CONTROL_COLUMNS[:-2], reason.alias(REASON), detail.alias(DETAIL))


def reader_spec(
    schema: Schema, *, time_from_source: bool = False, key_from_source: bool = False
) -> dict[str, object]:
    """What the engine's ``RecordReader`` reads: the declared fields, the required ones, and
    the event time with its unit (none when the source gives the time)."""
    required = [
        p
        for p in schema.required_fields
        if not (time_from_source and p == schema.time) and not (key_from_source and p == schema.key)
    ]
    return {
        "schema": json.loads(schema.struct.json()),
        "required": required,
        "time": None if time_from_source else schema.time,
        "time_unit": schema.time_unit,
    }


def _time_value(ms: Column, data_type: T.DataType, unit: str) -> Column:
    """A source's event time (epoch ms) as the declared time field's value."""
    if isinstance(data_type, T.TimestampType):
        return F.timestamp_millis(ms)
    per_ms = {"s": None, "ms": 1, "us": 1000}[unit]
    value = F.floor(ms / 1000) if per_ms is None else ms * per_ms
    return value.cast(data_type)


def base64_line(value: Column) -> Column:
    """``value``'s bytes in base64 (RFC 4648) on one line: Spark's ``base64`` breaks its output
    into MIME lines of 76 characters unless ``spark.sql.chunkBase64String.enabled`` is off."""
    return F.regexp_replace(F.base64(value), r"[\r\n]", "")


def _record_reader(raw: DataFrame, spec: str) -> Column:
    """The engine's strict one-pass reader of each record into the declared types
    (``RecordReader.java``): the fields, ``_sw_ts_ms``, ``_sw_reason`` and ``_sw_detail``."""
    jcol = call_engine(
        raw.sparkSession,
        "record reader",
        lambda jvm: jvm.io.streamwarden.engine.json.RecordReader.column(
            F.col("raw").cast("string")._jc, spec
        ),
    )
    return ClassicColumn(jcol)


def _guarded(spark: SparkSession, method: str, condition: Column) -> Column:
    """``ConditionGuard.<method>(condition)`` (``ConditionGuard.java``): ``tryEval``, the
    condition or null where it threw; ``errorOf``, what it threw, or null."""
    jcol = call_engine(
        spark,
        "rule",
        lambda jvm: getattr(jvm.io.streamwarden.engine.ConditionGuard, method)(condition._jc),
    )
    return ClassicColumn(jcol)


def _failure(
    schema: Schema,
    rules: ValidationConfig,
    key: Column,
    valid_utf8: Column,
    spark: SparkSession,
    source_key: bool,
    source_time: bool,
) -> Column:
    """A struct(reason, detail) for the first failed check, or null when all pass."""
    size = F.octet_length("_raw")
    ts_ms = F.col(TS_MS)
    name = schema.key
    checks: list[tuple[Column, Reason | None, Column | None]] = [
        (F.col("_raw").isNull(), Reason.MALFORMED_JSON, F.lit("record is null")),
        (
            ~valid_utf8,
            Reason.INVALID_UTF8,
            F.lit(
                "record is not valid UTF-8 text, so it is not JSON and its key could not be "
                "told apart from another's; raw holds its exact bytes in base64"
            ),
        ),
        (
            size > rules.max_record_bytes,
            Reason.RECORD_TOO_LARGE,
            F.format_string(
                f"record is %d bytes, over max_record_bytes {rules.max_record_bytes}", size
            ),
        ),
        (F.col(IS_TICK), None, None),  # ticks pass; IS_TICK marks them
        *(_source_key_checks(schema) if source_key else []),
        (
            F.col("_read_reason").isNotNull(),
            None,  # the reader's own reason
            F.col("_read_detail"),
        ),
        (
            key.isNull(),
            Reason.MISSING_FIELD,
            F.lit(f"required field '{name}' is missing"),
        ),
        (
            key.rlike(r"^(?U)\s*$"),  # any whitespace (tabs, line breaks, Unicode spaces)
            Reason.INVALID_KEY,
            F.lit(f"the key '{name}' is empty or only whitespace"),
        ),
        (
            F.instr(key, "\u0000") > 0,
            Reason.INVALID_KEY,
            F.lit(f"the key '{name}' contains the NUL character (\\u0000)"),
        ),
        (
            F.length(key) > rules.max_key_length,
            Reason.INVALID_KEY,
            _text(
                f"the key '{name}' has ",
                F.length(key).cast("string"),
                f" characters, over max_key_length {rules.max_key_length}",
            ),
        ),
        *(_source_time_checks() if source_time else []),
        (
            ts_ms.isNull() | (ts_ms < MIN_EVENT_MS) | (ts_ms > MAX_EVENT_MS),
            Reason.INVALID_TIMESTAMP,
            F.lit(f"'{schema.time}' is outside the event times accepted, {EVENT_TIME_RANGE}"),
        ),
    ]
    if rules.max_future_skew is not None:
        skew_ms = int(rules.max_future_skew.total_seconds() * 1000)
        checks.append(
            (
                ts_ms > F.unix_millis(F.current_timestamp()) + skew_ms,
                Reason.TIMESTAMP_IN_FUTURE,
                _text(
                    f"'{schema.time}' ",
                    F.timestamp_millis(ts_ms).cast("string"),
                    f" is more than {skew_ms} ms ahead of ingestion time",
                ),
            )
        )
    if rules.earliest_event_time is not None:
        earliest = rules.earliest_event_time
        earliest_ms = int(earliest.timestamp() * 1000)
        shown = earliest.strftime("%Y-%m-%dT%H:%M:%SZ")
        if isinstance(schema.time_type, T.TimestampType):
            hint = "set validation.earliest_event_time earlier (or 'off') if such times are real"
        else:
            hint = f"is schema.time_unit ({schema.time_unit!r}) the unit of the field?"
        checks.append(
            (
                ts_ms < earliest_ms,
                Reason.INVALID_TIMESTAMP,
                _text(
                    f"'{schema.time}' is ",
                    F.date_format(F.timestamp_millis(ts_ms), "yyyy-MM-dd'T'HH:mm:ss.SSS"),
                    f"Z, before validation.earliest_event_time {shown}: {hint}",
                ),
            )
        )
    for path, field_checks in schema.checks.items():
        checks += _field_checks(path, field_checks)
    for rule in schema.rules:
        condition = F.expr(rule.check)
        # under TryEval: an error the rule raises on one record (an ANSI division by zero, a
        # failed cast) fails that record, not the batch
        outcome = _guarded(spark, "tryEval", condition)
        threw = _guarded(spark, "errorOf", condition)
        checks.append(
            (
                ~outcome | outcome.isNull(),
                Reason.RULE_FAILED,
                F.when(
                    outcome.isNull(),
                    F.coalesce(
                        _text(
                            f"rule '{rule.name}' raised an error on this record (",
                            threw,
                            f"): {rule.check}",
                        ),
                        F.lit(
                            f"rule '{rule.name}' is null (a value it reads is null): {rule.check}"
                        ),
                    ),
                ).otherwise(F.lit(f"rule '{rule.name}' failed: {rule.check}")),
            )
        )
    passed = F.lit(None).cast(_FAILURE)
    result: Column = passed
    for condition, reason, detail in reversed(checks):
        if reason is None:  # a tick passes; the reader's failure is its own reason
            outcome = (
                passed
                if detail is None
                else F.struct(F.col("_read_reason").alias("reason"), detail.alias("detail"))
            )
        else:
            assert detail is not None  # a check with a reason has a detail
            outcome = F.struct(F.lit(reason.value).alias("reason"), detail.alias("detail"))
        result = F.when(F.coalesce(condition, F.lit(False)), outcome).otherwise(result)
    return result


def _source_time_checks() -> list[tuple[Column, Reason | None, Column | None]]:
    """The event time the source gives (a Kafka record's timestamp): null when it has none."""
    return [
        (
            F.col(TS_MS).isNull(),
            Reason.INVALID_TIMESTAMP,
            F.lit(
                "the record has no event time: the source gave none (a Kafka timestamp of -1 "
                "is Kafka's 'no timestamp')"
            ),
        )
    ]


def _source_key_checks(schema: Schema) -> list[tuple[Column, Reason | None, Column | None]]:
    """The key the source gives (a Kafka record's key): UTF-8 text of the key's type."""
    given = F.col("_source_key")
    shown = ddl_of(schema.key_type)
    return [
        (
            given.isNotNull() & ~F.is_valid_utf8(given),
            Reason.INVALID_UTF8,
            F.lit(
                f"the record's key from the source (schema.key '{schema.key}') is not valid "
                "UTF-8 text; the record's key is not shown"
            ),
        ),
        (
            given.isNotNull() & given.try_cast(schema.key_type).isNull(),
            Reason.WRONG_TYPE,
            _text(
                f"the record's key from the source (schema.key '{schema.key}') ",
                given,
                f" is not a {shown}",
            ),
        ),
    ]


def _text(*parts: str | Column) -> Column:
    """A detail made of literal text (which may hold ``%``: a user's pattern or value) and
    columns, none of them null where the detail is shown."""
    return F.concat(*(F.lit(p) if isinstance(p, str) else p for p in parts))


def _field_checks(path: str, checks: FieldChecks) -> list[tuple[Column, Reason, Column]]:
    """The checks of one field (a null value passes them all)."""
    value = F.col(path)
    text = value.cast("string")
    out: list[tuple[Column, Reason, Column]] = []
    if checks.min is not None:
        out.append(
            (
                value < F.lit(checks.min),
                Reason.OUT_OF_RANGE,
                _text(f"'{path}' ", text, f" is below the minimum {checks.min}"),
            )
        )
    if checks.max is not None:
        out.append(
            (
                value > F.lit(checks.max),
                Reason.OUT_OF_RANGE,
                _text(f"'{path}' ", text, f" is over the maximum {checks.max}"),
            )
        )
    if checks.allowed is not None:
        quoted = any(isinstance(v, str) for v in checks.allowed)
        allowed = ", ".join(json.dumps(v) for v in checks.allowed)
        shown = F.to_json(F.array(value)).substr(2, 1_000_000) if quoted else text
        shown = F.regexp_replace(shown, r"\]$", "") if quoted else shown
        out.append(
            (
                ~value.isin(*checks.allowed),
                Reason.NOT_ALLOWED,
                _text(f"'{path}' ", shown, f" is not one of {allowed}"),
            )
        )
    if checks.max_length is not None:
        out.append(
            (
                F.length(value) > checks.max_length,
                Reason.TOO_LONG,
                _text(
                    f"'{path}' has ",
                    F.length(value).cast("string"),
                    f" characters, over max_length {checks.max_length}",
                ),
            )
        )
    if checks.pattern is not None:
        out.append(
            (
                ~value.rlike(f"^(?:{checks.pattern})\\z"),
                Reason.PATTERN_MISMATCH,
                _text(f"'{path}' ", text, f" does not match the pattern {checks.pattern!r}"),
            )
        )
    return out


def _check_rules(typed: DataFrame, schema: Schema) -> None:
    """Each rule is a Spark SQL condition over the declared fields, and each pattern a Java
    regular expression (the config's load checked it with Python's): otherwise every record
    would fail, so the query does not start (:class:`ConfigError` naming the setting)."""
    for path, checks in schema.checks.items():
        if checks.pattern is None:
            continue
        try:
            typed.sparkSession._jvm.java.util.regex.Pattern.compile(checks.pattern)  # type: ignore[union-attr]
        except Exception as exc:  # py4j's error, or pyspark's conversion of it
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ConfigError(
                f"schema.checks.{path}: pattern {checks.pattern!r} is not a regular expression "
                f"Spark (Java) reads: {first}"
            ) from None
    for rule in schema.rules:
        where = f"schema.rules {rule.name!r} ({rule.check})"
        try:
            result = typed.select(F.expr(rule.check)).schema.fields[0].dataType
        except (AnalysisException, ParseException) as exc:
            text = str(exc).strip()
            first = text.splitlines()[0] if text else type(exc).__name__
            raise ConfigError(
                f"{where} is not valid Spark SQL over the declared fields: {first}; name only "
                "fields of schema.fields (dotted into a STRUCT)"
            ) from None
        if not isinstance(result, T.BooleanType):
            raise ConfigError(
                f"{where} gives a {result.simpleString().upper()}, not a BOOLEAN; write a "
                "condition, e.g. amount < 1000 OR currency = 'EUR'"
            )
