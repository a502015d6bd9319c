"""What every operator's accounting shares: dead letters read back by reason, and how a
reconciliation line shows them and its verdict (each operator's line is in its package)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["count_by_reason", "reasons_text", "verdict"]


def count_by_reason(dead_letters: DataFrame | None) -> dict[str, int]:
    """Dead letters (as read back from their sink) by reason."""
    if dead_letters is None:
        return {}
    return {r["reason"]: int(r["count"]) for r in dead_letters.groupBy("reason").count().collect()}


def reasons_text(dead_letters: dict[str, int]) -> str:
    """``reason=count, ...`` sorted by reason, or ``none``."""
    return ", ".join(f"{k}={v}" for k, v in sorted(dead_letters.items())) or "none"


def verdict(balanced: bool) -> str:
    return "balanced" if balanced else "NOT BALANCED"
