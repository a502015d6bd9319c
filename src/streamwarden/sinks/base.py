"""The sink contract, and the registry of sink kinds that ``[sinks.<name>] kind`` selects.

A sink kind is one module beside this one: a class that meets :class:`BatchSink` and, through
its class attributes and class methods, :class:`SinkKind`, registered at the end of the module
(imported by ``streamwarden.sinks``), such as ``SINK_KINDS.register("parquet",
ParquetBatchSink)``. Each kind declares its own settings model (``settings_model``, a
:class:`~streamwarden.settings.base.KindSettings` whose ``kind`` is the kind's name): the
config validates each ``[sinks.<output>]`` section with the model its ``kind`` selects, and a
kind receives only its own settings and the run's
:class:`~streamwarden.settings.context.RunContext`. The operators open their sinks through
:func:`open_sink`; nothing else names a kind. This module imports neither pyspark nor the config,
so that the config (layers up) can assemble itself from the registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from streamwarden.registry import Registry
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "SINK_KINDS",
    "STANDALONE",
    "BatchSink",
    "OutputShape",
    "SinkKind",
    "open_sink",
    "sink_kind",
]


@dataclass(frozen=True)
class OutputShape:
    """What an operator tells its sinks about the rows of one output.

    - ``key``: the column naming the thing a row describes (``session_id``), when a later row
      of the same key replaces an earlier one; None when every row stands alone;
    - ``revision``: with ``key``, the column whose higher value is the later row;
    - ``absorbed``: with ``key``, an array column of keys that this row absorbed (a merge of two
      sessions): their rows end here;
    - ``time``: a timestamp column whose date places the row (a table's partition);
    - ``record_key``: the column naming what the rows are about (a session's ``[schema]`` key),
      which keys each row where a sink keys its records (a Kafka record's key, so that one
      key's rows stay in one partition, in order); None: a ``key`` column if the rows have
      one, else none.
    """

    key: str | None = None
    revision: str | None = None
    absorbed: str | None = None
    time: str | None = None
    record_key: str | None = None

    def __post_init__(self) -> None:
        if (self.key is None) != (self.revision is None):
            raise ValueError("an output shape gives both key and revision, or neither")
        if self.absorbed is not None and self.key is None:
            raise ValueError("an output shape with absorbed keys needs a key")

    @property
    def revised(self) -> bool:
        """Whether later rows replace earlier ones of the same key."""
        return self.key is not None


#: The shape of an output whose rows each stand alone (nothing declared).
STANDALONE = OutputShape()


class BatchSink(Protocol):
    """A destination that a pipeline writes from ``foreachBatch``.

    Spark replays a micro-batch after a crash between writing its output and committing it; the
    replay carries the same ``batch_id`` and, because offsets and state are checkpointed
    together, the same rows. A sink is exactly-once if writing a batch id twice leaves one copy.
    """

    name: str

    def write_batch(self, rows: DataFrame, batch_id: int) -> bool:
        """Writes ``rows`` for ``batch_id``; a second call with the same id must be a no-op.

        Returns whether ``rows`` were computed (False when the batch was skipped as written
        before): the pipeline must still run the batch's stateful step when every sink skips.
        """
        ...

    def written_batches(self) -> list[int]:
        """The batch ids the sink holds: a run refuses sinks that hold batches its checkpoint
        never planned (``pipeline.ownership``), since they would be skipped as written."""
        ...

    def read(self, spark: SparkSession) -> DataFrame | None:
        """Everything the sink holds (all batches), or None if it holds nothing yet: how a
        run's outputs are read back for its accounting."""
        ...


class SinkKind(Protocol):
    """One kind of sink: its settings model, what it needs before a run, and how to open one.
    Each method receives the kind's own settings (an instance of ``settings_model``) and the
    run's context, never the whole config."""

    #: The model of a ``[sinks.<output>]`` section of this kind.
    @property
    def settings_model(self) -> type[KindSettings]: ...

    def check(self, name: str, settings: KindSettings, context: RunContext) -> None:
        """Checks, before Spark starts, that the sink ``name`` can be written (e.g. its topic
        exists); raises a :class:`~streamwarden.errors.StreamwardenError` saying what to do."""
        ...

    def jars(self, settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        """JVM jars Spark needs for this kind of sink, beyond the engine's."""
        ...

    def spark_conf(self, settings: KindSettings, context: RunContext) -> Mapping[str, str]:
        """Settings the SparkSession must start with for this kind (static ones, such as a
        session extension); ``[spark.conf]`` may override them."""
        ...

    def where(self, settings: KindSettings) -> str:
        """Where a sink of this kind writes, as a run's start-up line shows it."""
        ...

    def open(
        self, name: str, settings: KindSettings, context: RunContext, shape: OutputShape
    ) -> BatchSink:
        """The sink of output ``name``, for rows of ``shape``."""
        ...


#: The sink kinds, by the name ``[sinks.<name>] kind`` gives (``parquet`` when none is given).
SINK_KINDS: Registry[SinkKind] = Registry("sink kind", "kinds", default="parquet")


def sink_kind(settings: KindSettings) -> SinkKind:
    """The kind of sink a ``[sinks.<name>]`` section configures."""
    return SINK_KINDS[settings.kind]


def open_sink(name: str, context: RunContext, shape: OutputShape = STANDALONE) -> BatchSink:
    """The sink of output ``name`` of a run, as its ``[sinks.<name>]`` section configures it.
    The ``shape`` matters only to write: reading back and listing written batches need none."""
    settings = context.outputs[name]
    return sink_kind(settings).open(name, settings, context, shape)
