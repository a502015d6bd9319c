"""The pipeline configuration: frozen, typed, validated at load time; unknown keys are errors.

The operator sections are in ``config.sections`` and the shared value types in
``config.types``; both are re-exported here, where a config's whole shape is read."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field, model_validator

from streamwarden.config import defaults
from streamwarden.config.history import HistoryConfig
from streamwarden.config.kafka import KafkaConfig, refuse_literal_secrets
from streamwarden.config.paths import overlapping_folders
from streamwarden.config.sections import (
    OPERATOR_SECTIONS,
    AggregateConfig,
    OperatorSection,
    PatternsConfig,
    PatternStageConfig,
    PreviousConfig,
    SessionsConfig,
)
from streamwarden.config.spark_settings import check_conf, check_master
from streamwarden.config.types import ConfigPath, Duration, OptionalDuration, Size, Strict
from streamwarden.config.units import off_or, parse_memory
from streamwarden.history.base import HISTORY_KINDS
from streamwarden.sinks.base import SINK_KINDS, sink_kind
from streamwarden.sources.base import SOURCE_KINDS, source_of
from streamwarden.spark.permissions import PRIVATE_UMASK, parse_umask

__all__ = [
    "OPERATOR_SECTIONS",
    "AggregateConfig",
    "CheckpointConfig",
    "Duration",
    "FieldNames",
    "HistoryConfig",
    "KafkaConfig",
    "MonitoringConfig",
    "OperatorSection",
    "PatternStageConfig",
    "PatternsConfig",
    "PipelineConfig",
    "PreviousConfig",
    "ResourcesConfig",
    "SessionsConfig",
    "SinkConfig",
    "SinksConfig",
    "SourceConfig",
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


class FieldNames(Strict):
    """Names of the pageview fields in the input records."""

    user_id: str = "user_id"
    ts: str = "ts"
    page_number: str = "page_number"
    url: str = "url"


def _only_settings_of_the_kind(
    section: str, kind: str, given: set[str], settings: frozenset[str]
) -> None:
    """A setting another kind reads would be silently ignored: refuse it, naming it."""
    for name in sorted(given - settings - {"kind"}):
        raise ValueError(f"{section}.{name} is not a setting of kind {kind!r}; remove it")


class SourceConfig(Strict):
    """Where the records come from: ``kind`` names a registered source (``streamwarden.sources``);
    ``files`` (the default) is a landing directory that producers drop JSON-lines or Parquet
    files into; ``kafka`` reads topics of the cluster in ``[kafka]``. Each kind reads only its
    own settings (``Source.settings``); giving another kind's is an error."""

    kind: Annotated[str, AfterValidator(SOURCE_KINDS.check)] = "files"
    # files
    path: ConfigPath | None = None
    format: Literal["jsonl", "parquet"] = "jsonl"
    #: Which files of the landing folder are input, as a glob on the name (``{a,b}`` for
    #: either); default ``{*.jsonl,*.jsonl.gz}`` for jsonl, ``*.parquet`` for Parquet. Other
    #: files are left alone; names starting with ``.`` or ``_`` are never read.
    files: str | None = Field(default=None, min_length=1)
    max_files_per_trigger: int | None = Field(default=None, ge=1)
    # kafka
    topics: list[str] | None = Field(default=None, min_length=1)
    topic_pattern: str | None = None
    starting_offsets: str = "earliest"
    max_offsets_per_trigger: int | None = Field(default=None, ge=1)
    event_time: Literal["field", "kafka_timestamp"] = "field"
    fail_on_data_loss: bool = True
    options: Annotated[
        dict[str, str], AfterValidator(lambda v: refuse_literal_secrets(v, "source.options"))
    ] = Field(default_factory=dict)

    @property
    def folder(self) -> Path:
        """The landing folder of a ``files`` source (a ValueError for another kind)."""
        if self.path is None:
            raise ValueError(f"a {self.kind} source has no landing folder")
        return self.path

    @model_validator(mode="after")
    def _fits_the_kind(self) -> SourceConfig:
        source = source_of(self)
        _only_settings_of_the_kind("source", self.kind, self.model_fields_set, source.settings)
        source.check_config(self)
        return self


class ValidationConfig(Strict):
    """Checks run on every record before any state is touched (lesson L4)."""

    max_pages: int = Field(default=defaults.MAX_PAGES, ge=1)
    max_record_bytes: Size = Field(default=64 * 1024, ge=16)
    max_user_id_length: int = Field(default=256, ge=1)
    max_future_skew: OptionalDuration = timedelta(hours=1)


class SinkConfig(Strict):
    """Where one output goes: ``kind`` names a registered sink (``streamwarden.sinks``);
    ``parquet`` (the default) directories are written exactly once per batch; ``kafka`` writes
    a topic of the cluster in ``[kafka]``, one transaction per batch; ``delta`` a Delta Lake
    table (at ``path``, or the metastore's ``table``), one commit per batch. Each kind reads
    only its own settings."""

    kind: Annotated[str, AfterValidator(SINK_KINDS.check)] = "parquet"
    # parquet, delta
    path: ConfigPath | None = None
    # kafka
    topic: str | None = Field(default=None, min_length=1)
    transactional_id: str | None = Field(default=None, min_length=1)
    # delta
    table: str | None = Field(default=None, min_length=1)
    #: ``latest``: one row per key (a session's latest revision, by MERGE); ``all``: every row
    #: appended (every revision). Outputs whose rows are not revisions are always appended.
    keep: Literal["latest", "all"] = "latest"
    #: ``date``: partitioned by the date of the output's time column; ``off``: not partitioned.
    partition_by: Literal["date", "off"] = "date"

    @property
    def folder(self) -> Path:
        """The folder of a ``parquet`` sink (a ValueError for another kind)."""
        if self.path is None:
            raise ValueError(f"a {self.kind} sink has no folder")
        return self.path

    @model_validator(mode="after")
    def _fits_the_kind(self) -> SinkConfig:
        kind = sink_kind(self)
        _only_settings_of_the_kind("sink", self.kind, self.model_fields_set, kind.settings)
        kind.check_config(self)
        return self


