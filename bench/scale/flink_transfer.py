"""Flink on RocksDB at a state its own warm-up takes hours to build: the warm-up runs on Flink's
heap backend, a savepoint carries the state to RocksDB, and the RocksDB job is sampled.

Used by ``state_growth.py --flink-warmup-on-heap`` (with ``--flink-sample-steady-events S``)::

    .venv/bin/python bench/scale/state_growth.py --workload patterns --keys 5000000 \\
        --batch-events 5000 --engines flink-match-rocksdb --flink-sample-steady-events 1000000 \\
        --flink-heap 16g --flink-warmup-on-heap

Why: Flink's ``MATCH_RECOGNIZE`` on RocksDB reads 1,900-3,300 events/s, so the 15M warm-up events
of 5M keys alone take more than two hours, while the same query on heap (16 GiB) gets through
them in 10-15 minutes. Flink's savepoints in the canonical format are restored by any state
backend (Flink's documentation, "Savepoints", "Canonical vs native format"), so the state a heap
job holds after the warm-up is the state a RocksDB job would hold after the same events: the
same partial matches, buffered rows and timers, in the same operators.

How (one JVM per phase, ``flink_live.py``'s never-ending job on the same files):

1. **Heap**: the warm-up files, read one after the other, then an empty live folder. Once the
   source has read every warm-up event and a checkpoint triggered after that has completed,
   the job is stopped with a canonical savepoint, not drained: no final watermark, so every
   partial match stays open, as in a live job stopped for an upgrade.
2. **RocksDB** (``CEP_ROCKSDB_CONF``'s options, incremental checkpoints every 2 s): the same
   job restored from the savepoint; the steady files are then linked into the live folder one
   at a time, each once the source has begun the one before (so they are read in order, as the
   sequential source reads them), and the job is sampled every 10 s as ``flink_rate.py``
   samples. The figure is the event rate at the ``MATCH_RECOGNIZE`` operator from the first
   sample past ``SETTLE`` of the steady events (the minutes right after the restore are left
   out) to the last, checkpoints included; ``restore_seconds`` is the RocksDB job's start (JVM
   included) to the first sample in which that operator has received a record.

What differs from a RocksDB warm-up: the files' layout (one bulk write instead of hours of
writes, deletes and compactions), not their content. And the rate: checked against the warm-up
on RocksDB itself at 1M keys, the heap-warmed job read 0.70-0.80x the events per second over the
same steady events (BENCHMARKS.md, "Flink MATCH_RECOGNIZE on RocksDB at 5M keys"), so its
figures understate Flink on RocksDB. Late records dropped by the operator (``late_dropped``) are
sampled too: 0 means the fed files were read in time order.
"""

from __future__ import annotations

import argparse
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from scale.common import flink_jvm_env, folder_bytes, gc_summary
from scale.flink_job import FlinkJob, wait_until
from scale.flink_rate import SAMPLE_EVERY_S, rate, sample
from scale.traffic import SteadyTraffic

#: The share of the sampled steady events left out of the rate at the start of the RocksDB job.
SETTLE = 0.2
#: Seconds allowed per phase (at 5M keys the heap warm-up took 15 minutes, the restore 18).
DEADLINE_S = 3 * 3600


def line_count(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for line in f if line.strip())


class FeedOrder:
    """Which of ``files`` to land next, given the events the source has read: the first at once,
    each other once the source has read past the files before the previous one (that one begun),
    so at most one landed file waits unread and the source reads them in order (a continuously
    monitoring file source picks up the files of one folder listing in no set order)."""

    def __init__(self, files: list[Path], counts: list[int]) -> None:
        self.files, self.counts = files, counts
        self.fed = 0
        self.before = 0  # events in the files before the last one landed

    def due(self, read: int) -> Path | None:
        """The next file to land after the source has read ``read`` events, or None."""
        if self.fed == len(self.files) or (self.fed > 0 and read <= self.before):
            return None
        if self.fed > 0:
            self.before += self.counts[self.fed - 1]
        self.fed += 1
        return self.files[self.fed - 1]


class Feeder(threading.Thread):
    """Lands ``files`` in ``live`` (hard links) in ``FeedOrder`` as the job's source reads them,
    until ``stop`` is set; an error is kept for the sampling loop to raise."""

    def __init__(self, job: FlinkJob, files: list[Path], live: Path) -> None:
        super().__init__(daemon=True)
        self.job, self.live = job, live
        self.order = FeedOrder(files, [line_count(f) for f in files])
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                f = self.order.due(self.job.records_read())
                if f is not None:
                    os.link(f, self.live / f.name)
                else:
                    time.sleep(0.2)
        except BaseException as e:  # reported by the sampling loop
            self.error = e


