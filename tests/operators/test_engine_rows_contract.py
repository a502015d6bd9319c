"""The row contract between Python and the Java engine has two sides, ``EngineInput.java`` and
:mod:`streamwarden.operators.engine_rows`; these tests fail when they drift apart, and when a
Python builder lays out its rows otherwise than the engine reads them. Java's side is read
through ``EngineInput.contractJson()`` in the test session's JVM."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from pyspark.sql import functions as F

from streamwarden.operators.engine_rows import (
    COMMON_COLUMNS,
    CONTROL_PREFIX,
    ENGINE_REASONS,
    JOIN_PAYLOAD,
    KIND_EVENT,
    KIND_REJECTED,
    KIND_TICK,
    PATTERN_PAYLOAD,
    REJECTED_KEY_PREFIX,
    REJECTED_KEY_SPREAD,
    SESSION_PAYLOAD,
    TICK_KEY,
)
from streamwarden.operators.patterns import Pattern, PatternOptions
from streamwarden.operators.patterns.api import compile_for, detect_rows
from streamwarden.operators.patterns.records import validated_rows
from streamwarden.operators.sessions.aggregates import parse_aggregates
from streamwarden.operators.sessions.api import session_engine_rows
from streamwarden.schema import Schema
from streamwarden.validation import validate_records

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def java(spark: Any) -> dict[str, Any]:
    contract: dict[str, Any] = json.loads(
        spark._jvm.io.streamwarden.engine.EngineInput.contractJson()
    )
    return contract


def test_both_sides_lay_out_the_columns_in_the_same_order(java: dict[str, Any]) -> None:
    assert java["columns"] == {
        "sessions": [*COMMON_COLUMNS, *SESSION_PAYLOAD],
        "patterns": [*COMMON_COLUMNS, *PATTERN_PAYLOAD],
        "join": [*COMMON_COLUMNS, *JOIN_PAYLOAD],
    }


def test_both_sides_use_the_same_kind_codes(java: dict[str, Any]) -> None:
    assert java["kinds"] == {"event": KIND_EVENT, "rejected": KIND_REJECTED, "tick": KIND_TICK}


def test_both_sides_use_the_same_control_keys(java: dict[str, Any]) -> None:
    assert java["control"] == {
        "prefix": CONTROL_PREFIX,
        "tick_key": TICK_KEY,
        "rejected_key_prefix": REJECTED_KEY_PREFIX,
        "rejected_key_spread": REJECTED_KEY_SPREAD,
    }


def test_the_engine_emits_the_reason_codes_python_knows(java: dict[str, Any]) -> None:
    assert java["reasons"] == {r.name: r.value for r in ENGINE_REASONS}


SCHEMA = Schema(
    key="account", time="at", fields="account STRING, at TIMESTAMP, amount DOUBLE, url STRING"
)


def validated(spark: Any) -> Any:
    records = spark.createDataFrame(
        [('{"account": "a1", "at": "2026-01-01T00:00:00Z", "amount": 1.5}',)], "raw string"
    )
    return validate_records(records, SCHEMA)


def pattern() -> Pattern:
    return Pattern.begin("first").where(F.col("url") == "/a").within(timedelta(minutes=1))


def test_the_sessions_builder_lays_out_rows_as_the_engine_reads_them(
    spark: Any, java: dict[str, Any]
) -> None:
    aggregates = parse_aggregates(
        {"total": "sum(amount)", "n": "count()", "largest": "max(amount)", "first": "first(url)"},
        SCHEMA.struct,
    )
    rows = session_engine_rows(validated(spark), aggregates, timedelta(minutes=1))
    jvm = spark._jvm.io.streamwarden.engine.EngineInput
    values = [jvm.sessionValueColumn(i) for i in range(2)]  # amount, url: each input once
    assert rows.columns == [*java["columns"]["sessions"], *values]


def test_both_pattern_builders_lay_out_rows_as_the_engine_reads_them(
    spark: Any, java: dict[str, Any]
) -> None:
    events = validated(spark)
    options = PatternOptions()
    compiled = compile_for(events, pattern(), ["url"], options)
    assert (
        detect_rows(events, compiled, "account", "at", options).columns
        == (java["columns"]["patterns"])
    )
    piped = validated_rows(events, compiled, "account", options)
    assert piped.columns == java["columns"]["patterns"]
