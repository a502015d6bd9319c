"""The keyed-processor operator of a pipeline (``operator = "process"``): landing records ->
validation -> the user's processor under its guard -> output rows and dead letters.

Accounting, as for patterns: an event does not end *in* an output row (it may give several, or
none). Every input record is a valid event, which the processor takes unless the guard refuses
it (``too_late``, ``state_cap``, ``processor_error``: dead letters, yet valid events), or a
dead letter of validation. Per batch: ``records = events + rejected``; both sides are counted
with ``observe``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from functools import cache
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from streamwarden.history.base import StoredColumns
from streamwarden.operators.accounting import count_by_reason, reasons_text, verdict
from streamwarden.operators.base import OPERATORS, Batches, OperatorStep, Outputs
from streamwarden.operators.engine_rows import validated_records
from streamwarden.operators.observed import OBSERVATION, dead_letters_by_reason
from streamwarden.operators.patterns.observed import INPUT_OBSERVATION, input_counts
from streamwarden.operators.process.api import (
    ProcessResult,
    drain_horizon,
    process_rows,
    run_guarded,
    state_identity,
)
from streamwarden.operators.process.events import EventLayout
from streamwarden.operators.process.guard import STATE_ROWS_ADDED
from streamwarden.operators.process.loading import load_processor
from streamwarden.operators.process.processor import KeyedProcessor
from streamwarden.operators.process.settings import ProcessConfig
from streamwarden.validation import validate_records
from streamwarden.validation.reasons import Reason
from streamwarden.validation.validate import IS_TICK

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streamwarden.operators.base import PipelineView

__all__ = ["ProcessAccounting", "ProcessBatchStats", "ProcessOperator"]

#: Dead-letter reasons of valid events the guard refused (not rejected by validation).
_GUARD_REFUSED = (Reason.TOO_LATE.value, Reason.STATE_CAP.value, Reason.PROCESSOR_ERROR.value)


@dataclass(frozen=True)
class ProcessBatchStats:
    """What one micro-batch of a process pipeline did, from its observed metrics."""

    batch_id: int
    events: int
    output: int
    dead_letters: dict[str, int] = field(default_factory=dict)
    #: Rows the batch added to each state (negative: freed), by the state's name.
    state_rows_added: dict[str, int] = field(default_factory=dict)

    def output_counts(self) -> dict[str, int]:
        return {"output": self.output}

    @classmethod
    def from_progress(cls, progress: dict[str, Any]) -> ProcessBatchStats | None:
        observed = progress.get("observedMetrics", {})
        out = observed.get(OBSERVATION)
        if out is None:
            return None
        inp = observed.get(INPUT_OBSERVATION)
        return cls(
            batch_id=int(progress["batchId"]),
            events=0 if inp is None else int(inp["events"] or 0),
            output=int(out["output"]),
            dead_letters=dead_letters_by_reason(out),
            state_rows_added={
                k.removeprefix(STATE_ROWS_ADDED): int(v or 0)
                for k, v in (out.asDict() if hasattr(out, "asDict") else dict(out)).items()
                if k.startswith(STATE_ROWS_ADDED)
            },
        )


@dataclass(frozen=True)
class ProcessAccounting:
    """Where the input records of a process pipeline went: ``balanced`` holds when
    ``records = valid events + validation dead letters``."""

    input_records: int
    events: int
    dead_letters: dict[str, int]
    output: int

    @property
    def refused(self) -> int:
        return sum(self.dead_letters.get(r, 0) for r in _GUARD_REFUSED)

    @property
    def rejected(self) -> int:
        return sum(self.dead_letters.values()) - self.refused

    @property
    def balanced(self) -> bool:
        return (
            self.input_records == self.events + self.rejected and 0 <= self.refused <= self.events
        )

    def describe(self) -> str:
        return (
            f"records in {self.input_records} = valid events {self.events} (processed "
            f"{self.events - self.refused}, refused {self.refused}) + rejected by validation "
            f"{self.rejected}; dead letters by reason: {reasons_text(self.dead_letters)}; "
            f"output rows {self.output}: {verdict(self.balanced)}"
        )


class ProcessOperator:
    """A keyed processor of the user's as a pipeline operator; its section is ``[process]``."""

    name = "process"
    settings_model = ProcessConfig
    state_change = (
        "holds the states of a processor with another layout (a state renamed, retyped, of "
        "another kind or removed, or another key): they would be read under the new one; set "
        "the processor back"
    )

    def idle_timeout(self, config: PipelineView) -> timedelta | None:
        return _section(config).idle_timeout

    def watermark_delay(self, config: PipelineView) -> timedelta:
        return _section(config).max_out_of_orderness

    def drain_horizon(self, config: PipelineView) -> timedelta:
        section = _section(config)
        return drain_horizon(processor_of(config), section.max_out_of_orderness)

    def state_identity(self, config: PipelineView) -> dict[str, Any]:
        return state_identity(processor_of(config), config.schema.key_name)

    def check(self, config: PipelineView) -> None:
        processor_of(config)

    def history_columns(self, config: PipelineView) -> StoredColumns | None:
        return None  # a processor keeps no history

    def build_step(self, config: PipelineView, records: DataFrame) -> OperatorStep:
        schema = config.schema
        validated = validate_records(records, schema, config.validation)
        engine_records = validated_records()
        observed = validated.observe(
            INPUT_OBSERVATION, *input_counts(~F.col(IS_TICK), ~engine_records.rejected)
        )
        layout = EventLayout.of(schema.struct, schema.key, raw=True)
        section = _section(config)
        processor = processor_of(config)
        rows = process_rows(observed, engine_records, layout, section.max_out_of_orderness)
        combined = run_guarded(rows, processor, schema.key_type, layout)
        result = ProcessResult(combined, processor, schema.key_name, section.max_out_of_orderness)
        return OperatorStep(result.observed(), result.writer(config.context))

    def stats_from_progress(self, progress: dict[str, Any]) -> ProcessBatchStats | None:
        return ProcessBatchStats.from_progress(progress)

    def account(
        self, config: PipelineView, outputs: Outputs, records: int, batches: Batches
    ) -> ProcessAccounting:
        events = sum(b.events for b in batches if isinstance(b, ProcessBatchStats))
        output = outputs.get("output")
        return ProcessAccounting(
            records,
            events,
            count_by_reason(outputs.get("dead_letters")),
            0 if output is None else output.count(),
        )


def processor_of(config: PipelineView) -> KeyedProcessor:
    """The config's processor instance (one per config section, loaded once)."""
    section = _section(config)
    return _load(section.processor, tuple(section.python_path))


@cache
def _load(spec: str, python_path: tuple[Any, ...]) -> KeyedProcessor:
    return load_processor(spec, python_path)


def _section(config: PipelineView) -> ProcessConfig:
    assert isinstance(config.section, ProcessConfig)  # the config chose it by the operator
    return config.section


OPERATORS.register(ProcessOperator.name, ProcessOperator())
