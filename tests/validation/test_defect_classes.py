"""Classes of bad input an outside test found accepted, refused, or reported wrongly (issue 19),
each as a specification of what validation does under a declared schema: pageviews, whose time
is a BIGINT of epoch milliseconds, and a schema whose time is a TIMESTAMP, where ISO-8601 forms
apply. The clock's checks are off (times at the edges are the point). All records are
validated in one Spark job; each test reads its class's outcomes."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from streamwarden.schema import Schema
from streamwarden.sources.base import SOURCE_POSITION
from streamwarden.sources.kafka import KafkaSourceSettings, kafka_records
from streamwarden.validation.settings import ValidationConfig
from tests.validation.outcomes import PAGEVIEWS, Outcome, named_outcomes, outcomes_of

pytestmark = pytest.mark.spark

MS = 1_795_491_180_000  # 2026-11-24T03:33:00Z
EDGES = ValidationConfig(max_future_skew=None, earliest_event_time=None)
TIMED = Schema(key="user_id", time="at", fields="user_id STRING, at TIMESTAMP")
OUTSIDE = "is outside the event times accepted, 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z"


def pv(ts: Any, user: Any = "a", page: Any = 1) -> str:
    return json.dumps({"user_id": user, "ts": ts, "page_number": page})


def timed(at: str) -> str:
    return json.dumps({"user_id": "a", "at": at})


#: name -> raw pageview record (bytes where it is not UTF-8)
PAGEVIEW_RECORDS: dict[str, str | bytes] = {
    # times beyond what every later step holds, and the bounds themselves
    "min long": pv(-(2**63)),
    "max long": pv(2**63 - 1),
    "beyond a long": pv(2**63),
    "first after the last accepted": pv(253_402_300_800_000),
    "last before the first accepted": pv(-62_135_596_800_001),
    "last accepted": pv(253_402_300_799_999),
    "first accepted": pv(-62_135_596_800_000),
    "quoted time beyond": pv(str(253_402_300_800_000)),
    # not exactly one JSON object
    "two objects": pv(MS) + pv(MS + 1),
    "two objects, space": pv(MS) + " " + pv(MS + 1),
    "trailing garbage": pv(MS) + " ok",
    "object then array": pv(MS) + "[]",
    "single quotes": f"{{'user_id': 'a', 'ts': {MS}, 'page_number': 1}}",
    "a name twice": f'{{"user_id": "a", "user_id": "b", "ts": {MS}, "page_number": 1}}',
    "a name twice in a value not declared": (
        f'{{"user_id": "a", "ts": {MS}, "page_number": 1, "x": {{"k": 1, "k": 2}}}}'
    ),
    "NaN": '{"user_id": "a", "ts": NaN, "page_number": 1}',
    "Infinity in a value not declared": (
        f'{{"user_id": "a", "ts": {MS}, "page_number": 1, "x": Infinity}}'
    ),
    "leading zero": f'{{"user_id": "a", "ts": {MS}, "page_number": 01}}',
    "unpaired surrogate": f'{{"user_id": "\\ud800", "ts": {MS}, "page_number": 1}}',
    "low surrogate first, in a value not declared": (
        f'{{"user_id": "a", "ts": {MS}, "page_number": 1, "x": "\\udc00\\ud800"}}'
    ),
    "unpaired surrogate in a name": (
        f'{{"user_id": "a", "ts": {MS}, "page_number": 1, "\\ud800": 1}}'
    ),
    "surrogate pair": f'{{"user_id": "\\ud83d\\ude00", "ts": {MS}, "page_number": 1}}',
    # Jackson's limits: nesting over 1000 levels, numbers over 1000 characters
    "nested 1000 deep": pv(MS)[:-1] + ', "n": ' + "[" * 999 + "]" * 999 + "}",
    "nested 1001 deep": pv(MS)[:-1] + ', "n": ' + "[" * 1000 + "]" * 1000 + "}",
    "a number of 1500 digits": pv(MS)[:-1] + ', "n": ' + "1" * 1500 + "}",
    # white space, whatever the characters
    "tab": " \t ",
    "spaces": "   ",
    "empty": "",
    "cr": "\r",
    "lf": "\n",
    # bytes that are not UTF-8, in the key or elsewhere
    "key ff": b'{"user_id": "u\xff", "ts": %d, "page_number": 1}' % MS,
    "key fe": b'{"user_id": "u\xfe", "ts": %d, "page_number": 1}' % MS,
    "url latin-1": b'{"user_id": "u", "ts": %d, "page_number": 1, "url": "/caf\xe9"}' % MS,
    "surrogate as bytes": b'{"user_id": "u\xed\xa0\x80", "ts": %d, "page_number": 1}' % MS,
    "overlong slash": b'{"user_id": "u\xc0\xaf", "ts": %d, "page_number": 1}' % MS,
    # values in details as they were written
    "float time": '{"user_id": "a", "ts": 1795491000000.5000, "page_number": 1}',
    "exponent page": f'{{"user_id": "a", "ts": {MS}, "page_number": 1.0E2}}',
    "huge page": f'{{"user_id": "a", "ts": {MS}, "page_number": 123456789012345678901234}}',
}

#: name -> raw record of the TIMESTAMP schema
TIMED_RECORDS: dict[str, str] = {
    # ISO-8601 / RFC 3339 with a zone
    "nanoseconds Z": timed("2026-11-24T03:33:00.123456789Z"),
    "+0000": timed("2026-11-24T03:33:00+0000"),
    "-00:00": timed("2026-11-24T03:33:00-00:00"),
    "+01:00": timed("2026-11-24T04:33:00+01:00"),
    "minutes only": timed("2026-11-24T03:33Z"),
    "space separator": timed("2026-11-24 03:33:00z"),
    "lower-case t": timed("2026-11-24t03:33:00Z"),
    "decimal comma": timed("2026-11-24T03:33:00,5Z"),
    "basic format": timed("20261124T043300+01"),
    "leap second": timed("2026-11-24T03:33:60Z"),
    "first accepted instant": timed("0001-01-01T00:00:00Z"),
    "last accepted instant": timed("9999-12-31T23:59:59.999999Z"),
    # not a time with a zone
    "no zone": timed("2026-11-24T03:33:00"),
    "ten fraction digits": timed("2026-11-24T03:33:00.1234567891Z"),
    "a point without digits": timed("2026-11-24T03:33:00.Z"),
    "24:00": timed("2026-11-24T24:00:00Z"),
    "week date": timed("2026-W48-2T00:00:00Z"),
    "no such day": timed("2026-02-30T00:00:00Z"),
    "year 0": timed("0000-12-31T23:59:59Z"),
    "after year 9999 by its offset": timed("9999-12-31T23:59:59-01:00"),
    "white space before": timed(" 2026-11-24T03:33:00Z"),
}


@pytest.fixture(scope="module")
def outcome(spark: Any) -> dict[str, Outcome]:
    assert not set(PAGEVIEW_RECORDS) & set(TIMED_RECORDS)
    return named_outcomes(spark, [(PAGEVIEWS, PAGEVIEW_RECORDS), (TIMED, TIMED_RECORDS)], EDGES)


def reasons(outcome: dict[str, Outcome], *names: str) -> list[str | None]:
    return [outcome[n].reason for n in names]


def test_event_times_beyond_the_accepted_range_are_invalid_and_the_detail_says_the_range(outcome):
    beyond = (
        "min long",
        "max long",
        "beyond a long",
        "first after the last accepted",
        "last before the first accepted",
    )
    assert reasons(outcome, *beyond) == ["invalid_timestamp"] * len(beyond)
    assert outcome["max long"].detail == f"'ts' 9223372036854775807 (ms) {OUTSIDE}"
    assert outcome["beyond a long"].detail == f"'ts' 9223372036854775808 (ms) {OUTSIDE}"
    assert all(outcome[n].ts_ms is None for n in beyond)  # nothing downstream sees them
    assert reasons(outcome, "last accepted", "first accepted") == [None, None]
    assert outcome["last accepted"].ts_ms == 253_402_300_799_999


def test_a_quoted_time_is_text_not_a_number_whatever_its_value(outcome):
    assert outcome["quoted time beyond"].reason == "wrong_type"


def test_a_line_is_exactly_one_json_object_or_it_is_malformed(outcome):
    names = (
        "two objects",
        "two objects, space",
        "trailing garbage",
        "object then array",
        "single quotes",
        "a name twice",
        "a name twice in a value not declared",
        "NaN",
        "Infinity in a value not declared",
        "leading zero",
        "unpaired surrogate",
        "low surrogate first, in a value not declared",
        "unpaired surrogate in a name",
    )
    assert reasons(outcome, *names) == ["malformed_json"] * len(names)
    assert all(outcome[n].values["user_id"] is None for n in names)  # a malformed record has none
    assert outcome["two objects"].detail == (
        f"record has more after its JSON object, at byte {len(pv(MS))} (one JSON object per record)"
    )
    assert outcome["single quotes"].detail == (
        "record uses single quotes (at byte 1), which JSON does not allow"
    )
    assert outcome["a name twice"].detail == (
        "record is not valid JSON: the name 'user_id' is given twice in one object (near byte 26)"
    )
    assert (
        outcome["NaN"].detail == "record is not valid JSON: Non-standard token 'NaN' (near byte 26)"
    )
    assert outcome["unpaired surrogate"].detail == (
        "a string holds an unpaired surrogate escape (\\ud800) at byte 13, which is not "
        "Unicode text"
    )
    assert (outcome["surrogate pair"].reason, outcome["surrogate pair"].key) == (None, "\U0001f600")


def test_nesting_and_numbers_beyond_the_parser_s_limits_are_malformed(outcome):
    assert outcome["nested 1000 deep"].reason is None
    assert (outcome["nested 1001 deep"].reason, outcome["nested 1001 deep"].detail) == (
        "malformed_json",
        "record is not valid JSON: Document nesting depth (1001) exceeds the maximum allowed",
    )
    assert outcome["a number of 1500 digits"].detail == (
        "record is not valid JSON: Number value length (1500) exceeds the maximum allowed"
    )


def test_white_space_only_lines_are_malformed_whatever_the_white_space(outcome):
    assert reasons(outcome, "tab", "spaces", "empty", "cr", "lf") == ["malformed_json"] * 5
    assert outcome["tab"].detail == "record is only white space"
    assert outcome["empty"].detail == "record is empty"


def test_a_record_that_is_not_utf8_is_its_own_reason_with_its_exact_bytes(outcome):
    names = ("key ff", "key fe", "url latin-1", "surrogate as bytes", "overlong slash")
    assert reasons(outcome, *names) == ["invalid_utf8"] * len(names)
    for name in names:
        assert base64.b64decode(outcome[name].raw) == PAGEVIEW_RECORDS[name]
        assert outcome[name].key is None  # never a key that could merge two users
    assert outcome["key ff"].values["user_id"] is None


def test_iso_8601_and_rfc_3339_times_with_a_zone_are_read_to_the_microsecond(outcome):
    us = MS * 1000
    read = {
        "nanoseconds Z": us + 123_456,  # digits past the microsecond cut off
        "+0000": us,
        "-00:00": us,
        "+01:00": us,
        "minutes only": us,
        "space separator": us,
        "lower-case t": us,
        "decimal comma": us + 500_000,
        "basic format": us,
        "leap second": us + 59_999_999,  # the last microsecond of its minute
        "first accepted instant": -62_135_596_800_000_000,
        "last accepted instant": 253_402_300_799_999_999,
    }
    assert {n: (outcome[n].reason, outcome[n].values["at"]) for n in read} == {
        n: (None, at) for n, at in read.items()
    }
    assert outcome["nanoseconds Z"].ts_ms == MS + 123


def test_times_without_a_zone_or_outside_iso_8601_are_invalid_naming_the_value(outcome):
    names = (
        "no zone",
        "ten fraction digits",
        "a point without digits",
        "24:00",
        "week date",
        "no such day",
        "year 0",
        "after year 9999 by its offset",
        "white space before",
    )
    assert reasons(outcome, *names) == ["invalid_timestamp"] * len(names)
    assert outcome["no zone"].detail == (
        "'at' \"2026-11-24T03:33:00\" is not an ISO-8601 time with a zone (e.g. "
        "2026-01-01T12:00:00Z)"
    )
    assert all(outcome[n].values["at"] is None and outcome[n].ts_ms is None for n in names)


def test_details_show_values_as_they_were_written(outcome):
    assert outcome["float time"].detail.endswith("got the number 1795491000000.5000")
    assert outcome["exponent page"].detail.endswith("got the number 1.0E2")
    assert outcome["huge page"].detail.endswith("got the number 123456789012345678901234")


def test_a_byte_order_mark_is_judged_alike_whatever_the_record_holds(spark):
    plain = "\ufeff" + pv(MS)
    escaped = "\ufeff" + json.dumps({"user_id": "é", "ts": MS, "page_number": 1})
    [[a, b]] = outcomes_of([(PAGEVIEWS, _text_frame(spark, [plain, escaped]))], EDGES)
    assert a.reason == b.reason


# --- Kafka records ------------------------------------------------------------------------------

KAFKA = "key binary, value binary, topic string, partition int, offset long, timestamp timestamp"
AT = datetime(2026, 1, 1, tzinfo=UTC)


def _kafka(spark: Any, rows: list[tuple[bytes | None, bytes | None, int]]) -> Any:
    return spark.createDataFrame(
        [
            (
                None if k is None else bytearray(k),
                None if v is None else bytearray(v),
                "t",
                0,
                o,
                AT,
            )
            for k, v, o in rows
        ],
        KAFKA,
    )


def _text_frame(spark: Any, records: list[str]) -> Any:
    return spark.createDataFrame([(r,) for r in records], "raw string")


def test_a_kafka_value_that_is_not_utf8_keeps_its_bytes_and_its_key_is_shown_in_base64(spark):
    frame = _kafka(
        spark,
        [
            (b"u\xff", b'{"user_id": "u\xff", "ts": 1, "page_number": 1}', 7),
            (b"u1", pv(MS).encode(), 8),
            (b"u2", None, 9),  # a tombstone
        ],
    )
    records = kafka_records(frame, KafkaSourceSettings(kind="kafka", topics=["t"]))
    assert SOURCE_POSITION in records.columns
    [[bad, good, tombstone]] = outcomes_of([(PAGEVIEWS, records)], EDGES)
    assert bad.reason == "invalid_utf8"
    assert base64.b64decode(bad.raw) == b'{"user_id": "u\xff", "ts": 1, "page_number": 1}'
    assert bad.detail.endswith("(at topic t partition 0 offset 7 key base64:df8=)")
    assert (good.reason, good.ts_ms, good.key) == (None, MS, "a")  # the record's own time, key
    assert (tombstone.reason, tombstone.detail) == (
        "malformed_json",
        "record is empty (at topic t partition 0 offset 9 key u2)",
    )


def test_the_kafka_timestamp_and_key_win_when_so_configured(spark):
    frame = _kafka(spark, [(b"u1", pv(MS).encode(), 1), (b"u2", b'{"page_number": 2}', 2)])
    settings = KafkaSourceSettings(
        kind="kafka", topics=["t"], event_time="kafka_timestamp", key="kafka_key"
    )
    [rows] = outcomes_of([(PAGEVIEWS, kafka_records(frame, settings))], EDGES)
    at_ms = int(AT.timestamp() * 1000)
    assert [(o.reason, o.key, o.ts_ms, o.values["ts"]) for o in rows] == [
        (None, "u1", at_ms, at_ms),
        (None, "u2", at_ms, at_ms),  # neither field is needed in the record then
    ]


def test_a_kafka_key_that_is_not_utf8_is_no_event_s_key(spark):
    frame = _kafka(spark, [(b"u\xff", pv(MS, user=None).encode(), 1)])
    settings = KafkaSourceSettings(kind="kafka", topics=["t"], key="kafka_key")
    [[row]] = outcomes_of([(PAGEVIEWS, kafka_records(frame, settings))], EDGES)
    assert row.reason is not None and row.key is None


def test_a_kafka_key_that_is_not_a_number_for_an_integer_key_is_a_dead_letter(spark):
    schema = Schema(key="uid", time="ts", fields="uid BIGINT, ts BIGINT")
    frame = _kafka(spark, [(b"abc", json.dumps({"uid": 5, "ts": MS}).encode(), 1)])
    settings = KafkaSourceSettings(kind="kafka", topics=["t"], key="kafka_key")
    [[row]] = outcomes_of([(schema, kafka_records(frame, settings))], EDGES)
    assert row.reason in ("invalid_key", "wrong_type")