def restore_seconds(samples: list[dict[str, Any]]) -> float | None:
    """From the RocksDB job's start (its ``started`` row) to the first sample in which the
    keyed operator has received a record: the JVM's start and the restore of the savepoint into
    RocksDB, to the sampling's 10 s. (The source's tasks restore at once and fill their output
    buffers long before the keyed operator has its state back.)"""
    start = next(s["t"] for s in samples if s.get("started"))
    first = next((s["t"] for s in samples if (s.get("records_in") or 0) > 0), None)
    return None if first is None else first - start


def transferred(
    query: str,
    conf: list[str],
    traffic: SteadyTraffic,
    path: Path,
    work: Path,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """The per-batch figure of Flink on RocksDB (``conf``: its options) for ``query`` over the
    files of ``path``, its state carried over from a heap warm-up: the module docstring."""
    steady_events = args.flink_sample_steady_events
    if not steady_events:
        raise SystemExit("--flink-warmup-on-heap needs --flink-sample-steady-events")
    shutil.rmtree(work, ignore_errors=True)
    live, savepoints = work / "live", work / "savepoints"
    for folder in (live, savepoints):
        folder.mkdir(parents=True)
    warm = work / "warmup"
    warm.mkdir()
    for f in sorted(path.glob("*-warmup.jsonl")):
        os.symlink(f.resolve(), warm / f.name)
    steady_files = sorted(path.glob("*-steady.jsonl"))

    # 1. the warm-up on heap, stopped with a canonical savepoint
    t0 = time.time()
    heap_gc = work / "heap.gc.log"
    job = FlinkJob(
        "heap",
        warm,
        live,
        work / "heap-checkpoints",
        work / "heap.log",
        query=query,
        env=flink_jvm_env(args.flink_heap, heap_gc),
    )
    try:
        warmup_s = job.wait_read_and_checkpointed(
            traffic.warmup_events, DEADLINE_S, "the heap warm-up"
        )
        t1 = time.time()
        savepoint = job.stop_with_savepoint(savepoints, DEADLINE_S)
        savepoint_s = time.time() - t1
    finally:
        job.kill()
    shutil.rmtree(work / "heap-checkpoints", ignore_errors=True)

    # 2. the same job on RocksDB from the savepoint, fed the steady files and sampled
    rocksdb_gc = work / "rocksdb.gc.log"
    started = time.time()
    job = FlinkJob(
        "rocksdb",
        warm,
        live,
        work / "rocksdb-checkpoints",
        work / "rocksdb.log",
        restore=savepoint,
        query=query,
        conf=conf,
        env=flink_jvm_env(None, rocksdb_gc),
    )
    feeder = Feeder(job, steady_files, live)
    samples: list[dict[str, Any]] = [{"t": started, "started": True}]
    try:
        wait_until(lambda: job.rest.job_id() is not None, job.process, DEADLINE_S, "the restore")
        feeder.start()
        while True:
            time.sleep(SAMPLE_EVERY_S)
            if feeder.error is not None:
                raise RuntimeError(f"feeding the steady files failed: {feeder.error}")
            if job.process.poll() is not None:
                raise RuntimeError(f"the RocksDB job exited; see {work / 'rocksdb.log'}")
            samples.append(sample(job.rest))
            if (samples[-1].get("records_in") or 0) >= steady_events:
                break
        latest = job.checkpoints().get("latest") or {}
    finally:
        feeder.stop.set()
        job.kill()
    restored, checkpoint = latest.get("restored"), latest.get("completed") or {}
    if not restored:
        raise RuntimeError(f"the RocksDB job did not restore {savepoint}")
    steady = rate(samples, SETTLE * steady_events, traffic.batch_events)
    last = samples[-1]
    summary = {
        "method": "sampled, state from a heap warm-up",
        "per_batch_ms": steady["per_batch_ms"],
        "steady_events_per_s": steady["events_per_s"],
        "sampled_steady_events": steady["to_events"] - steady["from_events"],
        "late_dropped": last.get("late_dropped"),
        "heap_warmup_seconds": warmup_s,
        "savepoint_seconds": savepoint_s,
        "savepoint_bytes": folder_bytes(savepoint),
        "restore_seconds": restore_seconds(samples),
        # the RocksDB job's last checkpoint: its new files, and the whole state it refers to
        "last_checkpoint_bytes": checkpoint.get("checkpointed_size"),
        "state_bytes": checkpoint.get("state_size"),
        "steady_files_fed": feeder.order.fed,
        "jvm_heap": {"heap": args.flink_heap, "rocksdb": None},
        "conf": conf,
        "incremental_checkpoints": True,
        "gc": {"heap": gc_summary(heap_gc), "rocksdb": gc_summary(rocksdb_gc)},
        "seconds": time.time() - t0,
    }
    shutil.rmtree(work / "rocksdb-checkpoints", ignore_errors=True)
    shutil.rmtree(savepoints, ignore_errors=True)
    return {"summary": summary, "steady": steady, "samples": samples, "restored": restored}
