"""Builds the SparkSession every streamwarden pipeline runs on.

Defaults: the RocksDB state store with changelog checkpointing (lessons L9, L10), checkpoint
format v2, UTC session time, the engine jar on the classpath, and local files handled without
forking a child process per checkpoint file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from streamwarden.errors import EngineError
from streamwarden.spark.engine_jar import engine_jar_path
from streamwarden.spark.jvm import engine_on_classpath, missing_engine_message

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

#: Local files through java.nio instead of child processes (see the engine's
#: ``io.streamwarden.engine.fs.InProcessRawLocalFileSystem``): without Hadoop's native library,
#: every checkpoint file forked ``chmod`` and every rename forked ``readlink``.
LOCAL_FILES: Mapping[str, str] = {
    "spark.hadoop.fs.file.impl": "io.streamwarden.engine.fs.InProcessLocalFileSystem",
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "io.streamwarden.engine.fs.InProcessLocalFs",
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
    Raises :class:`EngineError` when the session it gets cannot reach the engine's classes.
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
    conf = {**STATE_DEFAULTS, **LOCAL_FILES, **(extra_conf or {})}
    # the engine jar on the JVM's own classpath too: Hadoop loads file systems outside Spark's
    # class loader
    class_path = conf.get("spark.driver.extraClassPath")
    conf["spark.driver.extraClassPath"] = os.pathsep.join(
        p for p in (str(engine_jar_path()), class_path) if p
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if not engine_on_classpath(spark):  # an earlier session was reused, without the jar
        raise EngineError(missing_engine_message("the engine jar"))
    spark.sparkContext.setLogLevel("WARN")
    return spark
