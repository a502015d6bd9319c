"""The operator step of a pipeline: what the runner needs from the configured operator.

A step is the operator's combined output (one stateful step, rows told apart by ``kind``,
with per-batch counts attached by ``observe``) and a ``foreachBatch`` writer that sends each
kind of row to its sink. The runner is the same for every operator.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

from streamwarden.config.model import PipelineConfig
from streamwarden.operators.sessions import SessionParams, sessionize
from streamwarden.pipeline.batch_writer import (
    OBSERVATION,
    BatchStats,
    BatchWriter,
    SessionBatchWriter,
    observed_counts,
)
from streamwarden.operators.patterns.step import PatternBatchStats, patterns_step
from streamwarden.sinks import ParquetBatchSink

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["AnyBatchStats", "OperatorStep", "build_step", "drain_horizon", "stats_from_progress"]

AnyBatchStats = BatchStats | PatternBatchStats


class OperatorStep(Protocol):
    @property
    def output(self) -> DataFrame: ...
    @property
    def writer(self) -> BatchWriter: ...


class _SessionStep:
    def __init__(self, output: DataFrame, writer: BatchWriter) -> None:
        self.output = output
        self.writer = writer


def build_step(config: PipelineConfig, records: DataFrame) -> OperatorStep:
    """The configured operator over ``records`` (landing records and idle ticks, as ``raw``)."""
    if config.operator == "patterns":
        return patterns_step(config, records)
    result = sessionize(
        records,
        SessionParams.from_config(config.sessions, config.validation),
        fields=config.fields,
        validation=config.validation,
    )
    assert config.sinks.sessions is not None  # the config model guarantees it
    writer = SessionBatchWriter(
        ParquetBatchSink("sessions", config.sinks.sessions.path),
        ParquetBatchSink("dead_letters", config.sinks.dead_letters.path),
    )
    return _SessionStep(result.combined.observe(OBSERVATION, *observed_counts()), writer)


def stats_from_progress(config: PipelineConfig, progress: dict[str, Any]) -> AnyBatchStats | None:
    """The batch's counts, as the configured operator's step observed them."""
    if config.operator == "patterns":
        return PatternBatchStats.from_progress(progress)
    return BatchStats.from_progress(progress)


def watermark_delay(config: PipelineConfig) -> timedelta:
    """The operator's watermark delay: the watermark is the latest event time minus this."""
    if config.operator == "patterns" and config.patterns is not None:
        return config.patterns.max_out_of_orderness
    return config.sessions.max_out_of_orderness


def drain_horizon(config: PipelineConfig) -> timedelta:
    """How far past the latest event time every state of the operator has expired."""
    if config.operator == "patterns" and config.patterns is not None:
        p = config.patterns
        return p.within + p.max_out_of_orderness
    s = config.sessions
    return s.gap + s.allowed_lateness + s.max_out_of_orderness
