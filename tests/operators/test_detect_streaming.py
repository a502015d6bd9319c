"""``detect`` on a real streaming query: one file per micro-batch, explicit event times."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from streamwarden.operators.patterns import AfterMatch, Pattern, PatternOptions, detect
from tests.operators.pattern_load import two_within_30_minutes
from tests.support import minutes, write_batches

pytestmark = pytest.mark.spark


def event(key: str | None, at: float, kind: str, host: str = "h") -> str:
    return json.dumps({"key": key, "ts": minutes(at), "kind": kind, "host": host})


def detect_scans(spark: Any, landing: Path, pattern: Pattern, **options: Any) -> Any:
    """``pattern`` over the scan events written under ``landing``, one file per micro-batch,
    keyed by ``key``, carrying ``host``, waiting 5 minutes for out-of-order events."""
    events = (
        spark.readStream.schema("key string, ts long, kind string, host string")
        .option("maxFilesPerTrigger", 1)
        .json(str(landing))
    )
    wait = PatternOptions(max_out_of_orderness=timedelta(minutes=5), **options)
    return detect(events, pattern, key="key", time="ts", fields=["host"], options=wait)


def scan_then_scan() -> Pattern:
    return (
        Pattern.begin("first")
        .where(F.col("kind") == "scan")
        .followed_by("second")
        .where(F.col("kind") == "scan")
        .where_previous("host", "!=", "first")
        .within(timedelta(minutes=30))
        .skip(AfterMatch.skip_past_last_event())
    )


@pytest.fixture(scope="module")
def outputs(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    root = tmp_path_factory.mktemp("detect")
    write_batches(
        root / "landing",
        [
            # a: second scan arrives a batch before the first (out of order, within the delay)
            # and a key starting with NUL, as the engine's control keys do
            [
                event("a", 12, "scan", "h2"),
                event("b", 0, "scan", "h1"),
                event(None, 1, "scan"),
                event("\u0000a", 2, "scan"),
            ],
            [event("a", 11, "scan", "h1"), event("c", 20, "scan", "h1")],
            # late: c's watermark is now past minute 11; b stays alone and times out
            [event("c", 5, "scan", "h9"), event("x", 40, "noise")],
            [event("x", 200, "noise")],
            [event("x", 300, "noise")],
        ],
    )
    result = detect_scans(spark, root / "landing", scan_then_scan(), emit_timeouts=True)
    collected: dict[str, list[Any]] = {"matches": [], "timeouts": [], "dead": []}

    def collect(batch: Any, batch_id: int) -> None:
        from streamwarden.operators.patterns.api import (
            dead_letter_rows,
            match_rows,
            timeout_rows,
        )

        fields = result.compiled.fields
        collected["matches"] += match_rows(batch, fields).collect()
        collected["timeouts"] += timeout_rows(batch, fields).collect()
        collected["dead"] += dead_letter_rows(batch).collect()

    query = (
        result.combined.writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(root / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return collected


def test_a_match_is_found_in_event_time_order_across_batches(outputs: dict[str, Any]) -> None:
    (match,) = outputs["matches"]
    assert match["key"] == "a"
    assert [(e["stage"], e["host"]) for e in match["events"]] == [
        ("first", "h1"),
        ("second", "h2"),
    ]
    assert match["match_end"] - match["match_start"] == timedelta(minutes=1)


def test_a_partial_match_that_runs_out_of_time_is_reported_once(outputs: dict[str, Any]) -> None:
    assert sorted(t["key"] for t in outputs["timeouts"]) == ["b", "c"]


def test_late_keyless_and_reserved_key_events_are_dead_letters_with_reasons(
    outputs: dict[str, Any],
) -> None:
    reasons = sorted((d["reason"], d["key"]) for d in outputs["dead"])
    assert reasons == [("invalid_key", "\u0000a"), ("missing_field", None), ("too_late", "c")]
    late = next(d for d in outputs["dead"] if d["reason"] == "too_late")
    assert json.loads(late["raw"])["host"] == "h9"


def test_a_burst_past_the_keys_buffer_cap_is_dead_lettered_and_accounted(
    spark: Any, tmp_path: Any
) -> None:
    burst = [event("z", 1 + i * 0.5, "scan", f"h{i}") for i in range(6)]
    write_batches(tmp_path / "landing", [burst, [event("x", 100, "noise")]])
    result = detect_scans(
        spark, tmp_path / "landing", two_within_30_minutes(), max_buffered_per_key=4
    )
    rows: list[Any] = []
    query = (
        result.combined.writeStream.foreachBatch(lambda batch, _: rows.extend(batch.collect()))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    matched = [values[0] for r in rows if r["kind"] == "match" for values in r["ev_values"]]
    refused = [r for r in rows if r["kind"] == "dead_letter"]
    assert sorted(matched) == ["h0", "h1", "h2", "h3"]
    assert [r["reason"] for r in refused] == ["key_buffer_full"] * 2
    assert sorted(json.loads(r["raw"])["host"] for r in refused) == ["h4", "h5"]
    assert "max_buffered_per_key" in refused[0]["detail"]
    assert len(matched) + len(refused) == len(burst)
