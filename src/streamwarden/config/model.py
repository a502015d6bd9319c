"""The pipeline configuration: frozen, typed, validated at load time; unknown keys are errors."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, model_validator

from streamwarden.config.units import format_duration, parse_duration, parse_memory, parse_size

__all__ = [
    "CheckpointConfig",
    "Duration",
    "FieldNames",
    "PipelineConfig",
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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldNames(_Strict):
    """Names of the pageview fields in the input records."""

    user_id: str = "user_id"
    ts: str = "ts"
    page_number: str = "page_number"
    url: str = "url"


class SourceConfig(_Strict):
    """A landing directory that producers drop JSON-lines or Parquet files into."""

    kind: Literal["files"] = "files"
    path: Path
    format: Literal["jsonl", "parquet"] = "jsonl"
    max_files_per_trigger: int | None = Field(default=None, ge=1)


class ValidationConfig(_Strict):
    """Checks run on every record before any state is touched (lesson L4)."""

    max_pages: int = Field(default=300, ge=1)
    max_record_bytes: Size = Field(default=64 * 1024, ge=16)
    max_user_id_length: int = Field(default=256, ge=1)
    max_future_skew: Duration | None = timedelta(hours=1)
    keep_payload: bool = False


class SessionsConfig(_Strict):
    """Parameters of the sessionization operator."""

    gap: Duration = timedelta(minutes=30)
    allowed_lateness: Duration = timedelta(0)
    max_out_of_orderness: Duration = timedelta(minutes=1)
    max_session_bytes: Size = Field(default=4 * 1000 * 1000, ge=1)
    collect_urls: bool = False
    idle_timeout: Duration | None = timedelta(minutes=5)
    slow_key_threshold: Duration | None = timedelta(seconds=1)

    @model_validator(mode="after")
    def _positive_times(self) -> SessionsConfig:
        if self.gap <= timedelta(0):
            raise ValueError(f"sessions.gap must be > 0, got {format_duration(self.gap)!r}")
        for name in ("allowed_lateness", "max_out_of_orderness"):
            if getattr(self, name) < timedelta(0):
                raise ValueError(f"sessions.{name} must be >= 0")
        if self.idle_timeout is not None and self.idle_timeout <= timedelta(0):
            raise ValueError("sessions.idle_timeout must be > 0, or omitted to disable it")
        return self


class SinkConfig(_Strict):
    """Where one output goes. Parquet directories are written exactly once per batch."""

    kind: Literal["parquet"] = "parquet"
    path: Path


class SinksConfig(_Strict):
    sessions: SinkConfig
    dead_letters: SinkConfig


class CheckpointConfig(_Strict):
    path: Path


class SparkConfig(_Strict):
    master: str = "local[2]"
    shuffle_partitions: int = Field(default=4, ge=1)
    trigger_interval: Duration = timedelta(seconds=5)
    conf: dict[str, str] = Field(default_factory=dict)


class ResourcesConfig(_Strict):
    """What the pipeline runs in; ``streamwarden doctor`` checks Spark's settings against it.

    ``container_memory`` is the memory limit of the container (or machine) of the process that
    runs the tasks: the driver in local mode, each executor otherwise. ``cores`` is the number
    of task slots overall; by default read from a ``local[N]`` master.
    """

    container_memory: Memory | None = Field(default=None, ge=1)
    cores: int | None = Field(default=None, ge=1)


class PipelineConfig(_Strict):
    """A whole sessions pipeline: source -> validation -> sessionize -> sinks, checkpointed."""

    name: str = "sessions"
    source: SourceConfig
    fields: FieldNames = FieldNames()
    validation: ValidationConfig = ValidationConfig()
    sessions: SessionsConfig = SessionsConfig()
    sinks: SinksConfig
    checkpoint: CheckpointConfig
    spark: SparkConfig = SparkConfig()
    resources: ResourcesConfig = ResourcesConfig()
