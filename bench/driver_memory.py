"""What the driver's Python keeps per micro-batch of a long run: the monitor's records and the
run's result, fed the progress of N batches as Spark's listener and the runner would.

Usage: ``.venv/bin/python bench/driver_memory.py [--batches 1000,5000,20000] [--partitions 4]``

Each batch's progress has the shape of a sessions batch on the RocksDB state store in Spark 4.2
(one ``transformWithState`` operator, its 53 custom metrics plus one snapshot metric per state
partition, the file source, the sink). Python's allocations are traced (``tracemalloc``) after
``--batches`` batches, once as streamwarden runs (the newest ``RECENT_BATCHES`` kept) and once
with every batch kept (the baseline: what the monitor and the result did before they were
bounded). Bytes, not times: valid on a loaded machine. No Spark.
"""

from __future__ import annotations

import argparse
import gc
import json
import tracemalloc
from typing import Any

import streamwarden.monitoring.monitor as monitor_module
from streamwarden.monitoring.monitor import QueryMonitor
from streamwarden.pipeline.result import RunResult

CUSTOM_METRICS = 53
DURATION_PARTS = (
    "addBatch",
    "commitOffsets",
    "getBatch",
    "latestOffset",
    "queryPlanning",
    "triggerExecution",
    "walCommit",
)


def progress(batch: int, partitions: int) -> dict[str, Any]:
    """A sessions batch's progress, as Spark's listener hands it over (parsed JSON)."""
    custom = {f"rocksdbMetric{i:02d}": 1000 + batch for i in range(CUSTOM_METRICS)}
    custom |= {f"SnapshotLastUploaded.partition_{p}_default": batch for p in range(partitions)}
    text = json.dumps(
        {
            "id": "5b0f7c1e-0000-4000-8000-000000000000",
            "runId": "5b0f7c1e-0000-4000-8000-000000000001",
            "name": "sessions",
            "timestamp": "2026-11-26T10:00:00.000Z",
            "batchId": batch,
            "batchDuration": 812,
            "numInputRows": 5000,
            "inputRowsPerSecond": 6157.6,
            "processedRowsPerSecond": 6157.6,
            "durationMs": dict.fromkeys(DURATION_PARTS, 100 + batch % 7),
            "eventTime": {
                "avg": "2026-01-01T01:28:26.648Z",
                "max": "2026-01-01T01:30:52.634Z",
                "min": "2026-01-01T01:25:00.000Z",
                "watermark": "2026-01-01T01:20:52.634Z",
            },
            "stateOperators": [
                {
                    "operatorName": "transformWithStateExec",
                    "numRowsTotal": 100_000,
                    "numRowsUpdated": 5000,
                    "allUpdatesTimeMs": 300,
                    "numRowsRemoved": 120,
                    "allRemovalsTimeMs": 0,
                    "commitTimeMs": 40,
                    "memoryUsedBytes": 8_000_000,
                    "numRowsDroppedByWatermark": 0,
                    "numShufflePartitions": partitions,
                    "numStateStoreInstances": partitions,
                    "customMetrics": custom,
                }
            ],
            "sources": [
                {
                    "description": "FileStreamSource[file:/data/landing]",
                    "startOffset": {"logOffset": batch},
                    "endOffset": {"logOffset": batch + 1},
                    "latestOffset": None,
                    "numInputRows": 5000,
                    "inputRowsPerSecond": 6157.6,
                    "processedRowsPerSecond": 6157.6,
                }
            ],
            "sink": {"description": "ForeachBatchSink", "numOutputRows": -1},
            "observedMetrics": {
                "validated": {"events": 4990, "malformed_json": 10},
                "sessions": {"session_rows": 120, "events_in_sessions": 800},
            },
        }
    )
    return dict(json.loads(text))


def held_bytes(batches: int, partitions: int) -> int:
    """Python bytes a monitor and a run result hold after ``batches`` batches."""
    gc.collect()
    tracemalloc.start()
    monitor = QueryMonitor(None, "sessions")  # type: ignore[arg-type]  # never started
    result = RunResult()
    for batch in range(batches):
        monitor.on_progress(progress(batch, partitions))
        result.add(progress(batch, partitions), stats=None)  # the runner's own copy
    gc.collect()
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del monitor, result
    return held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", default="1000,5000,20000")
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args()
    counts = [int(n) for n in args.batches.split(",")]
    bounded = monitor_module.RECENT_BATCHES
    print(f"| batches | held, newest {bounded:,} kept (MiB) | held, every batch kept (MiB) |")
    print("|---:|---:|---:|")
    for n in counts:
        kept = held_bytes(n, args.partitions)
        monitor_module.RECENT_BATCHES = 10**12  # the baseline: nothing dropped
        try:
            every = held_bytes(n, args.partitions)
        finally:
            monitor_module.RECENT_BATCHES = bounded
        print(f"| {n:,} | {kept / 2**20:.1f} | {every / 2**20:.1f} |", flush=True)


if __name__ == "__main__":
    main()
