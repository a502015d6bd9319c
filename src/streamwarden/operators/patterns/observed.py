"""The patterns operator's per-batch counts: on its input (valid events and rejected records)
and on its output (matches, timeouts, overflowed partials, dead letters by reason), read back
by ``PatternBatchStats``."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from streamwarden.operators.observed import dead_letter_counts

__all__ = ["INPUT_OBSERVATION", "input_counts", "output_counts"]

#: Observed metrics on the operator's input: valid events and rejected records per batch.
INPUT_OBSERVATION = "streamwarden_input"


def input_counts(record: Column, valid: Column) -> list[Column]:
    """Input records (``record``: not a tick) counted as valid events or rejected records."""
    return [
        F.count(F.when(record & valid, 1)).alias("events"),
        F.count(F.when(record & ~valid, 1)).alias("rejected"),
    ]


def output_counts() -> list[Column]:
    """Matches, timeouts, the partials overflow dropped, and dead letters by reason."""
    kind = F.col("kind")
    return [
        F.count(F.when(kind == "match", 1)).alias("matches"),
        F.count(F.when(kind == "timeout", 1)).alias("timeouts"),
        F.sum(F.when(kind == "overflow", F.col("dropped"))).alias("overflowed_partials"),
        *dead_letter_counts(),
    ]
