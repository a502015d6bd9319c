"""The sink contract: write one micro-batch exactly once, however often it is replayed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["BatchSink"]


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
