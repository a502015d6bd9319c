"""What a part gets of a run besides its own settings: the pipeline's name and identity, its
checkpoint, the shared connections (``[kafka]``), Spark's master and shuffle partitions, and the
settings of every configured output. Nothing else of the config reaches a source, sink or history
store kind."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from streamwarden.errors import ConfigError
from streamwarden.settings.base import KindSettings
from streamwarden.settings.kafka import KafkaConfig

__all__ = ["RunContext", "pipeline_id"]


def pipeline_id(name: str, checkpoint: Path, *parts: str) -> str:
    """An identity of the pipeline that stays the same across its runs: its name and its
    checkpoint's path (one pipeline per checkpoint), so that two pipelines never share one;
    ``parts`` (an output's name) between them name one of its writers. Transactional sinks
    record it with each batch they commit."""
    where = hashlib.sha256(str(checkpoint.resolve()).encode()).hexdigest()[:12]
    return ".".join(("streamwarden", name, *parts, where))


@dataclass(frozen=True)
class RunContext:
    """The run a part belongs to (see the module's description)."""

    #: The pipeline's ``name``.
    name: str
    #: The pipeline's checkpoint folder.
    checkpoint: Path
    #: The ``[kafka]`` connection, if the config has one.
    kafka: KafkaConfig | None = None
    spark_master: str = "local[2]"
    shuffle_partitions: int = 4
    #: Every configured output's sink settings, by output name (``dead_letters`` among them).
    outputs: Mapping[str, KindSettings] = field(default_factory=dict)
    #: Which of the query's sources a source is, in the order the pipeline reads them (its
    #: offsets are the checkpoint's ``sources/<index>``): 0 but for the second and later
    #: ``[sources.<name>]`` of a pipeline with several.
    source_index: int = 0

    @property
    def source_log(self) -> Path:
        """The checkpoint's own log of the source at :attr:`source_index`."""
        return self.checkpoint / "sources" / str(self.source_index)

    @property
    def pipeline_id(self) -> str:
        """The pipeline's identity across runs (:func:`pipeline_id`)."""
        return pipeline_id(self.name, self.checkpoint)

    def require_kafka(self, who: str) -> KafkaConfig:
        """The ``[kafka]`` connection, which the config has checked ``who`` has."""
        if self.kafka is None:  # the config refuses a kind without its connection
            raise ConfigError(f"{who} needs a [kafka] section")
        return self.kafka
