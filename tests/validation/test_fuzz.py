"""Property-based fuzzing of raw records through the real validation (``validate_records``,
compiled to Spark SQL with the engine's parser; no copy of it): random bytes, random JSON values
and shapes, huge strings, deep nesting, extreme and malformed times, unicode.

Properties, for every record: it comes out exactly once, either valid or with one known reason
and a detail; its ``raw`` is the record as sent (its bytes in base64 when it is not UTF-8, and
only then); a valid event has a user id, an in-range time and page. An oracle, Python's own JSON
reader made strict (no duplicate names, no NaN, no unpaired surrogates), decides what a record
is: what it refuses must be rejected as such, and a record it reads as a well-formed pageview
must be accepted with the same values.

Hypothesis draws the records (one example, one record); they are then validated together, in
one Spark job per few thousand, so that a budget of thousands of cases stays cheap. The property
is per record, so the record a failure names is itself the counterexample. The default suite
tries a small budget; ``make soak`` a large one. Each run prints how many cases it tried.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamwarden.validation import Reason, validate_records
from streamwarden.validation.settings import FieldNames, ValidationConfig
from streamwarden.validation.validate import MAX_EVENT_MS, MIN_EVENT_MS

pytestmark = pytest.mark.spark

RULES = ValidationConfig(max_future_skew=None)
VALIDATION_REASONS = {
    Reason.RECORD_TOO_LARGE,
    Reason.INVALID_UTF8,
    Reason.MALFORMED_JSON,
    Reason.MISSING_FIELD,
    Reason.WRONG_TYPE,
    Reason.INVALID_USER_ID,
    Reason.INVALID_TIMESTAMP,
    Reason.PAGE_NUMBER_OUT_OF_RANGE,
    Reason.PAGE_NUMBER_OVER_MAX,
}
NOT_JSON = {Reason.RECORD_TOO_LARGE, Reason.INVALID_UTF8, Reason.MALFORMED_JSON}

# --- what the records are made of -------------------------------------------------------------

_edges = [MIN_EVENT_MS - 1, MIN_EVENT_MS, MAX_EVENT_MS, MAX_EVENT_MS + 1, -(2**63), 2**63 - 1]
times = st.one_of(
    st.integers(min_value=0, max_value=4_102_444_800_000),  # 1970 .. 2100
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from(_edges),
    st.integers(min_value=2**63, max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [
            "2026-11-24T03:33:00.123456789Z",
            "2026-11-24T03:33:00+0000",
            "2026-11-24T03:35Z",
            "20261124T033300Z",
            "2026-11-24T03:33:00",
            "2026-02-30T00:00:00Z",
            "9999-12-31T23:59:59.999Z",
            "0000-01-01T00:00:00Z",
            "1795491000000",
            "-1",
            "1e12",
            "",
        ]
    ),
    st.text(max_size=40),
)
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
pageviews = st.fixed_dictionaries(
    {},
    optional={
        "user_id": st.one_of(texts, st.integers(), json_values),
        "ts": st.one_of(times, json_values),
        "page_number": st.one_of(
            st.integers(min_value=-5, max_value=400), st.integers(), json_values, texts
        ),
        "url": st.one_of(texts, json_values),
        "extra": json_values,
    },
)


def _nested(depth: int) -> bytes:
    text = '{"user_id": "d", "ts": 1, "page_number": 1, "n": ' + "[" * depth + "]" * depth + "}"
    return text.encode()


def _encode(value: Any, ascii_only: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only, allow_nan=True).encode(
        "utf-8", "surrogatepass"
    )


records = st.one_of(
    st.binary(max_size=200),  # random bytes
    st.builds(_encode, json_values, st.booleans()),  # any JSON value
    st.builds(_encode, pageviews, st.booleans()),  # pageview-shaped objects
    st.builds(
        lambda a, b, sep: a + sep + b,
        st.builds(_encode, pageviews, st.just(True)),
        st.builds(_encode, json_values, st.just(True)),
        st.sampled_from([b"", b" ", b"\n", b"x"]),
    ),  # two values on one line
    st.builds(
        lambda r, i, b: r[:i] + b + r[i:],
        st.builds(_encode, pageviews, st.booleans()),
        st.integers(0, 60),
        st.binary(min_size=1, max_size=3),
    ),  # bytes spliced in
    st.builds(_nested, st.sampled_from([1, 50, 200, 999, 1001, 5000])),  # deep nesting
    st.builds(
        lambda n: (
            '{"user_id": "h", "ts": 1, "page_number": 1, "url": "' + "y" * n + '"}'
        ).encode(),
        st.sampled_from([60_000, 65_490, 65_600, 300_000]),
    ),  # huge strings
    st.sampled_from([b"", b" \t ", b"   ", b"\xef\xbb\xbf{}", b"{'user_id': 'q'}"]),
)

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


#: Unicode's White_Space property: what the validation's ``(?U)\s`` (Java) matches; a user id of
#: only these is invalid.
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
)


def _well_formed_pageview(record: dict[str, Any]) -> bool:
    user, ts, page, url = (record.get(k) for k in ("user_id", "ts", "page_number", "url"))
    return (
        isinstance(user, str)
        and not set(user) <= WHITE_SPACE
        and "\u0000" not in user
        and len(user) <= RULES.max_user_id_length
        and type(ts) is int
        and MIN_EVENT_MS <= ts <= MAX_EVENT_MS
        and type(page) is int
        and 1 <= page <= RULES.max_pages
        and (url is None or isinstance(url, str))
    )


def check(raw: bytes, row: dict[str, Any]) -> None:
    """Every property of one record's outcome."""
    reason, detail = row["reason"], row["detail"]
    assert row["is_tick"] is False
    if reason is None:
        assert row["user_id"] and row["page_number"] is not None
        assert MIN_EVENT_MS <= row["ts_ms"] <= MAX_EVENT_MS
        assert 1 <= row["page_number"] <= RULES.max_pages
    else:
        assert reason in VALIDATION_REASONS and detail
    if not _is_utf8(raw):  # its own reason, and its exact bytes kept
        assert reason == Reason.INVALID_UTF8 and base64.b64decode(row["raw"]) == raw
        return
    assert row["raw"] == raw.decode("utf-8")
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
    if _well_formed_pageview(parsed):
        assert reason is None, detail
        assert (row["user_id"], row["ts_ms"], row["page_number"]) == (
            parsed["user_id"],
            parsed["ts"],
            parsed["page_number"],
        )


