"""Record validation against a declared schema: every raw record becomes a typed event (its
declared fields in their types) or a dead letter with one reason and a detail naming the field
or rule. Nothing is coerced: a value of another JSON type than declared is ``wrong_type``. One
record per case, for two schemas: pageviews (an epoch-milliseconds time) and payments (an
ISO-8601 time, a nested struct, a check of each kind and a rule). All cases run in one Spark
job, with the default validation settings."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from pyspark.sql import functions as F

from streamwarden.errors import ConfigError, UsageError
from streamwarden.schema import Schema
from streamwarden.sources.base import SOURCE_KEY, SOURCE_POSITION, SOURCE_TIME
from streamwarden.validation import (
    QUARANTINED,
    TICK_FIELD,
    TICK_SOURCE,
    Reason,
    validate_records,
)
from streamwarden.validation.api import validate
from streamwarden.validation.settings import ValidationConfig
from tests.validation.outcomes import (
    PAGEVIEWS,
    PAYMENTS,
    Outcome,
    named_outcomes,
    outcomes,
    outcomes_of,
    records_frame,
)

pytestmark = pytest.mark.spark

MS = 1_767_225_605_415  # 2026-01-01T00:00:05.415Z
NOON = "2026-01-01T12:00:00Z"
NOON_MS = 1_767_268_800_000
DROP = object()  # a field left out of the record
#: The reasons validation gives (the others are the stateful engine's).
VALIDATION_REASONS = {
    Reason.RECORD_TOO_LARGE,
    Reason.INVALID_UTF8,
    Reason.MALFORMED_JSON,
    Reason.MISSING_FIELD,
    Reason.WRONG_TYPE,
    Reason.INVALID_TIMESTAMP,
    Reason.TIMESTAMP_IN_FUTURE,
    Reason.INVALID_KEY,
    Reason.OUT_OF_RANGE,
    Reason.NOT_ALLOWED,
    Reason.TOO_LONG,
    Reason.PATTERN_MISMATCH,
    Reason.RULE_FAILED,
}


def record(defaults: dict[str, Any], fields: dict[str, Any]) -> str:
    merged = {**defaults, **fields}
    return json.dumps({k: v for k, v in merged.items() if v is not DROP}, ensure_ascii=False)


def pageview(**fields: Any) -> str:
    return record({"user_id": "a", "ts": MS, "page_number": 2}, fields)


def payment(**fields: Any) -> str:
    return record({"account": "a1", "at": NOON, "amount": 12.5}, fields)


@dataclass(frozen=True)
class Case:
    """A record, its reason (None: an event) and detail, and some of the values it is read to."""

    record: str | bytes
    reason: str | None
    detail: str | None = None
    values: dict[str, Any] = field(default_factory=dict)
    ts_ms: int | None = None


BIGINT = "a BIGINT (a JSON integer from -9223372036854775808 to 9223372036854775807)"
INT = "an INT (a JSON integer from -2147483648 to 2147483647)"
OUTSIDE = "is outside the event times accepted, 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z"
NOT_ISO = "is not an ISO-8601 time with a zone (e.g. 2026-01-01T12:00:00Z)"
LARGE = payment(merchant="m" * 70_000)

PAGEVIEW_CASES: dict[str, Case] = {
    # read into the declared types
    "typed": Case(
        pageview(url="/x"),
        None,
        values={"user_id": "a", "ts": MS, "page_number": 2, "url": "/x"},
        ts_ms=MS,
    ),
    "non-ascii text": Case(
        pageview(user_id="名前-é", url="/ü"), None, values={"user_id": "名前-é", "url": "/ü"}
    ),
    "escaped text": Case(
        f'{{"user_id": "\\u00e9\\u540d\\ud83d\\ude00", "ts": {MS}, "page_number": 3}}',
        None,
        values={"user_id": "é名😀", "page_number": 3},
    ),
    "fields in any order, white space around": Case(
        f'  {{"page_number" : 4 ,\t"ts":{MS},"user_id":"a"}}  ', None, values={"page_number": 4}
    ),
    "names not declared are ignored": Case(
        pageview(nested={"x": [1, {"y": 2}]}, url=None), None, values={"url": None}
    ),
    "key of the longest length": Case(pageview(user_id="k" * 256), None),
    # nothing coerced
    "quoted time": Case(
        pageview(ts=str(MS)), "wrong_type", f"'ts' must be {BIGINT}, got the string \"{MS}\""
    ),
    "iso time for a BIGINT": Case(
        pageview(ts="2026-01-01T00:00:05.415Z"),
        "wrong_type",
        f"'ts' must be {BIGINT}, got the string \"2026-01-01T00:00:05.415Z\"",
    ),
    "fractional time": Case(
        pageview(ts=MS + 0.5), "wrong_type", f"'ts' must be {BIGINT}, got the number {MS}.5"
    ),
    "quoted page": Case(
        pageview(page_number="2"),
        "wrong_type",
        f"'page_number' must be {INT}, got the string \"2\"",
    ),
    "page of 2.0": Case(
        pageview(page_number=2.0), "wrong_type", f"'page_number' must be {INT}, got the number 2.0"
    ),
    "page beyond an INT": Case(
        pageview(page_number=2**31),
        "wrong_type",
        f"'page_number' must be {INT}, got the number 2147483648",
    ),
    "boolean page": Case(
        pageview(page_number=True), "wrong_type", f"'page_number' must be {INT}, got true"
    ),
    "numeric user id": Case(
        pageview(user_id=42),
        "wrong_type",
        "'user_id' must be a STRING (a JSON string), got the number 42",
    ),
    "object user id": Case(
        pageview(user_id={"id": 1}),
        "wrong_type",
        "'user_id' must be a STRING (a JSON string), got an object",
    ),
    "array url": Case(
        pageview(url=["/x"]), "wrong_type", "'url' must be a STRING (a JSON string), got an array"
    ),
    # absent or null
    "null page": Case(
        pageview(page_number=None), "missing_field", "required field 'page_number' is null"
    ),
    "no page": Case(
        pageview(page_number=DROP), "missing_field", "required field 'page_number' is missing"
    ),
    "no user id (the key is always required)": Case(
        pageview(user_id=DROP), "missing_field", "required field 'user_id' is missing"
    ),
    "no time (the time is always required)": Case(
        pageview(ts=DROP), "missing_field", "time field 'ts' is missing"
    ),
    "null time": Case(pageview(ts=None), "missing_field", "time field 'ts' is null"),
    # event times
    "time after year 9999": Case(
        pageview(ts=253_402_300_800_000),
        "invalid_timestamp",
        f"'ts' 253402300800000 (ms) {OUTSIDE}",
        values={"ts": 253_402_300_800_000},  # the field keeps what was sent; no event time
    ),
    "seconds read as milliseconds": Case(
        pageview(ts=MS // 1000),
        "invalid_timestamp",
        "'ts' is 1970-01-21T10:53:45.605Z, before validation.earliest_event_time "
        "2000-01-01T00:00:00Z: is schema.time_unit ('ms') the unit of the field?",
    ),
    "time far ahead of the clock": Case(
        pageview(ts=32_472_187_200_000),
        "timestamp_in_future",
        "'ts' 2999-01-01 12:00:00 is more than 3600000 ms ahead of ingestion time",
    ),
    # the schema's checks
    "page zero": Case(
        pageview(page_number=0), "out_of_range", "'page_number' 0 is below the minimum 1"
    ),
    "page over max": Case(
        pageview(page_number=301), "out_of_range", "'page_number' 301 is over the maximum 300"
    ),
    # the key
    "empty user id": Case(
        pageview(user_id=""), "invalid_key", "the key 'user_id' is empty or only whitespace"
    ),
    "space-only user id": Case(
        pageview(user_id="   "), "invalid_key", "the key 'user_id' is empty or only whitespace"
    ),
    "tab-only user id": Case(
        pageview(user_id="\t\t"), "invalid_key", "the key 'user_id' is empty or only whitespace"
    ),
    "user id of a line break and a no-break space": Case(
        pageview(user_id="\n\u00a0"),
        "invalid_key",
        "the key 'user_id' is empty or only whitespace",
    ),
    "nul in user id": Case(
        pageview(user_id="\u0000x"),
        "invalid_key",
        "the key 'user_id' contains the NUL character (\\u0000)",
    ),
    "user id over max_key_length": Case(
        pageview(user_id="k" * 257),
        "invalid_key",
        "the key 'user_id' has 257 characters, over max_key_length 256",
    ),
    # the first problem wins: the reader's, in declared field order, then the key, the time,
    # the checks
    "first in declared order": Case(
        '{"page_number": "y", "ts": "x", "user_id": 7}',
        "wrong_type",
        "'user_id' must be a STRING (a JSON string), got the number 7",
    ),
    "a type before the key": Case(
        pageview(user_id=" ", page_number="2"),
        "wrong_type",
        f"'page_number' must be {INT}, got the string \"2\"",
    ),
    "a type before a check": Case(
        pageview(page_number=0, url=5),
        "wrong_type",
        "'url' must be a STRING (a JSON string), got the number 5",
    ),
    "the key before the time": Case(
        pageview(user_id="", ts=MS // 1000),
        "invalid_key",
        "the key 'user_id' is empty or only whitespace",
    ),
    "the time before a check": Case(
        pageview(ts=MS // 1000, page_number=0),
        "invalid_timestamp",
        "'ts' is 1970-01-21T10:53:45.605Z, before validation.earliest_event_time "
        "2000-01-01T00:00:00Z: is schema.time_unit ('ms') the unit of the field?",
    ),
    # not one JSON object
    "truncated json": Case(
        '{"user_id": "a", "ts": 1',
        "malformed_json",
        "record ends inside its JSON object (cut short?)",
    ),
    "empty line": Case("", "malformed_json", "record is empty"),
    "json array": Case(
        "[1, 2]", "malformed_json", "record is not a JSON object (it starts with '[')"
    ),
    "json number": Case("42", "malformed_json", "record is not a JSON object (it starts with '4')"),
    # bytes and size
    "not utf-8": Case(
        b'{"user_id": "u\xff", "ts": %d, "page_number": 1}' % MS,
        "invalid_utf8",
        "record is not valid UTF-8 text, so it is not JSON and its key could not be told apart "
        "from another's; raw holds its exact bytes in base64",
    ),
}

PAYMENT_CASES: dict[str, Case] = {
    "complete": Case(
        payment(
            at="2026-01-01T13:00:00.123456+01:00",
            currency="EUR",
            merchant="Café du Coin",
            country="FR",
            geo={"city": "Paris"},
        ),
        None,
        values={
            "account": "a1",
            "at": NOON_MS * 1000 + 123_456,  # TIMESTAMP to the microsecond
            "amount": 12.5,
            "currency": "EUR",
            "merchant": "Café du Coin",
            "country": "FR",
            "geo": {"city": "Paris"},
        },
        ts_ms=NOON_MS + 123,
    ),
    "only what is required, an integer amount": Case(
        payment(amount=12),
        None,
        values={"amount": 12.0, "currency": None, "merchant": None, "geo": None},
        ts_ms=NOON_MS,
    ),
    "nulls for optional fields": Case(
        payment(currency=None, geo=None, country=None), None, values={"geo": None}
    ),
    "a struct with names not declared": Case(
        payment(geo={"city": "Oslo", "zip": [1, {"a": 2}]}, extra={"x": [None]}),
        None,
        values={"geo": {"city": "Oslo"}},
    ),
    "a struct without its field": Case(payment(geo={}), None, values={"geo": {"city": None}}),
    "a large amount in EUR": Case(payment(amount=1500, currency="EUR"), None),
    "a merchant of 64 characters beyond the BMP": Case(payment(merchant="😀" * 64), None),
    # nothing coerced
    "quoted amount": Case(
        payment(amount="12.5"),
        "wrong_type",
        "'amount' must be a DOUBLE (a JSON number), got the string \"12.5\"",
    ),
    "boolean amount": Case(
        payment(amount=True), "wrong_type", "'amount' must be a DOUBLE (a JSON number), got true"
    ),
    "amount beyond a DOUBLE": Case(
        '{"account": "a1", "at": "2026-01-01T12:00:00Z", "amount": 1e400}',
        "wrong_type",
        "'amount' must be a DOUBLE (a JSON number), got the number 1e400, beyond a DOUBLE's range",
    ),
    "numeric currency": Case(
        payment(currency=978),
        "wrong_type",
        "'currency' must be a STRING (a JSON string), got the number 978",
    ),
    "epoch milliseconds for a TIMESTAMP": Case(
        payment(at=NOON_MS),
        "wrong_type",
        "'at' must be a TIMESTAMP (a JSON string, an ISO-8601 time with a zone), got the number "
        f"{NOON_MS}",
    ),
    "text for a struct": Case(
        payment(geo="Paris"),
        "wrong_type",
        "'geo' must be a STRUCT<city: STRING> (a JSON object), got the string \"Paris\"",
    ),
    "a number inside the struct": Case(
        payment(geo={"city": 5}),
        "wrong_type",
        "'geo.city' must be a STRING (a JSON string), got the number 5",
    ),
    # event times
    "zone-less time": Case(
        payment(at="2026-01-01T12:00:00"),
        "invalid_timestamp",
        f"'at' \"2026-01-01T12:00:00\" {NOT_ISO}",
    ),
    "no such day": Case(
        payment(at="2026-02-30T00:00:00Z"),
        "invalid_timestamp",
        f"'at' \"2026-02-30T00:00:00Z\" {NOT_ISO}",
    ),
    "time before earliest_event_time": Case(
        payment(at="1999-12-31T23:59:59Z"),
        "invalid_timestamp",
        "'at' is 1999-12-31T23:59:59.000Z, before validation.earliest_event_time "
        "2000-01-01T00:00:00Z: set validation.earliest_event_time earlier (or 'off') if such "
        "times are real",
    ),
    "time ahead of the clock": Case(
        payment(at="2999-01-01T12:00:00Z"),
        "timestamp_in_future",
        "'at' 2999-01-01 12:00:00 is more than 3600000 ms ahead of ingestion time",
    ),
    "no amount": Case(payment(amount=DROP), "missing_field", "required field 'amount' is missing"),
    "null amount": Case(payment(amount=None), "missing_field", "required field 'amount' is null"),
    "no time": Case(payment(at=DROP), "missing_field", "time field 'at' is missing"),
    # each check, naming its field
    "negative amount": Case(
        payment(amount=-1), "out_of_range", "'amount' -1.0 is below the minimum 0"
    ),
    "country not allowed": Case(
        payment(country="IT"), "not_allowed", '\'country\' "IT" is not one of "FR", "DE", "ES"'
    ),
    "allowed values are matched exactly": Case(
        payment(country="fr"), "not_allowed", '\'country\' "fr" is not one of "FR", "DE", "ES"'
    ),
    "merchant too long": Case(
        payment(merchant="m" * 65), "too_long", "'merchant' has 65 characters, over max_length 64"
    ),
    "lower-case currency": Case(
        payment(currency="eur"),
        "pattern_mismatch",
        "'currency' eur does not match the pattern '[A-Z]{3}'",
    ),
    "the pattern matches the whole value": Case(
        payment(currency="EURO"),
        "pattern_mismatch",
        "'currency' EURO does not match the pattern '[A-Z]{3}'",
    ),
    "checks in declared order": Case(
        payment(amount=-1, country="IT"), "out_of_range", "'amount' -1.0 is below the minimum 0"
    ),
    # the rule
    "a large amount in USD": Case(
        payment(amount=1500, currency="USD"),
        "rule_failed",
        "rule 'large_amounts_in_eur' failed: amount < 1000 OR currency = 'EUR'",
    ),
    "a large amount without a currency": Case(
        payment(amount=1500),
        "rule_failed",
        "rule 'large_amounts_in_eur' is null (a value it reads is null): amount < 1000 OR "
        "currency = 'EUR'",
    ),
    "checks before rules": Case(
        payment(amount=1500, currency="USD", country="IT"),
        "not_allowed",
        '\'country\' "IT" is not one of "FR", "DE", "ES"',
    ),
    # the key, the bytes, the size
    "empty account": Case(
        payment(account=""), "invalid_key", "the key 'account' is empty or only whitespace"
    ),
    "a problem the reader finds before the key": Case(
        payment(account=" ", at="x"), "invalid_timestamp", f"'at' \"x\" {NOT_ISO}"
    ),
    "latin-1 merchant": Case(
        b'{"account": "a1", "at": "2026-01-01T12:00:00Z", "amount": 1, "merchant": "caf\xe9"}',
        "invalid_utf8",
        "record is not valid UTF-8 text, so it is not JSON and its key could not be told apart "
        "from another's; raw holds its exact bytes in base64",
    ),
    "record over max_record_bytes": Case(
        LARGE,
        "record_too_large",
        f"record is {len(LARGE.encode())} bytes, over max_record_bytes 65536",
    ),
    "malformed": Case(
        '{"account":"a1",', "malformed_json", "record ends inside its JSON object (cut short?)"
    ),
}


@pytest.fixture(scope="module")
def validated(spark: Any) -> dict[str, Outcome]:
    return named_outcomes(
        spark,
        [
            (PAGEVIEWS, {name: case.record for name, case in PAGEVIEW_CASES.items()}),
            (PAYMENTS, {name: case.record for name, case in PAYMENT_CASES.items()}),
        ],
    )


def _check(outcome: Outcome, case: Case) -> None:
    assert (outcome.reason, outcome.detail) == (case.reason, case.detail)
    assert {name: outcome.values[name] for name in case.values} == case.values
    if case.ts_ms is not None:
        assert outcome.ts_ms == case.ts_ms
    if case.reason is None:
        assert outcome.key and outcome.ts_ms is not None and not outcome.is_tick


@pytest.mark.parametrize("name", list(PAGEVIEW_CASES))
def test_a_pageview_is_an_event_of_its_declared_types_or_has_one_reason(validated, name):
    _check(validated[name], PAGEVIEW_CASES[name])


@pytest.mark.parametrize("name", list(PAYMENT_CASES))
def test_a_payment_is_an_event_of_its_declared_types_or_has_one_reason(validated, name):
    _check(validated[name], PAYMENT_CASES[name])


def test_the_cases_give_every_reason_validation_has():
    reasons = {c.reason for c in [*PAGEVIEW_CASES.values(), *PAYMENT_CASES.values()]}
    assert reasons == {None, *VALIDATION_REASONS}


def test_every_reason_the_engine_s_reader_gives_is_one_python_knows(spark):
    assert set(spark._jvm.io.streamwarden.engine.json.RecordReader.reasons()) <= set(Reason)


def test_a_record_keeps_its_text_its_size_and_its_key_as_text(validated):
    typed = validated["typed"]
    assert (typed.raw, typed.size, typed.key) == (
        PAGEVIEW_CASES["typed"].record,
        len(PAGEVIEW_CASES["typed"].record),
        "a",
    )
    assert validated["non-ascii text"].size == len(PAGEVIEW_CASES["non-ascii text"].record.encode())


def test_an_integer_time_is_epoch_time_in_time_unit_and_the_field_keeps_what_was_sent(spark):
    def schema(unit: str, kind: str = "BIGINT") -> Schema:
        return Schema(key="id", time="ts", time_unit=unit, fields=f"id STRING, ts {kind}")

    sent = {
        ("s", "BIGINT"): MS // 1000,
        ("s", "INT"): MS // 1000,
        ("ms", "BIGINT"): MS,
        ("us", "BIGINT"): MS * 1000 + 999,
    }
    groups = [
        (schema(unit, kind), records_frame(spark, [json.dumps({"id": "a", "ts": ts})]))
        for (unit, kind), ts in sent.items()
    ]
    read = [(o.values["ts"], o.ts_ms, o.reason) for [o] in outcomes_of(groups)]
    assert read == [
        (MS // 1000, MS // 1000 * 1000, None),
        (MS // 1000, MS // 1000 * 1000, None),
        (MS, MS, None),
        (MS * 1000 + 999, MS, None),  # the floor of the millisecond
    ]


def test_earliest_event_time_can_be_moved_or_turned_off(spark):
    seconds = [pageview(ts=MS // 1000)]
    off = outcomes(spark, PAGEVIEWS, seconds, ValidationConfig(earliest_event_time="off"))
    assert (off[0].reason, off[0].ts_ms) == (None, MS // 1000)
    [moved] = outcomes(
        spark,
        PAGEVIEWS,
        [pageview()],
        ValidationConfig(earliest_event_time="2026-06-01T02:00+02:00"),
    )
    assert moved.reason == "invalid_timestamp"
    assert "before validation.earliest_event_time 2026-06-01T00:00:00Z" in moved.detail


def test_only_rows_of_the_tick_source_are_ticks_whatever_a_landing_record_carries(spark):
    tick = json.dumps({TICK_FIELD: str(MS)})
    lookalike = pageview(**{TICK_FIELD: MS + 1})
    rows = outcomes(
        spark,
        PAGEVIEWS,
        [tick, tick, lookalike, pageview()],
        columns={TICK_SOURCE: ("boolean", [True, False, False, None])},
    )
    assert [(o.is_tick, o.reason, o.ts_ms) for o in rows] == [
        (True, None, MS),  # the ticker's own record: it passes, marked
        (False, "missing_field", None),  # the same record dropped into the landing folder
        (False, None, MS),  # a pageview with the field: an event at its own time
        (False, None, MS),
    ]


def test_a_tick_passes_even_when_set_aside(spark):
    tick = json.dumps({TICK_FIELD: MS})
    [row] = outcomes(
        spark,
        PAGEVIEWS,
        [tick],
        columns={TICK_SOURCE: ("boolean", [True]), QUARANTINED: ("string", ["threw"])},
    )
    assert (row.is_tick, row.reason, row.ts_ms) == (True, None, MS)


def test_a_record_the_supervisor_set_aside_is_poison_with_its_detail_and_position(spark):
    rows = outcomes(
        spark,
        PAGEVIEWS,
        [pageview(), pageview(), "{"],
        columns={
            QUARANTINED: ("string", ["the engine threw on it", None, "threw"]),
            SOURCE_POSITION: ("string", ["topic t partition 0 offset 3", None, None]),
        },
    )
    assert [(o.reason, o.detail) for o in rows] == [
        ("poison", "the engine threw on it (at topic t partition 0 offset 3)"),
        (None, None),
        ("poison", "threw"),  # set aside, whatever else is wrong with it
    ]


def test_the_source_s_time_and_key_win_over_the_record_s_fields(spark):
    records = [
        pageview(user_id="from record", ts=1),
        pageview(user_id=DROP, ts=DROP),  # neither is required when the source gives them
        pageview(user_id="from record", ts=1),  # no key from the source: the record's
        "{",
    ]
    columns = {
        SOURCE_TIME: ("bigint", [MS, MS + 1, MS + 2, MS + 3]),
        SOURCE_KEY: ("string", ["k1", "k2", None, "k4"]),
        SOURCE_POSITION: ("string", [None, None, None, "topic t partition 2 offset 9"]),
    }
    rows = outcomes(spark, PAGEVIEWS, records, columns=columns)
    assert [(o.values["user_id"], o.values["ts"], o.key, o.ts_ms, o.reason) for o in rows[:3]] == [
        ("k1", MS, "k1", MS, None),
        ("k2", MS + 1, "k2", MS + 1, None),
        ("from record", MS + 2, "from record", MS + 2, None),
    ]
    assert rows[3].detail == (
        "record ends inside its JSON object (cut short?) (at topic t partition 2 offset 9)"
    )
    [paid] = outcomes(
        spark,
        PAYMENTS,
        [payment(at=DROP)],
        columns={SOURCE_TIME: ("bigint", [NOON_MS + 5])},
    )
    assert (paid.reason, paid.values["at"], paid.ts_ms) == (
        None,
        (NOON_MS + 5) * 1000,
        NOON_MS + 5,
    )


@pytest.mark.parametrize(
    ("check", "complaint"),
    [
        ("amount <", "is not valid Spark SQL over the declared fields"),
        ("amuont > 1", "is not valid Spark SQL over the declared fields"),
        ("amount + 1", "gives a DOUBLE, not a BOOLEAN"),
    ],
)
def test_a_rule_that_is_not_a_spark_sql_condition_is_refused_naming_it(spark, check, complaint):
    schema = Schema(**{**PAYMENTS.model_dump(), "rules": [{"name": "sanity", "check": check}]})
    frame = records_frame(spark, [payment()])
    with pytest.raises(ConfigError) as refused:
        validate_records(frame, schema)
    assert str(refused.value).startswith(f"schema.rules 'sanity' ({check}) {complaint}")


def test_validate_splits_events_from_dead_letters(spark):
    records = spark.createDataFrame(
        [(payment(geo={"city": "Paris"}),), (payment(amount=-5),), ("nope",)], "value string"
    )
    checked = validate(records, PAYMENTS)
    events = checked.events.withColumn("at", F.unix_millis("at")).collect()
    assert [e.asDict(recursive=True) for e in events] == [
        {
            "account": "a1",
            "at": NOON_MS,
            "amount": 12.5,
            "currency": None,
            "merchant": None,
            "country": None,
            "geo": {"city": "Paris"},
        }
    ]
    dead = checked.dead_letters.drop("ingest_time", "event_time").collect()
    assert [d.asDict() for d in dead] == [
        {
            "raw": payment(amount=-5),
            "reason": "out_of_range",
            "detail": "'amount' -5.0 is below the minimum 0",
            "key": "a1",
        },
        {
            "raw": "nope",
            "reason": "malformed_json",
            "detail": "record is not a JSON object (it starts with 'n')",
            "key": None,
        },
    ]


def test_validate_refuses_what_is_not_a_frame_of_records(spark):
    with pytest.raises(UsageError, match="records need a column 'raw' or 'value'"):
        validate(spark.createDataFrame([("x",)], "text string"), PAYMENTS)
    with pytest.raises(UsageError, match="records must be a Spark DataFrame"):
        validate([payment()], PAYMENTS)  # type: ignore[arg-type]


# --- defects found while writing this specification, fixed -----------------------------------


def test_a_pattern_matches_the_whole_value_not_up_to_a_final_line_break(spark):
    rows = outcomes(
        spark, PAYMENTS, [payment(currency=c) for c in ("EUR\n", "EUR\r\n", "EUR\u2028")]
    )
    assert [o.reason for o in rows] == ["pattern_mismatch"] * 3


def test_a_check_whose_pattern_or_allowed_values_hold_a_percent_sign_reports_it(spark):
    schema = Schema(
        key="id",
        time="at",
        fields="id STRING, at TIMESTAMP, discount STRING, code STRING",
        checks={"discount": {"allowed": ["10%", "20%"]}, "code": {"pattern": "[0-9]{1,2}%"}},
    )
    records = [
        json.dumps({"id": "a", "at": NOON, "discount": "30%"}),
        json.dumps({"id": "a", "at": NOON, "code": "x"}),
    ]
    rows = outcomes(spark, schema, records)
    assert [(o.reason, o.detail) for o in rows] == [
        ("not_allowed", '\'discount\' "30%" is not one of "10%", "20%"'),
        ("pattern_mismatch", "'code' x does not match the pattern '[0-9]{1,2}%'"),
    ]


def test_a_pattern_java_cannot_run_is_refused_before_the_query_starts(spark):
    with pytest.raises((ValueError, ConfigError)):
        schema = Schema(
            key="id",
            time="at",
            fields="id STRING, at TIMESTAMP, currency STRING",
            checks={"currency": {"pattern": "(?P<code>[A-Z]{3})"}},
        )
        outcomes(spark, schema, [json.dumps({"id": "a", "at": NOON, "currency": "EUR"})])


def test_a_rule_that_raises_on_a_record_fails_that_record(spark):
    schema = Schema(
        **{**PAYMENTS.model_dump(), "rules": [{"name": "fee", "check": "100 / amount < 50"}]}
    )
    [row] = outcomes(spark, schema, [payment(amount=0)])
    assert row.reason == "rule_failed"


def test_validate_takes_a_schema_whose_fields_are_named_like_its_columns(spark):
    schema = Schema(key="key", time="at", fields="key STRING, at TIMESTAMP, reason STRING")
    records = spark.createDataFrame(
        [(json.dumps({"key": "k", "at": NOON, "reason": "r"}),)], "raw string"
    )
    checked = validate(records, schema)
    assert [e["reason"] for e in checked.events.collect()] == ["r"]


def test_a_null_record_is_malformed(spark):
    [row] = outcomes(spark, PAYMENTS, [None])
    assert row.reason == "malformed_json"
