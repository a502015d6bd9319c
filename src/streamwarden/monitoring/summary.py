"""The numbers of one micro-batch, read from Spark's query progress (plain JSON)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from streamwarden.operators.observed import observed_dead_letters
from streamwarden.sources.base import SKIPPED_METRIC

__all__ = ["BatchSummary", "OperatorSummary", "epoch_ms"]

#: Custom metrics that count state entries removed besides ``numRowsRemoved``. Expired timers
#: are not among them: a timer that fires but leaves its state behind is one way to leak.
REMOVAL_METRICS = ("numValuesRemovedDueToTTLExpiry",)


def epoch_ms(text: str | None) -> int | None:
    """Epoch milliseconds of one of Spark's ISO-8601 progress timestamps (``...Z``)."""
    if not text:
        return None
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


@dataclass(frozen=True)
class OperatorSummary:
    """One stateful operator in one batch (Spark's ``StateOperatorProgress``)."""

    index: int
    name: str
    rows_total: int
    rows_updated: int
    rows_removed: int
    rows_dropped_by_watermark: int
    memory_used_bytes: int
    custom_metrics: dict[str, int] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """Stable, readable name: position in the plan and Spark's operator name."""
        return f"{self.index}:{self.name}"

    @property
    def removals(self) -> int:
        """Rows removed plus values removed by TTL expiry."""
        return self.rows_removed + sum(self.custom_metrics.get(m, 0) for m in REMOVAL_METRICS)


