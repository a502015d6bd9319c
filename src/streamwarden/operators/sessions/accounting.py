"""Where the records of a sessions run went: final sessions and dead letters, reconciled with
the records that went in. Every valid event ends in exactly one final session."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import Window
from pyspark.sql import functions as F

from streamwarden.operators.accounting import count_by_reason, reasons_text, verdict
from streamwarden.sinks.parquet import read_output

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["Accounting", "account", "final_sessions", "reconcile"]


def final_sessions(revisions: DataFrame) -> DataFrame:
    """The latest revision of each session that no later revision merged into another."""
    merged = revisions.select(F.explode("merged_session_ids").alias("session_id")).distinct()
    latest = Window.partitionBy("session_id").orderBy(F.col("revision").desc())
    return (
        revisions.withColumn("_rank", F.row_number().over(latest))
        .where("_rank = 1")
        .drop("_rank")
        .join(merged, "session_id", "left_anti")
    )


@dataclass(frozen=True)
class Accounting:
    """Where the input records went. ``balanced`` holds when none was lost or doubled."""

    input_records: int
    events_in_sessions: int
    sessions: int
    dead_letters: dict[str, int]

    @property
    def dead_letter_total(self) -> int:
        return sum(self.dead_letters.values())

    @property
    def balanced(self) -> bool:
        return self.input_records == self.events_in_sessions + self.dead_letter_total

    def describe(self) -> str:
        """One line, each number after its label: ``records in 3000 = events 2972 in 405
        sessions + dead letters 28 (...): balanced``."""
        return (
            f"records in {self.input_records} = events {self.events_in_sessions} in "
            f"{self.sessions} sessions + dead letters {self.dead_letter_total} "
            f"({reasons_text(self.dead_letters)}): {verdict(self.balanced)}"
        )


def account(
    spark: SparkSession, sessions_path: Path, dead_letters_path: Path, input_records: int
) -> Accounting:
    """Reconciles a run's outputs against the number of records that went in."""
    return reconcile(
        read_output(spark, sessions_path), read_output(spark, dead_letters_path), input_records
    )


def reconcile(
    revisions: DataFrame | None, dead_letters: DataFrame | None, input_records: int
) -> Accounting:
    """The accounting of session revisions and dead letters read back from their sinks."""
    events = sessions = 0
    if revisions is not None:
        row = (
            final_sessions(revisions)
            .agg(F.count("*").alias("n"), F.sum("event_count").alias("events"))
            .collect()[0]
        )
        sessions, events = int(row["n"]), int(row["events"] or 0)
    return Accounting(input_records, events, sessions, count_by_reason(dead_letters))
