"""The sink contract, and the registry of sink kinds that ``[sinks.<name>] kind`` selects.

A sink kind is one module beside this one: a class that meets :class:`BatchSink` and a
registration at the end of the module (imported by ``streamwarden.sinks``), such as
``SINK_KINDS.register("parquet", ParquetBatchSink.from_config)``. The config checks each
``kind`` against the registry when it is loaded, and the operators open their sinks through
:func:`open_sink`; nothing else names a kind. This module imports neither pyspark nor the config
at run time, so that the config (one layer up) can use the registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from streamwarden.registry import Registry

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from streamwarden.config.model import SinkConfig

__all__ = ["SINK_KINDS", "BatchSink", "SinkKind", "open_sink"]


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
    """How to open a sink of one kind from its config section: ``kind(name, config)``."""

    def __call__(self, name: str, config: SinkConfig) -> BatchSink: ...


#: The sink kinds, by the name ``[sinks.<name>] kind`` gives.
SINK_KINDS: Registry[SinkKind] = Registry("sink kind", "kinds")


def open_sink(name: str, config: SinkConfig) -> BatchSink:
    """The sink ``name`` of a pipeline, as its ``[sinks.<name>]`` section configures it."""
    return SINK_KINDS[config.kind](name, config)
