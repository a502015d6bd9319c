"""One monitor per query: a ``StreamingQueryListener`` turns each batch's progress into a
record, alarms, Prometheus metrics and a progress-log line (metrics stay out of operators).

Works on any structured-streaming query; ``streamwarden.pipeline`` attaches it to its own.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pyspark.sql.streaming.listener import StreamingQueryListener

from streamwarden.config.model import MonitoringConfig
from streamwarden.monitoring.checkpoint_usage import CheckpointMeter
from streamwarden.monitoring.failures import QueryFailure
from streamwarden.monitoring.findings import FAILURE_MODE, Finding, FindingKind
from streamwarden.monitoring.leak_alarm import LeakAlarm
from streamwarden.monitoring.progress_log import (
    PROGRESS_FILE,
    BatchRecord,
    ProgressLog,
    StateRowsTally,
    progress_dir,
    read_last_record,
    write_status,
)
from streamwarden.monitoring.prometheus import PrometheusExporter
from streamwarden.monitoring.skew import PartitionProbe, SkewDetector
from streamwarden.monitoring.slow_batches import SlowBatchLog
from streamwarden.monitoring.summary import BatchSummary
from streamwarden.spark.session import TRACK_STATE_ROWS, state_rows_tracked

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming.listener import (
        QueryIdleEvent,
        QueryProgressEvent,
        QueryStartedEvent,
        QueryTerminatedEvent,
    )
    from pyspark.sql.streaming.query import StreamingQuery

    from streamwarden.sinks.writer import SinkNote

__all__ = ["RECENT_BATCHES", "QueryMonitor", "keep_newest"]

log = logging.getLogger("streamwarden.monitoring")

#: How many of the newest batches (records, findings, errors, failures) a monitor, and a run's
#: result, keep in memory. A stream runs for months: keeping every batch's record (about 20 KB
#: of Python objects with its progress) would grow the driver by gigabytes. The progress log on
#: disk keeps far more (rotated at ``progress_log_max_size``).
RECENT_BATCHES = 1000

T = TypeVar("T")


def keep_newest(items: list[T], item: T, limit: int | None = None) -> None:
    """Appends ``item`` to ``items``, dropping the oldest beyond ``limit`` (default
    :data:`RECENT_BATCHES`)."""
    items.append(item)
    limit = RECENT_BATCHES if limit is None else limit
    if len(items) > limit:
        del items[: len(items) - limit]


def _wall_ms() -> int:
    return int(time.time() * 1000)


class QueryMonitor:
    """Watches the query named ``query_name`` (start it after :meth:`start`).

    ``checkpoint`` (if given) is measured per batch, and ``<checkpoint>.progress/`` receives the
    progress log and the status file. Findings are logged as warnings on
    ``streamwarden.monitoring`` and kept in :attr:`findings`.
    """

    def __init__(
        self,
        spark: SparkSession,
        query_name: str,
        *,
        checkpoint: Path | None = None,
        config: MonitoringConfig | None = None,
        clock_ms: Callable[[], int] = _wall_ms,
    ) -> None:
        self.spark = spark
        self.query_name = query_name
        self.checkpoint = checkpoint
        self.config = config = config or MonitoringConfig()
        self.clock_ms = clock_ms
        #: The records of the newest batches (:data:`RECENT_BATCHES`), oldest first.
        self.records: list[BatchRecord] = []
        #: The newest failures of the query the supervisor recorded, oldest first.
        self.failures: list[QueryFailure] = []
        self._failure_count = 0
        #: The newest failures of the monitoring itself (never raised), oldest first.
        self.errors: list[str] = []
        self.leak_alarm = LeakAlarm(
            config.alarm_window, config.state_growth_threshold, config.input_steady_tolerance
        )
        self.skew = SkewDetector(config.skew_factor, config.skew_min_rows)
        self.slow = (
            None
            if config.slow_batch_threshold is None
            else SlowBatchLog(config.slow_batch_threshold, config.slow_log_interval, clock_ms)
        )
        self.folder = None if checkpoint is None else progress_dir(checkpoint)
        self.progress_log = (
            ProgressLog(
                self.folder / PROGRESS_FILE,
                max_bytes=config.progress_log_max_size,
                keep=config.progress_log_keep,
            )
            if self.folder is not None and config.progress_log
            else None
        )
        self.exporter: PrometheusExporter | None = None
        #: A keyed processor's rows per state name, carried on from the progress log.
        logged = self.folder if self.progress_log is not None else None
        self.state_rows = StateRowsTally(None if logged is None else read_last_record(logged))
        self._meter: CheckpointMeter | None = None
        self._probe: PartitionProbe | None = None
        self._listener: _Listener | None = None
        self._status: dict[str, Any] = {}
        #: The setting's value while Spark counts no state rows and that is still to be said.
        self._untracked: str | None = None
        #: The sinks' notes of a batch written (the batch writer's ``notes_of``), each made a
        #: finding of the batch; set by the runner for each start of the query.
        self.sink_notes: Callable[[int], list[SinkNote]] | None = None
        #: Adds to a batch's progress what the source knows that Spark's does not (offsets a
        #: Kafka topic made again skipped); set by the runner.
        self.source_account: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    @property
    def findings(self) -> list[Finding]:
        """The findings of the batches in :attr:`records`."""
        return [f for r in self.records for f in r.findings]

    def start(self) -> QueryMonitor:
        """Registers the listener and opens the endpoint; call before starting the query."""
        if self.config.prometheus_port is not None:
            self.exporter = PrometheusExporter(
                self.query_name, self.config.prometheus_host, self.config.prometheus_port
            )
        if self.checkpoint is not None:
            self._meter = CheckpointMeter(self.checkpoint)
        self._probe = PartitionProbe(self.spark)
        setting = self.spark.conf.get(TRACK_STATE_ROWS, "true") or "true"
        self._untracked = None if state_rows_tracked({TRACK_STATE_ROWS: setting}) else setting
        self._listener = _Listener(self)
        self.spark.streams.addListener(self._listener)
        sc = self.spark.sparkContext
        self._status = {
            "query": self.query_name,
            "state": "starting",
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "app_id": sc.applicationId,
            "ui_url": sc.uiWebUrl,
            "prometheus_url": None if self.exporter is None else self.exporter.url,
            "progress_log": None if self.progress_log is None else str(self.progress_log.path),
            "checkpoint": None if self.checkpoint is None else str(self.checkpoint),
        }
        self._publish()
        return self

    def publish_query_status(self, query: StreamingQuery) -> None:
        """Records what the query is doing now (``query.status``) in the status file; the
        runner calls it while it waits, so that ``streamwarden status`` can show the phase."""
        status = dict(query.status)
        if status != self._status.get("query_status"):
            self._status["query_status"] = status
            self._publish()

    def flush(self) -> None:
        """Waits until Spark delivered every pending listener event (e.g. the last progress)."""
        sc: Any = self.spark.sparkContext
        sc._jsc.sc().listenerBus().waitUntilEmpty(30_000)

    def close(self) -> None:
        """Delivers what is pending, unregisters and closes the endpoint."""
        if self._listener is not None:
            self.flush()
            self.spark.streams.removeListener(self._listener)
            self._listener = None
        if self.exporter is not None:
            self.exporter.close()
            self.exporter = None
        self._status["state"] = "stopped"
        self._publish()

    def __enter__(self) -> QueryMonitor:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- listener callbacks -------------------------------------------------------------------

    def on_started(self, query_id: str, run_id: str) -> None:
        self._status.update(state="running", query_id=query_id, run_id=run_id)
        self._publish()

    def on_progress(self, progress: dict[str, Any]) -> BatchRecord:
        """Turns one batch's progress into a record; runs alarms, export and the log."""
        if self.source_account is not None:
            progress = self.source_account(progress)
        summary = BatchSummary.from_progress(progress)
        usage = None if self._meter is None else self._meter.measure(summary.batch_id)
        loads = (
            []
            if self._probe is None or not summary.operators
            else self._probe.loads(str(progress["id"]), summary.batch_id, summary.operators)
        )
        findings = [*self.leak_alarm.observe(summary), *self.skew.check(summary.batch_id, loads)]
        if self.slow is not None and (slow := self.slow.observe(summary)) is not None:
            findings.append(slow)
        if summary.offsets_skipped:
            findings.append(_skipped_finding(summary.batch_id, summary.offsets_skipped))
        if self.sink_notes is not None:
            findings += [_note_finding(n) for n in self.sink_notes(summary.batch_id)]
        if self._untracked is not None and summary.operators:
            findings.append(_untracked_finding(summary.batch_id, self._untracked))
            self._untracked = None
        by_state = self.state_rows.add(summary.batch_id, progress)
        record = BatchRecord(summary, usage, loads, findings, progress, by_state)
        for finding in findings:
            if finding.kind != "slow_batch":  # that one has its own rate-limited log line
                log.warning("%s: %s (see %s)", finding.kind, finding.message, finding.see)
        keep_newest(self.records, record)
        if self.exporter is not None:
            self.exporter.update(record)
        if self.progress_log is not None:
            self.progress_log.append(record)
        self._status.update(last_batch=summary.batch_id, last_batch_at_ms=summary.timestamp_ms)
        self._publish()
        return record

    def record_failure(self, failure: QueryFailure) -> None:
        """Records a failure of the query (the supervisor's): a progress-log line, the
        failure and restart counters, and the status file's last failure."""
        keep_newest(self.failures, failure)
        self._failure_count += 1
        if self.exporter is not None:
            self.exporter.record_failure(failure)
        if self.progress_log is not None:
            self.progress_log.append_failure(failure)
        self._status.update(last_failure=failure.to_json(), failures=self._failure_count)
        self._publish()

    def on_terminated(self, exception: str | None) -> None:
        self._status.update(state="failed" if exception else "terminated", error=exception)
        self._publish()

    def _publish(self) -> None:
        if self.folder is not None:
            write_status(self.folder, {**self._status, "updated_at_ms": self.clock_ms()})


