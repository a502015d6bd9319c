"""The SparkSession offline tools (``inspect``, ``rescale``, ``maintain``) run on: local, small,
quiet."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.spark.log_file import spark_logging_to

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["offline_spark"]


def offline_spark(
    tool: str, *, conf: Mapping[str, str] | None = None, jars: tuple[str, ...] = ()
) -> SparkSession:
    """A local session whose Spark log goes to a file (named in errors), not the terminal;
    ``conf`` and ``jars`` add what a pipeline's sinks need (Delta's)."""
    log_file = Path(tempfile.gettempdir()) / f"streamwarden-{tool}.log"
    return spark_logging_to(
        log_file,
        app_name=f"streamwarden-{tool}",
        master="local[2]",
        shuffle_partitions=2,
        conf={**(conf or {}), "spark.ui.enabled": "false"},
        jars=jars,
    )
