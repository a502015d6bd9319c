"""Builds the SparkSession every streamwarden pipeline runs on.

Defaults: the RocksDB state store with changelog checkpointing (lessons L9, L10), checkpoint
format v2, UTC session time, and the engine jar on the classpath through ``spark.jars``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from streamwarden.spark.engine_jar import engine_jar_path

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["STATE_DEFAULTS", "build_spark_session"]

ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

STATE_DEFAULTS: Mapping[str, str] = {
    "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.sql.streaming.stateStore.checkpointFormatVersion": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.noDataMicroBatches.enabled": "true",
}


def build_spark_session(
    *,
    app_name: str = "streamwarden",
    master: str = "local[2]",
    shuffle_partitions: int = 4,
    extra_conf: Mapping[str, str] | None = None,
    extra_jars: tuple[str, ...] = (),
) -> SparkSession:
    """Returns a SparkSession with streamwarden's engine and state-store defaults.

    An existing active session is reused by Spark's builder; its static settings (such as
    ``spark.jars``) cannot change afterwards, so build the session through this function first.
    """
    from pyspark.sql import SparkSession

    jars = ",".join((str(engine_jar_path()), *extra_jars))
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master)
        .config("spark.jars", jars)
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.ui.showConsoleProgress", "false")
    )
    for key, value in {**STATE_DEFAULTS, **(extra_conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark
