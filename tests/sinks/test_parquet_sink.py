"""The parquet sink writes each batch id exactly once, however often it is replayed."""

from __future__ import annotations

from streamwarden.sinks import ParquetBatchSink


def test_writing_the_same_batch_twice_leaves_one_copy_and_says_it_skipped(spark, workdir):
    sink = ParquetBatchSink("s", workdir / "out")
    rows = spark.createDataFrame([(1,), (2,)], "x int")
    assert sink.write_batch(rows, 7) is True
    assert sink.write_batch(rows, 7) is False  # the rows were not computed again
    assert sorted(r.x for r in spark.read.parquet(str(workdir / "out")).collect()) == [1, 2]


def test_a_half_written_batch_left_by_a_crash_is_invisible_and_rewritten(spark, workdir):
    sink = ParquetBatchSink("s", workdir / "out")
    rows = spark.createDataFrame([(1,)], "x int")
    rows.write.parquet(str(workdir / "out" / "_staging" / "3-crashed"))  # as if killed mid-write
    sink.write_batch(rows, 3)
    assert [r.x for r in spark.read.parquet(str(workdir / "out")).collect()] == [1]


def test_a_batch_without_rows_leaves_no_folder(spark, workdir):
    sink = ParquetBatchSink("s", workdir / "out")
    assert sink.write_batch(spark.createDataFrame([], "x int"), 0) is True
    assert not (workdir / "out" / "batch_id=0000000000").exists()
