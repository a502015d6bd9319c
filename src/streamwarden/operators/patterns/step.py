"""The patterns operator as a pipeline step: validated records -> NFA -> matches, timeouts and
dead letters, with per-batch counts.

Accounting differs from sessions: an event does not end *in* a match (it may be in several, or
in none, and most events are simply evaluated and forgotten). So every input record is either a
valid event, which the pattern evaluates, or a dead letter with a reason (validation reasons
before the operator; ``too_late`` and ``key_buffer_full`` from it). Per batch: ``records =
events + rejected``, and ``evaluated = events - too_late - key_buffer_full``; both sides are
counted with ``observe``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from streamwarden.config.model import PipelineConfig
from streamwarden.operators.patterns.api import dead_letter_rows, match_rows, timeout_rows
from streamwarden.operators.patterns.from_config import (
    compile_conditions,
    options_from_config,
    pattern_from_config,
)
from streamwarden.operators.patterns.records import detect_validated, validated_events
from streamwarden.pipeline.batch_writer import (
    OBSERVATION,
    BatchWriter,
    Output,
    dead_letter_counts,
    dead_letters_by_reason,
)
from streamwarden.sinks import ParquetBatchSink
from streamwarden.validation import Reason

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["INPUT_OBSERVATION", "PatternBatchStats", "PatternStep", "patterns_step"]

#: Observed metrics on the operator's input: valid events and rejected records per batch.
INPUT_OBSERVATION = "streamwarden_input"


@dataclass(frozen=True)
class PatternBatchStats:
    """What one micro-batch of a patterns pipeline did, from the progress's observed metrics."""

    batch_id: int
    events: int
    matches: int
    timeouts: int
    overflowed_partials: int
    dead_letters: dict[str, int] = field(default_factory=dict)

    @property
    def evaluated(self) -> int:
        """Valid events of this batch that the pattern evaluates (all but those the engine
        refused: too late, or past the key's buffer cap); an event the watermark has not passed
        yet waits in state and is evaluated later."""
        refused = (Reason.TOO_LATE.value, Reason.KEY_BUFFER_FULL.value)
        return self.events - sum(self.dead_letters.get(r, 0) for r in refused)

    @classmethod
    def from_progress(cls, progress: dict[str, Any]) -> PatternBatchStats | None:
        observed = progress.get("observedMetrics", {})
        out, inp = observed.get(OBSERVATION), observed.get(INPUT_OBSERVATION)
        if out is None or inp is None:
            return None
        return cls(
            batch_id=int(progress["batchId"]),
            events=int(inp["events"]),
            matches=int(out["matches"]),
            timeouts=int(out["timeouts"]),
            overflowed_partials=int(out["overflowed_partials"] or 0),
            dead_letters=dead_letters_by_reason(out),
        )


@dataclass(frozen=True)
class PatternStep:
    """The observed output of the pattern operator and the writer for its sinks."""

    output: DataFrame
    writer: BatchWriter


def patterns_step(config: PipelineConfig, records: DataFrame) -> PatternStep:
    """Builds the pattern step from ``config``; bad ``where`` SQL raises ``ConfigError``."""
    cfg = config.patterns
    assert cfg is not None  # the config model guarantees it for operator 'patterns'
    validated = validated_events(records, config.fields, config.validation)
    pattern = pattern_from_config(cfg, compile_conditions(cfg, validated))
    observed = validated.observe(INPUT_OBSERVATION, *_input_counts(cfg.key))
    result = detect_validated(
        observed, pattern, key=cfg.key, fields=cfg.fields, options=options_from_config(cfg)
    )
    carried = result.compiled.fields
    sinks = config.sinks
    assert sinks.matches is not None
    outputs: list[Output] = [
        (ParquetBatchSink("matches", sinks.matches.path), lambda c: match_rows(c, carried))
    ]
    if sinks.timeouts is not None:
        sink = ParquetBatchSink("timeouts", sinks.timeouts.path)
        outputs.append((sink, lambda c: timeout_rows(c, carried)))
    outputs.append((ParquetBatchSink("dead_letters", sinks.dead_letters.path), dead_letter_rows))
    output = result.combined.observe(OBSERVATION, *_output_counts())
    return PatternStep(output, BatchWriter(outputs))


def _input_counts(key: str) -> list[Column]:
    """Valid events (keyed) and rejected records; ticks are not input records."""
    record = ~F.coalesce(F.col("is_tick"), F.lit(False))
    valid = F.col("reason").isNull() & F.col(key).isNotNull()
    return [
        F.count(F.when(record & valid, 1)).alias("events"),
        F.count(F.when(record & ~valid, 1)).alias("rejected"),
    ]


def _output_counts() -> list[Column]:
    kind = F.col("kind")
    return [
        F.count(F.when(kind == "match", 1)).alias("matches"),
        F.count(F.when(kind == "timeout", 1)).alias("timeouts"),
        F.sum(F.when(kind == "overflow", F.col("dropped"))).alias("overflowed_partials"),
        *dead_letter_counts(),
    ]
