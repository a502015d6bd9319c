"""The SparkSession offline tools (``inspect``, ``rescale``) run on: local, small, quiet."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.cli.main import log_to_file
from streamwarden.spark.logs import file_logging_conf
from streamwarden.spark.session import build_spark_session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["offline_spark"]


def offline_spark(tool: str) -> SparkSession:
    """A local session whose Spark log goes to a file (named in errors), not the terminal."""
    log_file = Path(tempfile.gettempdir()) / f"streamwarden-{tool}.log"
    log_to_file(log_file)
    return build_spark_session(
        app_name=f"streamwarden-{tool}",
        master="local[2]",
        shuffle_partitions=2,
        extra_conf={**file_logging_conf(log_file), "spark.ui.enabled": "false"},
        jvm_output=log_file,
    )
