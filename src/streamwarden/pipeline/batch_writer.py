"""The ``foreachBatch`` step: splits the engine's output and writes each sink exactly once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from streamwarden.operators.sessions.api import dead_letter_rows, session_rows
from streamwarden.sinks.base import BatchSink

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["BatchStats", "SessionBatchWriter"]


@dataclass(frozen=True)
class BatchStats:
    """What one micro-batch wrote: shown live, and kept for the run summary."""

    batch_id: int
    session_rows: int
    session_events: int
    dead_letters: dict[str, int] = field(default_factory=dict)


class SessionBatchWriter:
    """Writes sessions and dead letters of one batch to their sinks; calls ``on_batch`` after."""

    def __init__(
        self,
        sessions: BatchSink,
        dead_letters: BatchSink,
        on_batch: Callable[[BatchStats], None] | None = None,
    ) -> None:
        self.sessions = sessions
        self.dead_letters = dead_letters
        self.on_batch = on_batch

    def __call__(self, combined: DataFrame, batch_id: int) -> None:
        combined.persist()
        try:
            counts = (
                combined.groupBy("kind", "reason")
                .agg(F.count("*").alias("rows"), F.sum("page_count").alias("pages"))
                .collect()
            )
            if any(r["kind"] == "session" for r in counts):
                self.sessions.write_batch(session_rows(combined), batch_id)
            if any(r["kind"] == "dead_letter" for r in counts):
                self.dead_letters.write_batch(dead_letter_rows(combined), batch_id)
        finally:
            combined.unpersist()
        if self.on_batch is not None:
            self.on_batch(
                BatchStats(
                    batch_id=batch_id,
                    session_rows=sum(r["rows"] for r in counts if r["kind"] == "session"),
                    session_events=sum(r["pages"] or 0 for r in counts if r["kind"] == "session"),
                    dead_letters={
                        r["reason"]: r["rows"] for r in counts if r["kind"] == "dead_letter"
                    },
                )
            )
