"""The pipeline configuration: frozen, typed, validated at load time; unknown keys are errors."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    model_validator,
)

from streamwarden.config import defaults
from streamwarden.config.spark_settings import check_conf, check_master
from streamwarden.config.units import (
    OFF,
    format_duration,
    off_or,
    parse_duration,
    parse_memory,
    parse_size,
)

__all__ = [
    "CheckpointConfig",
    "Duration",
    "FieldNames",
    "MonitoringConfig",
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
    "ValidationConfig",
]

Duration = Annotated[
    timedelta, BeforeValidator(parse_duration), PlainSerializer(format_duration, return_type=str)
]
Size = Annotated[int, BeforeValidator(parse_size)]
Memory = Annotated[int, BeforeValidator(parse_memory)]
#: A duration that ``"off"`` (or YAML's null) turns off.
OptionalDuration = Annotated[
    timedelta | None,
    BeforeValidator(off_or(parse_duration)),
    PlainSerializer(lambda v: OFF if v is None else format_duration(v), return_type=str),
]
#: A file system path; given as text in a config file.
ConfigPath = Annotated[Path, Field(strict=False)]


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


class _Strict(BaseModel):
    # strict: "yes" is not a boolean, nor "4" a number; paths, durations and sizes are parsed.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class FieldNames(_Strict):
    """Names of the pageview fields in the input records."""

    user_id: str = "user_id"
    ts: str = "ts"
    page_number: str = "page_number"
    url: str = "url"


class SourceConfig(_Strict):
    """A landing directory that producers drop JSON-lines or Parquet files into."""

    kind: Literal["files"] = "files"
    path: ConfigPath
    format: Literal["jsonl", "parquet"] = "jsonl"
    max_files_per_trigger: int | None = Field(default=None, ge=1)


class ValidationConfig(_Strict):
    """Checks run on every record before any state is touched (lesson L4)."""

    max_pages: int = Field(default=defaults.MAX_PAGES, ge=1)
    max_record_bytes: Size = Field(default=64 * 1024, ge=16)
    max_user_id_length: int = Field(default=256, ge=1)
    max_future_skew: OptionalDuration = timedelta(hours=1)


class SessionsConfig(_Strict):
    """Parameters of the sessionization operator."""

    gap: Duration = defaults.GAP
    allowed_lateness: Duration = defaults.ALLOWED_LATENESS
    max_out_of_orderness: Duration = defaults.MAX_OUT_OF_ORDERNESS
    max_session_bytes: Size = Field(default=defaults.MAX_SESSION_BYTES, ge=1)
    collect_urls: bool = False
    idle_timeout: OptionalDuration = defaults.IDLE_TIMEOUT
    slow_key_threshold: OptionalDuration = defaults.SLOW_KEY_THRESHOLD

    @model_validator(mode="after")
    def _positive_times(self) -> SessionsConfig:
        if self.gap <= timedelta(0):
            raise ValueError(f"sessions.gap must be > 0, got {format_duration(self.gap)!r}")
        if self.idle_timeout is not None and self.idle_timeout <= timedelta(0):
            raise ValueError("sessions.idle_timeout must be > 0, or 'off' to turn it off")
        return self


class PreviousConfig(_Strict):
    """A condition on an earlier stage's event: this event's ``field`` ``op`` that one's."""

    field: str
    op: Literal["==", "!=", "<", "<=", ">", ">="]
    stage: str


Contiguity = Literal[
    "begin", "next", "followed_by", "followed_by_any", "not_next", "not_followed_by"
]


