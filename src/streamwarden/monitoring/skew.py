"""Per-partition state rows and input rows of each stateful operator, and the skew alarm (L11).

Spark's query progress has only totals per operator. The per-partition numbers come from
Spark's own task metrics: each stateful task reports the SQL metric "number of total state
rows" of its partition, and its shuffle read is that partition's input. A small Java listener
in the engine jar (``PartitionMetricsListener``) collects them per query and batch. Spark's REST
API cannot be used for this (it drops SQL metrics from task data), and the ``statestore`` data
source would run a job that reads all state on every batch, and has no input rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from statistics import mean
from typing import TYPE_CHECKING, Any

from streamwarden.monitoring.findings import Finding
from streamwarden.monitoring.summary import OperatorSummary

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["PartitionLoad", "PartitionProbe", "SkewDetector"]

_LISTENER_ATTR = "_streamwarden_partition_listener"


@dataclass(frozen=True)
class PartitionLoad:
    """State rows and input rows per partition of one stateful operator in one batch."""

    operator: str
    state_rows: dict[int, int]
    input_rows: dict[int, int]

    def ratio(self, rows: dict[int, int]) -> float:
        """Largest partition over the mean partition (1.0 = even)."""
        if not rows or mean(rows.values()) == 0:
            return 1.0
        return max(rows.values()) / mean(rows.values())


class PartitionProbe:
    """Reads the per-partition numbers of a batch from the engine's listener.

    One listener is registered per SparkContext, on first use.
    """

    def __init__(self, spark: SparkSession, wait_ms: int = 5_000) -> None:
        sc = spark.sparkContext
        listener = getattr(sc, _LISTENER_ATTR, None)
        if listener is None:
            jvm: Any = spark._jvm
            listener = jvm.io.streamwarden.engine.monitoring.PartitionMetricsListener()
            sc._jsc.sc().addSparkListener(listener)
            setattr(sc, _LISTENER_ATTR, listener)
        self._listener = listener
        self.wait_ms = wait_ms

    def loads(
        self, query_id: str, batch_id: int, operators: list[OperatorSummary]
    ) -> list[PartitionLoad]:
        """The batch's loads, one per stateful operator that ran tasks in it."""
        data = json.loads(self._listener.batchJson(query_id, batch_id, self.wait_ms))
        per_metric = {
            int(metric): {int(p): (int(v[0]), int(v[1])) for p, v in parts.items()}
            for metric, parts in data["operators"].items()
        }
        return [
            PartitionLoad(
                operator=label,
                state_rows={p: v[0] for p, v in parts.items()},
                input_rows={p: v[1] for p, v in parts.items()},
            )
            for label, parts in _match(per_metric, operators)
        ]


def _match(
    per_metric: dict[int, dict[int, tuple[int, int]]], operators: list[OperatorSummary]
) -> list[tuple[str, dict[int, tuple[int, int]]]]:
    """Pairs each metric with the operator whose total state rows it sums to; in plan order
    when totals do not tell them apart (metrics are numbered as the plan is built)."""
    left = dict(sorted(per_metric.items()))
    pairs = []
    for op in operators:
        same = [
            m for m, parts in left.items() if sum(v[0] for _, v in parts.items()) == op.rows_total
        ]
        chosen = same[0] if same else next(iter(left), None)
        if chosen is None:
            break
        pairs.append((op.label, left.pop(chosen)))
    return pairs


class SkewDetector:
    """Warns when an operator's largest partition exceeds the mean by ``factor``, in state rows
    or in input rows. Operators whose mean partition holds fewer than ``min_rows`` are skipped:
    a few rows are uneven by chance and harmless."""

    def __init__(self, factor: float, min_rows: int) -> None:
        self.factor = factor
        self.min_rows = min_rows

    def check(self, batch_id: int, loads: list[PartitionLoad]) -> list[Finding]:
        findings = []
        for load in loads:
            for what, rows in (("state rows", load.state_rows), ("input rows", load.input_rows)):
                if len(rows) < 2 or mean(rows.values()) < self.min_rows:
                    continue
                ratio = load.ratio(rows)
                if ratio <= self.factor:
                    continue
                worst = max(rows, key=lambda p: rows[p])
                findings.append(
                    Finding(
                        kind="skew",
                        batch_id=batch_id,
                        operator=load.operator,
                        message=(
                            f"operator {load.operator}: partition {worst} holds {rows[worst]:,} "
                            f"{what}, {ratio:.1f}x the mean of {mean(rows.values()):,.0f} over "
                            f"{len(rows)} partitions (limit {self.factor}x); spread the keys "
                            "(salt hot keys) or change the partition count"
                        ),
                        details={"what": what, "ratio": round(ratio, 3), "partition": worst},
                    )
                )
        return findings
