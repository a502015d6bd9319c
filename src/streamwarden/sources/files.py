"""A landing directory of JSON-lines or Parquet files, read as a Spark file stream
(``[source] kind = "files"``, the default).

Every row becomes one ``raw`` JSON string, so that JSON and Parquet input share one validation
path and dead letters always carry the original record.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.errors import SourceError
from streamwarden.sources.base import SOURCE_KINDS
from streamwarden.spark.jvm import java_message

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from streamwarden.config.model import PipelineConfig, SourceConfig

__all__ = ["FilesSource", "read_landing"]


class FilesSource:
    """Files that producers drop into ``path``: Spark tracks the files it has read per path,
    so the checkpoint depends on the path and the format."""

    change_effect = (
        "Spark tracks the files it read per path, so every file of the new one would be read again"
    )
    settings = frozenset({"path", "format", "max_files_per_trigger"})
    sections = frozenset[str]()

    def check_config(self, config: SourceConfig) -> None:
        if config.path is None:
            raise ValueError("a files source needs a path (the landing folder)")

    def check(self, config: PipelineConfig) -> None:
        path = _landing(config.source)
        if not path.is_dir():
            state = "is a file, not a folder" if path.exists() else "does not exist"
            raise SourceError(
                f"landing directory {str(path)!r} {state}; create it or fix source.path in the "
                "config"
            )

    def jars(self, config: PipelineConfig) -> tuple[str, ...]:
        return ()

    def read(self, spark: SparkSession, config: PipelineConfig) -> DataFrame:
        return read_landing(spark, config.source)

    def where(self, config: SourceConfig) -> str:
        return str(_landing(config))

    def advice(self, config: SourceConfig, cause: str) -> str | None:
        landing = str(_landing(config).resolve())
        if "FileNotFoundException" in cause and landing in cause:
            return (
                "a landing file was deleted or moved after the run listed it for a batch (the "
                "checkpoint plans that batch with it): put it back under the same name and run "
                "again; streamwarden does not skip it, as its records would be lost unaccounted"
            )
        return None

    def identity(self, config: SourceConfig) -> dict[str, str]:
        return {"path": str(_landing(config).resolve()), "format": config.format}

    def describe(self, identity: dict[str, str]) -> str:
        return f"{identity.get('path')!r} ({identity.get('format')})"


def _landing(config: SourceConfig) -> Path:
    assert config.path is not None  # check_config
    return config.path


def read_landing(spark: SparkSession, source: SourceConfig) -> DataFrame:
    """A streaming DataFrame with one ``raw`` string column, one row per input record."""
    from pyspark.sql import functions as F

    path = _landing(source)
    if not path.is_dir():
        raise SourceError(
            f"landing directory {str(path)!r} does not exist; create it or fix "
            "source.path in the config"
        )
    reader = spark.readStream
    if source.max_files_per_trigger is not None:
        reader = reader.option("maxFilesPerTrigger", source.max_files_per_trigger)
    if source.format == "jsonl":
        return reader.text(str(path)).select(F.col("value").alias("raw"))
    schema = _parquet_schema(spark, path)
    frame = reader.schema(schema).parquet(str(path))
    return frame.select(F.to_json(F.struct(*[F.col(c) for c in frame.columns])).alias("raw"))


def _parquet_schema(spark: SparkSession, path: Path) -> StructType:
    files = sorted(path.glob("*.parquet"))
    if not files:
        raise SourceError(
            f"landing directory {str(path)!r} holds no .parquet file yet, and a Parquet stream "
            "needs one to learn the schema; drop a first file there or use format = 'jsonl'"
        )
    try:
        return spark.read.parquet(str(files[0])).schema
    except Exception as exc:
        raise SourceError(
            f"cannot read the schema of {str(files[0])!r}, the first Parquet file of the landing "
            f"directory: {java_message(exc)}; replace or remove that file (a Parquet source "
            "must hold Parquet files only)"
        ) from None


SOURCE_KINDS.register("files", FilesSource())
