"""The ``foreachBatch`` writer: sends each output of one batch to its sink, exactly once.

An operator's step is one DataFrame whose rows are told apart by ``kind``; each output selects
its rows from it and writes them to one sink. Whichever sinks an operator has, and whatever
their kinds, this is the one place that writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from streamwarden.spark.jvm import java_message

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streamwarden.sinks.base import BatchSink

__all__ = ["BatchWriter", "Output", "Prepare", "SinkNote"]

#: One output of a batch: the sink, and how to select its rows from the operator's output.
Output = tuple["BatchSink", Callable[["DataFrame"], "DataFrame"]]


@dataclass(frozen=True)
class SinkNote:
    """What a sink saw while writing a batch that a person should know, the batch written all
    the same: the monitor makes it a finding of the batch (``kind`` is the finding's kind). A
    sink that takes notes has ``take_notes() -> list[SinkNote]``, which empties them."""

    kind: str
    sink: str
    batch_id: int
    message: str
    details: dict[str, Any] = field(default_factory=dict)


#: How many batches' notes a writer keeps for the monitor to take (a run without a monitor
#: takes none, and the oldest go).
NOTED_BATCHES = 16


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
        #: The exception of that failure: a sink that knows a restart cannot help raises a
        #: streamwarden error that is not ``restartable``, and the runner keeps its class.
        self.error: Exception | None = None
        #: The sinks' notes of the newest batches written (:data:`NOTED_BATCHES`), by batch.
        self._notes: dict[int, list[SinkNote]] = {}

    def notes_of(self, batch_id: int) -> list[SinkNote]:
        """The sinks' notes of one batch written (a :class:`SinkNote` each), taken once."""
        return self._notes.pop(batch_id, [])

    def close(self) -> None:
        """Called by the runner when the query has ended, failed or not."""
        if self.prepare is not None:
            self.prepare.close()

    def __call__(self, combined: DataFrame, batch_id: int) -> None:
        try:
            self._write(combined, batch_id)
        except Exception as exc:
            self.failure = f"batch {batch_id}: {java_message(exc)}"
            self.error = exc
            raise

    def _write(self, combined: DataFrame, batch_id: int) -> None:
        combined.persist()
        try:
            rows = combined if self.prepare is None else self.prepare(combined, batch_id)
            computed = [sink.write_batch(select(rows), batch_id) for sink, select in self.outputs]
            if not any(computed):
                combined.write.format("noop").mode("overwrite").save()
            self._keep_notes(batch_id)
        finally:
            combined.unpersist()

    def _keep_notes(self, batch_id: int) -> None:
        notes = [
            note
            for sink, _ in self.outputs
            if (take := getattr(sink, "take_notes", None)) is not None
            for note in take()
        ]
        if notes:
            self._notes[batch_id] = notes
            for old in sorted(self._notes)[:-NOTED_BATCHES]:
                del self._notes[old]
