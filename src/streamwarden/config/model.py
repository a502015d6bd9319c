"""The pipeline configuration: a shell assembled from the registries of parts, frozen, typed,
validated at load time; unknown keys are errors.

Each part owns its settings: the operator (``[<operator>]``, its model in its own package), the
source kind (``[source]``), each output's sink kind (``[sinks.<output>]``) and the history store
kind (``[history]``) are validated by the model their name selects
(:mod:`streamwarden.config.assembly`); the shell holds them beside the pipeline-wide sections
(checkpoint, Spark, monitoring, supervisor, resources), checks that they fit together, and gives
each part its settings and a :class:`~streamwarden.settings.context.RunContext`."""

from __future__ import annotations

from datetime import timedelta
from functools import cached_property
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field, SerializeAsAny, model_validator

from streamwarden.errors import ConfigError
from streamwarden.history.base import HISTORY_KINDS
from streamwarden.operators.base import OPERATORS
from streamwarden.operators.settings import DEAD_LETTERS, OperatorSettings
from streamwarden.schema.model import Schema
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext
from streamwarden.settings.kafka import KafkaConfig
from streamwarden.settings.paths import overlapping_folders
from streamwarden.settings.removed import refuse_removed
from streamwarden.settings.spark_settings import check_conf, check_master
from streamwarden.settings.types import (
    ConfigFolder,
    Duration,
    OptionalDuration,
    Size,
    Strict,
    folders_of,
)
from streamwarden.settings.units import off_or, parse_memory
from streamwarden.sources.base import SeveralSources
from streamwarden.spark.permissions import PRIVATE_UMASK, parse_umask
from streamwarden.validation.settings import ValidationConfig

__all__ = [
    "CheckpointConfig",
    "KafkaConfig",
    "MonitoringConfig",
    "PipelineConfig",
    "ResourcesConfig",
    "Schema",
    "SparkConfig",
    "SupervisorConfig",
    "ValidationConfig",
]


def _container_memory(value: object) -> int | None:
    """Like a memory setting, but a unit is required: a bare 4096 is bytes to Kubernetes and
    MiB to Spark, so nobody can tell which was meant."""
    if value is None:
        return None
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        raise ValueError(f"container_memory needs a unit, such as '4g' or '4096m', got {value!r}")
    return parse_memory(value)


def _spark_conf_values(value: object) -> object:
    """Spark reads every setting as text; numbers and booleans are written as Spark would."""
    if not isinstance(value, dict):
        return value
    for key, setting in value.items():
        if isinstance(setting, dict):  # TOML read the unquoted dots of a key as tables
            raise ValueError(
                f"[spark.conf] key {key!r} holds a table: quote the whole setting name, e.g. "
                '"spark.sql.shuffle.partitions" = 4'
            )
    return {
        k: ("true" if v else "false")
        if isinstance(v, bool)
        else str(v)
        if isinstance(v, int | float)
        else v
        for k, v in value.items()
    }


class CheckpointConfig(Strict):
    """Where the query's checkpoint lives: offsets, commits and the state store. Keep it with
    the outputs: a run resumes from it, and ``inspect`` and ``rescale`` read it."""

    path: ConfigFolder


class SparkConfig(Strict):
    """Where and how Spark runs. ``master`` and the ``conf`` values streamwarden reads itself
    are checked at load (:mod:`streamwarden.settings.spark_settings`).

    ``shared_storage`` declares that every folder of the config (checkpoint, landing, sinks)
    is on a POSIX mount that the driver and every executor see at the same path: what a
    cluster master needs, since executors write state and outputs there (``doctor`` refuses a
    cluster master without it; docs/cluster.md)."""

    master: Annotated[str, AfterValidator(check_master)] = "local[2]"
    shared_storage: bool = False
    shuffle_partitions: int = Field(default=4, ge=1)
    trigger_interval: Duration = timedelta(seconds=5)
    conf: Annotated[
        dict[str, str], BeforeValidator(_spark_conf_values), AfterValidator(check_conf)
    ] = Field(default_factory=dict)


