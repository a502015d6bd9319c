"""Record validation: every raw record gets a typed event or one reason, whichever way its fields
are written. Records whose fields have the expected JSON types take a one-parse fast path; the
others (quoted numbers, ISO times, floats, malformed JSON) are re-read as text: both paths must
agree on what is valid."""

from __future__ import annotations

import json

import pytest

from streamwarden.validation import TICK_FIELD, TICK_SOURCE, validate_records
from streamwarden.validation.settings import FieldNames, ValidationConfig
from streamwarden.validation.validate import parse_typed

pytestmark = pytest.mark.spark
MS = 1_767_225_605_415  # 2026-01-01T00:00:05.415Z
ISO = "2026-01-01T00:00:05.415Z"

CASES: dict[str, tuple[str, tuple[str | None, int | None, int | None]]] = {
    # name: (raw record, (reason, ts_ms, page_number))
    "typed": (json.dumps({"user_id": "a", "ts": MS, "page_number": 2}), (None, MS, 2)),
    "iso time": (json.dumps({"user_id": "a", "ts": ISO, "page_number": 2}), (None, MS, 2)),
    "quoted numbers": (
        json.dumps({"user_id": "a", "ts": str(MS), "page_number": "2"}),
        (None, MS, 2),
    ),
    "numeric user id": (json.dumps({"user_id": 42, "ts": MS, "page_number": 2}), (None, MS, 2)),
    "float page": (
        json.dumps({"user_id": "a", "ts": MS, "page_number": 2.0}),
        ("wrong_type", MS, None),
    ),
    "word page": (
        json.dumps({"user_id": "a", "ts": MS, "page_number": "two"}),
        ("wrong_type", MS, None),
    ),
    "page beyond a long": (
        json.dumps({"user_id": "a", "ts": MS, "page_number": 10**25}),
        ("wrong_type", MS, None),
    ),
    "object user id": (
        json.dumps({"user_id": {"id": 1}, "ts": MS, "page_number": 2}),
        ("wrong_type", MS, 2),
    ),
    "array url": (
        json.dumps({"user_id": "a", "ts": MS, "page_number": 2, "url": ["/x"]}),
        ("wrong_type", MS, 2),
    ),
    "float time": (
        json.dumps({"user_id": "a", "ts": MS + 0.5, "page_number": 2}),
        ("invalid_timestamp", None, 2),
    ),
    "time without zone": (
        json.dumps({"user_id": "a", "ts": "2026-01-01T00:00:05", "page_number": 2}),
        ("invalid_timestamp", None, 2),
    ),
    "null page": (
        json.dumps({"user_id": "a", "ts": MS, "page_number": None}),
        ("missing_field", MS, None),
    ),
    "page zero": (
        json.dumps({"user_id": "a", "ts": MS, "page_number": 0}),
        ("page_number_out_of_range", MS, 0),
    ),
    "quoted page over max": (
        json.dumps({"user_id": "a", "ts": MS, "page_number": "301"}),
        ("page_number_over_max", MS, 301),
    ),
    "non-ascii text": (
        json.dumps(
            {"user_id": "名前-é", "ts": MS, "page_number": 2, "url": "/ü"}, ensure_ascii=False
        ),
        (None, MS, 2),
    ),
    "space-only user id": (
        json.dumps({"user_id": "   ", "ts": MS, "page_number": 2}),
        ("invalid_user_id", MS, 2),
    ),
    "tab-only user id": (
        json.dumps({"user_id": "\t\t", "ts": MS, "page_number": 2}),
        ("invalid_user_id", MS, 2),
    ),
    "user id of a line break and a no-break space": (
        json.dumps({"user_id": "\n\u00a0", "ts": MS, "page_number": 2}),
        ("invalid_user_id", MS, 2),
    ),
    "nul in user id": (
        json.dumps({"user_id": "\u0000x", "ts": MS, "page_number": 2}),
        ("invalid_user_id", MS, 2),
    ),
    "truncated json": ('{"user_id": "a", "ts": 1', ("malformed_json", None, None)),
    "empty line": ("", ("malformed_json", None, None)),
    "json array": ("[1, 2]", ("malformed_json", None, None)),
    "json number": ("42", ("malformed_json", None, None)),
}


