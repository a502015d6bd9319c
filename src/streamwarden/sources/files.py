"""A landing directory of JSON-lines or Parquet files, read as a Spark file stream.

Every row becomes one ``raw`` JSON string, so that JSON and Parquet input share one validation
path and dead letters always carry the original record.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from streamwarden.config.model import SourceConfig
from streamwarden.errors import SourceError
from streamwarden.spark.jvm import java_message
from streamwarden.validation import TICK_SOURCE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = ["read_landing", "read_landing_and_ticks", "read_ticks"]


def read_landing(spark: SparkSession, source: SourceConfig) -> DataFrame:
    """A streaming DataFrame with one ``raw`` string column, one row per input record."""
    if not source.path.is_dir():
        raise SourceError(
            f"landing directory {str(source.path)!r} does not exist; create it or fix "
            "source.path in the config"
        )
    reader = spark.readStream
    if source.max_files_per_trigger is not None:
        reader = reader.option("maxFilesPerTrigger", source.max_files_per_trigger)
    if source.format == "jsonl":
        return reader.text(str(source.path)).select(F.col("value").alias("raw"))
    schema = _parquet_schema(spark, source.path)
    frame = reader.schema(schema).parquet(str(source.path))
    return frame.select(F.to_json(F.struct(*[F.col(c) for c in frame.columns])).alias("raw"))


def read_ticks(spark: SparkSession, ticks_dir: Path) -> DataFrame:
    """The control records the idle ticker writes (see ``pipeline.idle``), marked by a true
    ``TICK_SOURCE`` column: validation takes only these rows as ticks."""
    ticks_dir.mkdir(parents=True, exist_ok=True)
    return spark.readStream.text(str(ticks_dir)).select(
        F.col("value").alias("raw"), F.lit(True).alias(TICK_SOURCE)
    )


def read_landing_and_ticks(spark: SparkSession, source: SourceConfig, ticks_dir: Path) -> DataFrame:
    """A pipeline's input: landing records and idle ticks as ``raw``, each row marked by the
    boolean ``TICK_SOURCE`` column with the source it came from."""
    landing = read_landing(spark, source).withColumn(TICK_SOURCE, F.lit(False))
    return landing.unionByName(read_ticks(spark, ticks_dir))


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
