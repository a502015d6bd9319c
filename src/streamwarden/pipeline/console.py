"""What the CLI prints while a pipeline runs: one line per micro-batch."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from streamwarden.config.model import PipelineConfig
from streamwarden.monitoring.summary import epoch_ms, offsets_skipped, source_lag
from streamwarden.operators.base import BatchStats
from streamwarden.pipeline.query_runner import user_input_rows

__all__ = ["ProgressPrinter"]

#: Width of a count column: 7 digits with their separators (``9,999,999``); a larger count
#: widens its line but stays apart from the next column.
COUNT = 9


class ProgressPrinter:
    """Prints batches as they complete, and keeps running totals for the summary. The
    outputs of the pipeline's operator are counted on the line (as its config section declares
    them: sessions out, or matches and timeouts out).

    ``in`` counts the records read from the pipeline's source: the idle and drain ticks that
    move event time forward are read by the same query, but they are not input records
    (docs/concepts/accounting.md). The watermark is ``-`` until the query has one; Spark
    reports the epoch (1970-01-01) then, and the progress log records ``null``. A Kafka
    source adds its lag per topic partition (records behind the latest offset).
    """

    def __init__(self, config: PipelineConfig, out: TextIO | None = None) -> None:
        self.config = config
        self.out = out or sys.stdout  # read now, not at import: tests swap sys.stdout
        self.counted = type(config.section).all_outputs()
        self.rows_in = 0
        #: Rows written so far per counted output.
        self.outputs = dict.fromkeys(self.counted, 0)
        self.dead_letters = 0

    def __call__(self, progress: dict[str, Any], stats: BatchStats | None) -> None:
        rows = user_input_rows(progress, self.config)
        self.rows_in += rows
        state = sum(int(op.get("numRowsTotal", 0)) for op in progress.get("stateOperators", []))
        dead = sum(stats.dead_letters.values()) if stats else 0
        self.dead_letters += dead
        counts = stats.output_counts() if stats else {}
        for name in self.counted:
            self.outputs[name] += counts.get(name, 0)
        outputs = " | ".join(f"{n} +{counts.get(n, 0):<{COUNT},}" for n in self.counted)
        took = progress.get("durationMs", {}).get("triggerExecution", 0) / 1000
        lag = source_lag(progress)
        behind = (
            " | lag " + " ".join(f"{where}:{n:,}" for where, n in sorted(lag.items()))
            if lag
            else ""
        )
        if skipped := offsets_skipped(progress):
            behind += f" | {skipped:,} offsets skipped (deleted or remade before read, or markers)"
        print(
            f"batch {progress['batchId']:>5} | in {rows:>{COUNT},} | {outputs} "
            f"| dead letters +{dead:<{COUNT},} | state rows {state:>{COUNT},} "
            f"| watermark {watermark(progress)} | {took:5.1f}s{behind}",
            file=self.out,
            flush=True,
        )


def watermark(progress: dict[str, Any]) -> str:
    """The batch's watermark as Spark wrote it, or ``-`` if the query has none yet (Spark
    reports 1970-01-01T00:00:00.000Z then; the progress log records null)."""
    text = progress.get("eventTime", {}).get("watermark")
    return str(text) if epoch_ms(text) else "-"
