"""Runs a pipeline from its config: once over what is there, or continuously."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.checkpoints.files import CheckpointFiles
from streamwarden.checkpoints.run_lock import hold_checkpoint
from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.checkpoint import failure_advice
from streamwarden.doctor.connections import required_jars
from streamwarden.errors import PipelineError
from streamwarden.operators import operator_of
from streamwarden.operators.base import BatchStats, OperatorStep
from streamwarden.pipeline.idle import IdleTicker, read_records, write_tick
from streamwarden.pipeline.interrupt import stop_requested_on_interrupt
from streamwarden.pipeline.ownership import check_ownership
from streamwarden.spark.jvm import java_message
from streamwarden.spark.session import build_spark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

    from streamwarden.monitoring.monitor import QueryMonitor
    from streamwarden.sinks.writer import BatchWriter

__all__ = ["Pipeline", "RunResult", "ticks_dir"]

ProgressCallback = Callable[[dict[str, Any], "BatchStats | None"], None]


def ticks_dir(config: PipelineConfig) -> Path:
    """Where the idle ticker writes; inside the checkpoint, which owns what the ticks did."""
    return config.checkpoint.path / "streamwarden" / "ticks"


@dataclass
class RunResult:
    """What a run did, batch by batch."""

    progress: list[dict[str, Any]] = field(default_factory=list)
    batches: list[BatchStats] = field(default_factory=list)


class Pipeline:
    """A configured pipeline: its source and the idle ticks through its operator to its sinks.
    ``spark`` may be given, e.g. by tests sharing a session."""

    def __init__(self, config: PipelineConfig, spark: SparkSession | None = None) -> None:
        self.config = config
        #: The configured operator: its step, stats, watermark delay and drain horizon.
        self.operator = operator_of(config)
        self._spark = spark
        #: The monitor of the current (or last) run, if monitoring is enabled.
        self.monitor: QueryMonitor | None = None
        #: The batch writer of the running query: it keeps the cause of a failed batch.
        self._writer: BatchWriter | None = None

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            s = self.config.spark
            self._spark = build_spark_session(
                app_name=f"streamwarden-{self.config.name}",
                master=s.master,
                shuffle_partitions=s.shuffle_partitions,
                extra_conf=s.conf,
                extra_jars=required_jars(self.config),
            )
        return self._spark

    def _step(self) -> OperatorStep:
        cfg = self.config
        raw = read_records(self.spark, cfg, ticks_dir(cfg))
        return self.operator.build_step(cfg, raw)

    def stream_frame(self) -> DataFrame:
        """The query's output before the sinks: the source's records and the ticks through the
        operator."""
        return self._step().output

    def start(self, *, once: bool) -> StreamingQuery:
        """Builds and starts the streaming query."""
        cfg = self.config
        step = self._step()
        self._writer = step.writer
        stream = (
            step.output.writeStream.queryName(cfg.name)
            .foreachBatch(step.writer)
            .option("checkpointLocation", str(cfg.checkpoint.path))
        )
        if once:
            stream = stream.trigger(availableNow=True)
        else:
            seconds = cfg.spark.trigger_interval.total_seconds()
            stream = stream.trigger(processingTime=f"{int(seconds * 1000)} milliseconds")
        try:
            return stream.start()
        except Exception as exc:
            raise PipelineError(
                f"pipeline {cfg.name!r} could not start: {java_message(exc)}"
            ) from None

    def run(
        self,
        *,
        once: bool,
        on_progress: ProgressCallback | None = None,
        poll_seconds: float = 0.5,
        now_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        drain: bool = False,
        on_start: Callable[[QueryMonitor | None], None] | None = None,
    ) -> RunResult:
        """Runs until done (``once``) or until interrupted, reporting each batch.

        In continuous mode the idle ticker advances event time when input goes quiet. With
        ``drain`` (only with ``once``), event time is then moved past every deadline so that all
        sessions close (or partial matches expire) and all state is freed: the end of a finite
        input. Events that arrive after a drain are judged against the moved watermark (usually
        ``too_late``).

        With ``monitoring.enabled``, a :class:`~streamwarden.monitoring.QueryMonitor` watches
        every batch (progress log, Prometheus, alarms) for the whole run; ``on_start`` receives
        it (or None) once the query has started. The checkpoint's run lock is held throughout, so
        offline tools refuse to change it and a second run on the same checkpoint fails at once
        instead of corrupting it.
        """
        with hold_checkpoint(self.config.checkpoint.path, f"pipeline {self.config.name!r}"):
            check_ownership(self.config)
            self.monitor = self._start_monitor()
            try:
                monitor = self.monitor
                result = self._run(
                    once=once,
                    on_progress=on_progress,
                    poll_seconds=poll_seconds,
                    now_ms=now_ms,
                    on_started=None if on_start is None else lambda: on_start(monitor),
                )
                if drain and once:
                    write_tick(ticks_dir(self.config), self._drain_tick(result))
                    more = self._run(
                        once=True,
                        on_progress=on_progress,
                        poll_seconds=poll_seconds,
                        now_ms=now_ms,
                    )
                    result.progress += more.progress
                    result.batches += more.batches
            finally:
                if self.monitor is not None:
                    self.monitor.close()
        return result

    def _start_monitor(self) -> QueryMonitor | None:
        if not self.config.monitoring.enabled:
            return None
        from streamwarden.monitoring.monitor import QueryMonitor

        return QueryMonitor(
            self.spark,
            self.config.name,
            checkpoint=self.config.checkpoint.path,
            config=self.config.monitoring,
        ).start()

    def _drain_tick(self, result: RunResult) -> int:
        """An event time past every deadline of every state the pipeline may hold."""
        horizon_ms = int(self.operator.drain_horizon(self.config).total_seconds() * 1000) + 1
        seen = [m for p in result.progress if (m := max_event_ms(p)) is not None]
        # a run with no new input knows only the checkpoint's watermark, which trails the
        # latest event time by the watermark delay
        delay_ms = int(self.operator.watermark_delay(self.config).total_seconds() * 1000)
        checkpoint = CheckpointFiles.existing(self.config.checkpoint.path)
        watermark_ms = 0 if checkpoint is None else checkpoint.watermark_ms()
        latest = max([*seen, watermark_ms + delay_ms])
        return latest + horizon_ms

    def _run(
        self,
        *,
        once: bool,
        on_progress: ProgressCallback | None,
        poll_seconds: float,
        now_ms: Callable[[], int],
        on_started: Callable[[], None] | None = None,
    ) -> RunResult:
        result = RunResult()
        query = self.start(once=once)
        ticker = None
        idle_timeout = self.operator.idle_timeout(self.config)
        if not once and idle_timeout is not None:
            ticker = IdleTicker(idle_timeout)
        seen = -1
        try:
            if on_started is not None:
                on_started()
            with stop_requested_on_interrupt() as stop_requested:
                finished = False
                while not finished and not stop_requested.is_set():
                    finished = _await(query, poll_seconds)
                    seen = self._report(query, seen, result, on_progress, ticker, now_ms)
                    if self.monitor is not None and not finished:
                        self.monitor.publish_query_status(query)
                    if ticker is not None and (tick := ticker.due_tick(now_ms())) is not None:
                        write_tick(ticks_dir(self.config), tick)
        except BaseException:  # a second Ctrl-C, or a progress callback failed
            query.stop()  # do not leave the query running
            raise
        if not finished:  # Ctrl-C: stopped between two polls, the checkpoint is consistent
            query.stop()
            raise KeyboardInterrupt
        exc = query.exception()
        if exc is not None:
            raise PipelineError(self._failure(java_message(exc)))
        return result

    def _failure(self, spark_message: str) -> str:
        """One line saying what failed and what to do. A failure inside the batch writer
        reaches Spark as a Python traceback; the writer kept its own cause."""
        cause = (self._writer.failure if self._writer else None) or spark_message
        return (
            f"pipeline {self.config.name!r} failed: {cause}; the full trace is in the Spark "
            f"log. {failure_advice(self.config, cause)}"
        )

    def _report(
        self,
        query: StreamingQuery,
        seen: int,
        result: RunResult,
        on_progress: ProgressCallback | None,
        ticker: IdleTicker | None,
        now_ms: Callable[[], int],
    ) -> int:
        """Records the batches completed since batch ``seen``; returns the last one."""
        for progress in query.recentProgress:
            if progress["batchId"] <= seen or not executed(progress):
                continue
            seen = progress["batchId"]
            stats = self.operator.stats_from_progress(progress)
            result.progress.append(progress)
            if stats is not None:
                result.batches.append(stats)
            if on_progress is not None:
                on_progress(progress, stats)
            if ticker is not None:
                ticker.observe(
                    now_ms(), user_input_rows(progress, self.config), max_event_ms(progress)
                )
        return seen


def _await(query: StreamingQuery, seconds: float) -> bool:
    """True once the query has ended, whether it finished or failed (checked by the caller)."""
    from pyspark.errors import StreamingQueryException

    try:
        return bool(query.awaitTermination(seconds))  # type: ignore[arg-type]
    except StreamingQueryException:
        return True


def user_input_rows(progress: dict[str, Any], config: PipelineConfig) -> int:
    """Input rows of a batch that came from the pipeline's source, not from the idle ticks
    (told apart by the ticks folder in the source's description, whatever the source)."""
    tick_path = str(ticks_dir(config))
    return sum(
        int(s.get("numInputRows", 0))
        for s in progress.get("sources", [])
        if tick_path not in str(s.get("description", ""))
    )


def executed(progress: dict[str, Any]) -> bool:
    """Whether a progress update reports a batch that ran. While there is nothing to do, Spark
    also reports idle triggers, under the id of the batch that has not run yet."""
    return "addBatch" in (progress.get("durationMs") or {})


def max_event_ms(progress: dict[str, Any]) -> int | None:
    """The largest event time a batch saw, in epoch milliseconds."""
    text = progress.get("eventTime", {}).get("max")
    if not text:
        return None
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
