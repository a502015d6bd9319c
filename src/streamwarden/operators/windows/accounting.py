"""Where the records of a windows run went: windows and dead letters, reconciled with the
records that went in. Every valid event is in exactly ``size / slide`` final windows (one, for
tumbling windows), so ``records = window events / (size / slide) + dead letters``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import Window
from pyspark.sql import functions as F

from streamwarden.operators.accounting import count_by_reason, reasons_text, verdict

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["WindowAccounting", "final_windows", "reconcile"]


def final_windows(revisions: DataFrame) -> DataFrame:
    """The latest revision of each window."""
    latest = Window.partitionBy("window_id").orderBy(F.col("revision").desc())
    return (
        revisions.withColumn("_rank", F.row_number().over(latest)).where("_rank = 1").drop("_rank")
    )


@dataclass(frozen=True)
class WindowAccounting:
    """Where the input records went. ``balanced`` holds when none was lost or doubled: the
    final windows hold each accepted event ``windows_per_event`` times."""

    input_records: int
    windows: int
    window_events: int
    windows_per_event: int
    dead_letters: dict[str, int]

    @property
    def dead_letter_total(self) -> int:
        return sum(self.dead_letters.values())

    @property
    def balanced(self) -> bool:
        accepted = self.input_records - self.dead_letter_total
        return accepted >= 0 and self.window_events == accepted * self.windows_per_event

    def describe(self) -> str:
        """One line: ``records in 3000 = events 2972 in 405 windows + dead letters 28 (...):
        balanced``; hopping windows say how many times each event is counted."""
        k = self.windows_per_event
        if k == 1:
            events = f"events {self.window_events} in {self.windows} windows"
        else:
            events = (
                f"events {self.window_events / k:g} ({self.window_events} window events in "
                f"{self.windows} hopping windows, each event in {k})"
            )
        return (
            f"records in {self.input_records} = {events} + dead letters "
            f"{self.dead_letter_total} ({reasons_text(self.dead_letters)}): "
            f"{verdict(self.balanced)}"
        )


def reconcile(
    revisions: DataFrame | None,
    dead_letters: DataFrame | None,
    input_records: int,
    windows_per_event: int,
) -> WindowAccounting:
    """The accounting of window revisions and dead letters read back from their sinks."""
    windows = events = 0
    if revisions is not None:
        row = (
            final_windows(revisions)
            .agg(F.count("*").alias("n"), F.sum("event_count").alias("events"))
            .collect()[0]
        )
        windows, events = int(row["n"]), int(row["events"] or 0)
    return WindowAccounting(
        input_records, windows, events, windows_per_event, count_by_reason(dead_letters)
    )
