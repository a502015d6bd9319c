"""The sessions operator of a pipeline (``operator = "sessions"``, the default): landing
records -> validation -> sessionization -> session revisions and dead letters.

Accounting: every valid event ends in exactly one final session, every other record is a dead
letter, so ``records = events in final sessions + dead letters``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from streamwarden.history.base import StoredColumns
from streamwarden.operators.base import (
    OPERATORS,
    Batches,
    OperatorStep,
    Outputs,
)
from streamwarden.operators.observed import (
    OBSERVATION,
    dead_letters_by_reason,
)
from streamwarden.operators.sessions.accounting import Accounting, reconcile
from streamwarden.operators.sessions.api import (
    SessionLayout,
    sessionize_records,
)
from streamwarden.operators.sessions.history import HistoryMerge, stored_columns
from streamwarden.operators.sessions.params import SessionParams
from streamwarden.operators.sessions.settings import SessionsConfig

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streamwarden.operators.base import PipelineView

__all__ = ["SessionBatchStats", "SessionsOperator"]


@dataclass(frozen=True)
class SessionBatchStats:
    """What one micro-batch of a sessions pipeline wrote, from the progress's observed
    metrics."""

    batch_id: int
    session_rows: int
    session_events: int
    dead_letters: dict[str, int] = field(default_factory=dict)
    #: Late events the engine handed to the history store's merge (0 without a store).
    history_events: int = 0

    def output_counts(self) -> dict[str, int]:
        return {"sessions": self.session_rows}

    @classmethod
    def from_progress(cls, progress: dict[str, Any]) -> SessionBatchStats | None:
        row = progress.get("observedMetrics", {}).get(OBSERVATION)
        if row is None:
            return None
        return cls(
            batch_id=int(progress["batchId"]),
            session_rows=int(row["sessions"]),
            session_events=int(row["session_events"] or 0),
            dead_letters=dead_letters_by_reason(row),
            history_events=_optional_count(row, "history_events"),
        )


def _optional_count(row: Any, name: str) -> int:
    """A count the observed row may lack (a progress written before it was observed)."""
    try:
        return int(row[name] or 0)
    except (KeyError, ValueError):  # a dict, or a Spark Row, without the field
        return 0


class SessionsOperator:
    """Sessionization as a pipeline operator; its section is ``[sessions]``."""

    name = "sessions"
    settings_model = SessionsConfig
    state_change = (
        "holds sessions keyed by another field or carrying other aggregates (schema.key or "
        "[sessions.aggregates] differ from the config's): their state would be read under the "
        "new ones; set them back"
    )

    def idle_timeout(self, config: PipelineView) -> timedelta | None:
        return _section(config).idle_timeout

    def watermark_delay(self, config: PipelineView) -> timedelta:
        return _section(config).max_out_of_orderness

    def drain_horizon(self, config: PipelineView) -> timedelta:
        return SessionParams.from_config(_section(config)).drain_horizon

    def state_identity(self, config: PipelineView) -> dict[str, Any]:
        aggregates = dict(_section(config).aggregates)
        return {"sessions": {"key": config.schema.key, "aggregates": aggregates}}

    def check(self, config: PipelineView) -> None:
        layout(config)

    def history_columns(self, config: PipelineView) -> StoredColumns | None:
        return stored_columns(layout(config))

    def build_step(self, config: PipelineView, records: DataFrame) -> OperatorStep:
        params = SessionParams.from_config(_section(config))
        history = config.history is not None
        result = sessionize_records(
            records, config.schema, params, config.validation, keep_state=history
        )
        prepare = HistoryMerge(config, params, result.layout) if history else None
        writer = result.writer(config.context, with_state=history, prepare=prepare)
        return OperatorStep(result.observed(), writer)

    def stats_from_progress(self, progress: dict[str, Any]) -> SessionBatchStats | None:
        return SessionBatchStats.from_progress(progress)

    def account(
        self, config: PipelineView, outputs: Outputs, records: int, batches: Batches
    ) -> Accounting:
        return reconcile(outputs.get("sessions"), outputs.get("dead_letters"), records)


def layout(config: PipelineView) -> SessionLayout:
    """How a pipeline's session rows look: its key and its declared aggregates, checked
    against the schema (a :class:`~streamwarden.errors.ConfigError` names a wrong one)."""
    schema = config.schema
    aggregates = SessionParams.from_config(_section(config)).bind(
        schema.struct, key_name=schema.key_name
    )
    return SessionLayout(schema.key_name, schema.key_type, tuple(aggregates))


def _section(config: PipelineView) -> SessionsConfig:
    assert isinstance(config.section, SessionsConfig)  # the config chose it by the operator
    return config.section


OPERATORS.register(SessionsOperator.name, SessionsOperator())
