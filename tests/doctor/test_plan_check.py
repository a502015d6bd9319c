"""The plan check: a streaming stateful step with no watermark below it is an error; the
same step with a watermark, and streamwarden's own sessions query, are clean."""

from __future__ import annotations

from pyspark.sql import functions as F

from streamwarden.doctor import Severity
from streamwarden.doctor.plan import check_plan
from streamwarden.pipeline import Pipeline
from tests.support import pipeline_config


def events(spark, workdir):
    (workdir / "in").mkdir()
    return spark.readStream.schema("user_id string, ts timestamp").json(str(workdir / "in"))


def test_a_streaming_count_per_key_without_watermark_is_an_error(spark, workdir):
    (finding,) = check_plan(events(spark, workdir).groupBy("user_id").count())
    assert finding.code == "stateful-step-without-watermark"
    assert finding.severity == Severity.ERROR and "Aggregate" in finding.message


def test_a_deduplication_without_watermark_is_an_error(spark, workdir):
    findings = check_plan(events(spark, workdir).dropDuplicates(["user_id"]))
    assert [f.code for f in findings] == ["stateful-step-without-watermark"]


def test_a_windowed_count_after_a_watermark_is_clean(spark, workdir):
    frame = (
        events(spark, workdir)
        .withWatermark("ts", "1 minute")
        .groupBy(F.window("ts", "5 minutes"), "user_id")
        .count()
    )
    assert check_plan(frame) == []


def test_a_batch_query_is_not_judged(spark, workdir):
    assert check_plan(spark.range(3).groupBy("id").count()) == []


def test_the_sessions_pipeline_query_is_clean(spark, workdir):
    (workdir / "landing").mkdir()
    assert check_plan(Pipeline(pipeline_config(workdir), spark).stream_frame()) == []
