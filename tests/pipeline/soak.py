"""Soak runs: simulated days of rotating-key traffic through the real pipeline (files in,
Parquet out, RocksDB state, the monitor and its leak alarm on), with the driver's resident
memory sampled after every batch. Shared by the short version in the default suite and the
24-hour one in ``make soak`` (docs/failure-modes.md#state-without-deadline, #unwatched-trends).

Sessions: users come, hold two sessions and never return (the generator's ``sessions_per_user``),
so the key space keeps rotating. Patterns: lesson 1's second load test, each key sends two scans
10 minutes apart and retires, a new key takes its slot at once.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from tests.pipeline.test_bounded_state import expected_state_rows
from tests.support import pattern_pipeline_config, pipeline_config

#: Sessions traffic: files of 1,050 events, about 15 simulated minutes each, four an hour.
EVENTS_PER_FILE, FILES_PER_HOUR = 1_050, 4
#: Patterns traffic: key slots, one scan per slot every 10 minutes, a file per 20 minutes.
SLOTS, STEP_MS, FILE_MS = 1_000, 10 * 60_000, 20 * 60_000
T0_MS = 1_767_225_600_000  # 2026-01-01T00:00Z


@dataclass
class SoakRun:
    """What a soak run measured, batch by batch (batches that read input)."""

    hours: float
    #: Batches before the state can be level: the first simulated hour and the next batch
    #: (keys that arrived in that hour hold state until their deadline, 30-40 minutes later).
    warm_up: int
    state_rows: list[int] = field(default_factory=list)
    #: The driver's resident memory after each batch, MiB: Spark's JVM and this Python process.
    jvm_rss_mib: list[float] = field(default_factory=list)
    python_rss_mib: list[float] = field(default_factory=list)
    #: The JVM's heap after each batch, MiB: live objects after a full collection, and what
    #: the heap has committed (the part of the JVM's resident memory the heap accounts for).
    live_heap_mib: list[float] = field(default_factory=list)
    committed_heap_mib: list[float] = field(default_factory=list)
    batches_per_hour: int = 1
    #: Sessions only: the users active within gap + lateness of each batch's watermark.
    expected_rows: list[int] = field(default_factory=list)
    state_growth_findings: list[Any] = field(default_factory=list)
    monitor_errors: list[str] = field(default_factory=list)

    def hourly(self, series: list[float] | list[int]) -> list[float]:
        """Mean of ``series`` per simulated hour after warm-up (whole hours only): single
        batches carry the traffic's own noise (which users happen to be active). A run with
        less than two hours after warm-up is judged batch by batch."""
        tail = series[self.warm_up :]
        n = self.batches_per_hour if len(tail) >= 2 * self.batches_per_hour else 1
        return [sum(tail[i : i + n]) / n for i in range(0, len(tail) - n + 1, n)]

    def state_level(self) -> float:
        """Largest distance of an hour's mean state rows from the mean over all hours after
        warm-up, relative to that mean (0.1: within ±10%)."""
        hours = self.hourly(self.state_rows)
        mean = sum(hours) / len(hours)
        return max(abs(v - mean) for v in hours) / mean

    def growth(self, series: list[float]) -> float:
        """The last hour's mean of ``series`` over its first hour after warm-up, minus one."""
        hours = self.hourly(series)
        return hours[-1] / hours[0] - 1

    def table(self, title: str) -> str:
        lines = [
            f"\n{title}: {self.hours:.1f} simulated hours, {self.batches_per_hour} batches an "
            f"hour, warm-up {self.warm_up} batches",
            "batch  state-rows  jvm-rss-MiB  heap-live-MiB  heap-committed-MiB  python-rss-MiB",
        ]
        rows = zip(
            self.state_rows,
            self.jvm_rss_mib,
            self.live_heap_mib,
            self.committed_heap_mib,
            self.python_rss_mib,
            strict=True,
        )
        lines += [
            f"{i:5d}  {n:10,d}  {rss:11.0f}  {live:13.0f}  {committed:18.0f}  {py:14.0f}"
            for i, (n, rss, live, committed, py) in enumerate(rows)
        ]
        return "\n".join(lines)


