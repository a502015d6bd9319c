"""The Prometheus endpoint: ``http://HOST:PORT/metrics``, 127.0.0.1 by default (L15).

Every metric carries the label ``query`` (the pipeline's name); per-operator metrics carry
``operator`` (``<position in plan>:<Spark operator name>``). Values are those of the last batch
unless the name ends in ``_total``.

======================================================  ==========================================
``streamwarden_batch_id``                               last completed batch
``streamwarden_batch_input_rows``                       input rows of the last batch
``streamwarden_input_rows_total``                       input rows since start (counter)
``streamwarden_input_rows_per_second``                  input rate Spark reports
``streamwarden_batch_duration_seconds{phase}``          ``durationMs`` phases; ``triggerExecution``
                                                        is the whole batch
``streamwarden_watermark_seconds``                      watermark (epoch seconds)
``streamwarden_watermark_lag_seconds{against}``         ``wall``: batch time minus watermark;
                                                        ``event``: max event time minus watermark
``streamwarden_state_rows{operator}``                   ``numRowsTotal``
``streamwarden_state_memory_bytes{operator}``           ``memoryUsedBytes``
``streamwarden_state_rows_updated{operator}``           ``numRowsUpdated``
``streamwarden_state_rows_removed{operator}``           ``numRowsRemoved``
``streamwarden_state_rows_dropped_by_watermark{...}``   ``numRowsDroppedByWatermark``
``streamwarden_state_custom_metric{operator,metric}``   the operator's ``customMetrics`` (RocksDB
                                                        SST size, commit latencies, bytes copied,
                                                        timers, TTL removals, ...)
``streamwarden_process_state_rows{state}``             a keyed processor's rows per state name
                                                        (the guard's count, while known)
``streamwarden_state_partition_rows{operator,partition}``  state rows per partition
``streamwarden_input_partition_rows{operator,partition}``  input rows per partition
``streamwarden_skew_ratio{operator,what}``              largest partition / mean (``state``,
                                                        ``input``)
``streamwarden_dead_letters_total{reason}``             dead letters by reason (counter)
``streamwarden_source_lag_records{topic,partition}``    Kafka: records behind the latest offset
``streamwarden_source_offsets_skipped_total``           Kafka: offsets read past without a record
``streamwarden_batch_state_bytes_written``              state bytes the last batch added
``streamwarden_checkpoint_state_bytes_written_total``   ... since start (counter)
``streamwarden_checkpoint_batch_metadata_bytes``        offsets/commits files of the last batch
``streamwarden_checkpoint_metadata_bytes``              all metadata files of the checkpoint
``streamwarden_alarm{kind,operator}``                   1 while an alarm holds (``state_growth``,
                                                        ``skew``, ``slow_batch``), else 0
``streamwarden_query_failures_total{error_class}``     failures of the query (counter)
``streamwarden_query_restarts_total``                  restarts by the supervisor (counter)
======================================================  ==========================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

from streamwarden.errors import UsageError
from streamwarden.monitoring.failures import QueryFailure
from streamwarden.monitoring.progress_log import BatchRecord

if TYPE_CHECKING:
    from threading import Thread
    from wsgiref.simple_server import WSGIServer

__all__ = ["PrometheusExporter"]

P = "streamwarden_"


class PrometheusExporter:
    """Serves the metrics of one query from its own registry (several may run in a process)."""

    def __init__(self, query: str, host: str = "127.0.0.1", port: int = 0) -> None:
        self.query = query
        self.registry = r = CollectorRegistry()
        q = ["query"]
        op = ["query", "operator"]
        self.batch_id = Gauge(P + "batch_id", "Last completed batch", q, registry=r)
        self.input_rows = Gauge(P + "batch_input_rows", "Input rows, last batch", q, registry=r)
        self.input_total = Counter(P + "input_rows", "Input rows since start", q, registry=r)
        self.input_rate = Gauge(P + "input_rows_per_second", "Input rate", q, registry=r)
        self.duration = Gauge(
            P + "batch_duration_seconds", "Batch duration by phase", [*q, "phase"], registry=r
        )
        self.watermark = Gauge(P + "watermark_seconds", "Watermark, epoch s", q, registry=r)
        self.watermark_lag = Gauge(
            P + "watermark_lag_seconds",
            "Wall or max event time minus watermark",
            [*q, "against"],
            registry=r,
        )
        self.state_rows = Gauge(P + "state_rows", "State rows (numRowsTotal)", op, registry=r)
        self.state_memory = Gauge(P + "state_memory_bytes", "memoryUsedBytes", op, registry=r)
        self.rows_updated = Gauge(P + "state_rows_updated", "numRowsUpdated", op, registry=r)
        self.rows_removed = Gauge(P + "state_rows_removed", "numRowsRemoved", op, registry=r)
        self.rows_dropped = Gauge(
            P + "state_rows_dropped_by_watermark", "numRowsDroppedByWatermark", op, registry=r
        )
        self.custom = Gauge(
            P + "state_custom_metric",
            "Operator custom metrics (RocksDB, timers, TTL)",
            [*op, "metric"],
            registry=r,
        )
        self.process_state_rows = Gauge(
            P + "process_state_rows",
            "A keyed processor's state rows per state name",
            [*q, "state"],
            registry=r,
        )
        part = [*op, "partition"]
        self.partition_state = Gauge(
            P + "state_partition_rows", "State rows per partition", part, registry=r
        )
        self.partition_input = Gauge(
            P + "input_partition_rows", "Input rows per partition", part, registry=r
        )
        self.skew = Gauge(
            P + "skew_ratio", "Largest partition / mean partition", [*op, "what"], registry=r
        )
        self.dead_letters = Counter(
            P + "dead_letters", "Dead letters by reason", [*q, "reason"], registry=r
        )
        self.source_lag = Gauge(
            P + "source_lag_records",
            "Records behind the latest offset, per topic partition",
            [*q, "topic", "partition"],
            registry=r,
        )
        self.offsets_skipped = Counter(
            P + "source_offsets_skipped",
            "Offsets a batch covered without a record (deleted before read, or markers)",
            q,
            registry=r,
        )
        self.state_written = Gauge(
            P + "batch_state_bytes_written", "State bytes the last batch added", q, registry=r
        )
        self.state_written_total = Counter(
            P + "checkpoint_state_bytes_written", "State bytes added since start", q, registry=r
        )
        self.batch_metadata = Gauge(
            P + "checkpoint_batch_metadata_bytes",
            "Metadata bytes of the last batch",
            q,
            registry=r,
        )
        self.metadata = Gauge(
            P + "checkpoint_metadata_bytes", "Metadata bytes of the checkpoint", q, registry=r
        )
        self.alarm = Gauge(
            P + "alarm", "1 while an alarm holds", [*q, "kind", "operator"], registry=r
        )
        self.failures = Counter(
            P + "query_failures", "Query failures by error class", [*q, "error_class"], registry=r
        )
        self.restarts = Counter(
            P + "query_restarts", "Restarts of the query by the supervisor", q, registry=r
        )
        self._raised: set[tuple[str, str]] = set()
        try:
            self._server, self._thread = self._serve(host, port)
        except OSError as exc:
            raise UsageError(
                f"cannot serve Prometheus metrics on {host}:{port} ({exc.strerror}); choose "
                "another monitoring.prometheus_port (0 picks a free one)"
            ) from None
        self.host = host
        self.port = int(self._server.server_port)

    def _serve(self, host: str, port: int) -> tuple[WSGIServer, Thread]:
        return start_http_server(port, addr=host, registry=self.registry)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    def record_failure(self, failure: QueryFailure) -> None:
        """Counts a failure of the query, and the restart that follows it if any."""
        self.failures.labels(self.query, failure.error_class).inc()
        if failure.restart is not None:
            self.restarts.labels(self.query).inc()

    def update(self, record: BatchRecord) -> None:
        s, q = record.summary, self.query
        self.batch_id.labels(q).set(s.batch_id)
        self.input_rows.labels(q).set(s.input_rows)
        self.input_total.labels(q).inc(s.input_rows)
        self.input_rate.labels(q).set(s.input_rows_per_second)
        for phase, ms in s.duration_ms.items():
            self.duration.labels(q, phase).set(ms / 1000)
        if s.watermark_ms is not None:
            self.watermark.labels(q).set(s.watermark_ms / 1000)
        lags = {"wall": s.watermark_lag_wall_ms, "event": s.watermark_lag_event_ms}
        for against, lag in lags.items():
            if lag is not None:
                self.watermark_lag.labels(q, against).set(lag / 1000)
        for op in s.operators:
            self.state_rows.labels(q, op.label).set(op.rows_total)
            self.state_memory.labels(q, op.label).set(op.memory_used_bytes)
            self.rows_updated.labels(q, op.label).set(op.rows_updated)
            self.rows_removed.labels(q, op.label).set(op.rows_removed)
            self.rows_dropped.labels(q, op.label).set(op.rows_dropped_by_watermark)
            for name, value in op.custom_metrics.items():
                self.custom.labels(q, op.label, name).set(value)
        for state, rows in (record.state_rows_by_state or {}).items():
            self.process_state_rows.labels(q, state).set(rows)
        for load in record.partitions:
            for p, rows in load.state_rows.items():
                self.partition_state.labels(q, load.operator, str(p)).set(rows)
            for p, rows in load.input_rows.items():
                self.partition_input.labels(q, load.operator, str(p)).set(rows)
            self.skew.labels(q, load.operator, "state").set(load.ratio(load.state_rows))
            self.skew.labels(q, load.operator, "input").set(load.ratio(load.input_rows))
        for reason, count in s.dead_letters.items():
            self.dead_letters.labels(q, reason).inc(count)
        self.offsets_skipped.labels(q).inc(s.offsets_skipped)
        for where, lag in s.source_lag.items():
            topic, _, partition = where.rpartition("/")
            self.source_lag.labels(q, topic, partition).set(lag)
        if (c := record.checkpoint) is not None:
            self.state_written.labels(q).set(c.state_bytes_written)
            self.state_written_total.labels(q).inc(c.state_bytes_written)
            self.batch_metadata.labels(q).set(c.batch_metadata_bytes)
            self.metadata.labels(q).set(c.metadata_bytes_total)
        raised: set[tuple[str, str]] = {(f.kind, f.operator or "") for f in record.findings}
        for kind, operator in raised | self._raised:
            self.alarm.labels(q, kind, operator).set(1 if (kind, operator) in raised else 0)
        self._raised = raised

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
