"""The source contract, and the registry of source kinds that ``[source] kind`` selects.

A source reads its records as a streaming DataFrame of one ``raw`` string column (one row per
input record, the original record kept for dead letters); the pipeline adds the idle ticks
beside it (``pipeline.idle``), whatever the source, so that event time moves when the input
is quiet (lesson L2). A source kind is one module beside this one, registered at its end with
``SOURCE_KINDS.register`` (and imported by ``streamwarden.sources``). The config checks
``kind`` against the registry when it is loaded. This module imports neither pyspark nor the
config at run time, so that the config (one layer up) can use the registry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from streamwarden.registry import Registry

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from streamwarden.config.model import SourceConfig

__all__ = ["SOURCE_KINDS", "Source", "source_of"]


class Source(Protocol):
    """One kind of source."""

    #: What a run would do if the source's identity changed under a checkpoint.
    change_effect: str

    def read(self, spark: SparkSession, config: SourceConfig) -> DataFrame:
        """A streaming DataFrame with one ``raw`` string column, one row per input record;
        raises :class:`~streamwarden.errors.SourceError` if the source cannot be read."""
        ...

    def identity(self, config: SourceConfig) -> dict[str, str]:
        """What the checkpoint's offsets depend on (where the source reads, and how): a
        checkpoint that has read one identity is refused under another
        (``pipeline.ownership``), since its offsets would mean other records there."""
        ...

    def describe(self, identity: dict[str, str]) -> str:
        """An identity as a run's messages show it, e.g. ``'/data/landing' (jsonl)``."""
        ...


#: The source kinds, by the name ``[source] kind`` gives.
SOURCE_KINDS: Registry[Source] = Registry("source kind", "kinds")


def source_of(config: SourceConfig) -> Source:
    """The source ``[source]`` configures."""
    return SOURCE_KINDS[config.kind]
