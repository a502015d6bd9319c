"""Property-based fuzzing of raw records through the real validation (``validate_records``, the
engine's reader and the Spark SQL checks; no copy of either), for two declared schemas:
pageviews (an epoch-milliseconds BIGINT time) and payments (an ISO-8601 TIMESTAMP, a nested
struct, a check of each kind, a rule). Random bytes, random JSON values and shapes, records of
each schema more or less right, huge strings, deep nesting, extreme and malformed times, Unicode.

Properties, for every record: it comes out exactly once, either valid or with one known reason
and a detail (naming the field or rule when the reason is about one); its ``raw`` is the record
as sent (its bytes in base64 when it is not UTF-8, and only then). An oracle, Python's own JSON
reader made strict (no duplicate names, no NaN, no unpaired surrogates), decides what a record
is: what it refuses must be rejected as not JSON; an object it reads as a well-formed record of
the schema (each value of exactly the declared JSON type, as the reader's rules say, and every
check and rule passing) must be accepted with the same values; and one it can tell breaks a
type, a check or the rule must be rejected.

Hypothesis draws the records (one example, one record); they are then validated together, both
schemas in one Spark job per few thousand records, so that a budget of thousands of cases stays
cheap. The property is per record, so the record a failure names is itself the counterexample.
The default suite tries a small budget; ``make soak`` a large one. Each run prints how many
cases it tried.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamwarden.schema import Schema
from streamwarden.validation import Reason
from streamwarden.validation.settings import ValidationConfig
from streamwarden.validation.validate import MAX_EVENT_MS, MIN_EVENT_MS
from tests.validation.outcomes import PAGEVIEWS, PAYMENTS, Outcome, outcomes_of, records_frame

pytestmark = pytest.mark.spark

#: The clock's future check is off: whether a time is ahead of it depends on when the suite runs.
RULES = ValidationConfig(max_future_skew=None)
assert RULES.earliest_event_time is not None
EARLIEST_MS = int(RULES.earliest_event_time.timestamp() * 1000)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
VALIDATION_REASONS = {
    Reason.RECORD_TOO_LARGE,
    Reason.INVALID_UTF8,
    Reason.MALFORMED_JSON,
    Reason.MISSING_FIELD,
    Reason.WRONG_TYPE,
    Reason.INVALID_TIMESTAMP,
    Reason.INVALID_KEY,
    Reason.OUT_OF_RANGE,
    Reason.NOT_ALLOWED,
    Reason.TOO_LONG,
    Reason.PATTERN_MISMATCH,
    Reason.RULE_FAILED,
}
NOT_JSON = {Reason.RECORD_TOO_LARGE, Reason.INVALID_UTF8, Reason.MALFORMED_JSON}
#: Reasons about one field, whose detail names it.
ABOUT_A_FIELD = VALIDATION_REASONS - NOT_JSON - {Reason.RULE_FAILED}

# --- what the records are made of -------------------------------------------------------------

texts = st.one_of(
    st.text(max_size=30),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=30),
    st.sampled_from(["", " ", "\t", "\u0000u", "名前-é", "\U0001f600", "x" * 300]),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
#: Text for a key: never empty, mostly not only white space.
some_text = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=20)
keys = st.one_of(
    texts,
    st.sampled_from(["a", "u-1", "名前", " ", "\u3000", "\n\u00a0", "k" * 256, "k" * 257]),
)

_edges = [MIN_EVENT_MS - 1, MIN_EVENT_MS, MAX_EVENT_MS, MAX_EVENT_MS + 1, -(2**63), 2**63 - 1]
epoch_ms = st.one_of(
    st.integers(min_value=0, max_value=4_102_444_800_000),  # 1970 .. 2100
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([*_edges, EARLIEST_MS - 1, EARLIEST_MS]),
    st.integers(min_value=2**63, max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["1795491000000", "-1", "1e12", "", "2026-11-24T03:33:00Z"]),
    st.text(max_size=40),
)
_zones = [UTC, timezone(timedelta(hours=1)), timezone(-timedelta(hours=5, minutes=30))]


def _iso(moment: datetime, spec: str, zulu: bool) -> str:
    text = moment.isoformat(timespec=spec)
    return text.replace("+00:00", "Z") if zulu else text


iso_times = st.one_of(
    st.builds(
        _iso,
        st.datetimes(
            min_value=datetime(1990, 1, 1),
            max_value=datetime(2100, 1, 1),
            timezones=st.sampled_from(_zones),
        ),
        st.sampled_from(["seconds", "milliseconds", "microseconds"]),
        st.booleans(),
    ),
    st.sampled_from(
        [
            "2026-11-24T03:33:00.123456789Z",
            "2026-11-24T03:33:00+0000",
            "2026-11-24T03:35Z",
            "20261124T033300Z",
            "2026-11-24T03:33:00",
            "2026-02-30T00:00:00Z",
            "2026-11-24T23:59:60Z",
            "9999-12-31T23:59:59.999999Z",
            "0001-01-01T00:00:00+01:00",
            "0000-01-01T00:00:00Z",
            "1999-12-31T23:59:59.999999Z",
            "1795491000000",
            "",
        ]
    ),
    st.integers(min_value=0, max_value=4_102_444_800_000),
    st.text(max_size=40),
)
amounts = st.one_of(
    st.floats(),
    st.integers(),
    st.sampled_from([0, -0.0, 999.99, 1000, 1500, 1e308, 5e-324, -1]),
    texts,
)

pageviews = st.one_of(
    st.fixed_dictionaries(  # right, but by chance
        {
            "user_id": some_text,
            "ts": st.integers(EARLIEST_MS, 4_102_444_800_000),
            "page_number": st.integers(1, 300),
        },
        optional={"url": st.one_of(texts, st.none()), "extra": json_values},
    ),
    st.fixed_dictionaries(  # mostly right
        {"user_id": keys, "ts": epoch_ms, "page_number": st.integers(-5, 400)},
        optional={"url": st.one_of(texts, st.none()), "extra": json_values},
    ),
    st.fixed_dictionaries(  # anything goes
        {},
        optional={
            "user_id": st.one_of(keys, st.integers(), json_values),
            "ts": st.one_of(epoch_ms, json_values),
            "page_number": st.one_of(st.integers(), json_values, texts),
            "url": st.one_of(texts, json_values),
            "extra": json_values,
        },
    ),
)
_geo = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={"city": st.one_of(texts, st.none()), "zip": json_values}),
    json_values,
)
_payment_parts = {
    "currency": st.one_of(
        st.sampled_from(["EUR", "USD", "eur", "EURO", "E1R", ""]), texts, json_values
    ),
    "merchant": st.one_of(texts, st.sampled_from(["m" * 64, "m" * 65, "😀" * 64, "😀" * 65])),
    "country": st.one_of(st.sampled_from(["FR", "DE", "ES", "IT", "fr", ""]), json_values),
    "geo": _geo,
    "extra": json_values,
}
payments = st.one_of(
    st.fixed_dictionaries(  # right, but by chance
        {
            "account": some_text,
            "at": st.builds(
                _iso,
                st.datetimes(
                    min_value=datetime(2000, 1, 2),
                    max_value=datetime(2100, 1, 1),
                    timezones=st.sampled_from(_zones),
                ),
                st.sampled_from(["seconds", "milliseconds", "microseconds"]),
                st.booleans(),
            ),
            "amount": st.one_of(st.floats(0, 999.99), st.integers(0, 999)),
        },
        optional={
            "currency": st.sampled_from(["EUR", "USD", "GBP"]),
            "merchant": st.text(max_size=64),
            "country": st.sampled_from(["FR", "DE", "ES"]),
            "geo": st.fixed_dictionaries({}, optional={"city": texts, "zip": json_values}),
            "extra": json_values,
        },
    ),
    st.fixed_dictionaries(  # mostly right
        {"account": keys, "at": iso_times, "amount": amounts}, optional=_payment_parts
    ),
    st.fixed_dictionaries(  # anything goes
        {},
        optional={
            "account": st.one_of(keys, st.integers(), json_values),
            "at": st.one_of(iso_times, json_values),
            "amount": st.one_of(amounts, json_values),
            **_payment_parts,
        },
    ),
)


def _encode(value: Any, ascii_only: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only, allow_nan=True).encode(
        "utf-8", "surrogatepass"
    )


def _with_field(record: dict[str, Any], value_text: str) -> bytes:
    """The record with one more field (not declared), whose JSON text is ``value_text``."""
    text = json.dumps(record)
    return (text[:-1] + (", " if record else "") + '"pad": ' + value_text + "}").encode()


def records_of(objects: st.SearchStrategy[dict[str, Any]], base: dict[str, Any]) -> Any:
    """Raw records around ``objects`` (records of a schema, more or less right) and ``base`` (a
    valid record of it): the objects themselves, broken in every way, and what is no object."""
    broken = st.one_of(
        st.binary(max_size=200),  # random bytes
        st.builds(_encode, json_values, st.booleans()),  # any JSON value
        st.builds(
            lambda a, b, sep: a + sep + b,
            st.builds(_encode, objects, st.just(True)),
            st.builds(_encode, json_values, st.just(True)),
            st.sampled_from([b"", b" ", b"\n", b"x"]),
        ),  # two values on one line
        st.builds(
            lambda r, i, b: r[:i] + b + r[i:],
            st.builds(_encode, objects, st.booleans()),
            st.integers(0, 60),
            st.binary(min_size=1, max_size=3),
        ),  # bytes spliced in
        st.builds(
            lambda depth: _with_field(base, "[" * depth + "]" * depth),
            st.sampled_from([1, 50, 200, 998, 999, 1000, 5000]),
        ),  # deep nesting
        st.builds(
            lambda n: _with_field(base, '"' + "y" * n + '"'),
            st.sampled_from([60_000, 65_440, 65_600, 300_000]),
        ),  # huge strings, around max_record_bytes
        st.sampled_from(
            [b"", b" \t ", b"   ", b"{}", b"{'user_id': 'q'}", b'{"a":1}x', b'\xef\xbb\xbf{"a":1}']
        ),
    )
    # the objects themselves half of the time (a nested one_of would be flattened into one)
    whole = st.builds(_encode, objects, st.booleans())
    return st.booleans().flatmap(lambda as_they_are: whole if as_they_are else broken)


# --- the oracle --------------------------------------------------------------------------------


class _NotJson(Exception):
    pass


def _strict_object(raw: bytes) -> dict[str, Any] | None:
    """The record read by Python's JSON reader made strict, or None when that reader cannot
    tell (nesting deeper than it recurses); raises _NotJson for what is not one JSON object."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        names = [name for name, _ in items]
        if len(set(names)) != len(names):
            raise _NotJson("a name twice")
        return dict(items)

    def constant(name: str) -> Any:
        raise _NotJson(name)

    try:
        text = raw.decode("utf-8")
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
        _check_unicode(value)
    except RecursionError:
        return None
    except (UnicodeError, ValueError) as exc:
        raise _NotJson(str(exc)) from None
    if not isinstance(value, dict):
        raise _NotJson("not an object")
    return value


