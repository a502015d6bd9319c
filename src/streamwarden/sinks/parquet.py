"""Parquet directory sink (``kind = "parquet"``, the default), exactly once per micro-batch.

Each batch is written to a staging folder (ignored by readers because of its leading
underscore) and renamed to ``batch_id=NNNNNNNNNN`` in one atomic step. A replayed batch whose
folder already exists is skipped, so a crash at any point leaves each batch once or not at all.
The rename is atomic on local and POSIX file systems, not on object stores (S3 and the like):
there, write to a local or HDFS path, or use the Delta sink (``kind = "delta"``).
"""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext
from streamwarden.settings.types import ConfigFolder
from streamwarden.sinks.base import SINK_KINDS, STANDALONE, OutputShape

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "ParquetBatchSink",
    "ParquetSinkSettings",
    "batch_dir_name",
    "parquet_folder",
    "read_output",
]

_STAGING = "_staging"
_BATCH_DIR = re.compile(r"^batch_id=(\d+)$")


def batch_dir_name(batch_id: int) -> str:
    return f"batch_id={batch_id:010d}"


def read_output(spark: SparkSession, path: Path) -> DataFrame | None:
    """All batches a parquet sink wrote, or None if it wrote none yet."""
    if not any(path.glob("batch_id=*")):
        return None
    return spark.read.parquet(str(path))


class ParquetSinkSettings(KindSettings):
    """``[sinks.<output>] kind = "parquet"`` (the default): a folder of batches."""

    kind: Literal["parquet"] = "parquet"
    #: The folder the output's batches are written to.
    path: ConfigFolder


class ParquetBatchSink:
    """Writes each micro-batch's rows to ``path/batch_id=N`` exactly once."""

    settings_model = ParquetSinkSettings

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path

    @staticmethod
    def check(name: str, settings: KindSettings, context: RunContext) -> None:
        """Nothing to check before a run: the folder is made by the first batch."""

    @staticmethod
    def jars(settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        return ()

    @staticmethod
    def spark_conf(settings: KindSettings, context: RunContext) -> Mapping[str, str]:
        return {}

    @staticmethod
    def where(settings: KindSettings) -> str:
        return str(_own(settings).path)

    @classmethod
    def open(
        cls,
        name: str,
        settings: KindSettings,
        context: RunContext,
        shape: OutputShape = STANDALONE,
    ) -> ParquetBatchSink:
        """Every row is kept as written: the shape does not matter to a folder of batches."""
        return cls(name, _own(settings).path)

    def write_batch(self, rows: DataFrame, batch_id: int) -> bool:
        final = self.path / batch_dir_name(batch_id)
        if final.exists():
            return False  # written before a crash; the replayed batch holds the same rows
        staging = self.path / _STAGING / f"{batch_id}-{uuid.uuid4().hex}"
        rows.write.mode("error").parquet(str(staging))
        if _row_count(staging) == 0:
            shutil.rmtree(staging)  # no folder for a batch that wrote nothing
        else:
            final.parent.mkdir(parents=True, exist_ok=True)
            staging.rename(final)
        shutil.rmtree(self.path / _STAGING, ignore_errors=True)
        return True

    def written_batches(self) -> list[int]:
        if not self.path.is_dir():
            return []
        return [int(m.group(1)) for f in self.path.iterdir() if (m := _BATCH_DIR.match(f.name))]

    def read(self, spark: SparkSession) -> DataFrame | None:
        return read_output(spark, self.path)


def _own(settings: KindSettings) -> ParquetSinkSettings:
    assert isinstance(settings, ParquetSinkSettings)  # the registry chose this kind by it
    return settings


def parquet_folder(settings: KindSettings) -> Path:
    """The folder of a parquet sink's settings (an AssertionError for another kind)."""
    return _own(settings).path


def _row_count(folder: Path) -> int:
    """Rows in a written parquet folder, from the files' footers (no Spark job)."""
    import pyarrow.parquet as pq  # here: naming a batch folder must not load pyarrow

    return sum(pq.ParquetFile(f).metadata.num_rows for f in folder.glob("*.parquet"))


SINK_KINDS.register("parquet", ParquetBatchSink)
