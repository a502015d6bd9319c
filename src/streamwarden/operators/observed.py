"""The per-batch counts an operator attaches to its output with Spark's ``observe``, and how
they are read back from a batch's progress (plain JSON).

Counting happens inside the query (no extra job), under one observation name for an operator's
output. Dead letters are counted by reason the same way for every operator, so monitoring reads
them without knowing which operator ran.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streamwarden.validation.reasons import Reason

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = [
    "OBSERVATION",
    "dead_letter_counts",
    "dead_letters_by_reason",
    "observed_dead_letters",
]

#: Name of the observed metrics that carry each batch's output counts in the query progress.
OBSERVATION = "streamwarden"


def dead_letter_counts(kind: str = "kind", reason: str = "reason") -> list[Column]:
    """One count per reason code, named ``dead_<reason>``, over an operator's output (whose
    ``kind`` column says ``dead_letter`` and ``reason`` column the reason)."""
    from pyspark.sql import functions as F

    is_dead = F.col(kind) == "dead_letter"
    return [
        F.count(F.when(is_dead & (F.col(reason) == r.value), 1)).alias(f"dead_{r.value}")
        for r in Reason
    ]


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
