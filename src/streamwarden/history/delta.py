"""The Delta history store (``[history] kind = "delta"``, the default): the pipeline's own Delta
sessions table (``[sinks.sessions] kind = "delta"``, ``keep = "latest"``) is the store.

That table already holds one row per session, its latest revision, written exactly once per
batch by the sessions sink's MERGE (:mod:`streamwarden.sinks.delta`). So this store has no write
path of its own:

- :meth:`~DeltaHistoryStore.lookup` reads the stored sessions of the wanted keys and times from
  the table (``session_end`` and the ``session_date`` partition prune what it reads): the key's
  column (the ``[schema]`` key's name) as text, ``session_start``/``session_end`` as epoch
  milliseconds and the aggregate state column as ``state``;
- :meth:`~DeltaHistoryStore.apply` writes nothing: the batch's sessions and deletions reach the
  table in the sink's MERGE of that batch, right after the merge step, as one Delta commit made
  idempotent by Delta's transaction ids (``txnAppId`` = the pipeline's id, ``txnVersion`` = the
  batch id);
- a replayed batch (:meth:`~DeltaHistoryStore.applied`) is answered by time travel: when the
  table's log holds the batch's commit, the lookups of that batch read the table as of the
  version before that commit, so the merge sees what it saw the first time and, being
  deterministic (events and sessions are put in order first, session ids come from the key and
  the start), gives the same rows. The table's Change Data Feed would give back only the
  sessions the commit wrote, not the dead letters the merge made (those go to another sink), and
  would add change files to every commit; time travel needs only the log and files a table keeps
  anyway (``streamwarden maintain`` refuses a VACUUM retention under 7 days, and only the last
  batch is ever replayed).

The merge resumes each stored session from its aggregates' state: the sessions output carries
it (``aggregate_state``) when a history store is configured. A table written before that, of a
pipeline with aggregates, lacks it and is refused (its stored sessions' aggregates could not be
merged), as is a table without the key's column or an aggregate's (written for another schema
or other aggregates).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from streamwarden.errors import ConfigError
from streamwarden.history.base import HISTORY_KINDS, Row, StoredColumns, Wanted
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext
from streamwarden.sinks import delta_log
from streamwarden.sinks.delta import DeltaSinkSettings, delta_target
from streamwarden.sinks.delta_table import DeltaTarget

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql import Row as SparkRow

__all__ = ["DeltaHistorySettings", "DeltaHistoryStore"]


class DeltaHistorySettings(KindSettings):
    """``[history] kind = "delta"`` (the default): the pipeline's Delta sessions table is the
    store; no settings of its own (the sessions sink's section says where the table is)."""

    extra: ClassVar[str | None] = "delta"

    kind: Literal["delta"] = "delta"


class DeltaHistoryStore:
    """The history store in the pipeline's Delta sessions table (see the module's
    description)."""

    settings_model = DeltaHistorySettings

    def __init__(self, target: DeltaTarget, app_id: str, columns: StoredColumns) -> None:
        self.target = target
        self.app_id = app_id
        self._columns = columns
        #: The table version a replayed batch's lookups read (-1: before the table existed);
        #: None: the current version.
        self._as_of: int | None = None
        self._checked = False

    @staticmethod
    def check_outputs(settings: KindSettings, outputs: Mapping[str, KindSettings]) -> None:
        sink = outputs.get("sessions")
        if not isinstance(sink, DeltaSinkSettings) or sink.keep != "latest":
            what = "none" if sink is None else f"kind = {sink.kind!r}"
            if isinstance(sink, DeltaSinkSettings):
                what += f", keep = {sink.keep!r}"
            raise ValueError(
                '[history] kind = "delta" (the default) keeps history in the Delta sessions '
                f'table, but [sinks.sessions] is {what}: set [sinks.sessions] kind = "delta" '
                'with keep = "latest", or use [history] kind = "postgres" with host, database '
                "and user"
            )

    @staticmethod
    def check(settings: KindSettings, context: RunContext, columns: StoredColumns) -> None:
        location = _target(context).path  # a metastore table is checked at its first batch
        if location is not None:
            _check_columns(delta_log.columns(location), location, columns)

    @staticmethod
    def jars(settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        from streamwarden.spark.delta import delta_jars

        return delta_jars()

    @staticmethod
    def where(settings: KindSettings, context: RunContext) -> str:
        return f"the sessions sink's {_target(context).describe()}"

    @classmethod
    def open(
        cls, settings: KindSettings, context: RunContext, columns: StoredColumns
    ) -> DeltaHistoryStore:
        return cls(_target(context), context.pipeline_id, columns)

    def lookup(self, wanted: Sequence[Wanted]) -> list[Row]:
        if not wanted:
            return []
        spark = _spark()
        table = self._read(spark)
        if table is None:
            return []
        rows = _matching(spark, table, wanted, self._columns)
        return [r.asDict(recursive=True) for r in rows]

    def applied(self, run_id: str, batch_id: int) -> list[Row] | None:
        """None: a batch is always merged (again). For a batch the table's log already holds
        (a replay), the lookups that follow read the table as it was before that batch's
        commit, so the merge gives the rows it gave the first time. ``run_id`` is not needed:
        the log records the pipeline's id with each batch."""
        location = self.target.location(_spark())
        version = None if location is None else delta_log.commit_of(location, self.app_id, batch_id)
        self._as_of = None if version is None else version - 1
        return None

    def apply(
        self,
        run_id: str,
        batch_id: int,
        sessions: Sequence[Row],
        deletions: Sequence[str],
        output: Sequence[Row],
    ) -> None:
        """Nothing to write: the sessions sink's MERGE of this batch writes these sessions and
        deletions to the table, in the batch's one Delta commit."""
        self._as_of = None

    def size(self) -> int:
        table = self.target.read(_spark())
        return 0 if table is None else table.count()

    def close(self) -> None:
        """Nothing to release: the table is read through the run's SparkSession."""

    def _read(self, spark: SparkSession) -> DataFrame | None:
        if self._as_of == -1 or not self.target.exists(spark):
            return None  # no table yet (before the first batch with sessions)
        location = self.target.location(spark)
        assert location is not None
        if not self._checked:
            _check_columns(delta_log.columns(location), location, self._columns)
            self._checked = True
        reader = spark.read.format("delta")
        if self._as_of is not None:
            reader = reader.option("versionAsOf", self._as_of)
        return reader.load(str(location))


def _matching(
    spark: SparkSession, table: DataFrame, wanted: Sequence[Wanted], columns: StoredColumns
) -> list[SparkRow]:
    """The rows of ``table`` that ``wanted`` asks for, with the store's fields."""
    from pyspark.sql import functions as F

    asked = spark.createDataFrame(
        [(w.key, w.from_ms, w.to_ms) for w in wanted], "w_key string, from_ms long, to_ms long"
    )
    start, end = F.unix_millis("session_start"), F.unix_millis("session_end")
    earliest = _timestamp(min(w.from_ms for w in wanted))
    latest = _timestamp(max(w.to_ms for w in wanted))
    rows = table.where(F.col("session_end") >= F.lit(earliest))  # files skipped by their stats
    if "session_date" in table.columns:
        rows = rows.where(F.col("session_date") <= F.lit(latest.date()))
    key = F.col(_quoted(columns.key_name)).cast("string")
    found = rows.join(
        F.broadcast(asked),
        (key == F.col("w_key")) & (end >= F.col("from_ms")) & (start < F.col("to_ms")),
    )
    state = (
        F.col(_quoted(columns.state_name))
        if columns.state_name in table.columns
        else F.lit(None).cast("string")  # a pipeline without aggregates has no state to keep
    )
    derived = {"key": key, "start_ms": start, "end_ms": end, "state": state}
    selected = [derived.get(n, F.col(_quoted(n))).alias(n) for n in columns.fields]
    return list(found.select(*selected).dropDuplicates(["session_id"]).collect())


def _quoted(name: str) -> str:
    return f"`{name}`"


def _timestamp(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _check_columns(found: list[str] | None, location: Path, columns: StoredColumns) -> None:
    """Raises :class:`ConfigError` if the table at ``location`` (with columns ``found``; None:
    no table yet) lacks what a merge needs."""
    if found is None:
        return
    what = "the history store needs to merge late events into its sessions"
    if columns.aggregates and columns.state_name not in found:
        raise ConfigError(
            f"the Delta sessions table at {location} has no {columns.state_name} column, "
            f"which {what} with their aggregates (it was written without a [history] "
            "section); point [sinks.sessions] path at a new table and start from a new "
            'checkpoint, or use [history] kind = "postgres"'
        )
    names = {n.lower() for n in found}
    missing = [n for n in (columns.key_name, *(a.name for a in columns.aggregates))
               if n.lower() not in names]  # fmt: skip
    if missing:
        raise ConfigError(
            f"the Delta sessions table at {location} has no column {', '.join(missing)}, which "
            f"{what} (it was written for another [schema] key or other aggregates); point "
            "[sinks.sessions] path at a new table and start from a new checkpoint"
        )


def _target(context: RunContext) -> DeltaTarget:
    return delta_target(context.outputs["sessions"])


def _spark() -> SparkSession:
    from pyspark.sql import SparkSession

    return SparkSession.active()


HISTORY_KINDS.register("delta", DeltaHistoryStore)
