"""The sessions operator of a pipeline (``operator = "sessions"``, the default): landing
records -> validation -> sessionization -> session revisions and dead letters.

Accounting: every valid event ends in exactly one final session, every other record is a dead
letter, so ``records = events in final sessions + dead letters``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from streamwarden.operators.base import (
    OPERATORS,
    Batches,
    OperatorStep,
    Outputs,
    writer_for,
)
from streamwarden.operators.observed import (
    OBSERVATION,
    dead_letter_counts,
    dead_letters_by_reason,
)
from streamwarden.operators.sessions.accounting import Accounting, reconcile
from streamwarden.operators.sessions.api import (
    DEAD_LETTER_SHAPE,
    SESSION_SHAPE,
    dead_letter_rows,
    session_rows,
    sessionize,
)
from streamwarden.operators.sessions.history import HistoryMerge
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


def observed_counts() -> list[Column]:
    """Aggregates Spark computes on the fly for each batch (no extra job)."""
    is_session = F.col("kind") == "session"
    return [
        F.count(F.when(is_session, 1)).alias("sessions"),
        F.sum(F.when(is_session, F.col("page_count"))).alias("session_events"),
        F.count(F.when(F.col("kind") == "history", 1)).alias("history_events"),
        *dead_letter_counts(),
    ]


class SessionsOperator:
    """Sessionization as a pipeline operator; its section is ``[sessions]``."""

    name = "sessions"
    settings_model = SessionsConfig
    state_change = ""  # its state depends on nothing but the operator

    def idle_timeout(self, config: PipelineView) -> timedelta | None:
        return _section(config).idle_timeout

    def watermark_delay(self, config: PipelineView) -> timedelta:
        return _section(config).max_out_of_orderness

    def drain_horizon(self, config: PipelineView) -> timedelta:
        s = _section(config)
        return s.gap + s.allowed_lateness + s.max_out_of_orderness

    def state_identity(self, config: PipelineView) -> dict[str, Any]:
        return {}

    def check(self, config: PipelineView) -> None:
        SessionParams.from_config(_section(config), config.validation)

    def build_step(self, config: PipelineView, records: DataFrame) -> OperatorStep:
        params = SessionParams.from_config(_section(config), config.validation)
        result = sessionize(records, params, fields=config.fields, validation=config.validation)
        history = config.history is not None
        writer = writer_for(
            config,
            {
                "sessions": partial(session_rows, url_times=history),
                "dead_letters": dead_letter_rows,
            },
            {"sessions": SESSION_SHAPE, "dead_letters": DEAD_LETTER_SHAPE},
            HistoryMerge(config, params) if history else None,
        )
        return OperatorStep(result.combined.observe(OBSERVATION, *observed_counts()), writer)

    def stats_from_progress(self, progress: dict[str, Any]) -> SessionBatchStats | None:
        return SessionBatchStats.from_progress(progress)

    def account(self, outputs: Outputs, records: int, batches: Batches) -> Accounting:
        return reconcile(outputs.get("sessions"), outputs.get("dead_letters"), records)


def _section(config: PipelineView) -> SessionsConfig:
    assert isinstance(config.section, SessionsConfig)  # the config chose it by the operator
    return config.section


OPERATORS.register(SessionsOperator.name, SessionsOperator())
