"""Hostile input as a real source would send it, through a real pipeline: times beyond what
Spark can hold, lines that are not one JSON object, bytes that are not UTF-8, and a record the
engine throws on. None of them may fail a batch, each is a dead letter with its own reason, and
the accounting balances."""

from __future__ import annotations

import base64
from collections import Counter
from typing import Any

import pytest

from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account, read_output
from tests.support import minutes, pageview, pipeline_config

pytestmark = pytest.mark.spark

MARKER = "POISON-MARKER-7f3a"
GOOD = [pageview("u1", m) for m in (0, 1, 2)] + [pageview("u2", 0)]
#: u3's three events, one session (the ISO-8601 forms a TIMESTAMP time field takes are
#: specified by tests/validation/test_defect_classes.py)
ISO = [pageview("u3", m) for m in (3, 4, 5)]
NOT_UTF8 = [
    b'{"user_id": "u\xff", "ts": %d, "page_number": 1}' % minutes(1),
    b'{"user_id": "u\xfe", "ts": %d, "page_number": 1}' % minutes(1),
]
HOSTILE: dict[str, list[str]] = {
    "invalid_timestamp": [
        '{"user_id": "u9", "ts": -9223372036854775808, "page_number": 1}',
        '{"user_id": "u9", "ts": 9223372036854775807, "page_number": 1}',
    ],
    "malformed_json": [
        pageview("u8", 1) + pageview("u8", 2),
        pageview("u8", 1) + " trailing",
        f"{{'user_id': 'u8', 'ts': {minutes(1)}, 'page_number': 1}}",
        " \t ",
        "   ",
        "",
    ],
    "poison": [pageview("u1", 1.5, url=f"/{MARKER}")],
}


@pytest.fixture(scope="module")
def run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("hostile")
    texts = GOOD + ISO + [raw for raws in HOSTILE.values() for raw in raws]
    lines = [line.encode() for line in texts] + NOT_UTF8
    (root / "landing").mkdir()
    (root / "landing" / "hostile.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    config = pipeline_config(
        root, validation={"max_future_skew": "off"}, sessions={"allowed_lateness": "0s"}
    )
    poison = spark._jvm.io.streamwarden.engine.Poison
    poison.failOn(MARKER)
    try:
        Pipeline(config, spark).run(once=True, drain=True)
    finally:
        poison.failOn(None)
    dead = read_output(spark, config.sinks["dead_letters"].path)
    assert dead is not None
    return {
        "records": len(lines),
        "accounting": account(
            spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, len(lines)
        ),
        "dead": [row.asDict() for row in dead.collect()],
        "sessions": read_output(spark, config.sinks["sessions"].path),
    }


def test_no_record_fails_the_batch_and_every_record_ends_in_one_place(run):
    assert run["accounting"].balanced, run["accounting"].describe()


def test_each_hostile_record_is_a_dead_letter_with_its_own_reason(run):
    expected = Counter({reason: len(raws) for reason, raws in HOSTILE.items()})
    expected["invalid_utf8"] = len(NOT_UTF8)
    assert Counter(d["reason"] for d in run["dead"]) == expected


def test_an_event_time_beyond_what_spark_holds_says_the_bound(run):
    details = [d["detail"] for d in run["dead"] if d["reason"] == "invalid_timestamp"]
    assert sorted(details) == sorted(
        f"'ts' {ts} (ms) is outside the event times accepted, 0001-01-01T00:00:00Z .. "
        "9999-12-31T23:59:59.999Z"
        for ts in ("-9223372036854775808", "9223372036854775807")
    )


def test_a_record_that_is_not_utf8_keeps_its_exact_bytes_and_no_two_users_merge(run):
    raws = sorted(base64.b64decode(d["raw"]) for d in run["dead"] if d["reason"] == "invalid_utf8")
    assert raws == sorted(NOT_UTF8)
    users = {r["user_id"] for r in run["sessions"].select("user_id").distinct().collect()}
    assert users == {"u1", "u2", "u3"}


def test_the_poison_record_names_the_exception_and_its_users_other_events_stay(run):
    [poison] = [d for d in run["dead"] if d["reason"] == "poison"]
    assert MARKER in poison["raw"] and poison["key"] == "u1"
    assert poison["detail"].startswith(
        "the session engine threw io.streamwarden.engine.Poison$InjectedFault: injected fault"
    )
    pages = {r["user_id"]: r["event_count"] for r in run["sessions"].collect()}
    assert pages == {"u1": 3, "u2": 1, "u3": 3}
