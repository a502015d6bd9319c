"""Lesson L1's two load tests for the pattern operator, in simulated event time.

Test 1: every key sends one event every 10 minutes, for the whole run. Test 2: each key sends
two events 10 minutes apart and retires; a new key takes its slot at once, so the same number of
keys is always live. Pattern: two events of a key within 30 minutes, skip past last event. Input
is written as one JSON-lines file per simulated hour and streamed one file per micro-batch.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from streamwarden.operators.patterns import (
    AfterMatch,
    DetectResult,
    Pattern,
    PatternOptions,
    detect,
)
from streamwarden.operators.patterns.api import compile_for, detect_rows, run_detector
from tests.support import spark_settings

STEP_MS = 10 * 60_000
HOUR_MS = 3_600_000
T0_MS = 1_767_225_600_000  # 2026-01-01T00:00Z
SENTINEL = "~end-of-input"


def two_within_30_minutes() -> Pattern:
    """L1's pattern (built when a SparkSession exists: conditions are Spark Columns)."""
    return (
        Pattern.begin("first")
        .where(F.col("kind") == "scan")
        .followed_by("second")
        .where(F.col("kind") == "scan")
        .within(timedelta(minutes=30))
        .skip(AfterMatch.skip_past_last_event())
    )


@dataclass(frozen=True)
class LoadRun:
    state_rows: list[int]
    state_bytes: list[int]
    matches: int
    events: int
    distinct_keys: int


def events(test: int, keys: int, hours: int) -> Iterator[tuple[str, int]]:
    """(key, ts) in time order. Each slot sends one event per 10 minutes, spread over the step."""
    steps = hours * HOUR_MS // STEP_MS
    for step in range(steps):
        for slot in range(keys):
            ts = T0_MS + step * STEP_MS + slot * STEP_MS // keys
            key = f"k{slot:05d}" if test == 1 else f"k{slot:05d}-g{step // 2:04d}"
            yield key, ts


def write_landing(
    landing: Path, test: int, keys: int, hours: int, close: bool = True
) -> tuple[int, int]:
    """One file per simulated hour, plus (if ``close``) sentinels that move the watermark past
    the end."""
    landing.mkdir(parents=True)
    files: dict[int, list[str]] = {}
    count, seen = 0, set()
    for key, ts in events(test, keys, hours):
        files.setdefault((ts - T0_MS) // HOUR_MS, []).append(
            f'{{"key":"{key}","ts":{ts},"kind":"scan"}}\n'
        )
        count += 1
        seen.add(key)
    # Two sentinel files: the first moves the watermark past every deadline, the batch of the
    # second is the first whose watermark is there, so it fires the last timers.
    for extra in (0, 1) if close else ():
        end_ts = T0_MS + (hours + 1 + extra) * HOUR_MS
        files[hours + extra] = [f'{{"key":"{SENTINEL}","ts":{end_ts},"kind":"end"}}\n']
    for hour, lines in sorted(files.items()):
        path = landing / f"hour-{hour:04d}.jsonl"
        path.write_text("".join(lines))
        os.utime(path, (1_700_000_000 + hour, 1_700_000_000 + hour))
    return count, len(seen)


def run_load(
    spark: SparkSession,
    root: Path,
    *,
    test: int,
    keys: int,
    hours: int,
    leak: bool = False,
    query_name: str | None = None,
    close: bool = True,
) -> LoadRun:
    """Streams the load through ``detect`` into a counting sink, checkpointed at
    ``root/checkpoint``; ``query_name`` lets a monitor find the query; without ``close`` the
    run stops with the last hour's keys still live."""
    count, distinct = write_landing(root / "landing", test, keys, hours, close)
    # State bytes are read per batch afterwards, so every batch's state version must survive
    # the run (the test session retains fewer than the full-size run's 26 batches).
    with spark_settings(spark, {"spark.sql.streaming.minBatchesToRetain": str(hours + 10)}):
        query, matched = stream_matches(
            spark,
            root / "landing",
            root / "checkpoint",
            leak=leak,
            query_name=query_name or f"l1_test_{test}",
        )
    progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
    rows = [int(p["stateOperators"][0]["numRowsTotal"]) for p in progress]
    size = [state_bytes(spark, root / "checkpoint", int(p["batchId"])) for p in progress]
    return LoadRun(rows, size, sum(matched), count, distinct)


def stream_matches(
    spark: SparkSession,
    landing: Path,
    checkpoint: Path,
    *,
    leak: bool = False,
    query_name: str | None = None,
) -> tuple[Any, list[int]]:
    """Runs L1's pattern over what ``landing`` holds (``availableNow``, one file per batch) on
    ``checkpoint``; returns the finished query and the matches counted per batch."""
    stream = (
        spark.readStream.schema("key string, ts long, kind string")
        .option("maxFilesPerTrigger", 1)
        .json(str(landing))
    )
    run = detect_leaking if leak else detect
    result = run(stream, two_within_30_minutes(), key="key", time="ts")
    matched: list[int] = []

    def count_matches(batch: Any, batch_id: int) -> None:
        matched.append(batch.where(F.col("kind") == "match").count())

    writer = result.combined.writeStream.foreachBatch(count_matches)
    if query_name:
        writer = writer.queryName(query_name)
    query = writer.option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
    query.awaitTermination()
    return query, matched


def detect_leaking(events: DataFrame, pattern: Pattern, *, key: str, time: str) -> DetectResult:
    """``detect`` with lesson L1's leak, on purpose: the engine keeps each key's state record
    even when it holds nothing, so that a test can show the leak is visible. A test-only switch
    of the compile step, never an option of the public API."""
    options = PatternOptions()
    compiled = compile_for(events, pattern, (), options, keep_empty_state=True)
    return run_detector(detect_rows(events, compiled, key, time, options), compiled)


def state_bytes(spark: SparkSession, checkpoint: Path, batch_id: int) -> int:
    """Bytes of all keys' pattern state after ``batch_id``, read with Spark's state reader."""
    state = (
        spark.read.format("statestore")
        .option("batchId", batch_id)
        .option("stateVarName", "pattern_state")
        .load(str(checkpoint))
    )
    total = state.select(F.sum(F.octet_length("value.value"))).first()[0]
    return int(total or 0)


def level_deviation(series: list[int], skip: int) -> float:
    """Largest relative distance from the mean over ``series[skip:]``."""
    tail = series[skip:]
    mean = sum(tail) / len(tail)
    return max(abs(v - mean) for v in tail) / mean


def print_series(title: str, run: LoadRun) -> None:
    print(f"\n{title}: {run.events} events, {run.distinct_keys} keys, {run.matches} matches")
    print("hour  state-rows  state-bytes")
    for i, (r, b) in enumerate(zip(run.state_rows, run.state_bytes, strict=True)):
        print(f"{i:4d}  {r:10d}  {b:11d}")
