"""The patterns operator of a pipeline (``operator = "patterns"``, section ``[patterns]``):
validated records -> NFA -> matches, timeouts (optional) and dead letters.

Accounting: ``records = valid events + validation dead letters``, the valid events counted
as the run observed them (see ``step``), since an event ends in any number of matches.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from streamwarden.history.base import StoredColumns
from streamwarden.operators.base import OPERATORS, Batches, OperatorStep, Outputs
from streamwarden.operators.patterns.accounting import PatternAccounting, reconcile_patterns
from streamwarden.operators.patterns.from_config import pattern_from_config
from streamwarden.operators.patterns.settings import PatternsConfig
from streamwarden.operators.patterns.step import PatternBatchStats, patterns_step

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streamwarden.operators.base import PipelineView

__all__ = ["PatternsOperator"]


def _section(config: PipelineView) -> PatternsConfig:
    assert isinstance(config.section, PatternsConfig)  # the config chose it by the operator
    return config.section


class PatternsOperator:
    """Keyed pattern detection as a pipeline operator; its section is ``[patterns]``."""

    name = "patterns"
    settings_model = PatternsConfig
    state_change = (
        "holds partial matches of another pattern (its stages, quantifiers, comparisons, key or "
        "fields differ from the config's; only a stage's `where` may change): they would be "
        "read under the new stages; set the pattern back"
    )

    def idle_timeout(self, config: PipelineView) -> timedelta | None:
        return _section(config).idle_timeout

    def watermark_delay(self, config: PipelineView) -> timedelta:
        return _section(config).max_out_of_orderness

    def drain_horizon(self, config: PipelineView) -> timedelta:
        p = _section(config)
        return p.within + p.max_out_of_orderness

    def state_identity(self, config: PipelineView) -> dict[str, Any]:
        p = _section(config)
        return {
            "pattern": {
                "key": p.key_of(config.schema),
                "fields": p.fields_of(config.schema),
                # a stage's `where` may change: it decides which events a stage takes, not
                # what the stored partial matches hold
                "stages": [s.model_dump(mode="json", exclude={"where"}) for s in p.stages],
            }
        }

    def history_columns(self, config: PipelineView) -> StoredColumns | None:
        return None  # a pattern keeps no history

    def check(self, config: PipelineView) -> None:
        """Builds the pattern with stand-in conditions: structural mistakes (a quantifier
        where none fits, an unknown stage in ``previous``...) fail before Spark starts."""
        pattern_from_config(_section(config), config.schema)

    def build_step(self, config: PipelineView, records: DataFrame) -> OperatorStep:
        return patterns_step(config, records)

    def stats_from_progress(self, progress: dict[str, Any]) -> PatternBatchStats | None:
        return PatternBatchStats.from_progress(progress)

    def account(
        self, config: PipelineView, outputs: Outputs, records: int, batches: Batches
    ) -> PatternAccounting:
        events = sum(b.events for b in batches if isinstance(b, PatternBatchStats))
        frames = (outputs.get("matches"), outputs.get("timeouts"), outputs.get("dead_letters"))
        return reconcile_patterns(frames, records, events)


OPERATORS.register(PatternsOperator.name, PatternsOperator())