def _skipped_finding(batch_id: int, skipped: int) -> Finding:
    return Finding(
        "offsets_skipped",
        batch_id,
        f"the batch read past {skipped} Kafka offsets that held no record: records deleted by "
        "retention before the pipeline read them, or a topic deleted and made again whose "
        "offsets started over (allowed by source.fail_on_data_loss = "
        "false), or the markers of a transactional producer; if the topic is not written "
        "transactionally, these records are lost: read faster, or keep them longer",
        details={"offsets": skipped},
    )


def _note_finding(note: SinkNote) -> Finding:
    assert note.kind in FAILURE_MODE, note.kind  # a sink notes only kinds of finding
    return Finding(
        cast(FindingKind, note.kind),
        note.batch_id,
        note.message,
        details={"sink": note.sink, **note.details},
    )


def _untracked_finding(batch_id: int, value: str) -> Finding:
    return Finding(
        "state_rows_untracked",
        batch_id,
        f"{TRACK_STATE_ROWS} is {value}: Spark counts no state rows, so every state-row figure "
        "reads 0 and the state-growth alarm cannot see state grow; remove the setting to watch "
        "state again",
        details={"setting": TRACK_STATE_ROWS, "value": value},
    )


class _Listener(StreamingQueryListener):
    """Spark's callback interface; hands this query's events to the monitor. A failure here is
    logged and kept in ``monitor.errors``, never raised: monitoring must not stop the query."""

    def __init__(self, monitor: QueryMonitor) -> None:
        self.monitor = monitor
        self.query_id: str | None = None

    def _guard(self, what: str, call: Callable[[], object]) -> None:
        try:
            call()
        except Exception as exc:
            keep_newest(self.monitor.errors, f"{what}: {exc!r}")
            log.exception("monitoring failed on %s", what)

    def onQueryStarted(self, event: QueryStartedEvent) -> None:
        if event.name == self.monitor.query_name:
            self.query_id = str(event.id)
            self._guard("start", lambda: self.monitor.on_started(str(event.id), str(event.runId)))

    def onQueryProgress(self, event: QueryProgressEvent) -> None:
        if event.progress.name == self.monitor.query_name:
            progress = json.loads(event.progress.json)
            self._guard("progress", lambda: self.monitor.on_progress(progress))

    def onQueryIdle(self, event: QueryIdleEvent) -> None:
        return None

    def onQueryTerminated(self, event: QueryTerminatedEvent) -> None:
        if self.query_id is not None and str(event.id) == self.query_id:
            self._guard("terminated", lambda: self.monitor.on_terminated(event.exception))
