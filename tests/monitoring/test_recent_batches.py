"""A monitor watches a stream for months: it keeps the records, findings, failures and errors
of the newest batches only (``RECENT_BATCHES``), so the driver does not grow by a record per
batch; the progress log on disk keeps them all; what a sink noted while writing a batch is a finding
of that batch. No Spark: the monitor is fed progress as its listener would."""

from __future__ import annotations

from streamwarden.monitoring.failures import QueryFailure
from streamwarden.monitoring.monitor import RECENT_BATCHES, QueryMonitor, keep_newest
from streamwarden.monitoring.progress_log import (
    PROGRESS_FILE,
    progress_dir,
    read_failures,
    read_progress_log,
    read_status,
)
from streamwarden.sinks.writer import SinkNote
from tests.support import kafka_source, progress_of


def _progress(batch: int) -> dict:
    # a Kafka batch that read past one offset without a record: one finding per batch
    offsets = {"0": batch * 10 + 10}
    return progress_of(batch, [kafka_source({"0": batch * 10}, offsets, offsets, 9)])


def test_keep_newest_drops_the_oldest_beyond_the_limit():
    items: list[int] = []
    for i in range(7):
        keep_newest(items, i, limit=3)
    assert items == [4, 5, 6]


def test_a_monitor_keeps_the_records_and_findings_of_the_newest_batches_only():
    monitor = QueryMonitor(None, "q")  # type: ignore[arg-type]  # never started: no Spark
    batches = 3 * RECENT_BATCHES
    for batch in range(batches):
        monitor.on_progress(_progress(batch))
    assert len(monitor.records) == RECENT_BATCHES
    assert monitor.records[0].summary.batch_id == batches - RECENT_BATCHES
    assert monitor.records[-1].summary.batch_id == batches - 1
    findings = monitor.findings
    assert len(findings) == RECENT_BATCHES and {f.kind for f in findings} == {"offsets_skipped"}


def test_a_monitor_keeps_the_newest_failures_and_its_status_counts_them_all(tmp_path):
    checkpoint = tmp_path / "checkpoint"
    monitor = QueryMonitor(None, "q", checkpoint=checkpoint)  # type: ignore[arg-type]
    for n in range(RECENT_BATCHES + 5):
        monitor.record_failure(QueryFailure(at_ms=n, batch=n, error_class="X", message="boom"))
    assert len(monitor.failures) == RECENT_BATCHES and monitor.failures[0].batch == 5
    status = read_status(progress_dir(checkpoint))
    assert status is not None and status["failures"] == RECENT_BATCHES + 5
    # the progress log on disk keeps every failure
    assert len(read_failures(progress_dir(checkpoint) / PROGRESS_FILE)) == RECENT_BATCHES + 5


def test_a_sink_s_note_of_a_batch_is_a_finding_of_that_batch(tmp_path):
    checkpoint = tmp_path / "checkpoint"
    monitor = QueryMonitor(None, "q", checkpoint=checkpoint)  # type: ignore[arg-type]
    note = SinkNote("sink_rows_duplicated", "sessions", 3, "two rows of one key", {"keys": 1})
    notes = {3: [note]}
    monitor.sink_notes = lambda batch: notes.pop(batch, [])
    monitor.on_progress(progress_of(2, []))
    record = monitor.on_progress(progress_of(3, []))

    [finding] = monitor.findings
    assert (finding.kind, finding.batch_id, finding.message) == (
        "sink_rows_duplicated",
        3,
        "two rows of one key",
    )
    assert finding.details == {"sink": "sessions", "keys": 1}
    assert finding.see == "docs/failure-modes.md#rows-written-by-others"
    assert record.findings == [finding]
    batches = read_progress_log(progress_dir(checkpoint) / PROGRESS_FILE)
    [logged] = [b for b in batches if b.findings]
    assert logged.findings[0].kind == "sink_rows_duplicated"