# --- the run -------------------------------------------------------------------------------------


def collect(budget: int) -> list[bytes]:
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


def fuzz(spark: Any, budget: int, per_job: int = 5_000) -> int:
    """Validates ``budget`` drawn records, ``per_job`` per Spark job; returns the cases tried."""
    drawn = collect(budget)
    for start in range(0, len(drawn), per_job):
        chunk = drawn[start : start + per_job]
        frame = spark.createDataFrame(
            [(i, bytearray(raw)) for i, raw in enumerate(chunk)], "i int, b binary"
        ).selectExpr("i", "cast(b as string) as raw")
        out = validate_records(frame.select("raw"), FieldNames(), RULES)
        rows = [r.asDict() for r in out.collect()]
        assert len(rows) == len(chunk)  # nothing dropped, nothing doubled
        by_raw: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            by_raw.setdefault(row["raw"], []).append(row)
        for raw in chunk:
            shown = raw.decode() if _is_utf8(raw) else base64.b64encode(raw).decode()
            candidates = by_raw.get(shown)
            assert candidates, f"record {raw[:200]!r} has no outcome; left: " + repr(
                [(r["reason"], r["raw"][:80]) for rs in by_raw.values() for r in rs][:5]
            )
            row = candidates.pop()
            try:
                check(raw, row)
            except AssertionError as exc:
                raise AssertionError(f"record {raw[:300]!r} -> {row}: {exc}") from None
    return len(drawn)


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _report(capsys: pytest.CaptureFixture[str], cases: int, label: str) -> None:
    with capsys.disabled():
        print(f"\nfuzz ({label}): {cases} raw records through validation, every property held")


#: Cases the default suite tries (the soak test below tries 40,000).
DEFAULT_BUDGET = 400


def test_fuzzed_records_each_end_in_exactly_one_place(spark, capsys):
    cases = fuzz(spark, budget=DEFAULT_BUDGET)
    _report(capsys, cases, "default budget")
    assert cases >= DEFAULT_BUDGET * 9 // 10  # Hypothesis may run out of distinct draws


@pytest.mark.soak
def test_fuzzed_records_each_end_in_exactly_one_place_large_budget(spark, capsys):
    cases = fuzz(spark, budget=40_000)
    _report(capsys, cases, "soak budget")
    assert cases >= 30_000


def test_the_oracle_refuses_what_json_refuses():
    """The oracle itself: strict where Python's reader is lenient."""
    for raw in (b'{"a": 1, "a": 2}', b'{"a": NaN}', b'{"a": "\\ud800"}', b"[]", b"{} {}"):
        with pytest.raises(_NotJson):
            _strict_object(raw)
    assert _strict_object(b' {"a": [1, {"b": "\\ud83d\\ude00"}]} ') == {"a": [1, {"b": "😀"}]}
    assert math.isinf(json.loads("1e999"))  # a float, never an int: not a well-formed time
