"""Reading a pipeline's outputs back: what each sink holds, and the accounting of a run.

The accounting of a run is its operator's (:meth:`~streamwarden.operators.base.Operator.
account`); the per-operator readers are kept here under their old names for scripts and
tests that reconcile one output folder at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from streamwarden.operators.base import Accounting as RunAccounting
from streamwarden.operators.base import BatchStats, operator_of
from streamwarden.operators.patterns.accounting import PatternAccounting, account_patterns
from streamwarden.operators.sessions.accounting import Accounting, account, final_sessions
from streamwarden.sinks.parquet import read_output

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streamwarden.config.model import PipelineConfig

__all__ = [
    "Accounting",
    "PatternAccounting",
    "account",
    "account_patterns",
    "account_run",
    "final_sessions",
    "read_output",
]


def account_run(
    spark: SparkSession,
    config: PipelineConfig,
    input_records: int,
    batches: Sequence[BatchStats] = (),
) -> RunAccounting:
    """Reconciles the outputs of ``config``'s pipeline with the records that went in."""
    return operator_of(config).account(spark, config, input_records, batches)
