"""Delta Lake table sink (``kind = "delta"``), exactly once per micro-batch through Delta's own
transaction identifiers.

Each batch with rows is one Delta commit that records the pipeline's identity and the batch id
as a transaction (``txnAppId`` = :func:`~streamwarden.settings.context.pipeline_id`,
``txnVersion`` = the batch id). Delta itself skips a commit of an application whose version it
already holds, so a batch replayed after a crash is never committed twice, whatever the point of
the crash; the sink also reads the table's log once per run and skips such a batch without
computing it. A batch without rows makes no commit.

- Outputs whose rows stand alone (dead letters, matches) are appended
  (``.option("txnAppId"...)``).
- Outputs whose rows are revisions (:class:`~streamwarden.sinks.base.OutputShape` with a key:
  sessions) keep, with ``keep = "latest"`` (the default), one row per key: the batch's rows are
  reduced to the highest revision per key, and a MERGE on the key replaces a row only with a
  higher revision and deletes the rows of keys absorbed by a merge, in the same commit. Delta's
  transaction settings for a MERGE are session settings
  (``spark.databricks.delta.write.txnAppId``/``txnVersion``), set for the MERGE and unset after
  it, failed or not. ``keep = "all"`` appends every revision instead. A MERGE that changed
  more rows than the batch has keys found a key with more than one row (a row another writer
  copied into the table, updated too): the sink notes it, and the run reports it as a finding
  (``sink_rows_duplicated``).

Tables are partitioned by the date of the output's time column (``session_date`` for sessions)
unless ``partition_by = "off"``; a column the output gains later is added to the table (schema
evolution). Upkeep (OPTIMIZE, VACUUM): ``streamwarden maintain``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, model_validator

from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext
from streamwarden.settings.types import ConfigFolder
from streamwarden.sinks import delta_log
from streamwarden.sinks.base import SINK_KINDS, STANDALONE, OutputShape
from streamwarden.sinks.delta_table import DeltaTarget, date_column, require_delta
from streamwarden.sinks.writer import SinkNote

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "TXN_APP_ID",
    "TXN_VERSION",
    "DeltaBatchSink",
    "DeltaSinkSettings",
    "delta_target",
    "latest_rows",
]

#: Delta's session settings that make a MERGE (or any write) an idempotent transaction.
TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"


class DeltaSinkSettings(KindSettings):
    """``[sinks.<output>] kind = "delta"``: a Delta Lake table, at ``path`` or the metastore's
    ``table``, one commit per batch."""

    extra: ClassVar[str | None] = "delta"

    kind: Literal["delta"]
    path: ConfigFolder | None = None
    table: str | None = Field(default=None, min_length=1)
    #: ``latest``: one row per key (a session's latest revision, by MERGE); ``all``: every row
    #: appended (every revision). Outputs whose rows are not revisions are always appended.
    keep: Literal["latest", "all"] = "latest"
    #: ``date``: partitioned by the date of the output's time column; ``off``: not partitioned.
    partition_by: Literal["date", "off"] = "date"

    @model_validator(mode="after")
    def _one_place(self) -> DeltaSinkSettings:
        if (self.path is None) == (self.table is None):
            raise ValueError("a delta sink needs a path or a table (one of them)")
        return self


class DeltaBatchSink:
    """Writes each micro-batch's rows to a Delta table in one commit, exactly once."""

    settings_model = DeltaSinkSettings

    def __init__(
        self,
        name: str,
        target: DeltaTarget,
        app_id: str,
        shape: OutputShape,
        *,
        latest: bool,
        partitioned: bool,
    ) -> None:
        self.name = name
        self.target = target
        self.app_id = app_id
        self.shape = shape
        #: Keep one row per key (MERGE) rather than append every row.
        self.latest = latest and shape.revised
        #: The partition column (None: the table is not partitioned).
        self.date_column = date_column(shape.time) if partitioned and shape.time else None
        #: The last batch id the table holds (-1: none), read from the log at the first batch.
        self._committed: int | None = None
        #: What the batches written saw that a person should know, until taken.
        self._notes: list[SinkNote] = []

    def take_notes(self) -> list[SinkNote]:
        """The notes of the batches written since the last call (:class:`SinkNote`)."""
        notes, self._notes = self._notes, []
        return notes

    @staticmethod
    def check(name: str, settings: KindSettings, context: RunContext) -> None:
        """Nothing to reach before a run: the table is made by the first batch with rows."""

    @staticmethod
    def jars(settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        from streamwarden.spark.delta import delta_jars

        return delta_jars()

    @staticmethod
    def spark_conf(settings: KindSettings, context: RunContext) -> Mapping[str, str]:
        from streamwarden.spark.delta import delta_session_conf

        return delta_session_conf(context.spark_master, context.shuffle_partitions)

    @staticmethod
    def where(settings: KindSettings) -> str:
        return delta_target(settings).describe()

    @classmethod
    def open(
        cls,
        name: str,
        settings: KindSettings,
        context: RunContext,
        shape: OutputShape = STANDALONE,
    ) -> DeltaBatchSink:
        assert isinstance(settings, DeltaSinkSettings)  # the registry chose this kind by it
        return cls(
            name,
            delta_target(settings),
            context.pipeline_id,
            shape,
            latest=settings.keep == "latest",
            partitioned=settings.partition_by == "date",
        )

    def write_batch(self, rows: DataFrame, batch_id: int) -> bool:
        spark = rows.sparkSession
        require_delta(spark)
        if batch_id <= self._last_committed(spark):
            return False  # committed before a crash; the replayed batch holds the same rows
        if rows.isEmpty():
            return True  # no commit for a batch without rows (its replay has none either)
        frame = self._with_columns(rows, batch_id)
        if self.latest and self.target.exists(spark):
            self._merge(spark, frame, batch_id)
        else:
            if self.latest:  # a new table: the batch's latest rows, nothing to replace
                frame = latest_rows(frame, self.shape).where(_upsert(self.shape))
            partitions = (self.date_column,) if self.date_column else ()
            self.target.append(frame, app_id=self.app_id, version=batch_id, partition_by=partitions)
        self._committed = batch_id
        return True

    def written_batches(self) -> list[int]:
        """The batches up to the last one the table's log records for this pipeline (each
        batch is committed before the next is written; one without rows writes nothing).
        A table named in the metastore is found through the running SparkSession: without
        one, it reports none."""
        spark = None
        if self.target.table is not None:  # a table by path needs no Spark (run asks before)
            from pyspark.sql import SparkSession

            spark = SparkSession.getActiveSession()
        location = self.target.location(spark)
        if location is None:
            return []
        last = delta_log.last_transaction(location, self.app_id)
        return [] if last is None else list(range(last + 1))

    def read(self, spark: SparkSession) -> DataFrame | None:
        return self.target.read(spark)

    def _last_committed(self, spark: SparkSession) -> int:
        if self._committed is None:
            location = self.target.location(spark)
            last = None if location is None else delta_log.last_transaction(location, self.app_id)
            self._committed = -1 if last is None else last
        return self._committed

    def _with_columns(self, rows: DataFrame, batch_id: int) -> DataFrame:
        from pyspark.sql import functions as F

        frame = rows.withColumn("batch_id", F.lit(batch_id).cast("long"))
        if self.date_column is not None and self.shape.time is not None:
            frame = frame.withColumn(self.date_column, F.to_date(self.shape.time))
        return frame

    def _merge(self, spark: SparkSession, frame: DataFrame, batch_id: int) -> None:
        """One MERGE: absorbed keys deleted, higher revisions replace lower, new keys added."""
        shape = self.shape
        assert shape.key is not None and shape.revision is not None  # self.latest
        source = latest_rows(frame, shape)
        condition = f"t.`{shape.key}` = s.`{shape.key}`"
        earliest = self._earliest_date(source)
        if earliest is not None:  # a row never moves to a later date: older partitions pruned
            condition += f" AND t.`{self.date_column}` >= DATE'{earliest}'"
        revision = f"s.`{shape.revision}`"
        merge = (
            self.target.delta_table(spark)
            .alias("t")
            .merge(source.alias("s"), condition)
            .whenMatchedDelete(f"{revision} IS NULL")
            .whenMatchedUpdateAll(f"{revision} > t.`{shape.revision}`")
            .whenNotMatchedInsertAll(f"{revision} IS NOT NULL")
            .withSchemaEvolution()
        )
        spark.conf.set(TXN_APP_ID, self.app_id)
        spark.conf.set(TXN_VERSION, str(batch_id))
        try:
            merge.execute()
        finally:
            spark.conf.unset(TXN_APP_ID)
            spark.conf.unset(TXN_VERSION)
        self._check_merge(spark, batch_id)

    def _check_merge(self, spark: SparkSession, batch_id: int) -> None:
        """Notes a MERGE that changed more rows than its batch has keys: each key of the batch
        is one source row, so a key with two rows in the table (one copied in by another
        writer) is matched, and changed, twice. Read from the commit's figures in the log."""
        location = self.target.location(spark)
        commit = None if location is None else delta_log.newest_commit_of(location, self.app_id)
        if commit is None or commit.transactions[self.app_id] != batch_id:
            return
        figures = commit.metrics
        keys = figures.get("numSourceRows")
        changed = sum(
            figures.get(name, 0)
            for name in (
                "numTargetRowsMatchedUpdated",
                "numTargetRowsMatchedDeleted",
                "numTargetRowsInserted",
            )
        )
        if keys is None or changed <= keys:
            return
        self._notes.append(
            SinkNote(
                "sink_rows_duplicated",
                self.name,
                batch_id,
                f"the MERGE of batch {batch_id} into {self.target.describe()} changed {changed} "
                f"rows for {keys} keys: the table holds more than one row of some "
                f"'{self.shape.key}' (a row another writer added, such as a copy), and the "
                "MERGE updated every copy; delete the extra rows, keeping one per key, and let "
                "only the pipeline write the table",
                details={"table_version": commit.version, "keys": keys, "rows_changed": changed},
            )
        )

    def _earliest_date(self, source: DataFrame) -> str | None:
        from pyspark.sql import functions as F

        if self.date_column is None:
            return None
        earliest = source.agg(F.min(self.date_column)).first()
        return None if earliest is None or earliest[0] is None else earliest[0].isoformat()


def latest_rows(frame: DataFrame, shape: OutputShape) -> DataFrame:
    """The rows a batch's revisions leave, one per key: the highest revision of each key that
    no row of the batch absorbed, and a deletion row (the key, every other column null, so its
    revision is null) for each absorbed key. At most one row per key, as a MERGE needs."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    key, revision = shape.key, shape.revision
    assert key is not None and revision is not None
    columns = frame.columns
    latest = Window.partitionBy(key).orderBy(F.col(revision).desc())
    upserts = frame.withColumn("_rank", F.row_number().over(latest)).where("_rank = 1")
    if shape.absorbed is None:
        return upserts.select(*columns)
    absorbed = (
        frame.select(F.explode(shape.absorbed).alias(key)).where(F.col(key).isNotNull()).distinct()
    )
    kept = upserts.join(absorbed, key, "left_anti").select(*columns)
    types = dict(frame.dtypes)
    deletions = absorbed.select(
        *[F.col(key) if c == key else F.lit(None).cast(types[c]).alias(c) for c in columns]
    )
    return kept.unionByName(deletions)


def _upsert(shape: OutputShape) -> str:
    """The rows of :func:`latest_rows` that are revisions, not deletions."""
    return f"`{shape.revision}` IS NOT NULL"


def delta_target(settings: KindSettings) -> DeltaTarget:
    """The table a delta sink's settings name."""
    assert isinstance(settings, DeltaSinkSettings)  # the registry chose this kind by it
    return DeltaTarget(path=settings.path, table=settings.table)


SINK_KINDS.register("delta", DeltaBatchSink)