class SinksConfig(Strict):
    """The outputs: ``sessions`` for the sessions operator; ``matches`` (and optionally
    ``timeouts``) for the patterns operator; ``dead_letters`` for both."""

    sessions: SinkConfig | None = None
    matches: SinkConfig | None = None
    timeouts: SinkConfig | None = None
    dead_letters: SinkConfig

    def configured(self) -> dict[str, SinkConfig]:
        """The sinks this config writes, by name."""
        named = {
            "sessions": self.sessions,
            "matches": self.matches,
            "timeouts": self.timeouts,
            "dead_letters": self.dead_letters,
        }
        return {name: sink for name, sink in named.items() if sink is not None}


class CheckpointConfig(Strict):
    """Where the query's checkpoint lives: offsets, commits and the state store. Keep it with
    the outputs: a run resumes from it, and ``inspect`` and ``rescale`` read it."""

    path: ConfigPath


class SparkConfig(Strict):
    """Where and how Spark runs. ``master`` and the ``conf`` values streamwarden reads itself
    are checked at load (:mod:`streamwarden.config.spark_settings`).

    ``shared_storage`` declares that every folder of the config (checkpoint, landing, sinks)
    is on a POSIX mount that the driver and every executor see at the same path: what a
    cluster master needs, since executors write state and outputs there (``doctor`` refuses a
    cluster master without it; README "Running on a cluster")."""

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


class PipelineConfig(Strict):
    """A whole pipeline: source -> validation -> operator -> sinks, checkpointed. The operator
    is ``sessions`` (the default) or ``patterns`` (which needs a ``[patterns]`` section); each
    operator's section is the field of its name, registered in :data:`OPERATOR_SECTIONS`."""

    name: str = "sessions"
    operator: Annotated[str, AfterValidator(OPERATOR_SECTIONS.check)] = "sessions"
    source: SourceConfig
    kafka: KafkaConfig | None = None
    fields: FieldNames = FieldNames()
    validation: ValidationConfig = ValidationConfig()
    sessions: SessionsConfig = SessionsConfig()
    patterns: PatternsConfig | None = None
    sinks: SinksConfig
    checkpoint: CheckpointConfig
    spark: SparkConfig = SparkConfig()
    monitoring: MonitoringConfig = MonitoringConfig()
    supervisor: SupervisorConfig = SupervisorConfig()
    resources: ResourcesConfig = ResourcesConfig()
    history: HistoryConfig | None = None
    #: The umask of every file the pipeline writes (outputs, checkpoint, progress log, status,
    #: logs, reports): "077" (the default) leaves them to their owner; "027" lets the group read.
    file_umask: Annotated[str, AfterValidator(_umask)] = PRIVATE_UMASK

    @model_validator(mode="after")
    def _sections_and_sinks_fit_the_operator(self) -> PipelineConfig:
        operator = self.operator
        section = self.operator_section
        if section is None:
            needs = OPERATOR_SECTIONS[operator].needs
            raise ValueError(f"operator {operator!r} needs a [{operator}] section with {needs}")
        configured = self.sinks.configured()
        for name in section.outputs:
            if name not in configured:
                raise ValueError(f"operator {operator!r} needs [sinks.{name}] with a path")
        others = [name for name in OPERATOR_SECTIONS.names() if name != operator]
        for other in others:
            for name in OPERATOR_SECTIONS[other].all_outputs():
                if name in configured:
                    raise ValueError(f"sinks.{name} is for operator = {other!r}; remove it")
        for other in others:
            # a section with defaults is always there; one without is given for its operator
            if type(self).model_fields[other].default is None and getattr(self, other):
                raise ValueError(f"[{other}] needs operator = {other!r} at the top level")
        section.check_sinks(configured)
        needed = {
            (f"[source] kind = {self.source.kind!r}", need)
            for need in source_of(self.source).sections
        } | {
            (f"[sinks.{name}] kind = {sink.kind!r}", need)
            for name, sink in configured.items()
            for need in sink_kind(sink).sections
        }
        for who, need in sorted(needed):
            if getattr(self, need) is None:
                raise ValueError(f"{who} needs a [{need}] section")
        self._folders_apart()
        if self.sessions.history_lateness is not None and self.history is None:
            raise ValueError(
                "sessions.history_lateness needs a [history] section naming the store that "
                "keeps closed sessions (kind = 'delta', the default: the Delta sessions table; "
                "or kind = 'postgres' with host, database, user)"
            )
        if self.history is not None:
            HISTORY_KINDS[self.history.kind].check_pipeline(self)
        return self

    def _folders_apart(self) -> None:
        """The landing folder, the checkpoint (with the progress folder beside it) and every
        sink folder are apart (:mod:`streamwarden.config.paths`)."""
        folders = {"checkpoint.path": self.checkpoint.path}
        if self.source.path is not None:
            folders["source.path"] = self.source.path
        for name, sink in self.sinks.configured().items():
            if sink.path is not None:
                folders[f"sinks.{name}.path"] = sink.path
        problems = overlapping_folders(folders)
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def operator_section(self) -> OperatorSection | None:
        """The section of the configured operator (None if a section it needs is missing)."""
        section = getattr(self, self.operator, None)
        assert section is None or isinstance(section, OperatorSection)
        return section
