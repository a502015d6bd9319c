"""The ``foreachBatch`` step: splits the engine's output and writes each sink exactly once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from streamwarden.operators.sessions.api import dead_letter_rows, session_rows
from streamwarden.sinks.base import BatchSink
from streamwarden.spark.jvm import java_message
from streamwarden.validation import Reason

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "OBSERVATION",
    "BatchStats",
    "BatchWriter",
    "SessionBatchWriter",
    "dead_letter_counts",
    "dead_letters_by_reason",
    "observed_counts",
    "observed_dead_letters",
]

#: Name of the observed metrics that carry each batch's output counts in the query progress.
OBSERVATION = "streamwarden"


@dataclass(frozen=True)
class BatchStats:
    """What one micro-batch wrote, read from the progress's observed metrics."""

    batch_id: int
    session_rows: int
    session_events: int
    dead_letters: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_progress(cls, progress: dict[str, Any]) -> BatchStats | None:
        row = progress.get("observedMetrics", {}).get(OBSERVATION)
        if row is None:
            return None
        return cls(
            batch_id=int(progress["batchId"]),
            session_rows=int(row["sessions"]),
            session_events=int(row["session_events"] or 0),
            dead_letters=dead_letters_by_reason(row),
        )


def dead_letters_by_reason(row: Any) -> dict[str, int]:
    """The non-zero ``dead_<reason>`` counts of an observed-metrics row (a Spark ``Row`` or
    its JSON as a dict), whichever operator's counts it holds."""
    values = row.asDict() if hasattr(row, "asDict") else dict(row)
    counts = {r.value: values.get(f"dead_{r.value}") for r in Reason}
    return {reason: int(n) for reason, n in counts.items() if n}


def observed_dead_letters(progress: dict[str, Any]) -> dict[str, int]:
    """Dead letters by reason in a batch's progress, whichever operator wrote them; empty for a
    query that is not a streamwarden pipeline."""
    row = progress.get("observedMetrics", {}).get(OBSERVATION)
    return {} if row is None else dead_letters_by_reason(row)


def observed_counts() -> list[Column]:
    """Aggregates Spark computes on the fly for each batch (no extra job)."""
    is_session = F.col("kind") == "session"
    return [
        F.count(F.when(is_session, 1)).alias("sessions"),
        F.sum(F.when(is_session, F.col("page_count"))).alias("session_events"),
        *dead_letter_counts(),
    ]


def dead_letter_counts() -> list[Column]:
    """One count per reason code, named ``dead_<reason>``, over the engine's output."""
    is_dead = F.col("kind") == "dead_letter"
    return [
        F.count(F.when(is_dead & (F.col("reason") == r.value), 1)).alias(f"dead_{r.value}")
        for r in Reason
    ]


#: One output of a batch: the sink, and how to select its rows from the engine's output.
Output = tuple[BatchSink, Callable[["DataFrame"], "DataFrame"]]


class BatchWriter:
    """Writes each output of one batch to its sink; the engine's output is persisted so that
    the stateful step runs once for all the writes.

    A batch replayed after a crash that came after every sink had written it, but before Spark
    committed it, is skipped by every sink. Its stateful step must run all the same: Spark's
    checkpoint (format v2) records each batch's state version at commit, and a batch whose
    state was never computed leaves a checkpoint that cannot restart. So it runs into a
    discarding sink.
    """

    def __init__(self, outputs: Sequence[Output]) -> None:
        self.outputs = tuple(outputs)
        #: What failed in the last batch, as one line. Spark reports a failure inside
        #: ``foreachBatch`` as "an exception was raised by the Python Proxy" with a Python
        #: traceback, so the runner reports this instead.
        self.failure: str | None = None

    def __call__(self, combined: DataFrame, batch_id: int) -> None:
        try:
            self._write(combined, batch_id)
        except Exception as exc:
            self.failure = f"batch {batch_id}: {java_message(exc)}"
            raise

    def _write(self, combined: DataFrame, batch_id: int) -> None:
        combined.persist()
        try:
            computed = [
                sink.write_batch(select(combined), batch_id) for sink, select in self.outputs
            ]
            if not any(computed):
                combined.write.format("noop").mode("overwrite").save()
        finally:
            combined.unpersist()


class SessionBatchWriter(BatchWriter):
    """Writes the sessions and dead letters of one batch to their sinks."""

    def __init__(self, sessions: BatchSink, dead_letters: BatchSink) -> None:
        super().__init__([(sessions, session_rows), (dead_letters, dead_letter_rows)])
        self.sessions = sessions
        self.dead_letters = dead_letters
