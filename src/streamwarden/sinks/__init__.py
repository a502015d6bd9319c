"""Sinks: where sessions and dead letters go, each written exactly once per batch."""

from streamwarden.sinks.base import BatchSink
from streamwarden.sinks.parquet import ParquetBatchSink

__all__ = ["BatchSink", "ParquetBatchSink"]
