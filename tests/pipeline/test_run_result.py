"""A run's result keeps the progress of its newest batches only (``RECENT_BATCHES``): a
continuous run lasts months, and a result that kept every batch grew the driver by about 14 KB
per batch. It still counts every batch and knows the latest event time of the whole run, which
the drain after a run needs. No Spark."""

from __future__ import annotations

from streamwarden.monitoring.monitor import RECENT_BATCHES
from streamwarden.pipeline.result import RunResult


def _progress(batch: int, max_event: str | None) -> dict:
    return {"batchId": batch, "eventTime": {"max": max_event} if max_event else {}}


def test_a_result_keeps_the_newest_batches_and_counts_them_all():
    result = RunResult()
    batches = 2 * RECENT_BATCHES + 1
    for batch in range(batches):
        result.add(_progress(batch, None), stats=None)
    assert result.batch_count == batches
    assert [p["batchId"] for p in result.progress] == list(range(batches - RECENT_BATCHES, batches))


def test_the_latest_event_time_is_of_the_whole_run_even_once_its_batch_is_dropped():
    result = RunResult()
    result.add(_progress(0, "2026-01-01T00:10:00.000Z"), stats=None)  # the latest, then dropped
    for batch in range(1, RECENT_BATCHES + 1):
        result.add(_progress(batch, "2026-01-01T00:00:00.000Z"), stats=None)
    later = RunResult()
    later.add(_progress(RECENT_BATCHES + 1, None), stats=None)  # a drain that read nothing
    result.then(later)
    assert result.max_event_ms == 1767226200000  # 2026-01-01T00:10:00Z
    assert result.batch_count == RECENT_BATCHES + 2 and len(result.progress) == RECENT_BATCHES
