"""Records of several sources in one stream keep each source's own columns apart: a source's
event time (Kafka's timestamp) never leaves another source's records without theirs."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from streamwarden.sources.base import SOURCE_NAME, SOURCE_POSITION, SOURCE_TIME
from streamwarden.sources.several import _named, records_of
from streamwarden.validation.validate import TICK_SOURCE

pytestmark = pytest.mark.spark


def test_each_source_gets_back_its_own_columns_and_none_of_the_others(spark):
    columns = f"raw STRING, {SOURCE_TIME} BIGINT, {SOURCE_POSITION} STRING"
    kafka = spark.createDataFrame([('{"a": 1}', 1000, "topic t partition 0 offset 3")], columns)
    files = spark.createDataFrame([('{"a": 2}',)], "raw STRING")
    ticks = spark.createDataFrame([('{"tick": 1}',)], "raw STRING").withColumn(
        TICK_SOURCE, F.lit(True)
    )
    union = (
        _named(kafka, "payments")
        .unionByName(_named(files, "refunds"), allowMissingColumns=True)
        .unionByName(ticks, allowMissingColumns=True)
    )

    payments = records_of(union, "payments")
    assert SOURCE_TIME in payments.columns and SOURCE_POSITION in payments.columns
    assert [(r.raw, r[SOURCE_TIME]) for r in payments.collect()] == [('{"a": 1}', 1000)]

    refunds = records_of(union, "refunds", also=F.coalesce(F.col(TICK_SOURCE), F.lit(False)))
    assert SOURCE_TIME not in refunds.columns  # their time is the record's own field
    assert sorted(r.raw for r in refunds.collect()) == ['{"a": 2}', '{"tick": 1}']
    assert sorted(r[SOURCE_NAME] or "tick" for r in refunds.collect()) == ["refunds", "tick"]
