"""Classes of bad input an outside test found accepted, refused, or reported wrongly (issue 19),
each as a specification of what validation does now. All records are validated in one Spark
job; each test reads its class's outcomes."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from streamwarden.sources.base import SOURCE_POSITION
from streamwarden.sources.kafka import kafka_records
from streamwarden.validation import validate_records
from streamwarden.validation.settings import FieldNames, ValidationConfig

pytestmark = pytest.mark.spark

MS = 1_795_491_180_000  # 2026-11-24T03:33:00Z


def pv(ts: Any, user: Any = "a", page: Any = 1) -> str:
    return json.dumps({"user_id": user, "ts": ts, "page_number": page})


#: name -> raw record (bytes where it is not UTF-8)
RECORDS: dict[str, str | bytes] = {
    # times beyond what Spark timestamps hold, on each path (number, quoted number, text)
    "min long": pv(-(2**63)),
    "max long": pv(2**63 - 1),
    "quoted beyond": pv(str(253_402_300_800_000)),
    "last accepted": pv(253_402_300_799_999),
    "first accepted": pv(-62_135_596_800_000),
    # not exactly one JSON object
    "two objects": pv(MS) + pv(MS + 1),
    "two objects, space": pv(MS) + " " + pv(MS + 1),
    "trailing garbage": pv(MS) + " ok",
    "single quotes": f"{{'user_id': 'a', 'ts': {MS}, 'page_number': 1}}",
    "a name twice": f'{{"user_id": "a", "user_id": "b", "ts": {MS}, "page_number": 1}}',
    "NaN": '{"user_id": "a", "ts": NaN, "page_number": 1}',
    "object then array": pv(MS) + "[]",
    "unpaired surrogate": f'{{"user_id": "\\ud800", "ts": {MS}, "page_number": 1}}',
    "surrogate pair": f'{{"user_id": "\\ud83d\\ude00", "ts": {MS}, "page_number": 1}}',
    # white space, whatever the characters
    "tab": " \t ",
    "spaces": "   ",
    "empty": "",
    "cr": "\r",
    # bytes that are not UTF-8, in the key or elsewhere
    "key ff": b'{"user_id": "u\xff", "ts": %d, "page_number": 1}' % MS,
    "key fe": b'{"user_id": "u\xfe", "ts": %d, "page_number": 1}' % MS,
    "url latin-1": b'{"user_id": "u", "ts": %d, "page_number": 1, "url": "/caf\xe9"}' % MS,
    # ISO-8601 / RFC 3339 with a zone
    "nanoseconds Z": pv("2026-11-24T03:33:00.123456789Z"),
    "+0000": pv("2026-11-24T03:33:00+0000"),
    "minutes only": pv("2026-11-24T03:33Z"),
    "space separator": pv("2026-11-24 03:33:00z"),
    "basic format": pv("20261124T043300+01"),
    "no zone": pv("2026-11-24T03:33:00"),
    # values in details as written
    "float time": '{"user_id": "a", "ts": 1795491000000.5000, "page_number": 1}',
    "exponent page": f'{{"user_id": "a", "ts": {MS}, "page_number": 1.0E2}}',
    "huge page": f'{{"user_id": "a", "ts": {MS}, "page_number": 123456789012345678901234}}',
}


@pytest.fixture(scope="module")
def outcome(spark: Any) -> dict[str, dict[str, Any]]:
    names = list(RECORDS)
    data = [
        (i, bytearray(r if isinstance(r, bytes) else r.encode()))
        for i, r in enumerate(RECORDS.values())
    ]
    frame = spark.createDataFrame(data, "i int, b binary").selectExpr("i", "cast(b as string) raw")
    rows = validate_records(frame, FieldNames(), ValidationConfig(max_future_skew=None)).collect()
    by_raw = {r["raw"]: r.asDict() for r in rows}
    result = {}
    for name in names:
        raw = RECORDS[name]
        key = base64.b64encode(raw).decode() if isinstance(raw, bytes) else raw
        result[name] = by_raw[key]
    assert len(rows) == len(names)
    return result


def reasons(outcome: dict[str, dict[str, Any]], *names: str) -> list[str | None]:
    return [outcome[n]["reason"] for n in names]


def test_event_times_spark_cannot_hold_are_invalid_and_the_detail_says_the_bound(outcome):
    beyond = ("min long", "max long", "quoted beyond")
    assert reasons(outcome, *beyond) == ["invalid_timestamp"] * 3
    assert outcome["max long"]["detail"] == (
        "'ts' 9223372036854775807 is outside the event times accepted, 0001-01-01T00:00:00Z .. "
        "9999-12-31T23:59:59.999Z (epoch milliseconds -62135596800000 .. 253402300799999)"
    )
    assert all(outcome[n]["ts_ms"] is None for n in beyond)  # nothing downstream sees them
    assert reasons(outcome, "last accepted", "first accepted") == [None, None]


def test_a_line_is_exactly_one_json_object_or_it_is_malformed(outcome):
    names = (
        "two objects",
        "two objects, space",
        "trailing garbage",
        "single quotes",
        "a name twice",
        "NaN",
        "object then array",
        "unpaired surrogate",
    )
    assert reasons(outcome, *names) == ["malformed_json"] * len(names)
    assert outcome["two objects"]["detail"] == (
        f"record has more after its JSON object, at byte {len(pv(MS))} (one JSON object per record)"
    )
    assert outcome["single quotes"]["detail"] == (
        "record uses single quotes (at byte 1), which JSON does not allow"
    )
    assert outcome["surrogate pair"]["reason"] is None
    assert outcome["surrogate pair"]["user_id"] == "\U0001f600"


def test_white_space_only_lines_are_malformed_whatever_the_white_space(outcome):
    assert reasons(outcome, "tab", "spaces", "empty", "cr") == ["malformed_json"] * 4
    assert outcome["tab"]["detail"] == "record is only white space"


def test_a_record_that_is_not_utf8_is_its_own_reason_with_its_exact_bytes(outcome):
    names = ("key ff", "key fe", "url latin-1")
    assert reasons(outcome, *names) == ["invalid_utf8"] * 3
    for name in names:
        assert base64.b64decode(outcome[name]["raw"]) == RECORDS[name]
        assert outcome[name]["user_id"] is None  # never a key that could merge two users


def test_iso_8601_and_rfc_3339_times_with_a_zone_are_accepted(outcome):
    got = {
        n: outcome[n]["ts_ms"]
        for n in ("nanoseconds Z", "+0000", "minutes only", "space separator", "basic format")
    }
    assert got == {
        "nanoseconds Z": MS + 123,
        "+0000": MS,
        "minutes only": MS,
        "space separator": MS,
        "basic format": MS,
    }
    assert outcome["no zone"]["reason"] == "invalid_timestamp"


def test_details_show_values_as_they_were_written(outcome):
    assert outcome["float time"]["detail"].startswith("'ts' 1795491000000.5000 is neither")
    assert outcome["exponent page"]["detail"] == "'page_number' must be an integer, got 1.0E2"
    assert outcome["huge page"]["detail"] == (
        "'page_number' must be an integer, got 123456789012345678901234"
    )


def test_a_kafka_value_that_is_not_utf8_keeps_its_bytes_and_its_key_is_shown_in_base64(spark):
    rows = [
        (b"u\xff", b'{"user_id": "u\xff", "ts": 1, "page_number": 1}', "t", 0, 7),
        (b"u1", pv(MS).encode(), "t", 1, 8),
    ]
    frame = spark.createDataFrame(
        [(bytearray(k), bytearray(v), t, p, o, None) for k, v, t, p, o in rows],
        "key binary, value binary, topic string, partition int, offset long, timestamp timestamp",
    )
    records = kafka_records(frame, timestamp_is_event_time=False)
    assert SOURCE_POSITION in records.columns
    out = validate_records(records, FieldNames(), ValidationConfig(max_future_skew=None))
    [bad, good] = sorted(out.collect(), key=lambda r: r["reason"] is None)
    assert bad["reason"] == "invalid_utf8"
    assert base64.b64decode(bad["raw"]) == rows[0][1]
    assert bad["detail"].endswith("(at topic t partition 0 offset 7 key base64:df8=)")
    assert (good["reason"], good["ts_ms"]) == (None, MS)