class MonitoringConfig(Strict):
    """What the running pipeline reports about itself (lessons L9, L11, L13, L14, L15).

    The progress log is rotated at ``progress_log_max_size``, keeping ``progress_log_keep``
    older files, so that it stays bounded however long the pipeline runs.
    ``prometheus_port``: 0 picks a free port (printed at start and written to the status file),
    ``"off"`` turns the endpoint off; ``slow_batch_threshold = "off"`` turns off the slow-batch
    log. The leak alarm looks at the last ``alarm_window`` batches that had input; see
    ``streamwarden.monitoring.leak_alarm`` for the rule.
    """

    enabled: bool = True
    progress_log: bool = True
    progress_log_max_size: Size = Field(default=64 * 1024 * 1024, ge=4096)
    progress_log_keep: int = Field(default=4, ge=0)
    prometheus_host: str = "127.0.0.1"
    prometheus_port: Annotated[int | None, BeforeValidator(off_or(lambda v: v))] = Field(
        default=0, ge=0, le=65535
    )
    alarm_window: int = Field(default=8, ge=4)
    state_growth_threshold: float = Field(default=0.2, gt=0)
    input_steady_tolerance: float = Field(default=0.25, gt=0)
    skew_factor: float = Field(default=2.0, gt=1)
    skew_min_rows: int = Field(default=100, ge=0)
    slow_batch_threshold: OptionalDuration = timedelta(seconds=30)
    slow_log_interval: Duration = timedelta(minutes=1)


class SupervisorConfig(Strict):
    """How ``streamwarden run`` restarts a failed query from its checkpoint (lesson L16).

    After a failure it waits ``initial_backoff``, doubled after each further failure up to
    ``max_backoff``, less a random part of up to ``jitter`` of it (so that pipelines failing
    together do not restart together); a completed batch resets the wait. It gives up, with a
    report of the failures and exit code 1, when a failure would be restart number
    ``max_restarts + 1`` within ``window``. Errors that a restart cannot fix (config, a
    checkpoint of another pipeline, a query that cannot start) are never restarted.
    ``max_restarts = 0`` (or ``enabled = false``) stops at the first failure.

    A batch that fails the same way ``bisect_after`` times in a row is bisected: tried again in
    side runs that commit nothing, without parts of its records, to find those it fails on;
    they become ``poison`` dead letters and the pipeline goes on (``0``: never bisect).
    """

    enabled: bool = True
    max_restarts: int = Field(default=5, ge=0)
    window: Duration = timedelta(minutes=30)
    initial_backoff: Duration = timedelta(seconds=2)
    max_backoff: Duration = timedelta(minutes=2)
    jitter: float = Field(default=0.25, ge=0, le=1)
    bisect_after: int = Field(default=3, ge=0)
    #: How long a continuous run that finds a connection down at start (a Kafka cluster, the
    #: history database) waits for it, checking again after ``initial_backoff`` doubled up to
    #: ``max_backoff``, one log line per attempt, before it fails; ``"off"``: fail at once.
    #: ``--once`` never waits.
    wait_for_connections: OptionalDuration = timedelta(minutes=10)

    @model_validator(mode="after")
    def _backoffs_in_order(self) -> SupervisorConfig:
        if self.initial_backoff > self.max_backoff:
            raise ValueError(
                f"initial_backoff {self.initial_backoff} is over max_backoff {self.max_backoff}"
            )
        return self


class ResourcesConfig(Strict):
    """What the pipeline runs in; ``streamwarden doctor`` checks Spark's settings against it.

    ``container_memory`` is the memory limit of the container (or machine) of the process that
    runs the tasks: the driver in local mode, each executor otherwise. ``cores`` is the number
    of task slots overall; by default read from a ``local[N]`` master.
    """

    container_memory: Annotated[int | None, BeforeValidator(_container_memory)] = Field(
        default=None, ge=1
    )
    cores: int | None = Field(default=None, ge=1)


