"""The patterns operator's pipeline step: validated records -> NFA -> matches, timeouts and
dead letters, with per-batch counts.

Accounting differs from sessions: an event does not end *in* a match (it may be in several, or
in none, and most events are simply evaluated and forgotten). So every input record is either a
valid event, which the pattern evaluates, or a dead letter with a reason (validation reasons
before the operator; ``too_late``, ``key_buffer_full`` and ``poison`` from it or from a stage
condition that raised an error). Per batch: ``records = events + rejected``, and ``evaluated =
events - too_late - key_buffer_full - poison``; both sides are counted with ``observe``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from streamwarden.operators.base import OperatorStep
from streamwarden.operators.observed import (
    OBSERVATION,
    dead_letters_by_reason,
)
from streamwarden.operators.patterns.from_config import (
    compile_conditions,
    options_from_config,
    pattern_from_config,
)
from streamwarden.operators.patterns.observed import INPUT_OBSERVATION, input_counts
from streamwarden.operators.patterns.records import detect_validated, validated_events
from streamwarden.operators.patterns.settings import PatternsConfig
from streamwarden.validation import Reason
from streamwarden.validation.validate import IS_TICK, REASON

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streamwarden.operators.base import PipelineView

__all__ = ["PatternBatchStats", "patterns_step"]


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
        refused: too late, past the key's buffer cap, or poison); an event the watermark has
        not passed yet waits in state and is evaluated later."""
        refused = (Reason.TOO_LATE.value, Reason.KEY_BUFFER_FULL.value, Reason.POISON.value)
        return self.events - sum(self.dead_letters.get(r, 0) for r in refused)

    def output_counts(self) -> dict[str, int]:
        return {"matches": self.matches, "timeouts": self.timeouts}

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


def patterns_step(config: PipelineView, records: DataFrame) -> OperatorStep:
    """Builds the pattern step from ``config``; bad ``where`` SQL raises ``ConfigError``."""
    cfg = config.section
    assert isinstance(cfg, PatternsConfig)  # the config chose it by the operator
    schema = config.schema
    key = cfg.key_of(schema)
    validated = validated_events(records, schema, config.validation)
    pattern = pattern_from_config(cfg, schema, compile_conditions(cfg, validated, schema))
    observed = validated.observe(INPUT_OBSERVATION, *_input_counts(key))
    result = detect_validated(
        observed, pattern, key=key, fields=cfg.fields_of(schema), options=options_from_config(cfg)
    )
    return OperatorStep(result.observed(), result.writer(config.context))


def _input_counts(key: str) -> list[Column]:
    """Valid events (keyed) and rejected records; ticks are not input records. A record the
    supervisor's bisection set aside (``poison`` already at validation) counts as an event the
    engine refused, as one the engine itself found poison does."""
    record = ~F.coalesce(F.col(IS_TICK), F.lit(False))
    set_aside = F.coalesce(F.col(REASON) == F.lit(Reason.POISON.value), F.lit(False))
    valid = (F.col(REASON).isNull() & F.col(key).isNotNull()) | set_aside
    return input_counts(record, valid)
