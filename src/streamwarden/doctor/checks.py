"""Every config check ``doctor`` runs without Spark. Each takes the config and returns its
findings. (The input sample needs Spark: ``doctor/input_sample.py``, which the ``doctor``
command runs beside these, and ``run`` never.)

Thresholds are named constants with their reason beside them; a finding's text names the
setting, shows its value and says what to change.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from datetime import timedelta

from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.checkpoint import (
    check_checkpoint_logs,
    check_checkpoint_partitions,
    check_cut_logs,
    pinned_partitions,
)
from streamwarden.doctor.cluster import check_cluster_storage
from streamwarden.doctor.connections import connection_findings
from streamwarden.doctor.exposure import check_exposure
from streamwarden.doctor.findings import Finding, Severity
from streamwarden.doctor.memory import JVM_NATIVE, MIB, process_memory
from streamwarden.errors import StreamwardenError
from streamwarden.operators.process.settings import ProcessConfig
from streamwarden.operators.sessions.settings import SessionsConfig
from streamwarden.settings.spark_settings import local_threads
from streamwarden.settings.units import format_duration
from streamwarden.spark.session import (
    ROCKSDB_PROVIDER,
    STATE_DEFAULTS,
    TRACK_STATE_ROWS,
    state_rows_tracked,
)

__all__ = ["CHECKS", "diagnose", "task_cores"]

#: State partitions are fixed by the checkpoint; twice the cores lets the job double its cores
#: later without ``streamwarden rescale``.
GROWTH_FACTOR = 2
#: Beyond this many partitions per core, per-partition costs (one RocksDB instance and one task
#: per partition per batch) outweigh the spread.
MAX_PARTITIONS_PER_CORE = 32
#: State that outlives a user's last event by more than this is a deliberate choice at best.
LONG_HORIZON = timedelta(days=1)

_PROVIDER = "spark.sql.streaming.stateStore.providerClass"
_CHANGELOG = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
_NO_DATA = "spark.sql.streaming.noDataMicroBatches.enabled"


def diagnose(config: PipelineConfig, *, connections: bool = True) -> list[Finding]:
    """All findings of the Spark-free checks for ``config``, in check order; without the
    questions to the source's and sinks' servers when ``connections`` is false (``run`` has
    asked them already). The input sample is not among them: it needs Spark
    (:func:`~streamwarden.doctor.input_sample.check_input_sample`), and ``run`` watches its
    dead letters itself."""
    outside = (connection_findings,)
    checks = CHECKS if connections else tuple(c for c in CHECKS if c not in outside)
    return [finding for check in checks for finding in check(config)]


def _conf(config: PipelineConfig) -> dict[str, str]:
    """The Spark settings a run gets: streamwarden's defaults, then the config's own."""
    return {**STATE_DEFAULTS, **config.spark.conf}


def task_cores(config: PipelineConfig) -> int | None:
    """Task slots: ``resources.cores``, else from a ``local[N]`` master, else from a cluster
    master's settings (``spark.executor.instances`` x ``spark.executor.cores``, or a
    standalone master's ``spark.cores.max``); None if unknown."""
    if config.resources.cores is not None:
        return config.resources.cores
    threads = local_threads(config.spark.master)
    if threads is not None:
        return (os.cpu_count() or 1) if threads == "*" else int(threads)
    conf = config.spark.conf
    instances, cores = conf.get("spark.executor.instances"), conf.get("spark.executor.cores")
    if instances and cores and instances.isdigit() and cores.isdigit():
        return int(instances) * int(cores)
    most = conf.get("spark.cores.max", "")
    return int(most) if most.isdigit() else None


