"""What a SparkSession needs to read and write Delta Lake tables: the two jars of the ``delta``
set (``io.delta:delta-spark_4.2_2.13:4.4.0`` and ``io.delta:delta-storage:4.4.0``, found or
fetched by :mod:`streamwarden.spark.jar_sets`; a full Maven resolution would drag in older
Hadoop and Parquet jars that clash with the pyspark wheel's) and Delta's session extension and
catalog.

Both settings are static: they must be given when the session starts
(``build_spark_session(extra_jars=delta_jars(), extra_conf=delta_session_conf(...))``).
"""

from __future__ import annotations

from collections.abc import Mapping

from streamwarden.spark.jar_sets import jar_set

__all__ = [
    "DELTA_EXTENSION",
    "DELTA_SET",
    "SNAPSHOT_PARTITIONS",
    "delta_jars",
    "delta_session_conf",
    "has_delta_extension",
]

#: The profile id in ``engine/deps/pom.xml``, and so the set folder's name.
DELTA_SET = "delta"
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
#: Partitions of the jobs that rebuild a table's snapshot from its log. Delta's default (50)
#: suits a cluster; on a local master each batch's snapshot stages would then dominate.
SNAPSHOT_PARTITIONS = "spark.databricks.delta.snapshotPartitions"


def delta_jars() -> tuple[str, ...]:
    """Absolute paths of the ``delta`` set's jars, for ``spark.jars`` (fetched into the user's
    cache on first need); a :class:`ConfigError` naming the folder and the command that fetches
    the set when a folder given by ``$STREAMWARDEN_JARS_DIR`` or the source tree lacks it."""
    return jar_set(DELTA_SET)


def delta_session_conf(master: str, shuffle_partitions: int) -> Mapping[str, str]:
    """Delta's extension and catalog, and, on a ``local`` master, as many snapshot partitions
    as shuffle partitions (a setting in ``[spark.conf]`` still wins: it is applied after)."""
    conf = {"spark.sql.extensions": DELTA_EXTENSION, "spark.sql.catalog.spark_catalog": _CATALOG}
    if master.startswith("local"):
        conf[SNAPSHOT_PARTITIONS] = str(shuffle_partitions)
    return conf


def has_delta_extension(extensions: str) -> bool:
    """Whether the value of ``spark.sql.extensions`` includes Delta's."""
    return DELTA_EXTENSION in (e.strip() for e in extensions.split(","))
