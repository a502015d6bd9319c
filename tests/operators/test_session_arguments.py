"""Wrong arguments to the session API are refused with the parameter, the value given and what
to pass instead; never a TypeError, ValueError or a Java stack trace from inside."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import types as T

from streamwarden.errors import ConfigError, UsageError
from streamwarden.operators.sessions import SessionParams, sessionize
from streamwarden.schema import Schema
from streamwarden.testing import SessionTester
from tests.support import PAGEVIEW_SCHEMA, T0, T0_MS

PAGEVIEWS = Schema(**PAGEVIEW_SCHEMA)
PAYMENTS = Schema(
    key="account",
    time="at",
    fields="account STRING, at TIMESTAMP, amount DOUBLE, merchant STRING, ok BOOLEAN",
)
#: Typed payment events, as a user's stream has them (and columns no key or time can be).
PAYMENT_COLUMNS = (
    "account string, at timestamp, amount double, merchant string, ok boolean, n int, "
    "seq bigint, day date, at_text string, geo struct<city:string>"
)


# -- SessionParams -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"gap": 30},
            "gap must be a datetime.timedelta such as timedelta(minutes=30), got 30 (int)",
        ),
        (
            {"gap": "30m"},
            "gap must be a datetime.timedelta such as timedelta(minutes=30), got '30m' (str); "
            "to read a config string such as '30m', use "
            "streamwarden.settings.units.parse_duration('30m')",
        ),
        ({"allowed_lateness": None}, "allowed_lateness must be a datetime.timedelta"),
        ({"max_out_of_orderness": 60.0}, "max_out_of_orderness must be a datetime.timedelta"),
        (
            {"slow_key_threshold": 1},
            "slow_key_threshold must be a datetime.timedelta such as timedelta(seconds=1) or "
            "None, got 1 (int)",
        ),
        (
            {"history_lateness": "3d"},
            "history_lateness must be a datetime.timedelta such as timedelta(days=3) or None",
        ),
        ({"max_events": "5"}, "max_events must be an int such as 300, got '5' (str)"),
        ({"max_events": True}, "max_events must be an int such as 300, got True (bool)"),
        ({"max_session_bytes": 4e6}, "max_session_bytes must be an int"),
        (
            {"aggregates": "sum(amount)"},
            "aggregates must be a dict of output column -> 'function(field)' such as "
            "{'total': 'sum(amount)'}, got 'sum(amount)' (str)",
        ),
        ({"aggregates": {"total": 5}}, "aggregates must be a dict of output column"),
        ({"aggregates": ["sum(amount)"]}, "aggregates must be a dict of output column"),
    ],
    ids=lambda v: str(v) if isinstance(v, dict) else "",
)
def test_session_params_of_the_wrong_type_are_refused_naming_the_parameter_and_the_fix(
    arguments: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        SessionParams(**arguments)
    assert str(caught.value).startswith(expected)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"gap": timedelta(0)}, "gap must be > 0, got datetime.timedelta(0)"),
        (
            {"allowed_lateness": timedelta(seconds=-1)},
            "allowed_lateness must be >= 0, got datetime.timedelta(days=-1, seconds=86399)",
        ),
        ({"max_events": 0}, "max_events must be from 1 to 2**63 - 1, got 0"),
        ({"max_session_bytes": -5}, "max_session_bytes must be from 1 to 2**63 - 1, got -5"),
        ({"max_session_bytes": 2**70}, "max_session_bytes must be from 1 to 2**63 - 1"),
        (
            {"allowed_lateness": timedelta(hours=1), "history_lateness": timedelta(hours=1)},
            "history_lateness (1h) must be longer than allowed_lateness (1h)",
        ),
    ],
    ids=["gap-0", "lateness-negative", "events-0", "bytes-negative", "bytes-huge", "history"],
)
def test_session_params_out_of_range_are_refused_naming_the_parameter_and_the_value(
    arguments: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        SessionParams(**arguments)
    assert str(caught.value).startswith(expected)


def test_session_params_of_the_right_types_are_accepted_including_no_slow_key_threshold() -> None:
    params = SessionParams(
        gap=timedelta(minutes=5),
        max_events=10,
        aggregates={"total": "sum(amount)"},
        slow_key_threshold=None,
    )
    assert (params.gap, params.max_events, params.slow_key_threshold_ms) == (
        timedelta(minutes=5),
        10,
        0,
    )
    assert dict(params.aggregates) == {"total": "sum(amount)"}


# -- sessionize --------------------------------------------------------------------------------
def test_sessionize_of_something_other_than_a_dataframe_is_refused_saying_what_it_needs() -> None:
    with pytest.raises(UsageError) as caught:
        sessionize([{"account": "a", "at": T0}], key="account", time="at")  # type: ignore[arg-type]
    assert str(caught.value).startswith(
        "sessionize(events, ...): events must be a streaming Spark DataFrame of typed events, "
        "got a list; "
    )


@pytest.fixture
def payments(spark: Any, tmp_path: Path) -> Any:
    """A streaming DataFrame of typed payment events (never started)."""
    return spark.readStream.schema(PAYMENT_COLUMNS).json(str(tmp_path))


@pytest.mark.spark
def test_sessionize_on_a_batch_dataframe_is_refused_before_any_query_runs(spark: Any) -> None:
    batch = spark.createDataFrame([("a", T0, 12.5)], "account string, at timestamp, amount double")
    with pytest.raises(UsageError) as caught:
        sessionize(batch, key="account", time="at")
    message = str(caught.value)
    assert message.startswith("sessionize(events): events is a batch DataFrame")
    assert "trigger(availableNow=True)" in message and "SessionTester" in message


@pytest.mark.spark
@pytest.mark.parametrize(
    ("key", "time", "expected"),
    [
        (
            "acct",
            "at",
            "sessionize(events): column 'acct' is not in events, whose columns are 'account', "
            "'at', 'amount', ",
        ),
        ("account", "when", "sessionize(events): column 'when' is not in events, whose columns"),
        (
            "amount",
            "at",
            "sessionize(events): the key 'amount' is double; a key is a string or an integer "
            "column",
        ),
        ("geo", "at", "sessionize(events): the key 'geo' is struct<city:string>; a key is a"),
        (
            "account",
            "at_text",
            "sessionize(events): the time 'at_text' is string; an event time is a timestamp or "
            "epoch milliseconds (bigint or int): convert it first, e.g. "
            "events.withColumn('at_text', F.to_timestamp('at_text'))",
        ),
        ("account", "day", "sessionize(events): the time 'day' is date; an event time is a"),
        (5, "at", "sessionize(..., key=...): give a column name, got 5"),
        ("account", None, "sessionize(..., time=...): give a column name, got None"),
    ],
    ids=[
        "key-missing",
        "time-missing",
        "key-double",
        "key-struct",
        "time-text",
        "time-date",
        "key-not-a-name",
        "time-not-a-name",
    ],
)
def test_a_key_or_time_column_that_is_missing_or_of_a_wrong_type_is_refused_naming_it(
    payments: Any, key: Any, time: Any, expected: str
) -> None:
    with pytest.raises(UsageError) as caught:
        sessionize(payments, key=key, time=time)
    assert str(caught.value).startswith(expected)


@pytest.mark.spark
@pytest.mark.parametrize(
    ("aggregates", "expected"),
    [
        (
            {"total": "total(amount)"},
            "aggregate total = 'total(amount)': unknown function 'total'; use one of count, "
            "sum, min, max, avg, first, last, count_distinct, collect_list, collect_set",
        ),
        (
            {"total": "sum(amuont)"},
            "aggregate total = 'sum(amuont)': 'amuont' is not a declared field (",
        ),
        (
            {"total": "sum(merchant)"},
            "aggregate total = 'sum(merchant)': sum adds numbers, but 'merchant' is STRING",
        ),
        ({"total": "sum amount"}, "aggregate total = 'sum amount': write function(field), e.g."),
        ({"total": "sum()"}, "aggregate total = 'sum()': sum needs a field, e.g. sum(amount)"),
        (
            {"account": "count()"},
            "aggregate 'account': a session row already has a column 'account'; name the "
            "aggregate otherwise",
        ),
        ({"revision": "count()"}, "aggregate 'revision': a session row already has a column"),
    ],
    ids=["function", "field", "type", "syntax", "no-field", "key-column", "session-column"],
)
def test_an_aggregate_that_cannot_be_computed_is_refused_saying_what_would_work(
    payments: Any, aggregates: dict[str, str], expected: str
) -> None:
    with pytest.raises(UsageError) as caught:
        sessionize(payments, key="account", time="at", aggregates=aggregates)
    assert expected in str(caught.value)


@pytest.mark.spark
def test_an_aggregate_over_an_undeclared_field_names_the_columns_there_are(payments) -> None:
    with pytest.raises(ConfigError) as caught:
        sessionize(payments, key="account", time="at", aggregates={"total": "sum(amuont)"})
    assert "account, at, amount, merchant, ok, " in str(caught.value)


@pytest.mark.spark
@pytest.mark.parametrize("aggregates", ["sum(amount)", ["sum(amount)"], 5])
def test_aggregates_that_are_not_a_dict_are_refused_with_the_dict_to_write(
    payments: Any, aggregates: Any
) -> None:
    with pytest.raises(UsageError) as caught:
        sessionize(payments, key="account", time="at", aggregates=aggregates)
    assert str(caught.value) == (
        "sessionize(..., aggregates=...): give a dict of output column -> 'function(field)', "
        f"such as {{'total': 'sum(amount)'}}, got {aggregates!r}"
    )


@pytest.mark.spark
def test_a_parameter_of_the_wrong_type_is_refused_as_session_params_refuses_it(
    payments: Any,
) -> None:
    with pytest.raises(ConfigError, match=re.escape("gap must be a datetime.timedelta")):
        sessionize(payments, key="account", time="at", gap="30m")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=re.escape("max_events must be an int such as 300")):
        sessionize(payments, key="account", time="at", max_events="5")  # type: ignore[arg-type]


@pytest.mark.spark
def test_sessionize_builds_the_streaming_step_with_the_key_the_session_columns_and_aggregates(
    payments: Any,
) -> None:
    result = sessionize(
        payments,
        key="account",
        time="at",
        gap=timedelta(minutes=20),
        aggregates={"total": "sum(amount)", "merchants": "collect_set(merchant)", "n": "count()"},
    )
    assert result.combined.isStreaming
    assert [(f.name, f.dataType.simpleString()) for f in result.sessions.schema.fields] == [
        ("account", "string"),
        ("session_id", "string"),
        ("session_start", "timestamp"),
        ("session_end", "timestamp"),
        ("event_count", "bigint"),
        ("bytes", "bigint"),
        ("revision", "int"),
        ("truncated", "boolean"),
        ("merged_session_ids", "array<string>"),
        ("total", "double"),
        ("merchants", "array<string>"),
        ("n", "bigint"),
    ]
    assert result.dead_letters.columns == [
        "raw",
        "reason",
        "detail",
        "key",
        "event_time",
        "ingest_time",
    ]


@pytest.mark.spark
@pytest.mark.parametrize(
    ("key", "time", "key_column"),
    [("n", "at", ("n", T.IntegerType())), ("geo.city", "seq", ("city", T.StringType()))],
    ids=["integer-key", "dotted-key-and-epoch-ms-time"],
)
def test_a_key_of_an_integer_or_a_struct_field_keeps_its_type_under_its_own_name(
    payments: Any, key: str, time: str, key_column: tuple[str, T.DataType]
) -> None:
    result = sessionize(payments, key=key, time=time)
    first = result.sessions.schema.fields[0]
    assert (first.name, first.dataType) == key_column


# -- SessionTester -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("schema", "naive"),
    [(PAGEVIEWS, "event"), (PAYMENTS, "event"), (PAGEVIEWS, "watermark")],
    ids=["bigint-time", "timestamp-time", "watermark"],
)
def test_session_tester_refuses_naive_datetimes_saying_to_pass_timezone_aware_ones(
    schema: Schema, naive: str
) -> None:
    local = datetime(2026, 1, 1)
    event = {schema.key: "u", schema.time: local if naive == "event" else T0}
    tester = SessionTester(schema)
    with pytest.raises(UsageError) as caught:
        tester.run_batch([event], watermark=local if naive == "watermark" else T0)
    assert str(caught.value).startswith(
        "times must be timezone-aware datetimes, got the naive datetime.datetime(2026, 1, 1, "
        "0, 0); pass e.g. datetime(2026, 1, 1, tzinfo=UTC)"
    )
    assert tester.state_rows == 0  # nothing was fed


def test_session_tester_takes_watermarks_as_epoch_millis_as_well_as_aware_datetimes() -> None:
    event = {"user_id": "u", "ts": T0_MS, "page_number": 1, "url": "/a"}
    hour_later = T0 + timedelta(hours=1)
    runs = []
    for watermark, later in ((T0, hour_later), (T0_MS, T0_MS + 3_600_000)):
        tester = SessionTester(PAGEVIEWS)
        runs.append(tester.run_batch([event], watermark))
        runs.append(tester.advance_watermark(later))
    assert runs[0] == runs[2] and runs[1] == runs[3] and len(runs[1]) == 1


@pytest.mark.parametrize(
    "at",
    [T0, T0.astimezone(UTC).isoformat(), "2026-01-01T00:00:00Z", "2026-01-01T01:00:00+01:00"],
    ids=["datetime", "iso-offset", "iso-z", "iso-other-zone"],
)
def test_a_timestamp_field_takes_an_aware_datetime_or_iso_8601_text_with_a_zone(at: Any) -> None:
    tester = SessionTester(PAYMENTS)
    tester.run_batch([{"account": "a", "at": at, "amount": 1.0}], T0)
    [s] = tester.advance_watermark(T0 + timedelta(hours=1))
    assert s.start_ms == T0_MS  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (
            lambda: SessionTester(None),  # type: ignore[arg-type]
            "SessionTester(schema, params): schema must be a streamwarden.Schema such as "
            "Schema(key='account', time='at', fields='account STRING, at TIMESTAMP'), got a "
            "NoneType",
        ),
        (
            lambda: SessionTester(PAGEVIEW_SCHEMA),  # type: ignore[arg-type]
            "schema must be a streamwarden.Schema such as",
        ),
        (
            lambda: SessionTester(PAGEVIEWS, {"gap": timedelta(minutes=30)}),  # type: ignore[arg-type]
            "SessionTester(schema, params): params must be a SessionParams such as "
            "SessionParams(gap=timedelta(minutes=30)), got a dict",
        ),
        (
            lambda: SessionTester(PAGEVIEWS).run_batch([("u", 0)], 0),  # type: ignore[list-item]
            "run_batch(records): each record must be a dict of the schema's fields, such as "
            "{'user_id': 'k1', 'ts': ...}, got ('u', 0)",
        ),
        (
            lambda: SessionTester(PAGEVIEWS).run_batch([{"user_id": "u"}], 0),
            "run_batch(records): a record needs its key 'user_id' and its time 'ts', got "
            "{'user_id': 'u'}",
        ),
        (
            lambda: SessionTester(PAGEVIEWS).run_batch([{"ts": T0_MS}], 0),
            "a record needs its key 'user_id' and its time 'ts'",
        ),
        (
            lambda: SessionTester(PAGEVIEWS).advance_watermark("soon"),  # type: ignore[arg-type]
            "times must be timezone-aware datetimes or epoch milliseconds (an int), got 'soon' "
            "(str)",
        ),
        (
            lambda: SessionTester(PAYMENTS).run_batch([{"account": "a", "at": True}], 0),
            "got True (bool)",
        ),
    ],
    ids=[
        "schema-none",
        "schema-dict",
        "params-dict",
        "record-tuple",
        "record-without-time",
        "record-without-key",
        "watermark-text",
        "time-bool",
    ],
)
def test_session_tester_refuses_arguments_it_cannot_use_saying_what_to_pass(
    call: Any, expected: str
) -> None:
    with pytest.raises(UsageError, match=re.escape(expected)):
        call()


def test_session_tester_refuses_an_aggregate_the_schema_cannot_compute_naming_it() -> None:
    with pytest.raises(ConfigError) as caught:
        SessionTester(PAGEVIEWS, SessionParams(aggregates={"total": "sum(url)"}))
    assert "aggregate total = 'sum(url)': sum adds numbers, but 'url' is STRING" in str(
        caught.value
    )


@pytest.mark.parametrize("schema", [PAGEVIEWS, PAYMENTS], ids=["bigint-time", "timestamp-time"])
def test_session_tester_refuses_a_time_text_that_is_no_time_naming_the_field(
    schema: Schema,
) -> None:
    tester = SessionTester(schema)
    with pytest.raises(UsageError, match=re.escape(repr(schema.time))):
        tester.run_batch([{schema.key: "u", schema.time: "soon"}], 0)


def test_session_tester_refuses_a_value_of_another_type_than_its_field_naming_the_field() -> None:
    tester = SessionTester(PAYMENTS, SessionParams(aggregates={"total": "sum(amount)"}))
    with pytest.raises(UsageError, match="'amount'"):
        tester.run_batch([{"account": "a", "at": T0, "amount": "12"}], T0)