def check_memory(config: PipelineConfig) -> list[Finding]:
    limit = config.resources.container_memory
    mem = process_memory(config.spark.master, _conf(config))
    out = []
    if limit is not None and mem.total > limit:
        out.append(
            Finding(
                "memory-over-container",
                Severity.ERROR,
                f"the {mem.role} asks for {_mib(mem.total)} (heap {_mib(mem.heap)} + overhead "
                f"{_mib(mem.overhead)} + off-heap {_mib(mem.off_heap)} + PySpark "
                f"{_mib(mem.pyspark)}) but resources.container_memory is {_mib(limit)}: the "
                "container would kill it",
                f"lower spark.{mem.role}.memory (or the other parts) until the sum fits "
                f"{_mib(limit)}, or raise resources.container_memory to the real limit",
                "memory-contradictions",
            )
        )
    if limit is not None and mem.rocksdb_cap is None:
        out.append(
            Finding(
                "rocksdb-memory-unbounded",
                Severity.WARNING,
                "RocksDB's native memory is not bounded: every state partition's instance grows "
                f"its own caches outside the heap, so the {mem.role} can outgrow "
                f"{_mib(limit)} however its heap is set",
                'set spark.conf "spark.sql.streaming.stateStore.rocksdb.boundedMemoryUsage" = '
                '"true" and "...rocksdb.maxMemoryUsageMB" to a share of the overhead',
                "memory-contradictions",
            )
        )
    needed = mem.native_needed
    if mem.rocksdb_cap is not None and needed is not None and needed > mem.overhead:
        out.append(
            Finding(
                "rocksdb-memory-over-overhead",
                Severity.WARNING,
                f"RocksDB may use up to {_mib(mem.rocksdb_cap)} of native memory and the JVM "
                f"itself about {_mib(JVM_NATIVE)} more outside its heap, together more than the "
                f"{_mib(mem.overhead)} of spark.{mem.role}.memoryOverhead reserved for native use",
                f"raise spark.{mem.role}.memoryOverhead to at least {_mib(needed)}, or lower "
                "rocksdb.maxMemoryUsageMB",
                "memory-contradictions",
            )
        )
    conf = _conf(config)
    if mem.role == "driver" and "spark.executor.memory" in conf:
        out.append(
            Finding(
                "executor-memory-ignored",
                Severity.WARNING,
                f"spark.executor.memory = {conf['spark.executor.memory']!r} has no effect with "
                f"master {config.spark.master!r}: in local mode tasks run in the driver",
                "set spark.driver.memory instead, and remove spark.executor.memory",
                "memory-contradictions",
            )
        )
    if conf.get("spark.memory.offHeap.enabled", "false").lower() == "true" and not mem.off_heap:
        out.append(
            Finding(
                "off-heap-without-size",
                Severity.ERROR,
                "spark.memory.offHeap.enabled is true but spark.memory.offHeap.size is not set: "
                "Spark refuses to start",
                'set "spark.memory.offHeap.size" (e.g. "1g"), or disable off-heap memory',
                "memory-contradictions",
            )
        )
    return out


def check_partitions(config: PipelineConfig) -> list[Finding]:
    cores = task_cores(config)
    if cores is None:
        return []
    try:  # an existing checkpoint's count is the one the run will use
        pinned = pinned_partitions(config)
    except StreamwardenError:  # damaged: check_checkpoint_partitions reports it
        pinned = None
    parts = pinned or config.spark.shuffle_partitions
    setting = (
        f"the checkpoint's {parts} state partitions"
        if pinned
        else f"spark.shuffle_partitions = {parts}"
    )
    out = []
    if parts < cores:
        out.append(
            Finding(
                "partitions-fewer-than-cores",
                Severity.WARNING,
                f"{setting} leaves {cores - parts} of {cores} cores idle in every stateful step",
                f"use a multiple of the cores, e.g. {cores * GROWTH_FACTOR}",
                "skewed-partitions",
            )
        )
    elif parts % cores:
        busiest = math.ceil(parts / cores) / (parts / cores)
        out.append(
            Finding(
                "partitions-uneven",
                Severity.WARNING,
                f"{parts} state partitions over {cores} cores: some cores get "
                f"{math.ceil(parts / cores)}, others {parts // cores}; the busiest does "
                f"{busiest:.2f}x the mean work",
                f"use a multiple of {cores}, e.g. {cores * max(GROWTH_FACTOR, parts // cores)}",
                "skewed-partitions",
            )
        )
    if cores <= parts < cores * GROWTH_FACTOR:
        out.append(
            Finding(
                "no-growth-headroom",
                Severity.WARNING,
                f"{parts} state partitions for {cores} cores: the partition count is fixed by the "
                f"checkpoint, so the job can never use more than {parts} cores without a rescale",
                f"start with at least {cores * GROWTH_FACTOR} (or `streamwarden rescale` later)",
                "skewed-partitions",
            )
        )
    if parts > cores * MAX_PARTITIONS_PER_CORE:
        out.append(
            Finding(
                "too-many-partitions",
                Severity.WARNING,
                f"{parts} state partitions for {cores} cores: each batch pays one task and one "
                "RocksDB instance per partition",
                f"use {cores * GROWTH_FACTOR * 2} or so; more only if state per partition is large",
                "skewed-partitions",
            )
        )
    return out


