"""``streamwarden maintain``: OPTIMIZE compacts a Delta table's per-batch files and VACUUM
never uses a retention below the table's own (the files a reader may still open)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from streamwarden.errors import UsageError
from streamwarden.pipeline.maintain import maintain, retention_of
from streamwarden.sinks.delta import DeltaBatchSink
from streamwarden.sinks.delta_table import DeltaTarget
from tests.support import pipeline_config


def test_the_retention_is_read_from_the_table_property_or_is_delta_s_default():
    assert retention_of({}) == timedelta(days=7)
    assert retention_of({"delta.deletedFileRetentionDuration": "interval 30 days"}) == timedelta(
        days=30
    )
    assert retention_of({"delta.deletedFileRetentionDuration": "interval 1 week"}) == timedelta(
        weeks=1
    )


def delta_config(root):
    return pipeline_config(
        root,
        sinks={
            "sessions": {"kind": "delta", "path": str(root / "sessions")},
            "dead_letters": {"kind": "delta", "path": str(root / "dead_letters")},
        },
    )


def _three_batches(spark, config):
    sink = DeltaBatchSink.open("dead_letters", config.sinks["dead_letters"], config.context)
    for batch in range(3):
        rows = spark.createDataFrame([(f"r{batch}", "malformed_json")], "raw string, reason string")
        sink.write_batch(rows, batch)


def test_maintain_refuses_a_retention_below_the_table_s(spark, workdir):
    config = delta_config(workdir)
    _three_batches(spark, config)
    before = sorted((workdir / "dead_letters").rglob("*"))
    with pytest.raises(UsageError, match=r"below the retention .* at least 7d"):
        maintain(spark, config, retain=timedelta(hours=1))
    assert sorted((workdir / "dead_letters").rglob("*")) == before  # nothing touched


@pytest.mark.soak  # OPTIMIZE and VACUUM are several Spark jobs each
def test_maintain_compacts_each_table_and_keeps_recent_files(spark, workdir):
    config = delta_config(workdir)
    _three_batches(spark, config)
    [done] = maintain(spark, config)  # the sessions table does not exist yet: left alone
    assert done.sink == "dead_letters" and done.files_compacted == 3
    assert done.retention == timedelta(days=7) and done.files_deleted == 0  # all too recent
    table = DeltaTarget(path=workdir / "dead_letters").read(spark)
    assert table is not None and sorted(r.raw for r in table.collect()) == ["r0", "r1", "r2"]
