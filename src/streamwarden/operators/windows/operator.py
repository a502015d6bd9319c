"""The windows operator of a pipeline (``operator = "windows"``): landing records ->
validation -> windows per group -> window revisions and dead letters.

Accounting: every valid event is in exactly ``size / slide`` final windows or in one dead
letter (``too_late``, a cap), so ``records = window events / (size / slide) + dead letters``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from streamwarden.history.base import StoredColumns
from streamwarden.operators.base import OPERATORS, Batches, OperatorStep, Outputs
from streamwarden.operators.observed import OBSERVATION, dead_letters_by_reason
from streamwarden.operators.windows.accounting import WindowAccounting, reconcile
from streamwarden.operators.windows.api import (
    drain_horizon,
    layout,
    state_identity,
    windows_records,
)
from streamwarden.operators.windows.settings import WindowsConfig

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streamwarden.operators.base import PipelineView

__all__ = ["WindowBatchStats", "WindowsOperator"]


@dataclass(frozen=True)
class WindowBatchStats:
    """What one micro-batch of a windows pipeline wrote, from its observed metrics."""

    batch_id: int
    windows: int
    window_events: int
    dead_letters: dict[str, int] = field(default_factory=dict)

    def output_counts(self) -> dict[str, int]:
        return {"windows": self.windows}

    @classmethod
    def from_progress(cls, progress: dict[str, Any]) -> WindowBatchStats | None:
        row = progress.get("observedMetrics", {}).get(OBSERVATION)
        if row is None:
            return None
        return cls(
            batch_id=int(progress["batchId"]),
            windows=int(row["windows"]),
            window_events=int(row["window_events"] or 0),
            dead_letters=dead_letters_by_reason(row),
        )


class WindowsOperator:
    """Windowed aggregation as a pipeline operator; its section is ``[windows]``."""

    name = "windows"
    settings_model = WindowsConfig
    state_change = (
        "holds windows of other groups, sizes or aggregates (windows.by, size, slide or "
        "[windows.aggregates] differ from the config's): their state would be read under the "
        "new ones; set them back, or start from a new checkpoint"
    )

    def idle_timeout(self, config: PipelineView) -> timedelta | None:
        return _section(config).idle_timeout

    def watermark_delay(self, config: PipelineView) -> timedelta:
        return _section(config).max_out_of_orderness

    def drain_horizon(self, config: PipelineView) -> timedelta:
        return drain_horizon(_section(config))

    def state_identity(self, config: PipelineView) -> dict[str, Any]:
        section = _section(config)
        return state_identity(section, layout(config.schema, section).group.names)

    def check(self, config: PipelineView) -> None:
        layout(config.schema, _section(config))

    def history_columns(self, config: PipelineView) -> StoredColumns | None:
        return None

    def build_step(self, config: PipelineView, records: DataFrame) -> OperatorStep:
        result = windows_records(records, config.schema, _section(config), config.validation)
        return OperatorStep(result.observed(), result.writer(config.context))

    def stats_from_progress(self, progress: dict[str, Any]) -> WindowBatchStats | None:
        return WindowBatchStats.from_progress(progress)

    def account(
        self, config: PipelineView, outputs: Outputs, records: int, batches: Batches
    ) -> WindowAccounting:
        return reconcile(
            outputs.get("windows"),
            outputs.get("dead_letters"),
            records,
            _section(config).windows_per_event,
        )


def _section(config: PipelineView) -> WindowsConfig:
    assert isinstance(config.section, WindowsConfig)  # the config chose it by the operator
    return config.section


OPERATORS.register(WindowsOperator.name, WindowsOperator())
