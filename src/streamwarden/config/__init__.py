"""Pipeline configuration: the shell assembled from the parts' own settings, and its loader."""

from streamwarden.config.loader import load_config, parse_config
from streamwarden.config.model import (
    CheckpointConfig,
    MonitoringConfig,
    PipelineConfig,
    ResourcesConfig,
    SparkConfig,
    SupervisorConfig,
    ValidationConfig,
)

__all__ = [
    "CheckpointConfig",
    "MonitoringConfig",
    "PipelineConfig",
    "ResourcesConfig",
    "SparkConfig",
    "SupervisorConfig",
    "ValidationConfig",
    "load_config",
    "parse_config",
]
