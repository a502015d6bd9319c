"""What the CLI prints while a pipeline runs: one line per micro-batch."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from streamwarden.pipeline.batch_writer import BatchStats
from streamwarden.pipeline.patterns import PatternBatchStats
from streamwarden.pipeline.steps import AnyBatchStats

__all__ = ["ProgressPrinter"]


class ProgressPrinter:
    """Prints batches as they complete, and keeps running totals for the summary.
    ``operator`` chooses the line: sessions out, or matches and timeouts out."""

    def __init__(self, out: TextIO | None = None, *, operator: str = "sessions") -> None:
        self.out = out or sys.stdout  # read now, not at import: tests swap sys.stdout
        self.operator = operator
        self.rows_in = 0
        self.sessions = 0
        self.matches = 0
        self.timeouts = 0
        self.dead_letters = 0

    def __call__(self, progress: dict[str, Any], stats: AnyBatchStats | None) -> None:
        rows = int(progress.get("numInputRows", 0))
        self.rows_in += rows
        state = sum(int(op.get("numRowsTotal", 0)) for op in progress.get("stateOperators", []))
        dead = sum(stats.dead_letters.values()) if stats else 0
        self.dead_letters += dead
        if self.operator == "patterns":
            matches = stats.matches if isinstance(stats, PatternBatchStats) else 0
            timeouts = stats.timeouts if isinstance(stats, PatternBatchStats) else 0
            self.matches += matches
            self.timeouts += timeouts
            outputs = f"matches +{matches:<5,}| timeouts +{timeouts:<5,}"
        else:
            sessions = stats.session_rows if isinstance(stats, BatchStats) else 0
            self.sessions += sessions
            outputs = f"sessions +{sessions:<6,}"
        watermark = progress.get("eventTime", {}).get("watermark", "-")
        took = progress.get("durationMs", {}).get("triggerExecution", 0) / 1000
        print(
            f"batch {progress['batchId']:>4} | in {rows:>7,} | {outputs}"
            f"| dead letters +{dead:<5,}| state rows {state:>7,} | watermark {watermark} "
            f"| {took:5.1f}s",
            file=self.out,
            flush=True,
        )
