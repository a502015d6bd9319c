"""When Spark is told not to count state rows, the monitor says so instead of showing 0 rows.

``spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows = false`` saves a RocksDB read
per state write, and Spark then reports ``numRowsTotal`` as 0 for every batch: a leaking query
looks empty, and the state-growth alarm cannot fire."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from streamwarden.config import MonitoringConfig
from streamwarden.spark.session import TRACK_STATE_ROWS
from tests.monitoring.conftest import keyed_events, run_counting_query
from tests.support import T0_MS, spark_settings

BATCHES = 3


@pytest.fixture(scope="module")
def untracked_run(spark, tmp_path_factory) -> Iterator:
    root = tmp_path_factory.mktemp("untracked")
    batches = [
        keyed_events([f"user-{b}-{i}" for i in range(50)], T0_MS + b * 3_600_000)
        for b in range(BATCHES)
    ]
    with spark_settings(spark, {TRACK_STATE_ROWS: "false"}):
        monitor = run_counting_query(spark, root, "untracked_count", batches, MonitoringConfig())
    yield monitor
    monitor.close()


def test_spark_reports_no_state_rows_when_told_not_to_count_them(untracked_run):
    totals = [r.summary.operators[0].rows_total for r in untracked_run.records]
    assert totals == [0] * BATCHES  # while the query holds 50, 100, then 150 keys


def test_the_monitor_says_once_that_state_rows_are_not_counted(untracked_run):
    found = [f for f in untracked_run.findings if f.kind == "state_rows_untracked"]
    assert [f.batch_id for f in found] == [0]
    assert TRACK_STATE_ROWS in found[0].message and "remove the setting" in found[0].message
    assert found[0].details == {"setting": TRACK_STATE_ROWS, "value": "false"}


def test_a_query_that_counts_state_rows_gets_no_such_finding(leaking_run):
    assert not [f for f in leaking_run.monitor.findings if f.kind == "state_rows_untracked"]
