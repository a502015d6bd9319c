"""The source contract, and the registry of source kinds that ``[source] kind`` selects.

A source reads its records as a streaming DataFrame with a ``raw`` string column (one row per
input record, the original record kept for dead letters) and, if it knows them, the record's
event time and position (:data:`SOURCE_TIME`, :data:`SOURCE_POSITION`); the pipeline adds the
idle ticks beside it (``pipeline.idle``), whatever the source, so that event time moves when
the input is quiet (lesson L2). A source kind is one module beside this one, registered at its
end with ``SOURCE_KINDS.register`` (and imported by ``streamwarden.sources``), with its own
settings model (``settings_model``, whose ``kind`` is the kind's name): the config validates
``[source]`` with the model its ``kind`` selects, and the source receives only those settings
and the run's :class:`~streamwarden.settings.context.RunContext`. This module imports neither
pyspark nor the config, so that the config (layers up) can assemble itself from the registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import SerializeAsAny

from streamwarden.registry import Registry
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "SKIPPED_METRIC",
    "SOURCE_KEY",
    "SOURCE_KINDS",
    "SOURCE_NAME",
    "SOURCE_POSITION",
    "SOURCE_TIME",
    "SeveralSources",
    "Source",
    "source_of",
]

#: Optional column of a source's records: an event time the source itself knows (epoch ms),
#: used instead of the record's time field when present (Kafka's record timestamp); null for a
#: record the source knows has no time (Kafka's timestamp -1), which is ``invalid_timestamp``.
SOURCE_TIME = "source_time_ms"
#: Optional column of a source's records: the value of the key field as the source knows it
#: (Kafka's record key, as text), used instead of the record's key field when present.
SOURCE_KEY = "source_key"
#: Column of a pipeline's records when it has several sources (``[sources.<name>]``): the name
#: of the source each record came from (null on the idle ticks).
SOURCE_NAME = "source_name"
#: Optional column of a source's records: where the record was read (``topic pageviews
#: partition 2 offset 1234``), added to the detail of a record that fails validation.
SOURCE_POSITION = "source_position"


#: A source's metric (in a batch's progress, beside Spark's own) of the offsets the batch
#: skipped that its start and end offsets do not show (a Kafka topic made again); the
#: monitoring adds it to the batch's ``offsets_skipped``.
SKIPPED_METRIC = "streamwarden.offsetsSkippedBefore"


class Source(Protocol):
    """One kind of source."""

    #: What a run would do if the source's identity changed under a checkpoint.
    change_effect: str

    #: The model of ``[source]`` for this kind (a setting of another kind is refused at load).
    @property
    def settings_model(self) -> type[KindSettings]: ...

    def check(self, settings: KindSettings, context: RunContext) -> None:
        """Checks, before Spark starts, that the source can be read (a landing folder exists; a
        broker answers and has the topics); raises a
        :class:`~streamwarden.errors.StreamwardenError` that says what to do."""
        ...

    def jars(self, settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        """JVM jars Spark needs for this source, beyond the engine's."""
        ...

    def read(self, spark: SparkSession, settings: KindSettings, context: RunContext) -> DataFrame:
        """A streaming DataFrame with a ``raw`` string column, one row per input record, and
        optionally :data:`SOURCE_TIME` and :data:`SOURCE_POSITION`; raises
        :class:`~streamwarden.errors.SourceError` if the source cannot be read."""
        ...

    def batch_input(
        self, spark: SparkSession, settings: KindSettings, context: RunContext, batch: int
    ) -> DataFrame:
        """The records of the planned ``batch`` read again, as a bounded DataFrame shaped as
        :meth:`read`'s: what the supervisor's bisection splits (from the checkpoint's offsets
        and the source's own log, which say exactly what the batch holds)."""
        ...

    def sample(
        self, spark: SparkSession, settings: KindSettings, context: RunContext, limit: int
    ) -> DataFrame | None:
        """A bounded (batch) DataFrame shaped as :meth:`read`'s (a ``raw`` column and the
        optional ``SOURCE_*`` columns) of up to ``limit`` of the newest records, for doctor;
        None when there is nothing to read yet. Raises a
        :class:`~streamwarden.errors.StreamwardenError` (or Spark's error, when the DataFrame
        is read) if the source cannot be read."""
        ...

    def before_start(self, settings: KindSettings, context: RunContext) -> None:
        """Checks and upkeep of the source's part of the checkpoint that matter only when a
        query starts (each attempt of a run, before Spark replays a planned batch); raises a
        :class:`~streamwarden.errors.StreamwardenError` if the query must not start."""
        ...

    def after_batch(self, settings: KindSettings, context: RunContext) -> None:
        """Upkeep of the source's part of the checkpoint after each batch of a run (e.g.
        pruning a log Spark has just compacted); it must cost little when there is none."""
        ...

    def account(
        self, settings: KindSettings, context: RunContext, progress: dict[str, Any]
    ) -> dict[str, Any]:
        """A batch's progress, before it is reported, with what the source knows that Spark's
        progress does not show (offsets it skipped: Kafka's ``offsets_skipped``); called after
        each batch, it must cost little when there is nothing to add."""
        ...

    def sweep(self, settings: KindSettings, context: RunContext) -> list[str]:
        """Moves aside input that Spark cannot read exactly once (before the query starts and
        on every poll of a continuous run); returns one warning line per thing moved. Called
        often: it must cost little when nothing new arrived."""
        ...

    def where(self, settings: KindSettings) -> str:
        """Where the source reads, as a run's start-up line shows it."""
        ...

    def advice(self, settings: KindSettings, cause: str) -> str | None:
        """What to do about a failed batch whose ``cause`` (Spark's message) is the source's
        to explain, or None. A failure a source explains is records gone from it for good
        (retention, a deleted file): the supervisor does not restart it, as the same batch
        would fail again until a person decides."""
        ...

    def identity(self, settings: KindSettings) -> dict[str, str]:
        """What the checkpoint's offsets depend on (where the source reads, and how): a
        checkpoint that has read one identity is refused under another
        (``pipeline.ownership``), since its offsets would mean other records there."""
        ...

    def describe(self, identity: dict[str, str]) -> str:
        """An identity as a run's messages show it, e.g. ``'/data/landing' (jsonl)``."""
        ...


#: The source kinds, by the name ``[source] kind`` gives (``files`` when none is given).
SOURCE_KINDS: Registry[Source] = Registry("source kind", "kinds", default="files")


class SeveralSources(KindSettings):
    """The sources of a pipeline that reads more than one (``[sources.<name>]``), each section
    validated by the model of its own kind; the pipeline reads them as one stream whose records
    carry :data:`SOURCE_NAME` (:mod:`streamwarden.sources.several`). Not a kind a config names:
    the config makes it from its ``[sources.<name>]`` sections."""

    kind: str = "several"
    #: Each source's settings, by its name, in the order the query reads them.
    named: dict[str, SerializeAsAny[KindSettings]]
    #: The source that reads them (``sources.several`` sets it when imported).
    implementation: ClassVar[Source | None] = None

    @property
    def connections(self) -> frozenset[str]:  # type: ignore[override]
        """The shared sections every one of the sources needs."""
        return frozenset().union(*(s.connections for s in self.named.values()))


def source_of(settings: KindSettings) -> Source:
    """The source ``[source]`` (or ``[sources.<name>]``, all of them) configures."""
    if isinstance(settings, SeveralSources):
        assert SeveralSources.implementation is not None  # streamwarden.sources imports it
        return SeveralSources.implementation
    return SOURCE_KINDS[settings.kind]
