"""``run_query``: a query a Python user built (``sessionize``, ``detect``) run as a pipeline
runs its operator: the idle ticks among its events, the drain at the end of a finite input,
the exactly-once writer to the same sink kinds a config names, the run lock, the checkpoint's
ownership, the supervisor and the monitor (:class:`~.query_runner.QueryRunner`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from streamwarden.config.assembly import sink_settings
from streamwarden.config.model import (
    CheckpointConfig,
    MonitoringConfig,
    SparkConfig,
    SupervisorConfig,
)
from streamwarden.config.problems import describe
from streamwarden.errors import ConfigError, UsageError
from streamwarden.operators.base import OPERATORS, BatchStats, OperatorQuery, OperatorStep
from streamwarden.operators.settings import DEAD_LETTERS
from streamwarden.pipeline.idle import read_ticks
from streamwarden.pipeline.interrupt import StopRequest
from streamwarden.pipeline.ownership import check_query_ownership
from streamwarden.pipeline.query_runner import ProgressCallback, QueryRunner, ticks_dir
from streamwarden.pipeline.result import RunResult
from streamwarden.settings import defaults
from streamwarden.settings.context import RunContext
from streamwarden.settings.kafka import KafkaConfig
from streamwarden.spark.session import ROCKSDB_PROVIDER, STATE_DEFAULTS
from streamwarden.validation.settings import ValidationConfig

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pyspark.sql import SparkSession

    from streamwarden.monitoring.failures import QueryFailure
    from streamwarden.pipeline.quarantine import QuarantinedRecord

__all__ = ["QuerySettings", "run_query"]

_PROVIDER = "spark.sql.streaming.stateStore.providerClass"


@dataclass(frozen=True)
class QuerySettings:
    """The settings of a Python-built query's run, each section checked by the model a config
    file's is (:class:`~.query_runner.RunSettings`)."""

    name: str
    checkpoint: CheckpointConfig
    spark: SparkConfig
    monitoring: MonitoringConfig
    supervisor: SupervisorConfig
    validation: ValidationConfig
    context: RunContext


def run_query(
    query: OperatorQuery,
    *,
    checkpoint: str | Path,
    sinks: Mapping[str, Mapping[str, Any]],
    name: str = "query",
    once: bool = False,
    drain: bool = False,
    idle_timeout: timedelta | None = defaults.IDLE_TIMEOUT,
    trigger_interval: timedelta = timedelta(seconds=5),
    kafka: Mapping[str, Any] | None = None,
    validation: Mapping[str, Any] | None = None,
    monitoring: Mapping[str, Any] | None = None,
    supervisor: Mapping[str, Any] | None = None,
    supervise: bool = False,
    on_progress: ProgressCallback | None = None,
    on_failure: Callable[[QueryFailure], None] | None = None,
    stop: StopRequest | None = None,
    now_ms: Callable[[], int] | None = None,
) -> RunResult:
    """Runs ``query`` (what :func:`streamwarden.sessionize` or :func:`streamwarden.detect`
    returned) to its sinks, as ``streamwarden run`` runs a config's pipeline.

    ``sinks`` maps each output to its sink's settings, the keys of a config's
    ``[sinks.<output>]`` (``kind``: ``parquet``, the default, ``kafka`` or ``delta``, and that
    kind's settings): ``sessions`` and ``dead_letters`` for sessions; ``matches``,
    ``timeouts`` and ``dead_letters`` for patterns. Every batch is written to each sink exactly
    once, also across a crash and a restart from ``checkpoint`` (the query's own folder: its
    offsets, state, idle ticks and run lock). ``kafka``, ``validation``, ``monitoring`` and
    ``supervisor`` take the keys of the config's sections of the same names.

    With ``once``, the query runs over what its input holds and returns; with ``drain`` too,
    event time is then moved past every deadline, so that every session closes (every partial
    match expires) and no state is left: the end of a finite input. Without ``once``, it runs
    until SIGINT or SIGTERM (or ``stop``), and an input quiet for ``idle_timeout`` (of
    processing time; None: never) moves event time on, so that the last sessions still close.
    With ``supervise``, a failed query is restarted from its checkpoint as ``supervisor`` says.
    ``on_progress`` is told each batch (Spark's progress, and the operator's counts);
    ``now_ms`` is processing time (epoch milliseconds), the clock by default.

    The query's SparkSession (its events') must use the RocksDB state store that
    :func:`streamwarden.build_spark_session` sets up (``STATE_DEFAULTS`` in
    ``streamwarden.spark.session`` lists the settings for a session built otherwise).

    Example::

        result = sessionize(payments, key="account", time="at", gap=timedelta(minutes=20),
                            aggregates={"total": "sum(amount)"})
        run_query(result, checkpoint="ck/payments", once=True, drain=True,
                  sinks={"sessions": {"path": "out/sessions"},
                         "dead_letters": {"path": "out/dead_letters"}})
    """
    operator = getattr(query, "operator", None)
    if operator not in OPERATORS.names() or not callable(getattr(query, "step", None)):
        raise UsageError(
            "run_query(query, ...): give what streamwarden.sessionize or streamwarden.detect "
            f"returned, got a {type(query).__name__}"
        )
    if not isinstance(sinks, Mapping):
        raise UsageError(
            "run_query(..., sinks=...): give a dict of output name -> sink settings, such as "
            "{'sessions': {'path': 'out/sessions'}, 'dead_letters': {'path': 'out/dead'}}"
        )
    spark = _session_of(query)
    folder = Path(checkpoint)
    settings = QuerySettings(
        name=name,
        checkpoint=_section(CheckpointConfig, "checkpoint", {"path": str(folder)}),
        spark=_section(SparkConfig, "spark", {"trigger_interval": trigger_interval}),
        monitoring=_section(MonitoringConfig, "monitoring", monitoring),
        supervisor=_section(
            SupervisorConfig, "supervisor", {"bisect_after": 0, **(supervisor or {})}
        ),
        validation=_section(ValidationConfig, "validation", validation),
        context=RunContext(
            name=name,
            checkpoint=folder,
            kafka=None if kafka is None else _section(KafkaConfig, "kafka", kafka),
            spark_master=spark.sparkContext.master or "local[2]",
            shuffle_partitions=int(spark.conf.get("spark.sql.shuffle.partitions") or 4),
            outputs=_outputs(operator, sinks),
        ),
    )
    runner = _PythonQueryRunner(query, settings, spark, idle_timeout)
    return runner.run(
        now_ms=now_ms or (lambda: int(time.time() * 1000)),
        once=once,
        drain=drain,
        supervise=supervise,
        on_progress=on_progress,
        on_failure=on_failure,
        stop=stop,
    )


