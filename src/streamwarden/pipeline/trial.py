"""A side run of a failed batch, for bisection: the batch again, with some records set aside,
on a copy of the checkpoint; it commits nothing and writes no sink.

The copy holds the offsets, the source logs and the state of the real checkpoint, so Spark
replays exactly the failed batch from exactly the state the real run has. Its writer computes
the operator's whole output (where the failures bisection is for happen: the stateful step and
everything before the sinks) into Spark's discarding sink, then stops the batch before Spark can
commit it, so the copy's sources clean nothing up (the idle ticks are deleted only on commit).
A failure inside a sink itself is not seen by a trial: bisection then finds no record, and the
supervisor goes on restarting until its budget runs out, as before.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from streamwarden.pipeline.bisect import find_culprits
from streamwarden.pipeline.quarantine import QuarantinedRecord, record_digest
from streamwarden.sources.base import source_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from streamwarden.config.model import PipelineConfig
    from streamwarden.operators.base import OperatorStep

__all__ = ["BatchTrial"]


class _TrialOver(Exception):
    """Raised by the trial's writer once the batch went through, so that it is never committed."""


class _TrialWriter:
    def __init__(self, batch: int) -> None:
        self.batch = batch
        self.passed: bool | None = None

    def __call__(self, combined: DataFrame, batch_id: int) -> None:
        if batch_id == self.batch:
            self.passed = False
            combined.write.format("noop").mode("overwrite").save()
            self.passed = True
        raise _TrialOver(f"trial of batch {self.batch} over")


class TrialHost(Protocol):
    """What a trial needs of the pipeline whose batch it tries (the runner's ``Pipeline``)."""

    @property
    def config(self) -> PipelineConfig: ...

    @property
    def spark(self) -> SparkSession: ...

    def build_step(self, *, also_quarantined: Sequence[QuarantinedRecord] = ()) -> OperatorStep:
        """The pipeline's step, with ``also_quarantined`` set aside as poison."""
        ...


class BatchTrial:
    """Trials of the failed ``batch`` of ``pipeline``, whose failure was ``cause``."""

    def __init__(self, pipeline: TrialHost, batch: int, cause: str) -> None:
        self.pipeline = pipeline
        self.batch = batch
        self.cause = cause
        #: How many side runs the search took.
        self.trials = 0

    def culprits(self) -> list[QuarantinedRecord] | None:
        """The records to set aside (see :func:`~streamwarden.pipeline.bisect.find_culprits`)."""
        found = find_culprits(self.digests(), self.passes)
        if found is None:
            return None
        return [QuarantinedRecord(d, self.batch, self.cause) for d in sorted(found)]

    def digests(self) -> list[str]:
        """The distinct records of the batch, by the SHA-256 of their bytes."""
        from pyspark.sql import functions as F

        config = self.pipeline.config
        frame = source_of(config.source).batch_input(
            self.pipeline.spark, config.source, config.context, self.batch
        )
        rows = frame.select(record_digest(F.col("raw")).alias("d")).distinct().collect()
        return sorted(str(r["d"]) for r in rows)

    def passes(self, set_aside: frozenset[str]) -> bool:
        """Whether the batch gets through with the records ``set_aside``."""
        from pyspark.errors import StreamingQueryException

        self.trials += 1
        aside = [QuarantinedRecord(d, self.batch, "trial") for d in sorted(set_aside)]
        writer = _TrialWriter(self.batch)
        with tempfile.TemporaryDirectory(prefix="streamwarden-trial-") as tmp:
            copy = Path(tmp) / "checkpoint"
            real = self.pipeline.config.checkpoint.path
            shutil.copytree(real, copy, ignore=shutil.ignore_patterns("streamwarden"))
            step = self.pipeline.build_step(also_quarantined=aside)
            query = (
                step.output.writeStream.foreachBatch(writer)
                .option("checkpointLocation", str(copy))
                .trigger(availableNow=True)
                .start()
            )
            try:
                query.awaitTermination()
            except StreamingQueryException:
                pass  # the writer's _TrialOver, or the failure tried
            finally:
                query.stop()
        return writer.passed is True
