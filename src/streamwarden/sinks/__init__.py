"""Sinks: where an operator's outputs and dead letters go, each written exactly once per batch.

``base`` holds the contract and the registry of kinds; each kind is a module beside it that
registers itself, imported here so that the registry is complete whenever ``sinks`` is.
"""

from streamwarden.sinks.base import SINK_KINDS, BatchSink, OutputShape, open_sink
from streamwarden.sinks.delta import DeltaBatchSink
from streamwarden.sinks.kafka import KafkaBatchSink
from streamwarden.sinks.parquet import ParquetBatchSink

__all__ = [
    "SINK_KINDS",
    "BatchSink",
    "DeltaBatchSink",
    "KafkaBatchSink",
    "OutputShape",
    "ParquetBatchSink",
    "open_sink",
]