def _umask(text: str) -> str:
    parse_umask(text)
    return text


_REMOVED = {
    "fields": "declare your records in [schema]: key (the field that keys all state), time "
    "(the event time), fields (Spark DDL, e.g. 'user_id STRING, ts BIGINT, url STRING'); see "
    "examples/pageviews.toml",
}


class PipelineConfig(Strict):
    """A whole pipeline: source -> validation -> operator -> sinks, checkpointed. ``schema``
    declares the records (:class:`~streamwarden.schema.Schema`); ``operator`` names a
    registered operator (``sessions``, the default, or ``patterns``), whose section
    ``[<operator>]`` is :attr:`section`; ``sinks`` holds one section per output the operator
    declares, ``dead_letters`` among them."""

    name: str = "sessions"
    operator: Annotated[str, AfterValidator(OPERATORS.check)] = "sessions"
    #: The ``[<operator>]`` section, validated by the operator's own model.
    section: SerializeAsAny[OperatorSettings]
    #: ``[source]``, or the ``[sources.<name>]`` of a pipeline reading several
    #: (:class:`~streamwarden.sources.base.SeveralSources`).
    source: SerializeAsAny[KindSettings]
    kafka: KafkaConfig | None = None
    schema_: Schema | None = Field(default=None, alias="schema")
    #: The schema of each of several sources, ``[schemas.<name>]`` (empty with one source).
    schemas: dict[str, Schema] = Field(default_factory=dict)
    validation: ValidationConfig = ValidationConfig()
    sinks: dict[str, SerializeAsAny[KindSettings]]
    checkpoint: CheckpointConfig
    spark: SparkConfig = SparkConfig()
    monitoring: MonitoringConfig = MonitoringConfig()
    supervisor: SupervisorConfig = SupervisorConfig()
    resources: ResourcesConfig = ResourcesConfig()
    history: SerializeAsAny[KindSettings] | None = None
    #: The umask of every file the pipeline writes (outputs, checkpoint, progress log, status,
    #: logs, reports): "077" (the default) leaves them to their owner; "027" lets the group read.
    file_umask: Annotated[str, AfterValidator(_umask)] = PRIVATE_UMASK

    @model_validator(mode="before")
    @classmethod
    def _removed(cls, data: object) -> object:
        refuse_removed(data, _REMOVED, "")
        if isinstance(data, dict) and "schema" not in data and "schemas" not in data:
            raise ValueError(
                "a pipeline needs a [schema] section declaring its records: key (the field "
                "that keys all state), time (the event time) and fields (Spark DDL, e.g. "
                "'account STRING, at TIMESTAMP, amount DOUBLE'); see examples/payments.toml"
            )
        return refuse_removed(data, _REMOVED, "")

    @property
    def schema(self) -> Schema:  # type: ignore[override]
        """The records' schema, ``[schema]``."""
        if self.schema_ is None:
            raise ConfigError(
                f"this pipeline reads several sources, each with its own [schemas.<name>] "
                f"({', '.join(self.schemas)}): what asked for the one [schema] of a pipeline "
                "does not work on it yet"
            )
        return self.schema_

    @property
    def several(self) -> SeveralSources | None:
        """The sources of a pipeline that reads several, or None."""
        return self.source if isinstance(self.source, SeveralSources) else None

    @model_validator(mode="after")
    def _parts_fit_together(self) -> PipelineConfig:
        self._outputs_fit_the_operator()
        self._schemas_fit_the_sources()
        sources = (
            {"source": self.source}
            if self.several is None
            else {f"sources.{name}": own for name, own in self.several.named.items()}
        )
        needed = {
            (f"[{where}] kind = {own.kind!r}", need)
            for where, own in sources.items()
            for need in own.connections
        } | {
            (f"[sinks.{name}] kind = {sink.kind!r}", need)
            for name, sink in self.sinks.items()
            for need in sink.connections
        }
        for who, need in sorted(needed):
            if getattr(self, need) is None:
                raise ValueError(f"{who} needs a [{need}] section")
        self._folders_apart()
        history_lateness = getattr(self.section, "history_lateness", None)
        if history_lateness is not None and self.history is None:
            raise ValueError(
                "sessions.history_lateness needs a [history] section naming the store that "
                "keeps closed sessions (kind = 'delta', the default: the Delta sessions table; "
                "or kind = 'postgres' with host, database, user)"
            )
        if self.history is not None:
            HISTORY_KINDS[self.history.kind].check_outputs(self.history, self.sinks)
        return self

    def _outputs_fit_the_operator(self) -> None:
        """Every output the operator needs has its sink, and every sink is an output of it."""
        operator, section = self.operator, type(self.section)
        for name in (*section.outputs, DEAD_LETTERS):
            if name not in self.sinks:
                raise ValueError(f"operator {operator!r} needs [sinks.{name}] with a path")
        mine = {*section.all_outputs(), DEAD_LETTERS}
        for name in self.sinks:
            if name in mine:
                continue
            for other, theirs in OPERATORS.items():
                if name in theirs.settings_model.all_outputs():
                    raise ValueError(f"sinks.{name} is for operator = {other!r}; remove it")
            raise ValueError(
                f"sinks.{name} is not an output of operator {operator!r} (its outputs: "
                f"{', '.join(sorted(mine))}); remove it or check its spelling"
            )
        self.section.check_sinks(list(self.sinks))

    def _schemas_fit_the_sources(self) -> None:
        """One source with ``[schema]``, or several with one ``[schemas.<name>]`` each, as the
        operator reads them."""
        operator, several = self.operator, self.several
        wants_several = type(self.section).several_sources
        if several is None:
            if wants_several:
                raise ValueError(
                    f"operator {operator!r} reads several sources: give each as "
                    "[sources.<name>] with its schema in [schemas.<name>], not [source]"
                )
            if self.schemas:
                raise ValueError("[schemas.<name>] go with [sources.<name>]; give [schema]")
            if self.schema_ is None:
                raise ValueError("a pipeline with one [source] needs a [schema] section")
            return
        if not wants_several:
            raise ValueError(
                f"operator {operator!r} reads one source: give [source] and [schema], not "
                "[sources.<name>]"
            )
        if self.schema_ is not None:
            raise ValueError(
                "a pipeline with [sources.<name>] declares each one's records in "
                "[schemas.<name>]; remove [schema]"
            )
        missing = [n for n in several.named if n not in self.schemas]
        if missing:
            raise ValueError(
                f"[sources.{missing[0]}] needs its records declared in [schemas.{missing[0]}] "
                "(key, time, fields)"
            )
        extra = [n for n in self.schemas if n not in several.named]
        if extra:
            raise ValueError(
                f"[schemas.{extra[0]}] names no source; the sources: {', '.join(several.named)}"
            )

    def _folders_apart(self) -> None:
        """The landing folder, the checkpoint (with the progress folder beside it) and every
        sink folder are apart (:mod:`streamwarden.settings.paths`)."""
        folders = {"checkpoint.path": self.checkpoint.path}
        several = self.several
        if several is None:
            folders |= folders_of(self.source, "source")
        else:
            for name, own in several.named.items():
                folders |= folders_of(own, f"sources.{name}")
        for name, sink in self.sinks.items():
            folders |= folders_of(sink, f"sinks.{name}")
        problems = overlapping_folders(folders)
        if problems:
            raise ValueError("; ".join(problems))

    @cached_property
    def context(self) -> RunContext:
        """What each part gets of the run besides its own settings."""
        return RunContext(
            name=self.name,
            checkpoint=self.checkpoint.path,
            kafka=self.kafka,
            spark_master=self.spark.master,
            shuffle_partitions=self.spark.shuffle_partitions,
            outputs=dict(self.sinks),
        )