def _session_deadlines(s: SessionsConfig) -> list[Finding]:
    """The sessions operator's state deadlines: idle timeout, horizon, history lateness."""
    out = []
    if s.idle_timeout is None:
        out.append(
            Finding(
                "no-idle-timeout",
                Severity.WARNING,
                "sessions.idle_timeout is off: when input goes quiet, event time stops, and the "
                "last sessions and their state stay until new input arrives (never, for a source "
                "that stopped)",
                'set sessions.idle_timeout, e.g. "5m"',
                "idle-input",
            )
        )
    horizon = s.gap + s.allowed_lateness + s.max_out_of_orderness
    if horizon > LONG_HORIZON:
        out.append(
            Finding(
                "long-state-horizon",
                Severity.WARNING,
                f"each user's state lives {format_duration(horizon)} after their last event (gap + "
                "allowed_lateness + max_out_of_orderness): with an unbounded key space, state "
                "holds every user seen in that time",
                "shorten sessions.allowed_lateness or max_out_of_orderness; keep history in an "
                "external store",
                "state-without-deadline",
            )
        )
    if s.history_lateness is not None and s.history_lateness <= s.allowed_lateness:
        out.append(
            Finding(
                "history-lateness-too-short",
                Severity.ERROR,
                f"sessions.history_lateness ({format_duration(s.history_lateness)}) is not "
                f"longer than allowed_lateness ({format_duration(s.allowed_lateness)}): the "
                "history store takes the late events the state no longer can, so it would "
                "never take one",
                'raise sessions.history_lateness above allowed_lateness (e.g. "7d"), or set '
                'it to "off"',
                "L8",
            )
        )
    return out


def check_deadlines(config: PipelineConfig) -> list[Finding]:
    out = _session_deadlines(config.section) if isinstance(config.section, SessionsConfig) else []
    if isinstance(config.section, ProcessConfig):
        out += _unbounded_states(config)
    if _conf(config).get(_NO_DATA, "true").lower() == "false":
        out.append(
            Finding(
                "no-data-batches-off",
                Severity.WARNING,
                f"{_NO_DATA} is false: timers fire only in batches that have input, so sessions "
                "close and state is freed only when more data comes",
                f"remove {_NO_DATA} from spark.conf",
                "idle-input",
            )
        )
    return out


def _unbounded_states(config: PipelineConfig) -> list[Finding]:
    """A keyed processor's states declared ``unbounded=True``: freed only by its own code."""
    from streamwarden.operators.process.operator import processor_of
    from streamwarden.operators.process.processor import declared_states

    processor = processor_of(config)
    return [
        Finding(
            "unbounded-state",
            Severity.WARNING,
            f"state {d.name!r} of {type(processor).__name__} is declared unbounded=True: only "
            "the processor's own code clears it, so a key that never returns keeps it forever "
            "(the state-growth alarm watches the state rows)",
            "give it expire_after=timedelta(...) (event time after its last write), or clear it "
            "in process when the key is done",
            "state-without-deadline",
        )
        for d in declared_states(type(processor))
        if d.unbounded
    ]


def check_state_store(config: PipelineConfig) -> list[Finding]:
    conf = _conf(config)
    out = []
    if conf.get(_PROVIDER) != ROCKSDB_PROVIDER:
        out.append(
            Finding(
                "rocksdb-off",
                Severity.ERROR,
                f"spark.conf sets {_PROVIDER} = {conf.get(_PROVIDER)!r}: state would live on the "
                "JVM heap with full snapshots, not in RocksDB with incremental checkpoints",
                f"remove {_PROVIDER} from spark.conf (streamwarden sets RocksDB)",
                "full-snapshots",
            )
        )
    elif conf.get(_CHANGELOG, "false").lower() != "true":
        out.append(
            Finding(
                "changelog-off",
                Severity.WARNING,
                f"{_CHANGELOG} is false: every checkpoint uploads RocksDB files instead of a "
                "small changelog, so checkpoints grow with the state",
                f"remove {_CHANGELOG} from spark.conf",
                "full-snapshots",
            )
        )
    if not state_rows_tracked(conf):
        out.append(
            Finding(
                "state-rows-untracked",
                Severity.WARNING,
                f"{TRACK_STATE_ROWS} is false: Spark then reports 0 state rows, so the "
                "state-growth (leak) alarm, the state-row figures of the progress lines, status, "
                "report and Prometheus, and the state-row skew check all see nothing",
                f"remove {TRACK_STATE_ROWS} from spark.conf; turning it off saves one RocksDB "
                "read per state write (see bench/notes/scale.md), at the price of that blindness",
                "unwatched-trends",
            )
        )
    return out


def _mib(n: int) -> str:
    return f"{n / MIB:.0f} MiB"


CHECKS: tuple[Callable[[PipelineConfig], list[Finding]], ...] = (
    check_memory,
    check_partitions,
    check_checkpoint_partitions,
    check_checkpoint_logs,
    check_cut_logs,
    check_deadlines,
    check_state_store,
    check_exposure,
    check_cluster_storage,
    connection_findings,
)
