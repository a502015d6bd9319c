"""A Delta Lake table that a sink writes, named by ``path`` or by a metastore ``table``; and
the small read API that other parts (the history store) use on a sessions table.

The layout of a sessions table written with ``keep = "latest"`` (the default), documented here
because readers depend on it:

- one row per session: the columns of the sessions output (the ``[schema]`` key under its own
  name, ``session_id``, ``session_start``, ``session_end``, ``event_count``, ``bytes``,
  ``revision``, ``truncated``, ``merged_session_ids``, each declared aggregate, and
  ``aggregate_state`` when a history store is configured), the ``batch_id`` that wrote that
  revision, and, unless ``partition_by = "off"``, ``session_date`` (the UTC date of
  ``session_start``), the partition column;
- the row is the session's latest revision: a MERGE by ``session_id`` replaces it only with a
  higher ``revision``; a session absorbed by a merge (listed in another's
  ``merged_session_ids``) has no row;
- a later revision never starts later than an earlier one, so a session's row never moves to a
  later ``session_date`` partition.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.errors import SinkError
from streamwarden.spark.delta import has_delta_extension

if TYPE_CHECKING:
    from delta.tables import DeltaTable
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["DeltaTarget", "current_sessions", "date_column"]


def date_column(time: str) -> str:
    """The partition column dating rows by ``time``: ``session_start`` -> ``session_date``,
    ``ingest_time`` -> ``ingest_date``."""
    return time.removesuffix("_start").removesuffix("_time") + "_date"


@dataclass(frozen=True)
class DeltaTarget:
    """A Delta table at ``path``, or the metastore table ``table`` (exactly one is given)."""

    path: Path | None = None
    table: str | None = None

    def __post_init__(self) -> None:
        if (self.path is None) == (self.table is None):
            raise ValueError("a delta table is named by a path or a table name, not both")

    def describe(self) -> str:
        return f"delta table {self.table}" if self.table else f"delta table at {self.path}"

    def location(self, spark: SparkSession | None) -> Path | None:
        """The table's folder: ``path``, or where the metastore keeps ``table`` (None when the
        table does not exist, or a named table is asked about without a SparkSession)."""
        if self.path is not None:
            return self.path
        if spark is None or not self.exists(spark):
            return None
        from delta.tables import DeltaTable

        detail = DeltaTable.forName(spark, str(self.table)).detail().first()
        assert detail is not None  # one row per table
        return Path(str(detail["location"]).removeprefix("file:"))

    def exists(self, spark: SparkSession) -> bool:
        from delta.tables import DeltaTable

        require_delta(spark)
        if self.table is not None:
            return bool(spark.catalog.tableExists(self.table))
        assert self.path is not None
        return (self.path / "_delta_log").is_dir() and DeltaTable.isDeltaTable(
            spark, str(self.path)
        )

    def delta_table(self, spark: SparkSession) -> DeltaTable:
        from delta.tables import DeltaTable

        if self.table is not None:
            return DeltaTable.forName(spark, self.table)
        return DeltaTable.forPath(spark, str(self.path))

    def read(self, spark: SparkSession) -> DataFrame | None:
        """The table's current rows, or None if there is no table yet."""
        if not self.exists(spark):
            return None
        if self.table is not None:
            return spark.read.table(self.table)
        return spark.read.format("delta").load(str(self.path))

    def append(
        self,
        rows: DataFrame,
        *,
        app_id: str,
        version: int,
        partition_by: tuple[str, ...],
    ) -> None:
        """Appends ``rows`` in one commit that records ``(app_id, version)``: Delta skips it
        if the table holds that version (or a later one) of the application already. A new
        column is added to the table (schema evolution). ``partition_by`` applies when the
        append creates the table."""
        writer = (
            rows.write.format("delta")
            .mode("append")
            .option("txnAppId", app_id)
            .option("txnVersion", str(version))
            .option("mergeSchema", "true")
        )
        if partition_by and not self.exists(rows.sparkSession):
            writer = writer.partitionBy(*partition_by)
        if self.table is not None:
            writer.saveAsTable(self.table)
        else:
            writer.save(str(self.path))


def require_delta(spark: SparkSession) -> None:
    """Raises :class:`SinkError` if ``spark`` was started without Delta's extension (a static
    setting: it cannot be added to a running session)."""
    if not has_delta_extension(spark.conf.get("spark.sql.extensions", "") or ""):
        raise SinkError(
            "the SparkSession was started without Delta Lake's extension; start it with "
            "build_spark_session(extra_jars=delta_jars(), extra_conf=delta_session_conf(...)) "
            "from streamwarden.spark.delta (streamwarden run does this for a delta sink)"
        )


def current_sessions(
    spark: SparkSession,
    target: DeltaTarget,
    keys: Collection[object] | DataFrame,
    start: datetime,
    end: datetime,
    *,
    key: str,
) -> DataFrame | None:
    """The current row (latest revision) of each session of ``keys`` that overlaps the time
    range ``[start, end)``: it ends at or after ``start`` and starts before ``end``. ``key`` is
    the sessions' key column (the ``[schema]`` key's name); ``keys`` a collection of its
    values, or a DataFrame with a column of that name (joined, for many). None if the table
    does not exist yet. Sessions starting after ``end`` are pruned by the ``session_date``
    partition when the table has one.

    Example::

        current_sessions(spark, DeltaTarget(path=Path("out/sessions")), ["a1", "a2"],
                         datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 8, tzinfo=UTC),
                         key="account")
    """
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    table = target.read(spark)
    if table is None:
        return None
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("current_sessions takes timezone-aware datetimes")
    overlapping = (F.col("session_end") >= F.lit(start)) & (F.col("session_start") < F.lit(end))
    rows = table.where(overlapping)
    if "session_date" in table.columns:
        rows = rows.where(F.col("session_date") <= F.lit(end.astimezone(UTC).date()))
    if isinstance(keys, DataFrame):
        return rows.join(keys.select(F.col(f"`{key}`")).distinct(), key, "left_semi")
    return rows.where(F.col(f"`{key}`").isin(list(keys)))
