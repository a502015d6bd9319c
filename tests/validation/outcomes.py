"""What the validation tests share: the two declared schemas they read records into, and a way
to validate many records (of one schema or several) in one Spark job and read each record's
outcome back in the order the records were given."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.schema import Schema
from streamwarden.validation import (
    DETAIL,
    IS_TICK,
    KEY,
    RAW,
    REASON,
    SIZE,
    TS_MS,
    validate_records,
)
from streamwarden.validation.settings import ValidationConfig

#: Pageviews: an epoch-milliseconds time, a required page number in a range.
PAGEVIEWS = Schema(
    key="user_id",
    time="ts",
    fields="user_id STRING, ts BIGINT, page_number INT, url STRING",
    required=["page_number"],
    checks={"page_number": {"min": 1, "max": 300}},
)

#: Payments: an ISO-8601 time, a nested struct, a check of each kind and a record-level rule.
PAYMENTS = Schema(
    key="account",
    time="at",
    fields=(
        "account STRING, at TIMESTAMP, amount DOUBLE, currency STRING, merchant STRING, "
        "country STRING, geo STRUCT<city: STRING>"
    ),
    required=["amount"],
    checks={
        "amount": {"min": 0},
        "country": {"allowed": ["FR", "DE", "ES"]},
        "merchant": {"max_length": 64},
        "currency": {"pattern": "[A-Z]{3}"},
    },
    rules=[{"name": "large_amounts_in_eur", "check": "amount < 1000 OR currency = 'EUR'"}],
)

#: Every check, the clock's included; what most tests run with.
CHECKS = ValidationConfig()


@dataclass(frozen=True)
class Outcome:
    """One record's row out of validation. ``values`` are its declared top-level fields as read
    (a TIMESTAMP in epoch microseconds, a STRUCT as a dict), the rest its control columns."""

    values: dict[str, Any]
    raw: str
    key: str | None
    ts_ms: int | None
    size: int | None
    is_tick: bool
    reason: str | None
    detail: str | None


def shown_raw(record: str | bytes) -> str:
    """A record as its ``raw`` column keeps it: its text, or its bytes in base64 when they are
    not UTF-8."""
    if isinstance(record, str):
        return record
    try:
        return record.decode("utf-8")
    except UnicodeDecodeError:
        return base64.b64encode(record).decode()


def records_frame(
    spark: Any,
    records: Sequence[str | bytes | None],
    columns: Mapping[str, tuple[str, Sequence[Any]]] | None = None,
) -> DataFrame:
    """A frame of raw records as a source gives them (their bytes as sent, in a string column
    ``raw``), with ``columns`` beside them: name -> (Spark type, one value per record)."""
    columns = dict(columns or {})
    data = [
        (
            None if r is None else bytearray(r if isinstance(r, bytes) else r.encode()),
            *(values[i] for _, values in columns.values()),
        )
        for i, r in enumerate(records)
    ]
    ddl = ", ".join(["b binary", *(f"`{n}` {t}" for n, (t, _) in columns.items())])
    frame = spark.createDataFrame(data, ddl)
    return frame.select(F.col("b").cast("string").alias("raw"), *(F.col(f"`{n}`") for n in columns))


def _comparable(schema: Schema, checked: DataFrame, group: int) -> DataFrame:
    """One schema's validated rows in a shape every schema shares, so that groups can be read in
    one job: the declared fields as JSON (TIMESTAMPs as epoch microseconds, nulls kept)."""
    fields = [
        F.unix_micros(F.col(f"`{f.name}`")).alias(f.name)
        if isinstance(f.dataType, T.TimestampType)
        else F.col(f"`{f.name}`")
        for f in schema.struct.fields
    ]
    return checked.select(
        F.lit(group).alias("_group"),
        F.monotonically_increasing_id().alias("_order"),
        F.to_json(F.struct(*fields), {"ignoreNullFields": "false"}).alias("_values"),
        RAW,
        KEY,
        TS_MS,
        SIZE,
        IS_TICK,
        REASON,
        DETAIL,
    )


def outcomes_of(
    groups: Sequence[tuple[Schema, DataFrame]], config: ValidationConfig = CHECKS
) -> list[list[Outcome]]:
    """Each group's frame validated against its schema, all in one Spark job; each group's
    outcomes in the order of its frame's rows (Spark keeps it: validation only projects)."""
    frames = [
        _comparable(schema, validate_records(frame, schema, config), group)
        for group, (schema, frame) in enumerate(groups)
    ]
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    rows = sorted(union.collect(), key=lambda r: (r["_group"], r["_order"]))
    result: list[list[Outcome]] = [[] for _ in groups]
    for r in rows:
        result[r["_group"]].append(
            Outcome(
                values=json.loads(r["_values"]),
                raw=r[RAW],
                key=r[KEY],
                ts_ms=r[TS_MS],
                size=r[SIZE],
                is_tick=r[IS_TICK],
                reason=r[REASON],
                detail=r[DETAIL],
            )
        )
    return result


def outcomes(
    spark: Any,
    schema: Schema,
    records: Sequence[str | bytes | None],
    config: ValidationConfig = CHECKS,
    columns: Mapping[str, tuple[str, Sequence[Any]]] | None = None,
) -> list[Outcome]:
    """The outcome of each record (in order), validated against ``schema`` in one Spark job."""
    [result] = outcomes_of([(schema, records_frame(spark, records, columns))], config)
    return result


def named_outcomes(
    spark: Any,
    groups: Sequence[tuple[Schema, Mapping[str, str | bytes]]],
    config: ValidationConfig = CHECKS,
) -> dict[str, Outcome]:
    """The outcome of each named record of each group (names unique across groups), every group
    validated against its schema in one Spark job; each row checked to be its own record's."""
    results = outcomes_of(
        [(schema, records_frame(spark, list(named.values()))) for schema, named in groups],
        config,
    )
    by_name: dict[str, Outcome] = {}
    for (_, named), result in zip(groups, results, strict=True):
        assert len(result) == len(named)  # nothing dropped, nothing doubled
        for (name, record), outcome in zip(named.items(), result, strict=True):
            assert outcome.raw == shown_raw(record), name
            by_name[name] = outcome
    return by_name
