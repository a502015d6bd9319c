"""Wrong arguments to the session API are refused with the parameter, the value given and what
to pass instead; never a TypeError or AttributeError from inside."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from streamwarden.config import ValidationConfig
from streamwarden.errors import ConfigError, UsageError
from streamwarden.operators.sessions import SessionParams, sessionize
from streamwarden.testing import SessionTester
from streamwarden.testing.session_tester import PageView


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
        ({"max_pages": "5"}, "max_pages must be an int such as 300, got '5' (str)"),
        ({"max_pages": True}, "max_pages must be an int such as 300, got True (bool)"),
        ({"max_session_bytes": 4e6}, "max_session_bytes must be an int"),
        ({"collect_urls": "no"}, "collect_urls must be True or False, got 'no' (str)"),
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
        ({"max_pages": 0}, "max_pages must be from 1 to 2**63 - 1, got 0"),
        ({"max_session_bytes": -5}, "max_session_bytes must be from 1 to 2**63 - 1, got -5"),
    ],
)
def test_session_params_out_of_range_are_refused_naming_the_parameter_and_the_value(
    arguments: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        SessionParams(**arguments)
    assert str(caught.value).startswith(expected)


def test_session_params_of_the_right_types_are_accepted_including_no_slow_key_threshold() -> None:
    params = SessionParams(gap=timedelta(minutes=5), max_pages=10, slow_key_threshold=None)
    assert (params.gap, params.max_pages, params.slow_key_threshold_ms) == (
        timedelta(minutes=5),
        10,
        0,
    )


# -- sessionize --------------------------------------------------------------------------------
def test_sessionize_of_something_other_than_a_dataframe_is_refused_saying_what_it_needs() -> None:
    with pytest.raises(UsageError) as caught:
        sessionize([{"user_id": "u", "ts": 0, "page_number": 1}])  # type: ignore[arg-type]
    assert str(caught.value).startswith(
        "sessionize(events, ...): events must be a streaming Spark DataFrame such as "
        "spark.readStream.text('landing/'), got a list"
    )


@pytest.mark.spark
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"params": {"gap": timedelta(minutes=30)}},
            "sessionize(events, params): params must be a SessionParams such as "
            "SessionParams(gap=timedelta(minutes=30)), got a dict; for a dict of settings, "
            "pass SessionParams(**settings)",
        ),
        ({"fields": {"user_id": "uid"}}, "sessionize(..., fields=...): fields must be a"),
        ({"validation": 100}, "sessionize(..., validation=...): validation must be a"),
    ],
    ids=["params-dict", "fields-dict", "validation-int"],
)
def test_sessionize_with_settings_of_the_wrong_type_is_refused_saying_what_to_pass(
    spark: Any, tmp_path: Path, arguments: dict[str, Any], expected: str
) -> None:
    with pytest.raises(UsageError) as caught:
        sessionize(spark.readStream.text(str(tmp_path)), **arguments)
    assert str(caught.value).startswith(expected)


@pytest.mark.spark
def test_sessionize_on_a_batch_dataframe_is_refused_before_any_query_runs(spark: Any) -> None:
    batch = spark.createDataFrame([('{"user_id": "u", "ts": 0, "page_number": 1}',)], "raw string")
    with pytest.raises(UsageError) as caught:
        sessionize(batch)
    message = str(caught.value)
    assert message.startswith("sessionize(events): events is a batch DataFrame")
    assert ".trigger(availableNow=True)" in message


@pytest.mark.spark
def test_sessionize_on_a_streaming_dataframe_builds_the_streaming_step(
    spark: Any, tmp_path: Path
) -> None:
    result = sessionize(spark.readStream.text(str(tmp_path)), SessionParams())
    assert result.combined.isStreaming


@pytest.mark.spark
def test_a_page_cap_given_twice_with_two_values_is_refused(spark: Any, tmp_path: Path) -> None:
    events = spark.readStream.text(str(tmp_path))
    fifty = ValidationConfig(max_pages=50)
    with pytest.raises(UsageError, match=r"validation.max_pages \(50\) and params.max_pages"):
        sessionize(events, SessionParams(max_pages=300), validation=fifty)
    same = sessionize(events, SessionParams(max_pages=50), validation=fifty)
    assert same.combined.isStreaming


@pytest.mark.spark
def test_a_page_cap_given_only_in_validation_is_the_page_cap(spark: Any, tmp_path: Path) -> None:
    events = spark.readStream.text(str(tmp_path))
    assert sessionize(events, validation=ValidationConfig(max_pages=100)).combined.isStreaming


def test_caps_beyond_what_the_engine_can_hold_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"max_session_bytes must be from 1 to 2\*\*63 - 1"):
        SessionParams(max_session_bytes=2**70)


# -- SessionTester -----------------------------------------------------------------------------
@pytest.mark.parametrize("naive", ["event", "watermark"])
def test_session_tester_refuses_naive_datetimes_saying_to_pass_timezone_aware_ones(
    naive: str,
) -> None:
    aware = datetime(2026, 1, 1, tzinfo=UTC)
    local = datetime(2026, 1, 1)
    event = PageView("u", local if naive == "event" else aware)
    tester = SessionTester(SessionParams())
    with pytest.raises(UsageError) as caught:
        tester.run_batch([event], watermark=local if naive == "watermark" else aware)
    assert str(caught.value).startswith(
        "times must be timezone-aware datetimes, got the naive datetime.datetime(2026, 1, 1, "
        "0, 0); pass e.g. datetime(2026, 1, 1, tzinfo=UTC)"
    )
    assert tester.state_rows == 0  # nothing was fed


def test_session_tester_takes_epoch_millis_as_well_as_aware_datetimes() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    millis = int(at.timestamp() * 1000)
    by_datetime = SessionTester(SessionParams()).run_batch([PageView("u", at)], at)
    by_millis = SessionTester(SessionParams()).run_batch([PageView("u", millis)], millis)
    assert by_datetime == by_millis


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: SessionTester(None), "params must be a SessionParams"),  # type: ignore[arg-type]
        (
            lambda: SessionTester(SessionParams()).run_batch([("u", 0)], 0),  # type: ignore[list-item]
            "each event must be a PageView",
        ),
        (
            lambda: SessionTester(SessionParams()).advance_watermark("soon"),  # type: ignore[arg-type]
            "got 'soon' (str)",
        ),
    ],
    ids=["params-none", "event-tuple", "watermark-text"],
)
def test_session_tester_refuses_arguments_it_cannot_use_saying_what_to_pass(
    call: Any, expected: str
) -> None:
    with pytest.raises(UsageError, match=re.escape(expected)):
        call()


@pytest.mark.spark
def test_typed_events_without_the_fields_columns_are_refused_naming_them(
    spark: Any, tmp_path: Path
) -> None:
    """A query whose columns cannot be sessions fails before it starts, naming the columns,
    instead of dead-lettering every record it reads."""
    events = spark.readStream.schema("uid string, ts long, page long").json(str(tmp_path))
    with pytest.raises(UsageError) as caught:
        sessionize(events)
    assert str(caught.value).startswith(
        "sessionize(events): column(s) 'user_id', 'page_number' missing from events, whose "
        "columns are 'uid', 'ts', 'page'; "
    )


@pytest.mark.spark
def test_typed_events_whose_columns_have_types_validation_cannot_read_are_refused(
    spark: Any, tmp_path: Path
) -> None:
    schema = "user_id struct<id:long>, ts timestamp_ntz, page_number long, url array<string>"
    events = spark.readStream.schema(schema).json(str(tmp_path))
    with pytest.raises(UsageError) as caught:
        sessionize(events)
    message = str(caught.value)
    assert message.startswith("sessionize(events): 'user_id' is struct<id:bigint> (expected one")
    assert "'ts' is timestamp_ntz (expected one of timestamp, string, " in message
    assert "'url' is array<string> (expected one of string)" in message
    assert "'page_number'" not in message
    fine = spark.readStream.schema("user_id string, ts timestamp, page_number int").json(
        str(tmp_path)
    )
    assert sessionize(fine).combined.isStreaming
