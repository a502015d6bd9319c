"""Where the records of a patterns run went. An event does not end *in* a match (it may be in
several, or in none): each valid event is evaluated by the pattern unless the engine refuses it
(``too_late``, ``key_buffer_full``, ``poison``: a dead letter, but still a valid event); every
other record is a dead letter with its validation reason."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.operators.accounting import count_by_reason, reasons_text, verdict
from streamwarden.sinks.parquet import read_output

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["PatternAccounting", "account_patterns", "reconcile_patterns"]

#: Dead-letter reasons of valid events that the engine refused (not rejected by validation).
_ENGINE_REFUSED = ("too_late", "key_buffer_full", "poison")


@dataclass(frozen=True)
class PatternAccounting:
    """Where the input records of a patterns pipeline went. ``balanced`` holds when
    ``records = valid events + validation dead letters``."""

    input_records: int
    events: int
    dead_letters: dict[str, int]
    matches: int
    timeouts: int

    @property
    def too_late(self) -> int:
        return self.dead_letters.get("too_late", 0)

    @property
    def refused(self) -> int:
        """Valid events the engine refused: dead letters, yet counted among the events."""
        return sum(self.dead_letters.get(r, 0) for r in _ENGINE_REFUSED)

    @property
    def rejected(self) -> int:
        return sum(self.dead_letters.values()) - self.refused

    @property
    def balanced(self) -> bool:
        return (
            self.input_records == self.events + self.rejected and 0 <= self.refused <= self.events
        )

    def describe(self) -> str:
        others = "".join(
            f", {r} {self.dead_letters[r]}" for r in _ENGINE_REFUSED[1:] if self.dead_letters.get(r)
        )
        return (
            f"records in {self.input_records} = valid events {self.events} (evaluated "
            f"{self.events - self.refused}, too_late {self.too_late}{others}) + rejected by "
            f"validation {self.rejected}; dead letters by reason: "
            f"{reasons_text(self.dead_letters)}; matches {self.matches}, timeouts "
            f"{self.timeouts}: {verdict(self.balanced)}"
        )


def account_patterns(
    spark: SparkSession,
    outputs: tuple[Path, Path | None, Path],
    input_records: int,
    events: int,
) -> PatternAccounting:
    """Reconciles a patterns run: ``outputs`` are the matches, timeouts (or None) and
    dead-letter folders; ``events`` the valid events the run observed (``PatternBatchStats``)."""
    matches, timeouts, dead = (
        None if path is None else read_output(spark, path) for path in outputs
    )
    return reconcile_patterns((matches, timeouts, dead), input_records, events)


def reconcile_patterns(
    outputs: tuple[DataFrame | None, DataFrame | None, DataFrame | None],
    input_records: int,
    events: int,
) -> PatternAccounting:
    """The accounting of matches, timeouts and dead letters read back from their sinks."""
    matches, timeouts, dead = outputs
    counts = [0 if frame is None else frame.count() for frame in (matches, timeouts)]
    return PatternAccounting(input_records, events, count_by_reason(dead), *counts)
