"""``inspect``: what a checkpoint holds, read-only. Operators, partitions, batch range; per
operator and partition rows and bytes; the heaviest keys; a key-age histogram; keys whose state
has no deadline (leak suspects); and the size of each batch's logs and state writes (L9).

Byte figures come in two kinds: ``disk_bytes`` are the files of a partition on disk (every
retained RocksDB version), ``approx_bytes`` are the size of each row's JSON form as the
``statestore`` reader decodes it: a stand-in for the logical size, good for ranking keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from streamwarden.checkpoints.files import BatchFiles, CheckpointFiles, PartitionDisk, StateSplit
from streamwarden.checkpoints.key_age import BUCKETS, age_basis, bucket
from streamwarden.checkpoints.leaks import LeakCheck, check_variable
from streamwarden.checkpoints.run_lock import checkpoint_holder
from streamwarden.checkpoints.state_reader import (
    OperatorState,
    StateVariable,
    leaving_no_trace,
    list_operators,
    prepare,
    read_timers,
    read_variable,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: State kinds that hold several rows per key (the reader flattens lists and maps).
_MULTI_ROW_KINDS = ("ListState", "MapState")

__all__ = ["InspectReport", "OperatorReport", "StateReport", "TimerReport", "inspect_checkpoint"]


@dataclass(frozen=True)
class PartitionRows:
    partition: int
    rows: int
    approx_bytes: int


@dataclass(frozen=True)
class HeavyKey:
    key: str
    rows: int
    approx_bytes: int


@dataclass(frozen=True)
class StateReport:
    """One state variable (transformWithState) or store (other operators)."""

    name: str
    kind: str
    ttl: bool
    rows: int
    keys: int
    approx_bytes: int
    partitions: list[PartitionRows]
    heaviest_keys: list[HeavyKey]
    age_meaning: str | None
    age_histogram: list[tuple[str, int]] | None
    leak: LeakCheck


@dataclass(frozen=True)
class TimerReport:
    rows: int
    partitions: list[PartitionRows]
    time_to_deadline: list[tuple[str, int]]


@dataclass(frozen=True)
class OperatorReport:
    operator_id: int
    name: str
    stores: tuple[str, ...]
    partitions: int
    min_batch: int
    max_batch: int
    time_mode: str | None
    states: list[StateReport]
    timers: TimerReport | None
    disk: list[PartitionDisk]

    @property
    def leak_suspected(self) -> bool:
        return any(s.leak.suspected for s in self.states)


@dataclass(frozen=True)
class InspectReport:
    checkpoint: str
    query_id: str | None
    running: dict[str, Any] | None
    last_committed: int | None
    watermark_ms: int
    shuffle_partitions: int | None
    batches: list[BatchFiles]
    log_bytes: dict[str, int]
    #: State on disk: what the latest version needs (live) and the older versions retained.
    state: StateSplit = field(default_factory=lambda: StateSplit(0, 0))
    operators: list[OperatorReport] = field(default_factory=list)

    @property
    def leak_suspected(self) -> bool:
        return any(op.leak_suspected for op in self.operators)


def inspect_checkpoint(spark: SparkSession, path: Path, *, top: int = 5) -> InspectReport:
    """Reads everything :class:`InspectReport` holds from the checkpoint at ``path``."""
    files = CheckpointFiles(path)
    report = InspectReport(
        checkpoint=str(path),
        query_id=files.query_id(),
        running=checkpoint_holder(path),
        last_committed=files.last_committed(),
        watermark_ms=files.watermark_ms(),
        shuffle_partitions=files.shuffle_partitions(),
        batches=files.batches(),
        log_bytes=files.log_bytes(),
        state=files.state_split(),
    )
    if not files.operator_ids() or report.last_committed is None:
        return report
    prepare(spark)
    disk = files.partition_disk()
    ever = files.watermark_ever_set()
    with leaving_no_trace(path) as readable:
        for op in list_operators(spark, readable):
            op_disk = [d for d in disk if d.operator_id == op.operator_id]
            report.operators.append(
                _operator(spark, readable, op, op_disk, report.watermark_ms, ever, top)
            )
    return report


def _operator(
    spark: SparkSession,
    path: Path,
    op: OperatorState,
    disk: list[PartitionDisk],
    watermark_ms: int,
    watermark_ever_set: bool,
    top: int,
) -> OperatorReport:
    timers = read_timers(spark, path, op).cache() if op.has_timers else None
    try:
        states = [
            _state(spark, path, op, var, timers, watermark_ms, watermark_ever_set, top)
            for var in op.variables
        ]
        timer_report = _timers(timers, watermark_ms) if timers is not None else None
    finally:
        if timers is not None:
            timers.unpersist()
    return OperatorReport(
        operator_id=op.operator_id,
        name=op.name,
        stores=op.stores,
        partitions=op.partitions,
        min_batch=op.min_batch,
        max_batch=op.max_batch,
        time_mode=op.time_mode,
        states=states,
        timers=timer_report,
        disk=disk,
    )


def _state(
    spark: SparkSession,
    path: Path,
    op: OperatorState,
    var: StateVariable,
    timers: DataFrame | None,
    watermark_ms: int,
    watermark_ever_set: bool,
    top: int,
) -> StateReport:
    raw = read_variable(spark, path, op, var)
    payload = [F.col(c) for c in raw.columns if c != "partition_id"]
    frame = raw.withColumn("_bytes", F.octet_length(F.to_json(F.struct(*payload)))).cache()
    try:
        basis = age_basis(raw, watermark_ms)
        parts, ages = _profile(frame, basis.age_ms if basis else None)
        rows = sum(p.rows for p in parts)
        keys = frame.select("key")
        unique = var.kind not in _MULTI_ROW_KINDS  # a store holds one row per key
        return StateReport(
            name=var.name,
            kind=var.kind,
            ttl=var.ttl,
            rows=rows,
            keys=rows if unique else keys.distinct().count(),
            approx_bytes=sum(p.approx_bytes for p in parts),
            partitions=parts,
            heaviest_keys=_heaviest(frame, top, unique),
            age_meaning=basis.meaning if basis else None,
            age_histogram=ages,
            leak=check_variable(
                op, var, keys if unique else keys.distinct(), timers, watermark_ever_set
            ),
        )
    finally:
        frame.unpersist()


def _profile(
    frame: DataFrame, age_ms: Column | None
) -> tuple[list[PartitionRows], list[tuple[str, int]] | None]:
    """Rows and bytes per partition, and the age histogram if ``age_ms``: one Spark job."""
    label = bucket(age_ms) if age_ms is not None else F.lit(None).cast("string")
    rows = (
        frame.groupBy("partition_id", label.alias("bucket"))
        .agg(F.count(F.lit(1)).alias("n"), F.sum("_bytes").alias("b"))
        .collect()
    )
    per_part: dict[int, PartitionRows] = {}
    per_bucket: dict[str, int] = {}
    for r in rows:
        old = per_part.get(int(r["partition_id"]), PartitionRows(int(r["partition_id"]), 0, 0))
        per_part[old.partition] = PartitionRows(
            old.partition, old.rows + int(r["n"]), old.approx_bytes + int(r["b"] or 0)
        )
        if r["bucket"] is not None:
            per_bucket[r["bucket"]] = per_bucket.get(r["bucket"], 0) + int(r["n"])
    ages = [(name, per_bucket.get(name, 0)) for name, _ in BUCKETS] if age_ms is not None else None
    return [per_part[p] for p in sorted(per_part)], ages


def _heaviest(frame: DataFrame, top: int, unique: bool) -> list[HeavyKey]:
    keyed = frame.select(
        F.to_json("key").alias("k"), F.lit(1).alias("n"), F.col("_bytes").alias("b")
    )
    if not unique:
        keyed = keyed.groupBy("k").agg(F.sum("n").alias("n"), F.sum("b").alias("b"))
    rows = keyed.orderBy(F.desc("b"), "k").limit(top).collect()
    return [HeavyKey(str(r["k"]), int(r["n"]), int(r["b"] or 0)) for r in rows]


def _timers(timers: DataFrame, watermark_ms: int) -> TimerReport:
    to_deadline = F.col("expiration_timestamp_ms") - F.lit(watermark_ms)
    parts, ages = _profile(timers.withColumn("_bytes", F.lit(0)), to_deadline)
    return TimerReport(
        rows=sum(p.rows for p in parts),
        partitions=parts,
        time_to_deadline=ages or [],
    )