class PatternStageConfig(_Strict):
    """One stage of a pattern. ``where`` is a Spark SQL boolean expression over the validated
    event columns (``user_id``, ``event_time``, ``ts_ms``, ``page_number``, ``url``, ``size``,
    ``raw``); it is compiled when the pipeline starts. Quantifiers: ``times`` (with
    ``times_max`` for a range), ``one_or_more``, ``optional``, ``greedy``, ``consecutive``."""

    name: str
    contiguity: Contiguity = "followed_by"
    where: str
    times: int | None = Field(default=None, ge=1)
    times_max: int | None = Field(default=None, ge=1)
    one_or_more: bool = False
    optional: bool = False
    greedy: bool = False
    consecutive: bool = False
    previous: list[PreviousConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_quantifier(self) -> PatternStageConfig:
        if self.times_max is not None and self.times is None:
            raise ValueError(f"stage {self.name!r}: times_max needs times (the minimum)")
        if self.one_or_more and self.times is not None:
            raise ValueError(f"stage {self.name!r}: use either times or one_or_more, not both")
        return self


SkipStrategy = Literal[
    "no_skip", "skip_to_next", "skip_past_last_event", "skip_to_first", "skip_to_last"
]


class PatternsConfig(_Strict):
    """A keyed pattern over the validated events (operator ``patterns``). ``key`` is a
    validated column (default ``user_id``); ``fields`` are carried into each matched event of
    the output. Every partial match is dropped at its first event + ``within`` (lesson L3)."""

    key: str = "user_id"
    fields: list[str] = Field(default_factory=lambda: ["url"])
    within: Duration
    skip: SkipStrategy = "no_skip"
    skip_stage: str | None = None
    max_out_of_orderness: Duration = defaults.MAX_OUT_OF_ORDERNESS
    max_partials_per_key: int = Field(default=defaults.MAX_PARTIALS_PER_KEY, ge=1)
    max_buffered_per_key: int = Field(default=defaults.MAX_BUFFERED_PER_KEY, ge=1)
    emit_timeouts: bool = False
    idle_timeout: OptionalDuration = defaults.IDLE_TIMEOUT
    slow_key_threshold: OptionalDuration = defaults.SLOW_KEY_THRESHOLD
    stages: list[PatternStageConfig] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> PatternsConfig:
        if self.within <= timedelta(0):
            raise ValueError(f"patterns.within must be > 0, got {format_duration(self.within)!r}")
        if self.idle_timeout is not None and self.idle_timeout <= timedelta(0):
            raise ValueError("patterns.idle_timeout must be > 0, or 'off' to turn it off")
        if self.stages[0].contiguity != "begin":
            raise ValueError(
                f"the first stage {self.stages[0].name!r} must have contiguity = 'begin'"
            )
        for stage in self.stages[1:]:
            if stage.contiguity == "begin":
                raise ValueError(
                    f"stage {stage.name!r}: only the first stage may be 'begin'; use next, "
                    "followed_by, followed_by_any, not_next or not_followed_by"
                )
        names = [s.name for s in self.stages]
        needs_stage = self.skip in ("skip_to_first", "skip_to_last")
        if needs_stage and self.skip_stage not in names:
            raise ValueError(
                f"patterns.skip = {self.skip!r} needs skip_stage naming a stage "
                f"({', '.join(names)}), got {self.skip_stage!r}"
            )
        if not needs_stage and self.skip_stage is not None:
            raise ValueError("patterns.skip_stage only goes with skip_to_first or skip_to_last")
        return self


class SinkConfig(_Strict):
    """Where one output goes. Parquet directories are written exactly once per batch."""

    kind: Literal["parquet"] = "parquet"
    path: ConfigPath


class SinksConfig(_Strict):
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


class CheckpointConfig(_Strict):
    """Where the query's checkpoint lives: offsets, commits and the state store. Keep it with
    the outputs: a run resumes from it, and ``inspect`` and ``rescale`` read it."""

    path: ConfigPath


class SparkConfig(_Strict):
    """Where and how Spark runs. ``master`` and the ``conf`` values streamwarden reads itself
    are checked at load (:mod:`streamwarden.config.spark_settings`)."""

    master: Annotated[str, AfterValidator(check_master)] = "local[2]"
    shuffle_partitions: int = Field(default=4, ge=1)
    trigger_interval: Duration = timedelta(seconds=5)
    conf: Annotated[
        dict[str, str], BeforeValidator(_spark_conf_values), AfterValidator(check_conf)
    ] = Field(default_factory=dict)


class MonitoringConfig(_Strict):
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


class ResourcesConfig(_Strict):
    """What the pipeline runs in; ``streamwarden doctor`` checks Spark's settings against it.

    ``container_memory`` is the memory limit of the container (or machine) of the process that
    runs the tasks: the driver in local mode, each executor otherwise. ``cores`` is the number
    of task slots overall; by default read from a ``local[N]`` master.
    """

    container_memory: Annotated[int | None, BeforeValidator(_container_memory)] = Field(
        default=None, ge=1
    )
    cores: int | None = Field(default=None, ge=1)


class PipelineConfig(_Strict):
    """A whole pipeline: source -> validation -> operator -> sinks, checkpointed. The operator
    is ``sessions`` (the default) or ``patterns`` (which needs a ``[patterns]`` section)."""

    name: str = "sessions"
    operator: Literal["sessions", "patterns"] = "sessions"
    source: SourceConfig
    fields: FieldNames = FieldNames()
    validation: ValidationConfig = ValidationConfig()
    sessions: SessionsConfig = SessionsConfig()
    patterns: PatternsConfig | None = None
    sinks: SinksConfig
    checkpoint: CheckpointConfig
    spark: SparkConfig = SparkConfig()
    monitoring: MonitoringConfig = MonitoringConfig()
    resources: ResourcesConfig = ResourcesConfig()

    @model_validator(mode="after")
    def _sinks_fit_the_operator(self) -> PipelineConfig:
        sinks = self.sinks
        if self.operator == "sessions":
            if sinks.sessions is None:
                raise ValueError("operator 'sessions' needs [sinks.sessions] with a path")
            for name in ("matches", "timeouts"):
                if getattr(sinks, name) is not None:
                    raise ValueError(f"sinks.{name} is for operator = 'patterns'; remove it")
            if self.patterns is not None:
                raise ValueError("[patterns] needs operator = 'patterns' at the top level")
            return self
        if self.patterns is None:
            raise ValueError("operator 'patterns' needs a [patterns] section with its stages")
        if sinks.matches is None:
            raise ValueError("operator 'patterns' needs [sinks.matches] with a path")
        if sinks.sessions is not None:
            raise ValueError("sinks.sessions is for operator = 'sessions'; remove it")
        if self.patterns.emit_timeouts != (sinks.timeouts is not None):
            raise ValueError(
                "patterns.emit_timeouts = true and [sinks.timeouts] go together: set both "
                "to write timed-out partial matches, or neither"
            )
        return self

    @property
    def idle_timeout(self) -> timedelta | None:
        """The operator's idle timeout: how long quiet input waits before event time moves."""
        if self.operator == "patterns" and self.patterns is not None:
            return self.patterns.idle_timeout
        return self.sessions.idle_timeout