def _check_unicode(value: Any) -> None:
    """Unpaired surrogates (``"\\ud800"``) decode in Python but are not Unicode text."""
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, list):
        for item in value:
            _check_unicode(item)
    elif isinstance(value, dict):
        for name, item in value.items():
            _check_unicode(name)
            _check_unicode(item)


#: Unicode's White_Space property: what the key check's ``(?U)\s`` (Java) matches; a key of
#: only these is invalid.
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
)
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})")


class Unknown(Exception):
    """The oracle cannot tell (a time text outside the ISO-8601 forms it reads itself)."""


class Refused(Exception):
    """The record breaks a type, a check or the rule: it must be rejected."""


def _key(value: Any) -> str:
    if not isinstance(value, str):
        raise Refused("key")
    if set(value) <= WHITE_SPACE or "\u0000" in value or len(value) > RULES.max_key_length:
        raise Refused("key")
    return value


def _integer(value: Any, low: int, high: int) -> int:
    """A JSON integer (never 2.0, 1e3, true, "2") from ``low`` to ``high``."""
    if type(value) is not int or not low <= value <= high:
        raise Refused("integer")
    return value


def _optional_text(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise Refused("text")
    return value


def _in_event_range(ms: int) -> None:
    if not max(MIN_EVENT_MS, EARLIEST_MS) <= ms <= MAX_EVENT_MS:
        raise Refused("time")


def pageview_values(record: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The values and event time a pageview must be read to; raises Refused."""
    user = _key(record.get("user_id"))
    ts = _integer(record.get("ts"), -(2**63), 2**63 - 1)
    _in_event_range(ts)
    page = _integer(record.get("page_number"), -(2**31), 2**31 - 1)
    url = _optional_text(record.get("url"))
    if not 1 <= page <= 300:
        raise Refused("page_number")
    return {"user_id": user, "ts": ts, "page_number": page, "url": url}, ts


def _timestamp_micros(value: Any) -> int:
    if not isinstance(value, str):
        raise Refused("at")
    if not _ISO.fullmatch(value):
        raise Unknown(value)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise Unknown(value) from None
    micros = (moment - EPOCH) // timedelta(microseconds=1)
    _in_event_range(micros // 1000)
    return micros


def payment_values(record: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The values and event time a payment must be read to; raises Refused or Unknown. The
    fields are judged in declared order, an Unknown time giving way to a later Refused."""
    account = _key(record.get("account"))
    try:
        at: int | None = _timestamp_micros(record.get("at"))
    except Unknown:
        at = None
    amount = record.get("amount")
    if type(amount) not in (int, float):
        raise Refused("amount")
    try:
        amount = float(amount)
    except OverflowError:
        raise Refused("amount") from None
    currency = _optional_text(record.get("currency"))
    merchant = _optional_text(record.get("merchant"))
    country = _optional_text(record.get("country"))
    geo = record.get("geo")
    if geo is not None and not isinstance(geo, dict):
        raise Refused("geo")
    city = None if geo is None else _optional_text(geo.get("city"))
    if (
        not math.isfinite(amount)
        or amount < 0
        or (country is not None and country not in ("FR", "DE", "ES"))
        or (merchant is not None and len(merchant) > 64)
        or (currency is not None and not re.fullmatch("[A-Z]{3}", currency))
        or not (amount < 1000 or currency == "EUR")
    ):
        raise Refused("a check or the rule")
    if at is None:
        raise Unknown(record.get("at"))
    values = {
        "account": account,
        "at": at,
        "amount": amount,
        "currency": currency,
        "merchant": merchant,
        "country": country,
        "geo": None if geo is None else {"city": city},
    }
    return values, at // 1000


@dataclass(frozen=True)
class Target:
    """A schema under fuzzing: how its records are drawn and what the oracle expects of one."""

    name: str
    schema: Schema
    records: Any
    expected: Callable[[dict[str, Any]], tuple[dict[str, Any], int]]
    #: what a detail of a reason about one field or rule names, one of them
    named: tuple[str, ...]


TARGETS = (
    Target(
        "pageviews",
        PAGEVIEWS,
        records_of(pageviews, {"user_id": "d", "ts": 1_795_491_180_000, "page_number": 1}),
        pageview_values,
        ("'user_id'", "'ts'", "'page_number'", "'url'"),
    ),
    Target(
        "payments",
        PAYMENTS,
        records_of(payments, {"account": "d", "at": "2026-11-24T03:33:00Z", "amount": 1}),
        payment_values,
        (
            "'account'",
            "'at'",
            "'amount'",
            "'currency'",
            "'merchant'",
            "'country'",
            "'geo'",
            "'geo.city'",
            "rule 'large_amounts_in_eur'",
        ),
    ),
)


def check(target: Target, raw: bytes, row: Outcome) -> None:
    """Every property of one record's outcome."""
    reason, detail = row.reason, row.detail
    assert row.is_tick is False
    if reason is None:
        assert row.key and detail is None
        assert row.ts_ms is not None and max(MIN_EVENT_MS, EARLIEST_MS) <= row.ts_ms <= MAX_EVENT_MS
    else:
        assert reason in VALIDATION_REASONS and detail
    if reason in ABOUT_A_FIELD or reason == Reason.RULE_FAILED:
        assert any(name in detail for name in target.named), detail
    if not _is_utf8(raw):  # its own reason, and its exact bytes kept
        assert reason == Reason.INVALID_UTF8 and base64.b64decode(row.raw) == raw
        return
    assert row.raw == raw.decode("utf-8")
    if len(raw) > RULES.max_record_bytes:
        assert reason == Reason.RECORD_TOO_LARGE
        return
    try:
        parsed = _strict_object(raw)
    except _NotJson:
        assert reason in NOT_JSON, (reason, detail)
        return
    if parsed is None:
        return
    assert reason not in NOT_JSON, detail
    try:
        values, ts_ms = target.expected(parsed)
    except Refused as refused:
        assert reason is not None, f"accepted, but the oracle refuses its {refused}"
        return
    except Unknown:
        return
    assert reason is None, detail
    assert (row.values, row.ts_ms, row.key) == (values, ts_ms, values[target.schema.key])


# --- the run -------------------------------------------------------------------------------------


def collect(records: Any, budget: int) -> list[bytes]:
    """``budget`` records drawn by Hypothesis (fewer if it runs out of distinct ones)."""
    drawn: list[bytes] = []

    @settings(
        max_examples=budget,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(records)
    def draw(raw: bytes) -> None:
        drawn.append(raw)

    draw()
    return drawn


def fuzz(spark: Any, budget: int, per_job: int = 5_000) -> dict[str, int]:
    """Validates ``budget`` drawn records of each target, ``per_job`` of each per Spark job (all
    targets in the job); returns the cases tried per target."""
    drawn = {t.name: collect(t.records, budget) for t in TARGETS}
    for start in range(0, budget, per_job):
        chunks = [drawn[t.name][start : start + per_job] for t in TARGETS]
        results = outcomes_of(
            [
                (t.schema, records_frame(spark, chunk))
                for t, chunk in zip(TARGETS, chunks, strict=True)
            ],
            RULES,
        )
        for target, chunk, rows in zip(TARGETS, chunks, results, strict=True):
            assert len(rows) == len(chunk)  # nothing dropped, nothing doubled
            for raw, row in zip(chunk, rows, strict=True):
                try:
                    check(target, raw, row)
                except AssertionError as exc:
                    raise AssertionError(
                        f"{target.name} record {raw[:300]!r} -> {row}: {exc}"
                    ) from None
    return {name: len(records) for name, records in drawn.items()}


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _report(capsys: pytest.CaptureFixture[str], cases: dict[str, int], label: str) -> None:
    tried = ", ".join(f"{n} {name}" for name, n in cases.items())
    with capsys.disabled():
        print(f"\nfuzz ({label}): {tried} raw records through validation, every property held")


#: Cases the default suite tries per schema (the soak test below tries 40,000).
DEFAULT_BUDGET = 400


def test_fuzzed_records_each_end_in_exactly_one_place(spark, capsys):
    cases = fuzz(spark, budget=DEFAULT_BUDGET)
    _report(capsys, cases, "default budget")
    # Hypothesis may run out of distinct draws
    assert all(n >= DEFAULT_BUDGET * 9 // 10 for n in cases.values())


@pytest.mark.soak
def test_fuzzed_records_each_end_in_exactly_one_place_large_budget(spark, capsys):
    cases = fuzz(spark, budget=40_000)
    _report(capsys, cases, "soak budget")
    assert all(n >= 30_000 for n in cases.values())


def test_the_oracle_refuses_what_json_refuses():
    """The oracle itself: strict where Python's reader is lenient."""
    for raw in (b'{"a": 1, "a": 2}', b'{"a": NaN}', b'{"a": "\\ud800"}', b"[]", b"{} {}"):
        with pytest.raises(_NotJson):
            _strict_object(raw)
    assert _strict_object(b' {"a": [1, {"b": "\\ud83d\\ude00"}]} ') == {"a": [1, {"b": "😀"}]}
    assert math.isinf(json.loads("1e999"))  # a float, never an int: not a well-formed time


def test_the_oracle_reads_records_of_each_schema_by_the_reader_s_rules():
    """The oracle's own rules, on records whose fate test_validate states: exact JSON types,
    the checks and the rule; a time text it cannot read itself is left to the reader."""
    pageview = {"user_id": "a", "ts": 1_795_491_180_000, "page_number": 2}
    assert pageview_values(pageview) == ({**pageview, "url": None}, 1_795_491_180_000)
    for broken in ({"page_number": 2.0}, {"ts": "1795491180000"}, {"user_id": " "}, {"ts": 1}):
        with pytest.raises(Refused):
            pageview_values({**pageview, **broken})
    payment = {"account": "a", "at": "2026-11-24T04:33:00.5+01:00", "amount": 12}
    values, ts_ms = payment_values(payment)
    assert (values["at"], values["amount"], ts_ms) == (
        1_795_491_180_500_000,
        12.0,
        1_795_491_180_500,
    )
    for broken in ({"amount": True}, {"amount": 1500}, {"currency": "eur"}, {"geo": "Paris"}):
        with pytest.raises(Refused):
            payment_values({**payment, **broken})
    with pytest.raises(Unknown):
        payment_values({**payment, "at": "20261124T043300+01"})
    with pytest.raises(Refused):  # a value it can judge decides, whatever the time
        payment_values({**payment, "at": "20261124T043300+01", "country": "IT"})
