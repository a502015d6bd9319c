"""Runs one stateful query to its sinks, whatever built it: a config's pipeline
(:class:`~streamwarden.pipeline.runner.Pipeline`) or a query a Python user built with
``sessionize`` or ``detect`` (:func:`~streamwarden.pipeline.python_query.run_query`).

What every run gets is here, once: the checkpoint's run lock, the query started with the
exactly-once batch writer, the idle ticks that move event time while the input is quiet, the
drain that closes every state at the end of a finite input, the supervisor's restarts, the
monitor, and the stop on a signal or on a run whose records mostly become dead letters. What
differs (how the step is built, what the source must do around each batch, what a failure
means) is what a subclass says, in the hooks below.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from streamwarden.checkpoints.files import CheckpointFiles
from streamwarden.checkpoints.run_lock import hold_checkpoint
from streamwarden.errors import (
    PipelineError,
    QueryStartError,
    RestartsExhaustedError,
    StreamwardenError,
)
from streamwarden.monitoring.failures import (
    QueryFailure,
    error_class_of,
    file_named_in,
    key_named_in,
)
from streamwarden.monitoring.monitor import keep_newest
from streamwarden.operators.base import BatchStats, OperatorStep
from streamwarden.operators.settings import DEAD_LETTERS
from streamwarden.pipeline.idle import IdleTicker, prune_ticks_log, write_tick
from streamwarden.pipeline.interrupt import StopRequest, stop_requested_on_signals
from streamwarden.pipeline.quarantine import QuarantinedRecord
from streamwarden.pipeline.reject_share import RejectShareGuard
from streamwarden.pipeline.result import RunResult, max_event_ms
from streamwarden.pipeline.supervisor import RestartDecision, RestartPolicy, is_restartable
from streamwarden.sinks.base import open_sink
from streamwarden.spark.jvm import java_message

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming.query import StreamingQuery

    from streamwarden.config.model import (
        CheckpointConfig,
        MonitoringConfig,
        SparkConfig,
        SupervisorConfig,
    )
    from streamwarden.monitoring.monitor import QueryMonitor
    from streamwarden.settings.context import RunContext
    from streamwarden.sinks.writer import BatchWriter
    from streamwarden.validation.settings import ValidationConfig

__all__ = [
    "ProgressCallback",
    "QueryRunner",
    "RunSettings",
    "executed",
    "state_rows",
    "ticks_dir",
    "user_input_rows",
]

log = logging.getLogger("streamwarden.source")

ProgressCallback = Callable[[dict[str, Any], "BatchStats | None"], None]


class RunSettings(Protocol):
    """The settings of a run besides its step: a pipeline's config meets it, and so do the
    settings a Python user gives :func:`~streamwarden.pipeline.python_query.run_query`."""

    @property
    def name(self) -> str: ...

    @property
    def checkpoint(self) -> CheckpointConfig: ...

    @property
    def spark(self) -> SparkConfig: ...

    @property
    def monitoring(self) -> MonitoringConfig: ...

    @property
    def supervisor(self) -> SupervisorConfig: ...

    @property
    def validation(self) -> ValidationConfig: ...

    @property
    def context(self) -> RunContext: ...


def ticks_dir(settings: RunSettings) -> Path:
    """Where the idle ticker writes; inside the checkpoint, which owns what the ticks did."""
    return settings.checkpoint.path / "streamwarden" / "ticks"


@dataclass(frozen=True)
class _Attempt:
    """How to run the query once: what :meth:`QueryRunner.run` was asked."""

    once: bool
    drain: bool
    on_progress: ProgressCallback | None
    poll_seconds: float
    now_ms: Callable[[], int]
    on_started: Callable[[], None] | None


class QueryRunner:
    """One stateful query, its ticks and its sinks, run as :meth:`run` describes. A subclass
    builds the step (:meth:`build_step`) and says the operator's timings; the other hooks do
    nothing unless overridden."""

    def __init__(self, settings: RunSettings, spark: SparkSession | None = None) -> None:
        self._settings = settings
        self._spark = spark
        #: The monitor of the current (or last) run, if monitoring is enabled.
        self.monitor: QueryMonitor | None = None
        #: The batch writer of the running query: it keeps the cause of a failed batch.
        self._writer: BatchWriter | None = None
        #: Told each warning of a run (a landing file moved aside), e.g. to print it.
        self.on_warning: Callable[[str], None] | None = None
        #: The tick stream log's compact file last pruned.
        self._ticks_compact: Path | None = None
        #: Stops a run whose records mostly become dead letters.
        self._rejects = RejectShareGuard(
            settings.name, settings.validation, self._dead_letter_sample
        )

    # -- what a subclass says ------------------------------------------------------------------

    def build_step(self, *, also_quarantined: Sequence[QuarantinedRecord] = ()) -> OperatorStep:
        """The operator's step over the query's input and the ticks."""
        raise NotImplementedError

    def idle_timeout(self) -> timedelta | None:
        """How long quiet input waits before the idle ticker moves event time (None: off)."""
        raise NotImplementedError

    def watermark_delay(self) -> timedelta:
        """The watermark is the latest event time minus this."""
        raise NotImplementedError

    def drain_horizon(self) -> timedelta:
        """How far past the latest event time every state of the operator has expired."""
        raise NotImplementedError

    def stats_from_progress(self, progress: dict[str, Any]) -> BatchStats | None:
        """The batch's counts from its progress; None if it carries none."""
        raise NotImplementedError

    def spark_session(self) -> SparkSession:
        """The session to start when none was given."""
        raise NotImplementedError

    def check_ownership(self) -> None:
        """Refuses a checkpoint or sink folders that another query wrote (under the lock)."""

    def before_query(self, result: RunResult) -> None:
        """What the input needs before each start of the query (sweeps, upkeep)."""

    def between_polls(self, result: RunResult) -> None:
        """What the input needs while a continuous query runs (called on every poll)."""

    def after_batch(self) -> None:
        """The input's upkeep after each batch."""

    def account(self, progress: dict[str, Any]) -> dict[str, Any]:
        """A batch's progress as reported, with what the input knows that Spark's does not."""
        return progress

    def failure_error(self, cause: str) -> type[PipelineError]:
        """The error a failed query raises, which decides whether the supervisor restarts."""
        return PipelineError

    def failure_advice(self, cause: str) -> str:
        """What to do about a failed batch."""
        return "Fix the cause and run again: it resumes from the checkpoint"

    def bisect_if_stuck(self, failures: list[QueryFailure]) -> None:
        """Finds the records a batch that keeps failing the same way fails on (if it can)."""

    # -- the run ---------------------------------------------------------------------------------

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            self._spark = self.spark_session()
        return self._spark

    def _dead_letter_sample(self, reason: str) -> str | None:
        """The detail and record of one dead letter of ``reason``, read back from the sink."""
        from pyspark.sql import functions as F

        if DEAD_LETTERS not in self._settings.context.outputs:
            return None
        try:
            rows = open_sink(DEAD_LETTERS, self._settings.context).read(self.spark)
            found = None if rows is None else rows.where(F.col("reason") == reason).first()
        except Exception:  # a sample is a help; the message stands without it
            return None
        if found is None:
            return None
        raw = str(found["raw"])
        raw = raw if len(raw) <= 200 else raw[:200] + "..."
        return f"{found['detail']} (record: {raw})"

    def warn(self, line: str) -> None:
        log.warning(line)
        if self.on_warning is not None:
            self.on_warning(line)

    def _prune_ticks_log(self) -> None:
        """Keeps the tick stream's log bounded (:func:`.idle.prune_ticks_log`): before the
        query starts and after a batch, once per compact file Spark writes."""
        self._ticks_compact = prune_ticks_log(
            self._settings.checkpoint.path,
            index=self.ticks_source_index(),
            unless_pruned=self._ticks_compact,
        )

    def ticks_source_index(self) -> int:
        """Which of the query's sources the ticks are (their log is ``sources/<index>``): the
        one after the records' source."""
        return 1

    def start(self, *, once: bool) -> StreamingQuery:
        """Builds and starts the streaming query."""
        settings = self._settings
        step = self.build_step()
        self._writer = step.writer
        if self.monitor is not None:  # what the sinks note of a batch is a finding of it
            self.monitor.sink_notes = step.writer.notes_of
            self.monitor.source_account = self.account
        stream = (
            step.output.writeStream.queryName(settings.name)
            .foreachBatch(step.writer)
            .option("checkpointLocation", str(settings.checkpoint.path))
        )
        if once:
            stream = stream.trigger(availableNow=True)
        else:
            seconds = settings.spark.trigger_interval.total_seconds()
            stream = stream.trigger(processingTime=f"{int(seconds * 1000)} milliseconds")
        try:
            return stream.start()
        except Exception as exc:
            raise QueryStartError(
                f"pipeline {settings.name!r} could not start: {java_message(exc)}"
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
        supervise: bool = False,
        on_failure: Callable[[QueryFailure], None] | None = None,
        stop: StopRequest | None = None,
    ) -> RunResult:
        """Runs until done (``once``) or until stopped, reporting each batch.

        In continuous mode the idle ticker advances event time when input goes quiet. With
        ``drain`` (only with ``once``), event time is then moved past every deadline so that all
        sessions close (or partial matches expire) and all state is freed: the end of a finite
        input. Events that arrive after a drain are judged against the moved watermark (usually
        ``too_late``).

        SIGINT or SIGTERM stops the run between two polls and returns (``RunResult.stopped``
        names the signal); the checkpoint is consistent and the next run resumes from it. A
        caller that listens for them itself (from before Spark starts, as the CLI does) passes
        its ``stop`` request.

        With ``supervise``, a failed query is restarted from its checkpoint as the
        ``supervisor`` settings say (:mod:`streamwarden.pipeline.supervisor`); each failure is
        recorded (progress log, metrics, ``on_failure``) and a spent budget raises
        :class:`~streamwarden.errors.RestartsExhaustedError`.

        With ``monitoring.enabled``, a :class:`~streamwarden.monitoring.QueryMonitor` watches
        every batch (progress log, Prometheus, alarms) for the whole run; ``on_start`` receives
        it (or None) once the query has started. The checkpoint's run lock is held throughout, so
        offline tools refuse to change it and a second run on the same checkpoint fails at once
        instead of corrupting it.
        """
        settings = self._settings
        with hold_checkpoint(settings.checkpoint.path, f"pipeline {settings.name!r}"):
            _ = self.spark  # started first: a sink's table in the metastore is found through it
            self.check_ownership()
            self.monitor = self._start_monitor()
            monitor = self.monitor
            attempt = _Attempt(
                once=once,
                drain=drain and once,
                on_progress=on_progress,
                poll_seconds=poll_seconds,
                now_ms=now_ms,
                on_started=None if on_start is None else lambda: on_start(monitor),
            )
            try:
                with _listening(stop) as request:
                    request.reclaim()  # from PySpark, whose SparkContext took SIGINT
                    if request.is_set():  # before the query could start
                        return RunResult(stopped=request.signal_name)
                    if not supervise:
                        return self._attempt(attempt, request)
                    return self._supervised(attempt, request, on_failure)
            finally:
                if self.monitor is not None:
                    self.monitor.close()

    def _attempt(self, attempt: _Attempt, stop: StopRequest) -> RunResult:
        """One run of the query from the checkpoint (and the drain, if asked)."""
        result = self._run(attempt, stop)
        if attempt.drain and result.stopped is None:
            write_tick(ticks_dir(self._settings), self._drain_tick(result))
            result.then(self._run(replace(attempt, once=True, on_started=None), stop))
        return result

    def _supervised(
        self,
        attempt: _Attempt,
        stop: StopRequest,
        on_failure: Callable[[QueryFailure], None] | None,
    ) -> RunResult:
        """Attempts until one ends without failing, restarting as the policy says."""
        policy = RestartPolicy(self._settings.supervisor)
        failures: list[QueryFailure] = []
        progress = attempt.on_progress

        def on_batch(p: dict[str, Any], stats: BatchStats | None) -> None:
            policy.progressed()
            if progress is not None:
                progress(p, stats)

        attempt = replace(attempt, on_progress=on_batch)
        while True:
            try:
                result = self._attempt(attempt, stop)
            except StreamwardenError as exc:
                now = attempt.now_ms()
                decision = policy.decide(now) if is_restartable(exc) else None
                failure = self._failure_record(exc, now, decision)
                keep_newest(failures, failure)  # the newest: enough for the budget's window
                if self.monitor is not None:
                    self.monitor.record_failure(failure)
                if on_failure is not None:
                    on_failure(failure)
                if decision is None:
                    raise
                if decision.give_up:
                    raise RestartsExhaustedError(
                        f"pipeline {self._settings.name!r} {policy.report(failures, now)}\n"
                        f"{str(exc).partition('; the full trace')[2].strip() or str(exc)}"
                    ) from None
                self.bisect_if_stuck(failures)
                if stop.wait(decision.wait_s):  # stopped while waiting to restart
                    return RunResult(failures=failures, stopped=stop.signal_name)
                attempt = replace(attempt, on_started=None)  # announced once
                continue
            result.failures = failures
            return result

    def _failure_record(
        self, exc: StreamwardenError, now_ms: int, decision: RestartDecision | None
    ) -> QueryFailure:
        """What the progress log and the metrics keep of a failure."""
        message = str(exc).splitlines()[0]
        files = CheckpointFiles.existing(self._settings.checkpoint.path)
        planned = None if files is None else files.last_planned()
        committed = None if files is None else files.last_committed()
        failed_batch = planned if planned is not None and planned != committed else None
        return QueryFailure(
            at_ms=now_ms,
            error_class=error_class_of(message, type(exc).__name__),
            message=message,
            batch=failed_batch,
            key=key_named_in(message),
            file=file_named_in(message),
            restartable=decision is not None and not decision.give_up,
            restart=None if decision is None else decision.restart,
            backoff_s=None if decision is None or decision.give_up else round(decision.wait_s, 3),
        )

    def _start_monitor(self) -> QueryMonitor | None:
        settings = self._settings
        if not settings.monitoring.enabled:
            return None
        from streamwarden.monitoring.monitor import QueryMonitor

        return QueryMonitor(
            self.spark,
            settings.name,
            checkpoint=settings.checkpoint.path,
            config=settings.monitoring,
        ).start()

    def _drain_tick(self, result: RunResult) -> int:
        """An event time past every deadline of every state the query may hold."""
        horizon_ms = int(self.drain_horizon().total_seconds() * 1000) + 1
        # a run with no new input knows only the checkpoint's watermark, which trails the
        # latest event time by the watermark delay
        delay_ms = int(self.watermark_delay().total_seconds() * 1000)
        checkpoint = CheckpointFiles.existing(self._settings.checkpoint.path)
        watermark_ms = 0 if checkpoint is None else checkpoint.watermark_ms()
        latest = max(result.max_event_ms or 0, watermark_ms + delay_ms)
        return latest + horizon_ms

    def _run(self, attempt: _Attempt, stop: StopRequest) -> RunResult:
        result = RunResult()
        self.before_query(result)
        self._prune_ticks_log()
        query = self.start(once=attempt.once)
        try:
            return self._watch(query, attempt, stop, result)
        finally:  # the query has ended (or was stopped): what the writer holds is released
            if self._writer is not None:
                self._writer.close()

    def _watch(
        self, query: StreamingQuery, attempt: _Attempt, stop: StopRequest, result: RunResult
    ) -> RunResult:
        """Reports the query's batches until it ends or ``stop`` is set."""
        ticker = None
        idle_timeout = self.idle_timeout()
        if not attempt.once and idle_timeout is not None:
            ticker = IdleTicker(idle_timeout, min_interval=self._settings.spark.trigger_interval)
        seen = -1
        try:
            if attempt.on_started is not None:
                attempt.on_started()
            finished = False
            while not finished and not stop.is_set():
                finished = _await(query, attempt.poll_seconds)
                seen = self._report(query, seen, result, attempt, ticker)
                if self.monitor is not None and not finished:
                    self.monitor.publish_query_status(query)
                if not finished:
                    self.between_polls(result)
                if ticker is not None and (tick := ticker.due_tick(attempt.now_ms())) is not None:
                    write_tick(ticks_dir(self._settings), tick)
        except BaseException:  # a second signal, or a progress callback failed
            query.stop()  # do not leave the query running
            raise
        if not finished:  # stopped between two polls: the checkpoint is consistent
            query.stop()
            self._report(query, seen, result, attempt, ticker)
            result.stopped = stop.signal_name
            return result
        exc = query.exception()
        if exc is not None:
            message = java_message(exc)
            cause = (self._writer.failure if self._writer else None) or message
            known = self._writer.error if self._writer else None
            if isinstance(known, StreamwardenError) and not known.restartable:
                # the part that failed knows a restart cannot help, and says what can
                raise type(known)(
                    f"pipeline {self._settings.name!r} failed: {cause}; the full trace is in "
                    "the Spark log"
                )
            raise self.failure_error(cause)(self._failure(message))
        return result

    def _failure(self, spark_message: str) -> str:
        """One line saying what failed and what to do. A failure inside the batch writer
        reaches Spark as a Python traceback; the writer kept its own cause."""
        cause = (self._writer.failure if self._writer else None) or spark_message
        return (
            f"pipeline {self._settings.name!r} failed: {cause}; the full trace is in the Spark "
            f"log. {self.failure_advice(cause)}"
        )

    def _report(
        self,
        query: StreamingQuery,
        seen: int,
        result: RunResult,
        attempt: _Attempt,
        ticker: IdleTicker | None,
    ) -> int:
        """Records the batches completed since batch ``seen``; returns the last one."""
        for reported in query.recentProgress:
            if reported["batchId"] <= seen or not executed(reported):
                continue
            seen = reported["batchId"]
            progress = self.account(reported)
            stats = self.stats_from_progress(progress)
            result.add(progress, stats)
            user_rows = user_input_rows(progress, self._settings)
            if stats is not None:
                self._rejects.observe(user_rows, stats.dead_letters)
            if attempt.on_progress is not None:
                attempt.on_progress(progress, stats)
            self.after_batch()
            self._prune_ticks_log()
            if ticker is not None:
                ticker.observe(
                    attempt.now_ms(), user_rows, max_event_ms(progress), state_rows(progress)
                )
        return seen


