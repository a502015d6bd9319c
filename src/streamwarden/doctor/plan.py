"""Checks a streaming query's logical plan: every stateful step needs a watermark below it.

Spark evicts the state of a streaming aggregation, deduplication or stream-stream join only
through an event-time watermark declared upstream (``withWatermark``); without one, every key
stays forever (L3). streamwarden's own pipeline always declares one, so this check is for
queries built with the Python API (``check_plan(df)``) and for ``doctor --plan``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streamwarden.doctor.findings import Finding, Severity

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["check_plan"]

#: Logical plan nodes whose state only a watermark can evict.
_WATERMARK_EVICTED = ("Aggregate", "Deduplicate", "Join")


def check_plan(frame: DataFrame) -> list[Finding]:
    """One error per stateful step of a streaming ``frame`` that has no watermark below it."""
    if not frame.isStreaming:
        return []
    plan = frame._jdf.queryExecution().analyzed()
    return [_finding(name) for name in _unwatermarked(plan)]


def _unwatermarked(node: Any) -> list[str]:
    found = []
    children = [node.children().apply(i) for i in range(node.children().size())]
    for child in children:
        found += _unwatermarked(child)
    name = str(node.nodeName())
    streaming_inputs = [c for c in children if c.isStreaming()]
    if name == "Join" and len(streaming_inputs) < 2:
        return found  # a stream-static join keeps no state
    if name in _WATERMARK_EVICTED and node.isStreaming() and not _has_watermark(node):
        found.append(name)
    return found


def _has_watermark(node: Any) -> bool:
    if str(node.nodeName()) == "EventTimeWatermark":
        return True
    return any(_has_watermark(node.children().apply(i)) for i in range(node.children().size()))


def _finding(step: str) -> Finding:
    return Finding(
        "stateful-step-without-watermark",
        Severity.ERROR,
        f"a streaming {step} keeps state that only an event-time watermark can evict, and the "
        "query declares none below it: its state grows with every key, forever",
        "add .withWatermark(<event time column>, <delay>) before the step, and group by a "
        "window of that column (or drop the state by other means)",
        "state-without-deadline",
    )
