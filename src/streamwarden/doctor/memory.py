"""What the process that runs the tasks asks for, derived from the Spark settings (L12).

In local mode every task runs in the driver JVM, so the driver's settings count; otherwise each
executor's. Spark sizes a container as heap + overhead + off-heap + PySpark worker memory; the
overhead defaults to max(384 MiB, 10% of the heap) and is where native memory lives, RocksDB's
included. RocksDB's memory is bounded only with ``boundedMemoryUsage``; then
``maxMemoryUsageMB`` caps all instances of a process together.

The overhead must also hold the JVM's own native memory (metaspace, code cache, thread stacks,
direct buffers, the allocator's arenas): ``bench/scale/checkpoint_memory.py`` measured about
420 MiB of it beside RocksDB's at 1M keys (614 MiB native, RocksDB 195 MiB of it), so the
default 384 MiB overhead cannot hold even that, let alone RocksDB's cap (bench/notes/scale.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from streamwarden.settings.units import parse_memory

__all__ = ["JVM_NATIVE", "ProcessMemory", "process_memory"]

MIB = 2**20
_MIN_OVERHEAD = 384 * MIB
#: What the JVM itself keeps outside its heap while running a stateful query, which the overhead
#: must hold besides RocksDB's cap: measured up to 587 MiB at 1M keys (resident set minus the
#: committed heap minus RocksDB's own figure, per batch; bench/notes/scale.md "Q4"), rounded up.
JVM_NATIVE = 640 * MIB
_ROCKSDB = "spark.sql.streaming.stateStore.rocksdb."


@dataclass(frozen=True)
class ProcessMemory:
    """Bytes the task process asks for, part by part; ``rocksdb_cap`` is None when unbounded."""

    role: str  # "driver" (local mode) or "executor"
    heap: int
    overhead: int
    off_heap: int
    pyspark: int
    rocksdb_cap: int | None

    @property
    def total(self) -> int:
        return self.heap + self.overhead + self.off_heap + self.pyspark

    @property
    def native_needed(self) -> int | None:
        """Native memory the overhead must hold: RocksDB's cap and the JVM's own; None when
        RocksDB is unbounded (then no figure holds)."""
        return None if self.rocksdb_cap is None else self.rocksdb_cap + JVM_NATIVE


def process_memory(master: str, conf: Mapping[str, str]) -> ProcessMemory:
    """The memory request of the driver (``local`` masters) or of one executor."""
    role = "driver" if master.startswith("local") else "executor"
    heap = parse_memory(conf.get(f"spark.{role}.memory", "1g"), bare_unit="m")
    overhead_key = f"spark.{role}.memoryOverhead"
    overhead = (
        parse_memory(conf[overhead_key], bare_unit="m")
        if overhead_key in conf
        else max(_MIN_OVERHEAD, heap // 10)
    )
    off_heap = 0
    if conf.get("spark.memory.offHeap.enabled", "false").lower() == "true":
        off_heap = parse_memory(conf.get("spark.memory.offHeap.size", "0"))
    pyspark = 0  # PySpark workers get their own budget on executors only
    if role == "executor":
        pyspark = parse_memory(conf.get("spark.executor.pyspark.memory", "0"), bare_unit="m")
    bounded = conf.get(f"{_ROCKSDB}boundedMemoryUsage", "false").lower() == "true"
    cap = int(conf.get(f"{_ROCKSDB}maxMemoryUsageMB", "500")) * MIB if bounded else None
    return ProcessMemory(role, heap, overhead, off_heap, pyspark, cap)
