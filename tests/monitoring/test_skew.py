"""Skew: per-partition state and input rows, and a warning when one partition is far above the
mean (lesson L11)."""

from __future__ import annotations

from streamwarden.config import MonitoringConfig
from streamwarden.monitoring import PartitionLoad, SkewDetector
from tests.monitoring.conftest import keyed_events, run_counting_query
from tests.support import T0_MS


def keys_in_partition(spark, partition: int, count: int, partitions: int = 2) -> list[str]:
    """Keys that Spark's hash partitioning sends to ``partition`` (Murmur3, as in shuffles)."""
    rows = spark.sql(
        f"SELECT k FROM (SELECT concat('user-', id) AS k FROM range({count * partitions * 4})) "
        f"WHERE pmod(hash(k), {partitions}) = {partition} LIMIT {count}"
    ).collect()
    return [r.k for r in rows]


def run(spark, root, name, keys):
    config = MonitoringConfig(skew_factor=1.5, skew_min_rows=10, prometheus_port=None)
    monitor = run_counting_query(spark, root, name, [keyed_events(keys, T0_MS)], config)
    monitor.close()
    return monitor


def test_a_skewed_key_distribution_is_flagged_with_its_partition(spark, workdir):
    keys = keys_in_partition(spark, 0, 900) + keys_in_partition(spark, 1, 100)
    monitor = run(spark, workdir, "skewed_count", keys)
    (load,) = monitor.records[0].partitions
    assert load.state_rows == {0: 900, 1: 100}
    assert load.input_rows == {0: 900, 1: 100}
    findings = [f for f in monitor.findings if f.kind == "skew"]
    assert {f.details["what"] for f in findings} == {"state rows", "input rows"}
    assert all(f.details["partition"] == 0 and f.details["ratio"] == 1.8 for f in findings)
    assert "partition 0 holds 900 state rows, 1.8x the mean" in findings[0].message


def test_a_uniform_key_distribution_is_not(spark, workdir):
    keys = keys_in_partition(spark, 0, 500) + keys_in_partition(spark, 1, 500)
    monitor = run(spark, workdir, "uniform_count", keys)
    assert monitor.records[0].partitions[0].state_rows == {0: 500, 1: 500}
    assert [f for f in monitor.findings if f.kind == "skew"] == []


def test_small_partitions_are_not_judged():
    load = PartitionLoad("0:agg", state_rows={0: 9, 1: 1}, input_rows={0: 9, 1: 1})
    assert SkewDetector(factor=1.5, min_rows=10).check(0, [load]) == []
    assert len(SkewDetector(factor=1.5, min_rows=1).check(0, [load])) == 2
