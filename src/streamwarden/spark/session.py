"""Builds the SparkSession every streamwarden pipeline runs on.

Defaults: the RocksDB state store with changelog checkpointing (docs/failure-modes.md:
checkpoint-metadata-growth, full-snapshots), checkpoint format v2, UTC session time, the engine
jar on the classpath, local files handled without forking a child process per checkpoint file,
no record of Python call sites around each DataFrame call (``QUERY_BUILDING``), the
installation's class archive mapped at the JVM's start (``spark/class_archive.py``),
a driver nobody else can reach (``spark/network.py``: in local mode the UI, RPC and block
manager listen on 127.0.0.1; the UI's kill links are off), and files Spark writes readable by
their owner only (``spark/permissions.py``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.errors import EngineError
from streamwarden.spark.class_archive import CLASS_PATH, DRIVER_OPTIONS, java_options
from streamwarden.spark.cluster import PYTHON, cluster_defaults
from streamwarden.spark.engine_jar import engine_jar_path
from streamwarden.spark.jvm import engine_on_classpath, missing_engine_message
from streamwarden.spark.logs import unwritable_log
from streamwarden.spark.network import jvm_environment, network_defaults
from streamwarden.spark.permissions import PRIVATE_UMASK, UMASK_SETTING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "STATE_DEFAULTS",
    "TRACK_STATE_ROWS",
    "build_spark_session",
    "driver_settings",
    "state_rows_tracked",
]

ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

STATE_DEFAULTS: Mapping[str, str] = {
    "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.sql.streaming.stateStore.checkpointFormatVersion": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.noDataMicroBatches.enabled": "true",
}

#: Spark's switch for counting the rows of each RocksDB state store (``numRowsTotal``). Left at
#: Spark's default (on): the count costs a read before every state write and delete, and without
#: it every state-row figure reads 0 and the state-growth alarm is blind.
TRACK_STATE_ROWS = "spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows"


def state_rows_tracked(conf: Mapping[str, str]) -> bool:
    """Whether Spark counts state rows under the settings ``conf`` (absent means Spark's on)."""
    return conf.get(TRACK_STATE_ROWS, "true").strip().lower() != "false"


#: Spark hides the values of settings and source options whose names match these (in the UI,
#: plans and error messages); Kafka's JAAS line carries the SASL password under a name that
#: Spark's defaults ("secret|password|token|access key", and "url" for options) do not match.
REDACTION: Mapping[str, str] = {
    "spark.redaction.regex": "(?i)secret|password|token|access[.]?key|jaas|credential",
    "spark.sql.redaction.options.regex": "(?i)url|jaas|password|secret|token|credential",
}

#: Local files through java.nio instead of child processes (see the engine's
#: ``io.streamwarden.engine.fs.InProcessRawLocalFileSystem``): without Hadoop's native library,
#: every checkpoint file forked ``chmod`` and every rename forked ``readlink``.
LOCAL_FILES: Mapping[str, str] = {
    "spark.hadoop.fs.file.impl": "io.streamwarden.engine.fs.InProcessLocalFileSystem",
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "io.streamwarden.engine.fs.InProcessLocalFs",
}

#: Spark's file source writes one log file per batch (``<checkpoint>/sources/N``) and, on every
#: batch, lists that folder to delete the files a compaction has made redundant, but only those
#: older than this delay (Spark's default: 10 minutes, a guard for object stores that listed
#: new files late). With fast batches the folder held 10 minutes of them: 4,376 files (with
#: their checksums) at 3 batches per second, and listing it cost 115 of a batch's 327 ms
#: (``latestOffset``); with 0s a 5k-event batch with no state took 164 ms instead of 264
#: (bench/notes/scale.md). The batches Spark keeps for a restart
#: (``spark.sql.streaming.minBatchesToRetain``) are kept whatever the delay.
SOURCE_LOG: Mapping[str, str] = {
    "spark.sql.streaming.fileSource.log.cleanupDelay": "0s",
}

#: PySpark's DataFrame debugging (on unless switched off) records, around every Column and
#: DataFrame call, the Python line that made it, in the JVM, so that an analysis error can point
#: at the user's code: seven more round trips to the JVM per call. streamwarden builds its
#: queries from its own code and reports their errors in its own words, so those call sites
#: would only ever name its own lines. Off, building a sessions pipeline's query takes 1,600
#: round trips instead of 5,900 and half the time, and every start, restart and drain builds
#: one (bench/notes/scale.md, "Start time").
QUERY_BUILDING: Mapping[str, str] = {
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}


def driver_settings(
    *,
    app_name: str = "streamwarden",
    master: str = "local[2]",
    shuffle_partitions: int = 4,
    extra_conf: Mapping[str, str] | None = None,
    extra_jars: tuple[str, ...] = (),
) -> dict[str, str]:
    """The settings :func:`build_spark_session` starts Spark with (before the class archive's
    option, which depends on them: ``spark/class_archive.py``)."""
    jars = ",".join((str(engine_jar_path()), *extra_jars))
    settings = {
        "spark.app.name": app_name,
        "spark.master": master,
        "spark.jars": jars,
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.ui.showConsoleProgress": "false",
        **STATE_DEFAULTS,
        **LOCAL_FILES,
        **SOURCE_LOG,
        **QUERY_BUILDING,
        **REDACTION,
        **network_defaults((extra_conf or {}).get("spark.master", master)),
        **cluster_defaults((extra_conf or {}).get("spark.master", master)),
        UMASK_SETTING: PRIVATE_UMASK,  # Spark's files readable by their owner only
        **(extra_conf or {}),
    }
    # the engine jar on the JVM's own classpath too: Hadoop loads file systems outside Spark's
    # class loader
    class_path = settings.get(CLASS_PATH)
    settings[CLASS_PATH] = os.pathsep.join(p for p in (str(engine_jar_path()), class_path) if p)
    return settings


def _python_workers(settings: Mapping[str, str]) -> None:
    """PySpark starts the Python side of a query on the driver (``transformWithState``'s
    driver worker) with ``PYSPARK_PYTHON``, not ``spark.pyspark.python``: the two are made to
    agree, so that the driver's workers have streamwarden too (a variable the user set wins)."""
    python = settings.get(PYTHON)
    if python is not None:
        os.environ.setdefault("PYSPARK_PYTHON", python)


def build_spark_session(
    *,
    app_name: str = "streamwarden",
    master: str = "local[2]",
    shuffle_partitions: int = 4,
    extra_conf: Mapping[str, str] | None = None,
    extra_jars: tuple[str, ...] = (),
    jvm_output: Path | None = None,
) -> SparkSession:
    """Returns a SparkSession with streamwarden's engine and state-store defaults.

    An existing active session is reused by Spark's builder; its static settings (such as
    ``spark.jars``) cannot change afterwards, so build the session through this function first.
    Raises :class:`EngineError` when the session it gets cannot reach the engine's classes.
    A JVM started here maps the installation's class archive when one was made
    (``spark/class_archive.py``).

    With ``jvm_output``, a JVM started here writes its own output (the JVM's start-up warnings,
    anything printed before the log configuration takes over) to that file rather than the
    terminal; the command line passes its log file.
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    settings = driver_settings(
        app_name=app_name,
        master=master,
        shuffle_partitions=shuffle_partitions,
        extra_conf=extra_conf,
        extra_jars=extra_jars,
    )
    # only a JVM started here reads its options: no digest of Spark's jars for a running one
    if SparkContext._gateway is None and (options := java_options(settings)) is not None:
        settings[DRIVER_OPTIONS] = options
    _refuse_a_jvm_without_the_engine()
    _python_workers(settings)
    with jvm_environment(settings):  # whichever of the two below starts the JVM
        if jvm_output is not None:
            _start_jvm(settings, jvm_output)
        builder = SparkSession.builder
        for key, value in settings.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
    if not engine_on_classpath(spark._jvm):  # a gateway from outside, without the jar
        raise EngineError(missing_engine_message("the engine jar"))
    spark.sparkContext.setLogLevel("WARN")
    return spark


def _start_jvm(settings: Mapping[str, str], output: Path) -> None:
    """Starts Spark's JVM (unless one runs already) with these settings, its stdout and stderr
    appended to ``output``. Spark's launcher always adds ``--add-modules=jdk.incubator.vector``,
    and the JVM then prints a warning no setting can silence; users should not see it."""
    from pyspark import SparkConf, SparkContext
    from pyspark.errors import PySparkRuntimeError
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        sink = output.open("ab")
    except OSError as exc:
        raise unwritable_log(output, exc) from None
    with sink:  # the child keeps its own copy of the descriptor
        try:
            gateway = launch_gateway(  # type: ignore[no-untyped-call]
                conf, popen_kwargs={"stdout": sink, "stderr": sink}
            )
        except PySparkRuntimeError:
            raise EngineError(
                f"Spark's JVM did not start; what it printed is at the end of {str(output)!r}. "
                "Check that Java 17 or later is installed (`java -version`) and JAVA_HOME"
            ) from None
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)


def _refuse_a_jvm_without_the_engine() -> None:
    """A JVM that runs already keeps its classpath: if it lacks the engine, no session built on
    it can work, and setting the engine's file system on it would break even plain reads."""
    from pyspark import SparkContext

    if SparkContext._jvm is not None and not engine_on_classpath(SparkContext._jvm):
        raise EngineError(missing_engine_message("the engine jar"))
