"""The join operator of a pipeline (``operator = "join"``): the records of two sources ->
validation, each against its own schema -> the interval join -> joined rows and dead letters.

Accounting, per source: a record is a valid event of its source or a dead letter of
validation. A valid event joins as many rows as match it (none, for an inner join without a
match), or is refused by the engine (``too_late``, ``key_buffer_full``: dead letters that name
their source). So per source ``records = events + rejected``, both counted on the operator's
input with ``observe``, and ``dead letters = rejected + refused``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from streamwarden.history.base import StoredColumns
from streamwarden.operators.accounting import count_by_reason, reasons_text, verdict
from streamwarden.operators.base import OPERATORS, Batches, OperatorStep, Outputs
from streamwarden.operators.join.api import (
    SIDES,
    drain_horizon,
    join_records,
    layout,
    state_identity,
)
from streamwarden.operators.join.settings import JoinConfig
from streamwarden.operators.observed import OBSERVATION, dead_letters_by_reason
from streamwarden.operators.patterns.observed import INPUT_OBSERVATION
from streamwarden.validation.reasons import Reason

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streamwarden.operators.base import PipelineView

__all__ = ["JoinAccounting", "JoinBatchStats", "JoinOperator"]

#: Dead-letter reasons of valid events the engine refused (not rejected by validation).
_REFUSED = (Reason.TOO_LATE.value, Reason.KEY_BUFFER_FULL.value, Reason.POISON.value)


@dataclass(frozen=True)
class JoinBatchStats:
    """What one micro-batch of a join pipeline did, from its observed metrics."""

    batch_id: int
    joined: int
    #: Valid events and validation rejects of each side: ``{"left": (events, rejected)}``.
    inputs: dict[str, tuple[int, int]] = field(default_factory=dict)
    dead_letters: dict[str, int] = field(default_factory=dict)

    def output_counts(self) -> dict[str, int]:
        return {"joined": self.joined}

    @classmethod
    def from_progress(cls, progress: dict[str, Any]) -> JoinBatchStats | None:
        observed = progress.get("observedMetrics", {})
        out = observed.get(OBSERVATION)
        if out is None:
            return None
        inp = observed.get(INPUT_OBSERVATION)
        return cls(
            batch_id=int(progress["batchId"]),
            joined=int(out["joined"]),
            inputs={
                side: (_count(inp, f"{side}_events"), _count(inp, f"{side}_rejected"))
                for side in SIDES
            },
            dead_letters=dead_letters_by_reason(out),
        )


def _count(row: Any, name: str) -> int:
    """A count of an observed row (a Spark ``Row`` or its JSON as a dict); 0 if none."""
    if row is None:
        return 0
    try:
        return int(row[name] or 0)
    except (KeyError, ValueError):
        return 0


@dataclass(frozen=True)
class JoinAccounting:
    """Where the input records of a join pipeline went, per source: ``balanced`` holds when
    every record is a valid event or a validation reject of its source, and the dead letters
    are the rejects and the events the engine refused."""

    input_records: int
    #: Per source name: (valid events, rejected by validation).
    sources: dict[str, tuple[int, int]]
    dead_letters: dict[str, int]
    joined: int

    @property
    def refused(self) -> int:
        return sum(self.dead_letters.get(r, 0) for r in _REFUSED)

    @property
    def balanced(self) -> bool:
        events = sum(e for e, _ in self.sources.values())
        rejected = sum(r for _, r in self.sources.values())
        dead = sum(self.dead_letters.values())
        return (
            self.input_records == events + rejected
            and dead == rejected + self.refused
            and self.refused <= events
        )

    def describe(self) -> str:
        parts = "; ".join(
            f"{name}: valid events {e} + rejected {r}" for name, (e, r) in self.sources.items()
        )
        return (
            f"records in {self.input_records} = {parts or 'none'}; refused by the join "
            f"{self.refused}; dead letters by reason: {reasons_text(self.dead_letters)}; joined "
            f"rows {self.joined}: {verdict(self.balanced)}"
        )


class JoinOperator:
    """An interval join of two sources as a pipeline operator; its section is ``[join]``."""

    name = "join"
    settings_model = JoinConfig
    state_change = (
        "holds the rows of another join (join.left, right, on or between differ from the "
        "config's): they would be matched under the new one; set them back, or start from a "
        "new checkpoint"
    )

    def idle_timeout(self, config: PipelineView) -> timedelta | None:
        return _section(config).idle_timeout

    def watermark_delay(self, config: PipelineView) -> timedelta:
        return _section(config).max_out_of_orderness

    def drain_horizon(self, config: PipelineView) -> timedelta:
        return drain_horizon(_section(config))

    def state_identity(self, config: PipelineView) -> dict[str, Any]:
        return state_identity(_section(config))

    def check(self, config: PipelineView) -> None:
        layout(config.schemas, _section(config))

    def history_columns(self, config: PipelineView) -> StoredColumns | None:
        return None

    def build_step(self, config: PipelineView, records: DataFrame) -> OperatorStep:
        result = join_records(records, config.schemas, _section(config), config.validation)
        return OperatorStep(result.observed(), result.writer(config.context))

    def stats_from_progress(self, progress: dict[str, Any]) -> JoinBatchStats | None:
        return JoinBatchStats.from_progress(progress)

    def account(
        self, config: PipelineView, outputs: Outputs, records: int, batches: Batches
    ) -> JoinAccounting:
        section = _section(config)
        names = {"left": section.left, "right": section.right}
        sources: dict[str, tuple[int, int]] = {n: (0, 0) for n in names.values()}
        for b in batches:
            if isinstance(b, JoinBatchStats):
                for side, (events, rejected) in b.inputs.items():
                    e, r = sources[names[side]]
                    sources[names[side]] = (e + events, r + rejected)
        joined = outputs.get("joined")
        return JoinAccounting(
            records,
            sources,
            count_by_reason(outputs.get("dead_letters")),
            0 if joined is None else joined.count(),
        )


def _section(config: PipelineView) -> JoinConfig:
    assert isinstance(config.section, JoinConfig)  # the config chose it by the operator
    return config.section


OPERATORS.register(JoinOperator.name, JoinOperator())
