"""What the CLI prints while a pipeline runs: one line per micro-batch."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from streamwarden.config.model import PipelineConfig
from streamwarden.monitoring.summary import epoch_ms
from streamwarden.pipeline.batch_writer import BatchStats
from streamwarden.operators.patterns.step import PatternBatchStats
from streamwarden.pipeline.runner import user_input_rows
from streamwarden.pipeline.steps import AnyBatchStats

__all__ = ["ProgressPrinter"]

#: Width of a count column: 7 digits with their separators (``9,999,999``); a larger count
#: widens its line but stays apart from the next column.
COUNT = 9


class ProgressPrinter:
    """Prints batches as they complete, and keeps running totals for the summary. The
    pipeline's operator chooses the line: sessions out, or matches and timeouts out.

    ``in`` counts the records read from the landing source: the idle and drain ticks that move
    event time forward are read by the same query, but they are not input records (README,
    "Ticks are not input records"). The watermark is ``-`` until the query has one; Spark
    reports the epoch (1970-01-01) then, and the progress log records ``null``.
    """

    def __init__(self, config: PipelineConfig, out: TextIO | None = None) -> None:
        self.config = config
        self.out = out or sys.stdout  # read now, not at import: tests swap sys.stdout
        self.operator = config.operator
        self.rows_in = 0
        self.sessions = 0
        self.matches = 0
        self.timeouts = 0
        self.dead_letters = 0

    def __call__(self, progress: dict[str, Any], stats: AnyBatchStats | None) -> None:
        rows = user_input_rows(progress, self.config)
        self.rows_in += rows
        state = sum(int(op.get("numRowsTotal", 0)) for op in progress.get("stateOperators", []))
        dead = sum(stats.dead_letters.values()) if stats else 0
        self.dead_letters += dead
        if self.operator == "patterns":
            matches = stats.matches if isinstance(stats, PatternBatchStats) else 0
            timeouts = stats.timeouts if isinstance(stats, PatternBatchStats) else 0
            self.matches += matches
            self.timeouts += timeouts
            outputs = f"matches +{matches:<{COUNT},} | timeouts +{timeouts:<{COUNT},}"
        else:
            sessions = stats.session_rows if isinstance(stats, BatchStats) else 0
            self.sessions += sessions
            outputs = f"sessions +{sessions:<{COUNT},}"
        took = progress.get("durationMs", {}).get("triggerExecution", 0) / 1000
        print(
            f"batch {progress['batchId']:>5} | in {rows:>{COUNT},} | {outputs} "
            f"| dead letters +{dead:<{COUNT},} | state rows {state:>{COUNT},} "
            f"| watermark {watermark(progress)} | {took:5.1f}s",
            file=self.out,
            flush=True,
        )


def watermark(progress: dict[str, Any]) -> str:
    """The batch's watermark as Spark wrote it, or ``-`` if the query has none yet (Spark
    reports 1970-01-01T00:00:00.000Z then; the progress log records null)."""
    text = progress.get("eventTime", {}).get("watermark")
    return str(text) if epoch_ms(text) else "-"