@pytest.fixture(scope="module")
def validated(spark) -> dict[str, tuple[str | None, int | None, int | None]]:
    rows = [(name, raw) for name, (raw, _) in CASES.items()]
    frame = spark.createDataFrame(rows, "name string, raw string")
    result = validate_records(frame, FieldNames(), ValidationConfig(max_future_skew=None))
    named = {raw: name for name, raw in rows}
    return {named[r["raw"]]: (r["reason"], r["ts_ms"], r["page_number"]) for r in result.collect()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_way_of_writing_a_record_gets_its_value_or_reason(validated, case):
    assert validated[case] == CASES[case][1]


def test_only_rows_of_the_tick_source_are_ticks_whatever_a_landing_record_carries(spark):
    tick = json.dumps({TICK_FIELD: str(MS)})
    lookalike = json.dumps({"user_id": "a", "ts": MS, "page_number": 2, TICK_FIELD: MS + 1})
    frame = spark.createDataFrame(
        [(tick, True), (tick, False), (lookalike, False)], f"raw string, {TICK_SOURCE} boolean"
    )
    result = validate_records(frame, FieldNames(), ValidationConfig(max_future_skew=None))
    rows = [(r["is_tick"], r["reason"], r["ts_ms"]) for r in result.collect()]
    assert rows == [
        (True, None, MS),  # the ticker's own record
        (False, "missing_field", None),  # the same record dropped into the landing folder
        (False, None, MS),  # a pageview with the field: an event at its own ts
    ]


def test_every_rejected_record_has_a_detail(spark):
    frame = spark.createDataFrame([(raw,) for raw, _ in CASES.values()], "raw string")
    result = validate_records(frame, FieldNames(), ValidationConfig(max_future_skew=None))
    rejected = result.where("reason is not null").collect()
    assert len(rejected) == sum(1 for _, (reason, _, _) in CASES.values() if reason)
    assert all(r["detail"] for r in rejected)


def test_the_byte_parser_reads_every_record_as_from_json_does(spark):
    """The typed parse reads UTF-8 bytes (no text reader per record); whatever the record, it
    must give the struct Spark's ``from_json`` gives for the same schema, except where it is
    stricter on purpose: what is not exactly one JSON object (``from_json`` reads the first value
    and ignores the rest, or reads a blank line as an empty object), a name given twice, single
    quotes and NaN are corrupt records. One spelling differs: an object or array read into a
    string field keeps its original text (as in Spark's JSON file source), where ``from_json``
    writes it compactly; both are the same JSON value."""
    extra = [
        json.dumps({"user_id": "a", "ts": MS, "page_number": 2, "nested": {"x": [1, {"y": 2}]}}),
        '{"user_id": "\\u00e9\\u540d", "ts": 1, "page_number": 3}',
        '  {"user_id" : "a" ,\t"ts":1,"page_number":4}  ',
        None,
    ]
    stricter = [
        "",
        "{}{}",
        '{"user_id": "a", "user_id": "b", "ts": 1, "page_number": 5}',
        '{"user_id": "a"} trailing',
        "{'user_id': 'a', 'ts': 1, 'page_number': 5}",
        '{"user_id": "a", "ts": NaN, "page_number": 5}',
    ]
    raws = [raw for raw, _ in CASES.values() if raw not in stricter] + extra
    frame = spark.createDataFrame([(raw,) for raw in raws], "raw string")
    ours = parse_typed(frame, FieldNames())
    spark_own = parse_typed(frame, FieldNames(), engine=False)
    rows = frame.select("raw", ours.alias("ours"), spark_own.alias("spark")).collect()

    def same_value(parsed):
        if parsed is None:
            return None
        return {
            name: json.loads(value)
            if name in ("user_id", "url") and (value or "")[:1] in ("{", "[")
            else value
            for name, value in parsed.asDict().items()
        }

    assert sorted(r["raw"] or "" for r in rows) == sorted(raw or "" for raw in raws)
    assert [r["raw"] for r in rows if same_value(r["ours"]) != same_value(r["spark"])] == []
    strict = spark.createDataFrame([(raw,) for raw in stricter], "raw string")
    corrupt = strict.select(parse_typed(strict, FieldNames()).alias("p")).collect()
    assert [r["p"]["_corrupt_record"] for r in corrupt] == stricter
    assert sum(1 for r in rows if r["ours"] and r["ours"]["user_id"] == "名前-é") == 1
    assert sum(1 for r in rows if r["ours"] and r["ours"]["user_id"] == "é名") == 1