class _PythonQueryRunner(QueryRunner):
    """The run of a Python-built query: its events and the ticks through its operator."""

    def __init__(
        self,
        query: OperatorQuery,
        settings: QuerySettings,
        spark: SparkSession,
        idle_timeout: timedelta | None,
    ) -> None:
        super().__init__(settings, spark)
        self._query = query
        self._settings_ = settings
        self._idle_timeout = idle_timeout
        self._operator = OPERATORS[query.operator]

    def build_step(self, *, also_quarantined: Sequence[QuarantinedRecord] = ()) -> OperatorStep:
        ticks = read_ticks(self.spark, ticks_dir(self._settings_))
        return self._query.step(ticks, self._settings_.context)

    def idle_timeout(self) -> timedelta | None:
        return self._idle_timeout

    def watermark_delay(self) -> timedelta:
        return self._query.watermark_delay

    def drain_horizon(self) -> timedelta:
        return self._query.drain_horizon

    def stats_from_progress(self, progress: dict[str, Any]) -> BatchStats | None:
        return self._operator.stats_from_progress(progress)

    def check_ownership(self) -> None:
        identity = {"operator": self._query.operator, **self._query.state_identity()}
        settings = self._settings_
        check_query_ownership(settings.checkpoint.path, settings.context, identity)


def _session_of(query: OperatorQuery) -> SparkSession:
    """The query's SparkSession, refused without the RocksDB state store its operator needs."""
    combined = getattr(query, "combined", None)
    spark: SparkSession = combined.sparkSession  # type: ignore[union-attr]
    provider = spark.conf.get(_PROVIDER) or ""
    if provider != ROCKSDB_PROVIDER:
        raise UsageError(
            f"the SparkSession's state store is {provider or 'the default (HDFS)'}; "
            "streamwarden's operators need RocksDB: build the session with "
            "streamwarden.build_spark_session(), or set "
            + ", ".join(f"{k}={v}" for k, v in STATE_DEFAULTS.items())
            + " before the session starts"
        )
    return spark


def _outputs(operator: str, sinks: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The sinks' settings, checked against the operator's outputs as a config's are."""
    model = OPERATORS[operator].settings_model
    mine = {*model.all_outputs(), DEAD_LETTERS}
    for output in (*model.outputs, DEAD_LETTERS):
        if output not in sinks:
            raise ConfigError(
                f"run_query(..., sinks=...): a {operator} query needs a sink for {output!r}, "
                f"such as {{{output!r}: {{'path': 'out/{output}'}}}}"
            )
    for output in sinks:
        if output not in mine:
            raise ConfigError(
                f"run_query(..., sinks=...): {output!r} is not an output of a {operator} "
                f"query (its outputs: {', '.join(sorted(mine))}); remove it or check its "
                "spelling"
            )
    return sink_settings(sinks)


def _section(model: type[Any], label: str, values: Mapping[str, Any] | None) -> Any:
    """``values`` checked by ``model``, the model of the config's ``[label]``."""
    assert issubclass(model, BaseModel)
    try:
        return model.model_validate(dict(values or {}))
    except ValidationError as exc:
        problems = [describe(e, {label: dict(values or {})}, (label,)) for e in exc.errors()]
        raise ConfigError("; ".join(problems)) from None
