"""The ``foreachBatch`` writer: sends each output of one batch to its sink, exactly once.

An operator's step is one DataFrame whose rows are told apart by ``kind``; each output selects
its rows from it and writes them to one sink. Whichever sinks an operator has, and whatever
their kinds, this is the one place that writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from streamwarden.spark.jvm import java_message

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streamwarden.sinks.base import BatchSink

__all__ = ["BatchWriter", "Output", "Prepare"]

#: One output of a batch: the sink, and how to select its rows from the operator's output.
Output = tuple["BatchSink", Callable[["DataFrame"], "DataFrame"]]


class Prepare(Protocol):
    """What an operator does with a batch's output before the sinks get it (the sessions
    operator's history merge)."""

    def __call__(self, combined: DataFrame, batch_id: int) -> DataFrame:
        """The persisted output and the batch id in, the rows to write out."""
        ...

    def close(self) -> None:
        """Releases what it holds (a store's connection) when the query has ended."""
        ...


class BatchWriter:
    """Writes each output of one batch to its sink; the operator's output is persisted so that
    the stateful step runs once for all the writes.

    A batch replayed after a crash that came after every sink had written it, but before Spark
    committed it, is skipped by every sink. Its stateful step must run all the same: Spark's
    checkpoint (format v2) records each batch's state version at commit, and a batch whose
    state was never computed leaves a checkpoint that cannot restart. So it runs into a
    discarding sink.
    """

    def __init__(self, outputs: Sequence[Output], prepare: Prepare | None = None) -> None:
        self.outputs = tuple(outputs)
        #: Runs first, on every batch (replays included), before any sink writes.
        self.prepare = prepare
        #: What failed in the last batch, as one line. Spark reports a failure inside
        #: ``foreachBatch`` as "an exception was raised by the Python Proxy" with a Python
        #: traceback, so the runner reports this instead.
        self.failure: str | None = None

    def close(self) -> None:
        """Called by the runner when the query has ended, failed or not."""
        if self.prepare is not None:
            self.prepare.close()

    def __call__(self, combined: DataFrame, batch_id: int) -> None:
        try:
            self._write(combined, batch_id)
        except Exception as exc:
            self.failure = f"batch {batch_id}: {java_message(exc)}"
            raise

    def _write(self, combined: DataFrame, batch_id: int) -> None:
        combined.persist()
        try:
            rows = combined if self.prepare is None else self.prepare(combined, batch_id)
            computed = [sink.write_batch(select(rows), batch_id) for sink, select in self.outputs]
            if not any(computed):
                combined.write.format("noop").mode("overwrite").save()
        finally:
            combined.unpersist()
