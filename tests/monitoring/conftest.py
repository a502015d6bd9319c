"""A deliberately leaking real Spark query, run once per test module that asks for it.

``groupBy(key).count()`` with no watermark keeps every key forever; each batch brings the same
number of new keys, so state grows linearly while the input is steady (lesson L1)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from streamwarden.config import MonitoringConfig
from streamwarden.monitoring import QueryMonitor
from tests.support import T0_MS, write_batches

BATCHES = 8
NEW_KEYS_PER_BATCH = 300


@dataclass
class MonitoredRun:
    monitor: QueryMonitor
    checkpoint: Path


def keyed_events(keys: list[str], first_ms: int) -> list[str]:
    """One event per key, one second apart in event time."""
    return [json.dumps({"key": k, "ts": first_ms + i * 1000}) for i, k in enumerate(keys)]


def run_counting_query(
    spark, root: Path, name: str, batches: list[list[str]], config: MonitoringConfig
) -> QueryMonitor:
    """Runs ``groupBy(key).count()`` (no watermark: state without a deadline) over ``batches``,
    one file per micro-batch, under a started monitor; returns it still serving."""
    write_batches(root / "landing", batches)
    monitor = QueryMonitor(spark, name, checkpoint=root / "checkpoint", config=config).start()
    events = (
        spark.readStream.schema("key string, ts long")
        .option("maxFilesPerTrigger", 1)
        .json(str(root / "landing"))
    )
    query = (
        events.groupBy("key")
        .count()
        .writeStream.queryName(name)
        .outputMode("update")
        .format("noop")
        .option("checkpointLocation", str(root / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    monitor.flush()
    return monitor


@pytest.fixture(scope="package")
def leaking_run(spark, tmp_path_factory) -> Iterator[MonitoredRun]:
    root = tmp_path_factory.mktemp("leak")
    batches = [
        keyed_events([f"user-{b}-{i}" for i in range(NEW_KEYS_PER_BATCH)], T0_MS + b * 3_600_000)
        for b in range(BATCHES)
    ]
    config = MonitoringConfig(
        alarm_window=5, slow_batch_threshold="0s", slow_log_interval="1h", skew_min_rows=10
    )
    monitor = run_counting_query(spark, root, "leaking_count", batches, config)
    yield MonitoredRun(monitor, root / "checkpoint")
    monitor.close()
