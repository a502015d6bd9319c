"""Pipeline configuration: typed models and the loader."""

from streamwarden.config.loader import load_config, parse_config
from streamwarden.config.model import (
    CheckpointConfig,
    FieldNames,
    MonitoringConfig,
    PipelineConfig,
    ResourcesConfig,
    SessionsConfig,
    SinkConfig,
    SinksConfig,
    SourceConfig,
    SparkConfig,
    SupervisorConfig,
    ValidationConfig,
)

__all__ = [
    "CheckpointConfig",
    "FieldNames",
    "MonitoringConfig",
    "PipelineConfig",
    "ResourcesConfig",
    "SessionsConfig",
    "SinkConfig",
    "SinksConfig",
    "SourceConfig",
    "SparkConfig",
    "SupervisorConfig",
    "ValidationConfig",
    "load_config",
    "parse_config",
]