def rss_mib(pid: int) -> float:
    """Resident set size of process ``pid`` (VmRSS of /proc), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def jvm_pid(spark: Any) -> int:
    return int(spark._jvm.java.lang.ProcessHandle.current().pid())


def _run(spark: Any, config: Any, hours: float, batches_per_hour: int) -> SoakRun:
    # warm-up: the first quarter of the run, and at least its first hour and the next batch
    warm_up = max(batches_per_hour + 1, round(hours * batches_per_hour / 4))
    run = SoakRun(hours, warm_up=warm_up, batches_per_hour=batches_per_hour)
    jvm = jvm_pid(spark)
    memory = spark._jvm.java.lang.management.ManagementFactory.getMemoryMXBean()

    def sample(progress: dict[str, Any], _stats: Any) -> None:
        if progress["numInputRows"] == 0:
            return
        run.state_rows.append(int(progress["stateOperators"][0]["numRowsTotal"]))
        run.jvm_rss_mib.append(rss_mib(jvm))
        run.python_rss_mib.append(rss_mib(os.getpid()))
        memory.gc()  # a full collection: what stays is live
        heap = memory.getHeapMemoryUsage()
        run.live_heap_mib.append(heap.getUsed() / 2**20)
        run.committed_heap_mib.append(heap.getCommitted() / 2**20)

    pipeline = Pipeline(config, spark)
    pipeline.run(once=True, on_progress=sample)
    monitor = pipeline.monitor
    assert monitor is not None, "the soak needs the monitor (and its leak alarm) on"
    run.state_growth_findings = [f for f in monitor.findings if f.kind == "state_growth"]
    run.monitor_errors = [str(e) for e in monitor.errors]
    return run


def soak_sessions(spark: Any, root: Path, hours: int) -> SoakRun:
    """Sessions over ``hours`` simulated hours of users who come, stay two sessions, leave."""
    spec = TrafficSpec(
        users=2_000,
        events=EVENTS_PER_FILE * FILES_PER_HOUR * hours,
        rate_per_second=1.0,
        sessions_per_user=2,
        events_per_file=EVENTS_PER_FILE,
        ts_format="millis",
        seed=12,
    )
    summary = generate_traffic(spec, root / "landing")
    simulated = (summary.last_event - summary.first_event).total_seconds() / 3600
    config = pipeline_config(root, sessions={"allowed_lateness": "10m"})
    run = _run(spark, config, simulated, FILES_PER_HOUR)
    run.expected_rows = expected_state_rows(summary.files)
    return run


def write_rotating_scans(landing: Path, hours: int) -> int:
    """Lesson 1's second load test as pageviews: each slot sends a scan every 10 minutes, as a
    new user every second scan; one file per 20 minutes. Returns the number of events."""
    landing.mkdir(parents=True)
    count = 0
    for file_index in range(hours * 3_600_000 // FILE_MS):
        lines = []
        for step in range(file_index * FILE_MS // STEP_MS, (file_index + 1) * FILE_MS // STEP_MS):
            for slot in range(SLOTS):
                ts = T0_MS + step * STEP_MS + slot * STEP_MS // SLOTS
                user = f"k{slot:05d}-g{step // 2:04d}"
                lines.append(
                    json.dumps(
                        {"user_id": user, "ts": ts, "page_number": 1, "url": f"/scan/{step % 2}"}
                    )
                )
        path = landing / f"part-{file_index:04d}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        os.utime(path, (1_700_000_000 + file_index, 1_700_000_000 + file_index))
        count += len(lines)
    return count


def soak_patterns(spark: Any, root: Path, hours: int) -> SoakRun:
    """Patterns (two scans of a user within 30 minutes) over ``hours`` of rotating keys."""
    write_rotating_scans(root / "landing", hours)
    config = pattern_pipeline_config(
        root,
        {
            "within": "30m",
            "skip": "skip_past_last_event",
            "stages": [
                {"name": "first", "contiguity": "begin", "where": "url LIKE '/scan/%'"},
                {"name": "second", "where": "url LIKE '/scan/%'"},
            ],
        },
    )
    return _run(spark, config, hours, 3_600_000 // FILE_MS)
