"""Moves event time forward while the input is idle, so that open sessions still close (L2).

Spark's watermark only advances when data arrives: a quiet input would keep its last sessions,
and their state, open forever. When no event has arrived for ``idle_timeout`` of processing time,
the ticker writes a control record whose event time is the last seen maximum event time plus the
processing time that has passed since. The record is keyed apart from users, touches no state,
and is not an input record for accounting; it only raises the watermark, so that timers fire.

The ticks are a second stream of the same query, read beside whatever source the config names
(:func:`read_records`), so that every kind of source gets them.

Ticks must not grow anything in a pipeline left idle for weeks: the ticker writes at most one
tick per ``min_interval`` (the trigger interval: a faster tick would only queue up), none once
a batch after the input went quiet reports no state left (nothing is open, so nothing needs
event time to move), and Spark deletes each tick file once the batch that read it is
committed (``cleanSource = delete``). The tick stream's own log (``sources/1``, Spark's list of
the files it read) would still keep one entry per tick ever read: :func:`prune_ticks_log` drops
the entries of spent ticks when a query starts and whenever Spark has compacted that log, so
it holds a few entries however many ticks the pipeline has written.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.sources.base import source_of
from streamwarden.sources.file_log import prune_once_per_compact, prune_spent_entries
from streamwarden.validation import TICK_FIELD, TICK_SOURCE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from streamwarden.config.model import PipelineConfig

__all__ = [
    "IdleTicker",
    "prune_ticks_log",
    "read_records",
    "read_ticks",
    "ticks_log",
    "write_tick",
]


@dataclass
class IdleTicker:
    """Decides when to tick. Processing time is passed in (``now_ms``), never read here."""

    idle_timeout: timedelta
    #: At most one tick per this much processing time (the pipeline's trigger interval).
    min_interval: timedelta = timedelta(0)
    last_input_at_ms: int | None = None
    max_event_ms: int | None = None
    last_tick_ms: int | None = None
    last_tick_at_ms: int | None = None
    #: Whether the last batch reported state left to close (None: not known, so tick).
    state_left: bool | None = None

    def observe(
        self,
        now_ms: int,
        input_rows: int,
        max_event_ms: int | None,
        state_rows: int | None = None,
    ) -> None:
        """Record one batch's progress: its user-input row count, maximum event time and, if
        known, the state rows left after it."""
        if self.last_input_at_ms is None or input_rows > 0:
            self.last_input_at_ms = now_ms
        if max_event_ms is not None and input_rows > 0:
            self.max_event_ms = max(self.max_event_ms or max_event_ms, max_event_ms)
        self.state_left = None if state_rows is None else state_rows > 0

    def due_tick(self, now_ms: int) -> int | None:
        """The event time to tick to, or None if input is not idle (or no event seen yet), a
        tick was written less than ``min_interval`` ago, or no state is left to close."""
        if self.max_event_ms is None or self.last_input_at_ms is None:
            return None
        idle_ms = now_ms - self.last_input_at_ms
        if idle_ms < self.idle_timeout.total_seconds() * 1000 or self.state_left is False:
            return None
        if (
            self.last_tick_at_ms is not None
            and now_ms - self.last_tick_at_ms < self.min_interval.total_seconds() * 1000
        ):
            return None
        tick = self.max_event_ms + idle_ms
        if self.last_tick_ms is not None and tick <= self.last_tick_ms:
            return None
        self.last_tick_ms = tick
        self.last_tick_at_ms = now_ms
        return tick


def write_tick(ticks_dir: Path, event_time_ms: int) -> Path:
    """Atomically drops one tick file where the pipeline's tick source reads it."""
    ticks_dir.mkdir(parents=True, exist_ok=True)
    final = ticks_dir / f"tick-{event_time_ms:015d}.jsonl"
    tmp = ticks_dir / f".{final.name}.tmp"
    tmp.write_text(json.dumps({TICK_FIELD: str(event_time_ms)}) + "\n", encoding="utf-8")
    os.replace(tmp, final)
    return final


def read_ticks(spark: SparkSession, ticks_dir: Path) -> DataFrame:
    """The control records :func:`write_tick` writes, marked by a true ``TICK_SOURCE`` column:
    validation takes only these rows as ticks."""
    from pyspark.sql import functions as F

    ticks_dir.mkdir(parents=True, exist_ok=True)
    # a tick is spent once its batch is committed: Spark deletes its file then
    reader = spark.readStream.option("cleanSource", "delete")
    return reader.text(str(ticks_dir)).select(
        F.col("value").alias("raw"), F.lit(True).alias(TICK_SOURCE)
    )


def read_records(spark: SparkSession, config: PipelineConfig, ticks_dir: Path) -> DataFrame:
    """A pipeline's input: the source's records (with whatever columns the source adds beside
    ``raw``) and the idle ticks as ``raw``, each row marked by the boolean ``TICK_SOURCE``
    column with the stream it came from."""
    from pyspark.sql import functions as F

    records = (
        source_of(config.source)
        .read(spark, config.source, config.context)
        .withColumn(TICK_SOURCE, F.lit(False))
    )
    return records.unionByName(read_ticks(spark, ticks_dir), allowMissingColumns=True)


def ticks_log(checkpoint: Path, index: int = 1) -> Path:
    """The tick stream's file log in ``checkpoint``: the source after the records' (the second,
    or after the last of several), as :func:`read_records` puts the ticks after them."""
    return checkpoint / "sources" / str(index)


def prune_ticks_log(
    checkpoint: Path, *, index: int = 1, unless_pruned: Path | None = None
) -> Path | None:
    """Drops the entries of spent ticks (read, committed, deleted) from the tick stream's log
    (:func:`~streamwarden.sources.file_log.prune_spent_entries`); returns the compact file it
    looked at, to pass as ``unless_pruned`` next time: a compact file already pruned is left
    alone (Spark adds entries only in new files)."""
    return prune_once_per_compact(
        ticks_log(checkpoint, index), checkpoint, prune_spent_entries, unless_pruned=unless_pruned
    )
