"""The file source's own log (``<checkpoint>/sources/N``) holds the batches Spark keeps for a
restart, not every batch of the last ten minutes: the session deletes a batch's log file as soon
as a compact file repeats its entries (Spark's default waits ten minutes, and lists the folder on
every batch: with fast batches that listing grew to a third of a batch's time)."""

from __future__ import annotations

import pytest

from streamwarden.sources.file_log import files_of_batch
from tests.support import spark_settings

pytestmark = pytest.mark.spark

COMPACT = "spark.sql.streaming.fileSource.log.compactInterval"
RETAIN = "spark.sql.streaming.minBatchesToRetain"


def test_a_compacted_batch_file_leaves_the_source_log_at_once(spark, tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    for i in range(12):
        (landing / f"f{i:02d}.txt").write_text(f"{i}\n")
    # a compact file every 2 batches, 2 batches kept for a restart: 12 batches in seconds
    with spark_settings(spark, {COMPACT: "2", RETAIN: "2"}):
        query = (
            spark.readStream.option("maxFilesPerTrigger", 1)
            .text(str(landing))
            .writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
    log = tmp_path / "checkpoint" / "sources" / "0"
    kept = sorted(f.name for f in log.iterdir() if not f.name.startswith("."))
    # batch 11's compact file, batch 10's and the compact file before them; with Spark's
    # ten-minute delay, all 12 batches' files
    assert kept == ["10", "11.compact", "9.compact"]
    # every batch's entry is still there, the deleted ones' in the compact files that repeat them
    read = sorted(path for batch in range(12) for path in files_of_batch(log, batch))
    assert read == sorted((landing / f"f{i:02d}.txt").as_uri() for i in range(12))