@dataclass(frozen=True)
class BatchSummary:
    """What one micro-batch did: input, timings, watermark, state and dead letters.

    ``watermark_lag_wall_ms`` is the batch's wall-clock time minus the watermark (how far event
    time trails real time); ``watermark_lag_event_ms`` is the largest event time seen minus the
    watermark (how much out-of-orderness the query waits for).
    """

    query: str
    batch_id: int
    timestamp_ms: int
    input_rows: int
    input_rows_per_second: float
    processed_rows_per_second: float
    duration_ms: dict[str, int]
    watermark_ms: int | None
    max_event_ms: int | None
    operators: list[OperatorSummary]
    dead_letters: dict[str, int] = field(default_factory=dict)
    #: Per ``topic/partition`` of a Kafka source: records behind the latest offset once this
    #: batch was read (consumer lag). Empty for sources without offsets per partition.
    source_lag: dict[str, int] = field(default_factory=dict)
    #: Offsets of a Kafka source that this batch covered but read no record at: deleted by
    #: retention before they were read (with ``fail_on_data_loss = false``), or the commit
    #: markers of a producer's transactions, which take an offset each.
    offsets_skipped: int = 0

    @property
    def batch_duration_ms(self) -> int:
        return int(self.duration_ms.get("triggerExecution", 0))

    @property
    def state_rows(self) -> int:
        return sum(op.rows_total for op in self.operators)

    @property
    def watermark_lag_wall_ms(self) -> int | None:
        return None if self.watermark_ms is None else self.timestamp_ms - self.watermark_ms

    @property
    def watermark_lag_event_ms(self) -> int | None:
        if self.watermark_ms is None or self.max_event_ms is None:
            return None
        return self.max_event_ms - self.watermark_ms

    @classmethod
    def from_progress(cls, progress: dict[str, Any]) -> BatchSummary:
        """Reads a ``StreamingQueryProgress`` as JSON (``json.loads(progress.json)``)."""
        event_time = progress.get("eventTime") or {}
        watermark = event_time.get("watermark")
        return cls(
            query=str(progress.get("name") or progress.get("id")),
            batch_id=int(progress["batchId"]),
            timestamp_ms=epoch_ms(progress["timestamp"]) or 0,
            input_rows=int(progress.get("numInputRows") or 0),
            input_rows_per_second=_rate(progress.get("inputRowsPerSecond")),
            processed_rows_per_second=_rate(progress.get("processedRowsPerSecond")),
            duration_ms={k: int(v) for k, v in (progress.get("durationMs") or {}).items()},
            # Spark reports 1970-01-01 until the first watermark is set.
            watermark_ms=epoch_ms(watermark) or None,
            max_event_ms=epoch_ms(event_time.get("max")),
            operators=[_operator(i, op) for i, op in enumerate(progress.get("stateOperators", []))],
            dead_letters=observed_dead_letters(progress),
            source_lag=source_lag(progress),
            offsets_skipped=offsets_skipped(progress),
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["watermark_lag_wall_ms"] = self.watermark_lag_wall_ms
        data["watermark_lag_event_ms"] = self.watermark_lag_event_ms
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BatchSummary:
        fields = {k: v for k, v in data.items() if not k.startswith("watermark_lag")}
        fields["operators"] = [OperatorSummary(**op) for op in data["operators"]]
        return cls(**fields)


def _operator(index: int, op: dict[str, Any]) -> OperatorSummary:
    return OperatorSummary(
        index=index,
        name=str(op.get("operatorName", "stateful")),
        rows_total=int(op.get("numRowsTotal", 0)),
        rows_updated=int(op.get("numRowsUpdated", 0)),
        rows_removed=int(op.get("numRowsRemoved", 0)),
        rows_dropped_by_watermark=int(op.get("numRowsDroppedByWatermark", 0)),
        memory_used_bytes=int(op.get("memoryUsedBytes", 0)),
        custom_metrics={k: int(v) for k, v in (op.get("customMetrics") or {}).items()},
    )


def source_lag(progress: dict[str, Any]) -> dict[str, int]:
    """Per ``topic/partition``, the latest offset minus the batch's end offset, for sources
    that report offsets per partition (Kafka: ``{"topic": {"0": 42}}``)."""
    lag: dict[str, int] = {}
    for source in progress.get("sources") or []:
        end, latest = _partitions(source.get("endOffset")), _partitions(source.get("latestOffset"))
        for where, offset in end.items():
            if where in latest:
                lag[where] = max(latest[where] - offset, 0)
    return lag


def offsets_skipped(progress: dict[str, Any]) -> int:
    """For sources with offsets per partition: offsets the batch covered minus the records it
    read, plus, for a partition whose end is below its start (its topic made again, its offsets
    started over), every offset below the end, plus what the source counted itself
    (:data:`SKIPPED_METRIC`); 0 for any other source."""
    skipped = 0
    for source in progress.get("sources") or []:
        start, end = _partitions(source.get("startOffset")), _partitions(source.get("endOffset"))
        skipped += _metric(source.get("metrics"), SKIPPED_METRIC)
        if not end:
            continue
        covered = 0
        for where, offset in end.items():
            begin = start.get(where, offset)
            if offset < begin:
                skipped += offset  # started over: Spark read none of the new offsets below
            else:
                covered += offset - begin
        skipped += max(covered - int(source.get("numInputRows") or 0), 0)
    return skipped


def _metric(metrics: Any, name: str) -> int:
    try:
        return int((metrics or {}).get(name) or 0)
    except (TypeError, ValueError, AttributeError):
        return 0


def _partitions(offsets: Any) -> dict[str, int]:
    """``{"topic/partition": offset}`` from Kafka's offset JSON (text or parsed); {} for any
    other source's offsets."""
    if isinstance(offsets, str):
        try:
            offsets = json.loads(offsets)
        except ValueError:
            return {}
    if not isinstance(offsets, dict):
        return {}
    out = {}
    for topic, partitions in offsets.items():
        if not isinstance(partitions, dict):
            return {}
        for partition, offset in partitions.items():
            if not isinstance(offset, int):
                return {}
            out[f"{topic}/{partition}"] = offset
    return out


def _rate(value: Any) -> float:
    try:
        rate = float(value)
    except (TypeError, ValueError):
        return 0.0
    return rate if rate == rate else 0.0  # NaN when a batch took no time
