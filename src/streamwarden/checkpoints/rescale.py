"""``rescale``: changes the number of state partitions of a stopped query's checkpoint (L10).

Wraps Spark 4.2.0's offline state repartition (``StreamingCheckpointManager.repartition``, run by
``OfflineStateRepartitionRunner``): it reads the state as of the last committed batch N, shuffles
it by each key's partition key into the new count, writes it as state version N+2 and commits a
batch N+1 whose offsets equal N's (no input is read) with ``spark.sql.shuffle.partitions`` set to
the new count. The next run of the query picks the count up from the checkpoint, whatever its own
config says. Verified to work on streamwarden's transformWithState sessions operator (RocksDB,
changelog checkpointing, checkpoint format v2: the new batch's commit carries the new state ids).

Around it, this module: refuses while a streamwarden pipeline holds the checkpoint (its run lock,
see :mod:`run_lock`) and while the last planned batch is uncommitted (Spark's own check);
counts rows per operator and state variable before and after and fails if any differ; checks the
checkpoint now pins N partitions (and transformWithState's versioned operator metadata says N;
Spark 4.2.0 leaves other operators' unversioned metadata at the old count, harmlessly); and
reports the time each step took.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.checkpoints.files import CheckpointFiles
from streamwarden.checkpoints.run_lock import hold_checkpoint
from streamwarden.checkpoints.state_reader import (
    count_rows,
    list_operators,
    plain_path,
    prepare,
)
from streamwarden.errors import StateError, UsageError
from streamwarden.spark.jvm import java_message

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["RescaleReport", "rescale_checkpoint"]


@dataclass(frozen=True)
class RescaleReport:
    """What a rescale did and what it found, with the time of each step in seconds."""

    checkpoint: str
    partitions_before: int
    partitions_after: int
    batch_id: int  # the repartition batch Spark committed
    rows_before: dict[str, int]
    rows_after: dict[str, int]
    repartition_seconds: float
    verify_seconds: float


def rescale_checkpoint(spark: SparkSession, path: Path, partitions: int) -> RescaleReport:
    """Repartitions the state at ``path`` into ``partitions``; raises on refusal or mismatch."""
    if partitions < 1:
        raise UsageError(f"--partitions must be at least 1, got {partitions!r}")
    files = CheckpointFiles(path)
    with hold_checkpoint(path, f"rescale to {partitions} partitions"):
        _check_rescalable(files, partitions)
        before_partitions = files.shuffle_partitions() or 0
        started = time.perf_counter()
        rows_before = count_rows(spark, path)
        counted = time.perf_counter()
        _repartition(spark, path, partitions)
        repartitioned = time.perf_counter()
        batch_id = files.last_committed()
        rows_after = count_rows(spark, path)
        _verify(spark, path, partitions, rows_before, rows_after)
        verified = time.perf_counter()
    return RescaleReport(
        checkpoint=str(path),
        partitions_before=before_partitions,
        partitions_after=partitions,
        batch_id=batch_id if batch_id is not None else -1,
        rows_before=rows_before,
        rows_after=rows_after,
        repartition_seconds=round(repartitioned - counted, 3),
        verify_seconds=round((counted - started) + (verified - repartitioned), 3),
    )


def _check_rescalable(files: CheckpointFiles, partitions: int) -> None:
    last = files.last_committed()
    if last is None or not files.operator_ids():
        raise StateError(
            f"checkpoint {str(files.path)!r} has no committed state to rescale; run the query "
            "until it commits a batch, or change spark.shuffle_partitions before the first run"
        )
    current = files.shuffle_partitions()
    if current == partitions:
        raise UsageError(
            f"checkpoint {str(files.path)!r} already has {partitions} state partitions"
        )
    planned = files.offset_batches()
    if planned and planned[-1] > last:
        raise StateError(
            f"batch {planned[-1]} of checkpoint {str(files.path)!r} was planned but never "
            "committed: a query is running on it, or stopped mid-batch. Stop it, or run it with "
            "--once until it finishes, then rescale"
        )


def _repartition(spark: SparkSession, path: Path, partitions: int) -> None:
    prepare(spark)
    manager = spark._jsparkSession.streamingCheckpointManager()
    with plain_path(path) as reachable:
        try:
            manager.repartition(str(reachable), partitions, True)
        except Exception as exc:
            raise StateError(
                f"Spark could not repartition checkpoint {str(path)!r}: {java_message(exc)}"
            ) from None


def _verify(
    spark: SparkSession,
    path: Path,
    partitions: int,
    before: dict[str, int],
    after: dict[str, int],
) -> None:
    undo = (
        "The batches before it are intact: to undo, delete the newest file in offsets/ and "
        "commits/ (the repartition batch)"
    )
    if before != after:
        raise StateError(
            f"rescale of {str(path)!r} changed the state's row counts: before {before}, after "
            f"{after}. {undo}"
        )
    pinned = CheckpointFiles(path).shuffle_partitions()
    # Spark rewrites only versioned (v2) operator metadata, which transformWithState has; other
    # operators' v1 metadata keeps the old count, and Spark reads their partitions from the
    # offset log's conf instead.
    with plain_path(path) as reachable:
        wrong = [
            op.operator_id
            for op in list_operators(spark, reachable)
            if op.is_transform_with_state and op.partitions != partitions
        ]
    if pinned != partitions or wrong:
        raise StateError(
            f"after the rescale, {str(path)!r} pins {pinned} partitions and operator(s) "
            f"{wrong} do not report {partitions}. {undo}"
        )
