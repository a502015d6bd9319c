"""What the monitor records per batch of a real query, and how it exports it."""

from __future__ import annotations

import json
import logging
import urllib.request

from streamwarden.monitoring import read_progress_log
from streamwarden.monitoring.progress_log import progress_dir, read_status
from streamwarden.monitoring.slow_batches import SLOW_LOG, SlowBatchLog
from tests.monitoring.conftest import BATCHES, NEW_KEYS_PER_BATCH
from tests.monitoring.test_leak_alarm import batch


def test_every_batch_is_one_line_of_the_progress_log_beside_the_checkpoint(leaking_run):
    log = progress_dir(leaking_run.checkpoint) / "progress.jsonl"
    records = read_progress_log(log)
    assert [r.summary.batch_id for r in records] == list(range(BATCHES))
    assert all(r.summary.input_rows == NEW_KEYS_PER_BATCH for r in records)
    assert records[-1].progress["stateOperators"][0]["numRowsTotal"] == BATCHES * 300
    first = records[0].summary
    assert first.duration_ms["triggerExecution"] > 0 and "addBatch" in first.duration_ms
    assert "rocksdbSstFileSize" in first.operators[0].custom_metrics


def test_partition_numbers_add_up_to_the_operator_totals(leaking_run):
    for record in leaking_run.monitor.records:
        (load,) = record.partitions
        assert sorted(load.state_rows) == [0, 1]  # the tests' two shuffle partitions
        assert sum(load.state_rows.values()) == record.summary.operators[0].rows_total
        assert sum(load.input_rows.values()) == NEW_KEYS_PER_BATCH


def test_checkpoint_bytes_are_measured_per_batch(leaking_run):
    for record in leaking_run.monitor.records:
        usage = record.checkpoint
        assert usage is not None
        assert usage.state_bytes_written > 0 and usage.state_files_written > 0
        assert 0 < usage.batch_metadata_bytes < usage.metadata_bytes_total


def test_a_batch_s_changelogs_are_counted_apart_within_its_state_bytes(leaking_run):
    """What a batch changed (its changelogs) is told apart from snapshots maintenance uploads."""
    for record in leaking_run.monitor.records:
        usage = record.checkpoint
        assert usage is not None and usage.changelog_bytes_written is not None
        assert 0 < usage.changelog_bytes_written <= usage.state_bytes_written


def test_the_progress_log_reports_live_state_and_retained_history_apart(leaking_run):
    """A leaking aggregation's live state grows batch after batch, and each line says how much
    of the state on disk is older versions kept (the progress log as written, read back)."""
    lines = read_progress_log(progress_dir(leaking_run.checkpoint) / "progress.jsonl")
    usages = [line.checkpoint for line in lines]
    live = [u.state_live_bytes for u in usages if u is not None]
    history = [u.state_history_bytes for u in usages if u is not None]
    assert len(live) == len(usages) > 1 and live[-1] > live[0] > 0
    assert all(h is not None and h >= 0 for h in history)


def test_the_status_file_names_the_query_and_its_endpoints(leaking_run):
    status = read_status(progress_dir(leaking_run.checkpoint))
    assert status is not None
    assert status["query"] == "leaking_count" and status["last_batch"] == BATCHES - 1
    assert status["prometheus_url"] == leaking_run.monitor.exporter.url


def test_prometheus_serves_the_documented_metrics_on_localhost(leaking_run):
    exporter = leaking_run.monitor.exporter
    assert exporter.host == "127.0.0.1" and exporter.port > 0  # port 0 picked a free one
    with urllib.request.urlopen(exporter.url, timeout=10) as response:
        text = response.read().decode()
    q, op = 'query="leaking_count"', 'operator="0:stateStoreSave"'
    assert f"streamwarden_batch_id{{{q}}} {BATCHES - 1}.0" in text
    assert f"streamwarden_input_rows_total{{{q}}} {BATCHES * NEW_KEYS_PER_BATCH}.0" in text
    assert f"streamwarden_state_rows{{{op},{q}}} {BATCHES * NEW_KEYS_PER_BATCH}.0" in text
    assert f'streamwarden_alarm{{kind="state_growth",{op},{q}}} 1.0' in text
    for name in (
        'streamwarden_batch_duration_seconds{phase="addBatch"',
        'streamwarden_state_custom_metric{metric="rocksdbSstFileSize"',
        'streamwarden_state_partition_rows{operator="0:stateStoreSave",partition="1"',
        "streamwarden_checkpoint_state_bytes_written_total{",
        "streamwarden_checkpoint_metadata_bytes{",
        "streamwarden_state_memory_bytes{",
    ):
        assert name in text, name


def test_a_slow_batch_is_logged_once_per_interval_as_one_json_line(leaking_run):
    slow = [f for f in leaking_run.monitor.findings if f.kind == "slow_batch"]
    assert [f.batch_id for f in slow] == [0]  # threshold 0: all slow, interval 1h: one line
    assert leaking_run.monitor.slow.suppressed == BATCHES - 1


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(record.getMessage()))


def test_the_slow_batch_line_has_the_batch_its_phases_and_its_state():
    clock = iter([0, 500, 2_000])
    slow = SlowBatchLog(threshold=_s(1), interval=_s(1), clock_ms=lambda: next(clock))
    fast = batch(0, 10, 100)
    slow_batch = _with_duration(batch(1, 10, 200), 1_500)
    logger, handler = logging.getLogger(SLOW_LOG), Lines()
    logger.addHandler(handler)
    try:
        assert slow.observe(fast) is None
        assert slow.observe(slow_batch) is not None  # t=0
        assert slow.observe(slow_batch) is None  # t=500: rate-limited
        assert slow.observe(slow_batch) is not None  # t=2000
    finally:
        logger.removeHandler(handler)
    lines = handler.lines
    assert len(lines) == 2
    assert lines[1]["batch_id"] == 1 and lines[1]["took_ms"] == 1_500
    assert lines[1]["state"] == {"0:agg": {"rows": 200, "memory_bytes": 0}}
    assert lines[1]["suppressed_since_last"] == 1


def _s(seconds: float):
    from datetime import timedelta

    return timedelta(seconds=seconds)


def _with_duration(summary, ms: int):
    from dataclasses import replace

    return replace(summary, duration_ms={"triggerExecution": ms, "addBatch": ms - 100})
