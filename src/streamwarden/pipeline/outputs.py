"""Reading a pipeline's outputs back: final sessions and the record accounting."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import Window
from pyspark.sql import functions as F

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "Accounting",
    "PatternAccounting",
    "account",
    "account_patterns",
    "final_sessions",
    "read_output",
]


def read_output(spark: SparkSession, path: Path) -> DataFrame | None:
    """All batches a parquet sink wrote, or None if it wrote none yet."""
    if not any(path.glob("batch_id=*")):
        return None
    return spark.read.parquet(str(path))


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
        reasons = ", ".join(f"{k}={v}" for k, v in sorted(self.dead_letters.items())) or "none"
        verdict = "balanced" if self.balanced else "NOT BALANCED"
        return (
            f"records in {self.input_records} = events {self.events_in_sessions} in "
            f"{self.sessions} sessions + dead letters {self.dead_letter_total} ({reasons}): "
            f"{verdict}"
        )


def account(
    spark: SparkSession, sessions_path: Path, dead_letters_path: Path, input_records: int
) -> Accounting:
    """Reconciles a run's outputs against the number of records that went in."""
    revisions = read_output(spark, sessions_path)
    events = sessions = 0
    if revisions is not None:
        row = (
            final_sessions(revisions)
            .agg(F.count("*").alias("n"), F.sum("page_count").alias("pages"))
            .collect()[0]
        )
        sessions, events = int(row["n"]), int(row["pages"] or 0)
    dead = read_output(spark, dead_letters_path)
    by_reason: dict[str, int] = {}
    if dead is not None:
        by_reason = {r["reason"]: int(r["count"]) for r in dead.groupBy("reason").count().collect()}
    return Accounting(input_records, events, sessions, by_reason)


@dataclass(frozen=True)
class PatternAccounting:
    """Where the input records of a patterns pipeline went. An event does not end *in* a
    match (it may be in several, or in none): each valid event is evaluated by the pattern
    unless it is ``too_late``; every other record is a dead letter with its validation reason.
    ``balanced`` holds when ``records = valid events + validation dead letters``."""

    input_records: int
    events: int
    dead_letters: dict[str, int]
    matches: int
    timeouts: int

    @property
    def too_late(self) -> int:
        return self.dead_letters.get("too_late", 0)

    @property
    def rejected(self) -> int:
        return sum(self.dead_letters.values()) - self.too_late

    @property
    def balanced(self) -> bool:
        return (
            self.input_records == self.events + self.rejected and 0 <= self.too_late <= self.events
        )

    def describe(self) -> str:
        reasons = ", ".join(f"{k}={v}" for k, v in sorted(self.dead_letters.items())) or "none"
        verdict = "balanced" if self.balanced else "NOT BALANCED"
        return (
            f"records in {self.input_records} = valid events {self.events} (evaluated "
            f"{self.events - self.too_late}, too_late {self.too_late}) + rejected by validation "
            f"{self.rejected}; dead letters by reason: {reasons}; matches {self.matches}, "
            f"timeouts {self.timeouts}: {verdict}"
        )


def account_patterns(
    spark: SparkSession,
    outputs: tuple[Path, Path | None, Path],
    input_records: int,
    events: int,
) -> PatternAccounting:
    """Reconciles a patterns run: ``outputs`` are the matches, timeouts (or None) and
    dead-letter folders; ``events`` the valid events the run observed (``PatternBatchStats``)."""
    matches_path, timeouts_path, dead_path = outputs
    dead = read_output(spark, dead_path)
    by_reason: dict[str, int] = {}
    if dead is not None:
        by_reason = {r["reason"]: int(r["count"]) for r in dead.groupBy("reason").count().collect()}
    counts = [
        0 if path is None or (frame := read_output(spark, path)) is None else frame.count()
        for path in (matches_path, timeouts_path)
    ]
    return PatternAccounting(input_records, events, by_reason, counts[0], counts[1])
