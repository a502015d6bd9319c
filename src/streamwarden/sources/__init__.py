"""Sources: what a pipeline reads its records from (``base`` holds the contract and the
registry of kinds; each kind is a module beside it, imported here so that it registers), and
the traffic generator that writes landing files for demos and tests."""

from streamwarden.sources.base import SOURCE_KINDS, Source, source_of
from streamwarden.sources.files import FilesSource
from streamwarden.sources.kafka import KafkaSource
from streamwarden.sources.several import Several

__all__ = ["SOURCE_KINDS", "FilesSource", "KafkaSource", "Several", "Source", "source_of"]