@contextmanager
def _listening(stop: StopRequest | None) -> Iterator[StopRequest]:
    """The caller's stop request, or one of our own for the run."""
    if stop is not None:
        yield stop
        return
    with stop_requested_on_signals() as request:
        yield request


def _await(query: StreamingQuery, seconds: float) -> bool:
    """True once the query has ended, whether it finished or failed (checked by the caller)."""
    from pyspark.errors import StreamingQueryException

    try:
        return bool(query.awaitTermination(seconds))  # type: ignore[arg-type]
    except StreamingQueryException:
        return True


def user_input_rows(progress: dict[str, Any], settings: RunSettings) -> int:
    """Input rows of a batch that came from the query's input, not from the idle ticks (told
    apart by the ticks folder in the source's description, whatever the source)."""
    tick_path = str(ticks_dir(settings))
    return sum(
        int(s.get("numInputRows", 0))
        for s in progress.get("sources", [])
        if tick_path not in str(s.get("description", ""))
    )


def state_rows(progress: dict[str, Any]) -> int | None:
    """State rows left after a batch, over every stateful operator; None if it reports none."""
    operators = progress.get("stateOperators") or []
    if not operators:
        return None
    return sum(int(op.get("numRowsTotal", 0)) for op in operators)


def executed(progress: dict[str, Any]) -> bool:
    """Whether a progress update reports a batch that ran. While there is nothing to do, Spark
    also reports idle triggers, under the id of the batch that has not run yet."""
    return "addBatch" in (progress.get("durationMs") or {})
