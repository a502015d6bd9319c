"""Slow-batch log (L13): one structured JSON line when a batch takes longer than a threshold,
at most once per interval, so that the logging cannot itself slow the job."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import timedelta

from streamwarden.monitoring.findings import Finding
from streamwarden.monitoring.summary import BatchSummary

__all__ = ["SLOW_LOG", "SlowBatchLog"]

#: The logger the lines go to (the Java engine's per-key lines use the same name).
SLOW_LOG = "streamwarden.slow"


class SlowBatchLog:
    """``clock_ms`` is the caller's wall clock (injected so tests control the rate limit)."""

    def __init__(
        self, threshold: timedelta, interval: timedelta, clock_ms: Callable[[], int]
    ) -> None:
        self.threshold_ms = int(threshold.total_seconds() * 1000)
        self.interval_ms = int(interval.total_seconds() * 1000)
        self.clock_ms = clock_ms
        self._last_ms: int | None = None
        self.suppressed = 0
        self.log = logging.getLogger(SLOW_LOG)

    def observe(self, batch: BatchSummary) -> Finding | None:
        """Logs (and returns a finding for) a slow batch, unless one was logged recently."""
        if batch.batch_duration_ms < self.threshold_ms:
            return None
        now = self.clock_ms()
        if self._last_ms is not None and now - self._last_ms < self.interval_ms:
            self.suppressed += 1
            return None
        line = {
            "event": "slow_batch",
            "query": batch.query,
            "batch_id": batch.batch_id,
            "took_ms": batch.batch_duration_ms,
            "threshold_ms": self.threshold_ms,
            "duration_ms": batch.duration_ms,
            "input_rows": batch.input_rows,
            "state": {
                op.label: {"rows": op.rows_total, "memory_bytes": op.memory_used_bytes}
                for op in batch.operators
            },
            "suppressed_since_last": self.suppressed,
        }
        self.log.warning(json.dumps(line, sort_keys=True))
        self._last_ms, self.suppressed = now, 0
        slowest = max(
            (k for k in batch.duration_ms if k != "triggerExecution"),
            key=lambda k: batch.duration_ms[k],
            default="triggerExecution",
        )
        return Finding(
            kind="slow_batch",
            batch_id=batch.batch_id,
            message=(
                f"batch {batch.batch_id} took {batch.batch_duration_ms:,} ms (threshold "
                f"{self.threshold_ms:,} ms), most of it in {slowest!r}"
            ),
            details=line,
        )
