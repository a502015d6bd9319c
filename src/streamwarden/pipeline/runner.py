"""Runs a pipeline from its config: once over what is there, or continuously."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.checkpoint import failure_advice
from streamwarden.errors import PatternMissError, PipelineError, SourceRecordsLostError
from streamwarden.monitoring.failures import QueryFailure
from streamwarden.operators.base import BatchStats, OperatorStep
from streamwarden.pipeline.idle import read_records
from streamwarden.pipeline.ownership import check_ownership
from streamwarden.pipeline.quarantine import PoisonList, QuarantinedRecord, mark_quarantined
from streamwarden.pipeline.query_runner import QueryRunner, ticks_dir
from streamwarden.pipeline.result import RunResult
from streamwarden.plan import PipelinePlan
from streamwarden.spark.jvm import java_message

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["Pipeline", "RunResult", "ticks_dir"]

#: The engine's exception for a ``throw_on_miss`` skip that found no event of its stage.
SKIP_MISS = "SkipMissException"


class Pipeline(QueryRunner):
    """A configured pipeline: its source and the idle ticks through its operator to its sinks.

    Given a config, it makes the config's plan (:class:`~streamwarden.plan.PipelinePlan`); a
    caller that has one already (``run``, which checked its connections) passes it. ``spark``
    may be given, e.g. by tests sharing a session; else the plan's session is started when the
    run holds the checkpoint's lock, its logs going to ``log_file`` if given. How a run goes is
    :meth:`~streamwarden.pipeline.query_runner.QueryRunner.run`'s."""

    def __init__(
        self,
        config: PipelineConfig | PipelinePlan,
        spark: SparkSession | None = None,
        *,
        log_file: Path | None = None,
    ) -> None:
        #: What the pipeline is made of, worked out once.
        self.plan = config if isinstance(config, PipelinePlan) else PipelinePlan.of(config)
        self.config = self.plan.config
        #: The configured operator: its step, stats, watermark delay and drain horizon.
        self.operator = self.plan.operator
        self._log_file = log_file
        #: Batches bisected in this run (each once).
        self._bisected: set[int] = set()
        super().__init__(self.config, spark)

    def spark_session(self) -> SparkSession:
        return self.plan.spark_session(self._log_file)

    def idle_timeout(self) -> timedelta | None:
        return self.operator.idle_timeout(self.config)

    def watermark_delay(self) -> timedelta:
        return self.operator.watermark_delay(self.config)

    def drain_horizon(self) -> timedelta:
        return self.operator.drain_horizon(self.config)

    def stats_from_progress(self, progress: dict[str, Any]) -> BatchStats | None:
        return self.operator.stats_from_progress(progress)

    def ticks_source_index(self) -> int:
        several = self.config.several
        return 1 if several is None else len(several.named)

    def check_ownership(self) -> None:
        check_ownership(self.config)

    def before_query(self, result: RunResult) -> None:
        self.plan.source.before_start(self.config.source, self.config.context)
        self._sweep(result)

    def between_polls(self, result: RunResult) -> None:
        self._sweep(result)

    def after_batch(self) -> None:
        self.plan.source.after_batch(self.config.source, self.config.context)

    def account(self, progress: dict[str, Any]) -> dict[str, Any]:
        return self.plan.source.account(self.config.source, self.config.context, progress)

    def failure_error(self, cause: str) -> type[PipelineError]:
        """Not restarted when the source explains the failure (records gone from it) or when a
        pattern's ``throw_on_miss`` asked for the stop; a restart would repeat either."""
        if self.plan.source.advice(self.config.source, cause) is not None:
            return SourceRecordsLostError
        if SKIP_MISS in cause:
            return PatternMissError
        return PipelineError

    def failure_advice(self, cause: str) -> str:
        return failure_advice(self.config, cause)

    def _sweep(self, result: RunResult) -> None:
        """Moves aside input Spark cannot read exactly once, before Spark lists it."""
        for line in self.plan.source.sweep(self.config.source, self.config.context):
            result.set_aside.append(line)
            self.warn(line)

    def build_step(self, *, also_quarantined: Sequence[QuarantinedRecord] = ()) -> OperatorStep:
        """The operator's step over the source's records and the ticks; the records the
        checkpoint's poison list holds (and ``also_quarantined``, for a bisection trial) are
        ``poison`` dead letters."""
        cfg = self.config
        listed = PoisonList(cfg.checkpoint.path).records() + list(also_quarantined)
        raw = mark_quarantined(read_records(self.spark, cfg, ticks_dir(cfg)), listed)
        return self.operator.build_step(cfg, raw)

    def stream_frame(self) -> DataFrame:
        """The query's output before the sinks: the source's records and the ticks through the
        operator."""
        return self.build_step().output

    def bisect_if_stuck(self, failures: list[QueryFailure]) -> None:
        """After the same batch failed the same way ``bisect_after`` times in a row, finds the
        records it fails on and lists them as poison, so that the restart goes on without them
        (:mod:`streamwarden.pipeline.bisect`). A batch is bisected once per run."""
        from streamwarden.pipeline.trial import BatchTrial

        n = self.config.supervisor.bisect_after
        last = failures[-1]
        if n == 0 or last.batch is None or len(failures) < n or last.batch in self._bisected:
            return
        if not all(f.same_as(last) for f in failures[-n:]):
            return
        self._bisected.add(last.batch)
        trial = BatchTrial(self, last.batch, f"{last.error_class}: {last.message}")
        try:
            found = trial.culprits()
        except Exception as exc:  # bisection is a help: without it, restarts go on as before
            self.warn(f"batch {last.batch} could not be bisected: {java_message(exc)}")
            return
        if found is None:
            self.warn(
                f"batch {last.batch} failed {n} times the same way; bisection ({trial.trials} "
                "trials) found no record it fails on: the failure is not one of its records'"
            )
            return
        PoisonList(self.config.checkpoint.path).add(found)
        self.warn(
            f"batch {last.batch} failed {n} times the same way; bisection ({trial.trials} "
            f"trials) found {len(found)} record(s) it fails on, set aside as poison dead letters"
        )
