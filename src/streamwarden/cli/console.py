"""What the CLI prints while a pipeline runs: one line per micro-batch."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from streamwarden.pipeline.batch_writer import BatchStats

__all__ = ["ProgressPrinter"]


class ProgressPrinter:
    """Prints batches as they complete, and keeps running totals for the summary."""

    def __init__(self, out: TextIO = sys.stdout) -> None:
        self.out = out
        self.rows_in = 0
        self.sessions = 0
        self.dead_letters = 0

    def __call__(self, progress: dict[str, Any], stats: BatchStats | None) -> None:
        rows = int(progress.get("numInputRows", 0))
        self.rows_in += rows
        state = sum(int(op.get("numRowsTotal", 0)) for op in progress.get("stateOperators", []))
        sessions = stats.session_rows if stats else 0
        dead = sum(stats.dead_letters.values()) if stats else 0
        self.sessions += sessions
        self.dead_letters += dead
        watermark = progress.get("eventTime", {}).get("watermark", "-")
        took = progress.get("durationMs", {}).get("triggerExecution", 0) / 1000
        print(
            f"batch {progress['batchId']:>4} | in {rows:>7,} | sessions +{sessions:<6,}"
            f"| dead letters +{dead:<5,}| state rows {state:>7,} | watermark {watermark} "
            f"| {took:5.1f}s",
            file=self.out,
            flush=True,
        )
