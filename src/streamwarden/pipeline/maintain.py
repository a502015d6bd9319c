"""Upkeep of a pipeline's Delta tables: OPTIMIZE (compacts the small files that one commit per
micro-batch leaves) and VACUUM (deletes the files no current version needs, once they are older
than the retention), table by table.

VACUUM never deletes files a reader may still need: its retention is at least the table's
``delta.deletedFileRetentionDuration`` (Delta's default: 7 days), the window in which a
running query or a reader of an older version may still open a file that a later commit
removed. A shorter retention is refused here, before Delta's own check would, with what to do.
OPTIMIZE rewrites files that the pipeline's MERGE of the sessions table reads, and a MERGE
that overlaps it fails; so the upkeep holds the checkpoint's run lock, and waits for no
running pipeline: stop it first (a ``--once`` run between two scheduled runs is the place).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from streamwarden.checkpoints.run_lock import hold_checkpoint
from streamwarden.config.model import PipelineConfig
from streamwarden.errors import UsageError
from streamwarden.settings.units import format_duration
from streamwarden.sinks.delta import DeltaSinkSettings, delta_target
from streamwarden.sinks.delta_table import DeltaTarget

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["DEFAULT_RETENTION", "TableUpkeep", "delta_targets", "maintain", "retention_of"]

#: Delta's default for ``delta.deletedFileRetentionDuration``.
DEFAULT_RETENTION = timedelta(days=7)
_RETENTION_PROPERTY = "delta.deletedFileRetentionDuration"
_INTERVAL = re.compile(r"^\s*(?:interval\s+)?(\d+)\s+([a-z]+?)s?\s*$", re.IGNORECASE)
_UNITS = {
    "week": timedelta(weeks=1),
    "day": timedelta(days=1),
    "hour": timedelta(hours=1),
    "minute": timedelta(minutes=1),
    "second": timedelta(seconds=1),
}


@dataclass(frozen=True)
class TableUpkeep:
    """What the upkeep did to one table."""

    sink: str
    table: str
    files_compacted: int
    files_deleted: int
    retention: timedelta

    def describe(self) -> str:
        return (
            f"sink {self.sink} ({self.table}): OPTIMIZE compacted {self.files_compacted} files; "
            f"VACUUM deleted {self.files_deleted} files older than "
            f"{format_duration(self.retention)}"
        )


def delta_targets(config: PipelineConfig) -> dict[str, DeltaTarget]:
    """The Delta tables a pipeline writes, by sink name."""
    return {
        name: delta_target(sink)
        for name, sink in config.sinks.items()
        if isinstance(sink, DeltaSinkSettings)
    }


def retention_of(properties: dict[str, str]) -> timedelta:
    """A table's ``delta.deletedFileRetentionDuration`` (``"interval 7 days"``), or Delta's
    default."""
    text = properties.get(_RETENTION_PROPERTY)
    if not text:
        return DEFAULT_RETENTION
    match = _INTERVAL.match(text)
    if match is None or match.group(2).lower() not in _UNITS:
        raise UsageError(f"table property {_RETENTION_PROPERTY} = {text!r} is not understood")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def maintain(
    spark: SparkSession,
    config: PipelineConfig,
    *,
    retain: timedelta | None = None,
    optimize: bool = True,
    vacuum: bool = True,
) -> list[TableUpkeep]:
    """OPTIMIZE then VACUUM each Delta table of ``config`` that exists, with the checkpoint's
    run lock held. ``retain`` (default: each table's own retention) below a table's
    ``delta.deletedFileRetentionDuration`` is refused with a :class:`UsageError`."""
    targets = delta_targets(config)
    if not targets:
        raise UsageError(f"pipeline {config.name!r} writes no Delta table: nothing to maintain")
    done = []
    with hold_checkpoint(config.checkpoint.path, "streamwarden maintain"):
        for name, target in targets.items():
            if not target.exists(spark):
                continue
            table = target.delta_table(spark)
            detail = table.detail().first()
            assert detail is not None  # one row per table
            floor = retention_of(dict(detail["properties"] or {}))
            keep = floor if retain is None else retain
            if keep < floor:
                raise UsageError(
                    f"--retain {format_duration(keep)} is below the retention of "
                    f"{target.describe()} ({_RETENTION_PROPERTY} = {format_duration(floor)}): "
                    "VACUUM would delete files a running query or a reader of a recent version "
                    f"may still open; retain at least {format_duration(floor)}, or lower the "
                    "table property if no reader ever lags that far"
                )
            compacted = _optimize(table) if optimize else 0
            deleted = _vacuum(spark, target, keep) if vacuum else 0
            done.append(TableUpkeep(name, target.describe(), compacted, deleted, keep))
    return done


def _optimize(table: object) -> int:
    metrics = table.optimize().executeCompaction().first()  # type: ignore[attr-defined]
    return int(metrics["metrics"]["numFilesRemoved"]) if metrics is not None else 0


def _vacuum(spark: SparkSession, target: DeltaTarget, keep: timedelta) -> int:
    """VACUUM with ``keep`` (at least the table's retention), counting the files it deleted."""
    hours = keep.total_seconds() / 3600
    name = target.table if target.table is not None else f"delta.`{target.path}`"
    before = spark.sql(f"VACUUM {name} RETAIN {hours} HOURS DRY RUN").count()
    spark.sql(f"VACUUM {name} RETAIN {hours} HOURS")
    return before
