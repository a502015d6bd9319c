"""A landing directory of JSON-lines or Parquet files, read as a Spark file stream
(``[source] kind = "files"``, the default).

Every row becomes one ``raw`` JSON string, so that JSON and Parquet input share one validation
path and dead letters always carry the original record.
"""

from __future__ import annotations

from functools import reduce
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from streamwarden.errors import LandingMissingError, SourceError, SourceRecordsLostError
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext
from streamwarden.settings.types import ConfigFolder
from streamwarden.sources.base import SOURCE_KINDS
from streamwarden.sources.file_log import (
    MAX_FILE_AGE,
    files_of_batch,
    gone_planned_files,
    prune_file_log,
    prune_once_per_compact,
)
from streamwarden.sources.landing_gate import LandingGate
from streamwarden.sources.landing_guard import LandingGuard, expand_pattern, parquet_schema_of
from streamwarden.spark.jvm import java_message

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

__all__ = [
    "DEFAULT_PATTERNS",
    "FilesSource",
    "FilesSourceSettings",
    "landing_folder",
    "landing_pattern",
    "newest_landing_files",
    "parquet_row_raw",
    "read_landing",
]

#: What to do about a landing file deleted after a batch was planned with it.
_GONE_ADVICE = (
    "a landing file was deleted or moved after the run listed it for a batch (the "
    "checkpoint plans that batch with it): put it back under the same name and run "
    "again; streamwarden does not skip it, as its records would be lost unaccounted"
)
#: Which files of the landing folder are input when ``[source] files`` is not set.
DEFAULT_PATTERNS = {"jsonl": "{*.jsonl,*.jsonl.gz}", "parquet": "*.parquet"}


class FilesSourceSettings(KindSettings):
    """``[source] kind = "files"`` (the default): a landing folder that producers drop
    JSON-lines or Parquet files into."""

    kind: Literal["files"] = "files"
    #: The landing folder.
    path: ConfigFolder | None = None
    format: Literal["jsonl", "parquet"] = "jsonl"
    #: Which files of the landing folder are input, as a glob on the name (``{a,b}`` for
    #: either); default ``{*.jsonl,*.jsonl.gz}`` for jsonl, ``*.parquet`` for Parquet. Other
    #: files are left alone; names starting with ``.`` or ``_`` are never read.
    files: str | None = Field(default=None, min_length=1)
    max_files_per_trigger: int | None = Field(default=None, ge=1)

    @property
    def folder(self) -> Path:
        """The landing folder."""
        assert self.path is not None  # checked at load
        return self.path

    @model_validator(mode="after")
    def _fits(self) -> FilesSourceSettings:
        if self.path is None:
            raise ValueError("a files source needs a path (the landing folder)")
        if any(ch in str(self.path) for ch in "*?[]{}"):
            raise ValueError(
                f"source.path {str(self.path)!r} has a glob character, which Spark would "
                "expand; rename the folder (use source.files to choose files)"
            )
        for alternative in expand_pattern(landing_pattern(self)):
            if not alternative or "/" in alternative or any(c in alternative for c in "{},"):
                raise ValueError(
                    f"source.files {landing_pattern(self)!r} must be one glob on file names, "
                    "or {a,b,...} of several, e.g. '*.jsonl' or '{*.jsonl,*.jsonl.gz}'"
                )
        return self


class FilesSource:
    """Files that producers drop into ``path``: Spark tracks the files it has read per path,
    so the checkpoint depends on the path and the format."""

    change_effect = (
        "Spark tracks the files it read per path, so every file of the new one would be read again"
    )
    settings_model = FilesSourceSettings

    def __init__(self) -> None:
        self._guards: dict[tuple[str, str], LandingGuard] = {}
        #: The compact file of each checkpoint's file log last pruned.
        self._pruned: dict[Path, Path | None] = {}

    def check(self, settings: KindSettings, context: RunContext) -> None:
        _check_folder(landing_folder(settings))

    def before_start(self, settings: KindSettings, context: RunContext) -> None:
        """Refuses a replay that would miss a deleted landing file (only a starting query
        replays a planned batch, so this is not done on every poll), and prunes Spark's log of
        the files read (:mod:`~streamwarden.sources.file_log`)."""
        gone = gone_planned_files(context.checkpoint, context.source_log)
        if gone:
            batch, path = gone[0]
            raise SourceRecordsLostError(
                f"landing file {path!r} is gone: batch {batch} is planned with it; {_GONE_ADVICE}"
            )
        self._prune_log(context, force=True)

    def after_batch(self, settings: KindSettings, context: RunContext) -> None:
        self._prune_log(context)

    def account(
        self, settings: KindSettings, context: RunContext, progress: dict[str, Any]
    ) -> dict[str, Any]:
        return progress

    def _prune_log(self, context: RunContext, *, force: bool = False) -> None:
        """Prunes Spark's log of the files read, once per compact file Spark writes, or at once
        with ``force``."""
        log = context.source_log
        self._pruned[log] = prune_once_per_compact(
            log,
            context.checkpoint,
            prune_file_log,
            unless_pruned=None if force else self._pruned.get(log),
        )

    def sweep(self, settings: KindSettings, context: RunContext) -> list[str]:
        return [
            f"landing file {bad.name!r} moved to {bad.moved_to!r}: {bad.detail} "
            f"({bad.records if bad.records is not None else 'unknown'} records, bad_file)"
            for bad in self._guard(_own(settings)).sweep()
        ]

    def _guard(self, source: FilesSourceSettings) -> LandingGuard:
        """The landing guard of ``source``'s folder and file pattern, made on first use."""
        key = (str(landing_folder(source)), landing_pattern(source))
        guard = self._guards.get(key)
        if guard is None:
            schema = None
            if source.format == "parquet":
                schema = parquet_schema_of(landing_folder(source), landing_pattern(source))
            guard = self._guards[key] = LandingGuard(landing_folder(source), key[1], schema)
        return guard

    def jars(self, settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        return ()

    def read(self, spark: SparkSession, settings: KindSettings, context: RunContext) -> DataFrame:
        """The landing stream, behind the landing guard's gate: Spark lists only the files the
        guard has passed (:class:`~streamwarden.sources.landing_gate.LandingGate`), so a bad
        file that lands between two polls is moved aside before Spark can read it."""
        source = _own(settings)
        guard = self._guard(source)
        if not guard.swept:  # a query built without the runner's sweep: its files would wait
            guard.sweep()  # (what it moves aside is listed in the quarantine all the same)
        LandingGate(spark).attach(guard)
        return read_landing(spark, source)

    def batch_input(
        self, spark: SparkSession, settings: KindSettings, context: RunContext, batch: int
    ) -> DataFrame:
        files = files_of_batch(context.source_log, batch)
        if not files:
            raise SourceError(f"the checkpoint's file log lists no landing file for batch {batch}")
        return _raw_of(spark.read, _own(settings), files)

    def sample(
        self, spark: SparkSession, settings: KindSettings, context: RunContext, limit: int
    ) -> DataFrame | None:
        """Up to ``limit`` records of the newest landing files (:func:`newest_landing_files`),
        each line, or each Parquet row as JSON with the stream's schema, as the stream reads
        them; None when the folder holds no input file yet. The newest file's records come
        first: Spark orders the files of one read by size, so the files are read in groups of
        1, 2, 4... from the newest, one after the other, and a limited collect reads no more
        of them than it needs."""
        source = _own(settings)
        files = newest_landing_files(source, limit)  # each holds a record, or none
        if not files:
            return None
        reader = spark.read
        if source.format == "parquet":
            reader = reader.schema(_parquet_schema(spark, source.folder, landing_pattern(source)))
        groups = [files[2**i - 1 : 2 ** (i + 1) - 1] for i in range(len(files).bit_length())]
        frames = [_raw_of(reader, source, [str(f) for f in group]) for group in groups]
        return reduce(lambda a, b: a.union(b), frames).limit(limit)

    def where(self, settings: KindSettings) -> str:
        return str(landing_folder(settings))

    def advice(self, settings: KindSettings, cause: str) -> str | None:
        landing = str(landing_folder(settings).resolve())
        if "FileNotFoundException" in cause and landing in cause:
            return _GONE_ADVICE
        return None

    def identity(self, settings: KindSettings) -> dict[str, str]:
        return {"path": str(landing_folder(settings).resolve()), "format": _own(settings).format}

    def describe(self, identity: dict[str, str]) -> str:
        return f"{identity.get('path')!r} ({identity.get('format')})"


def _own(settings: KindSettings) -> FilesSourceSettings:
    assert isinstance(settings, FilesSourceSettings)  # the registry chose this kind by it
    return settings


def landing_folder(settings: KindSettings) -> Path:
    """The landing folder of a files source's settings."""
    return _own(settings).folder


def landing_pattern(config: FilesSourceSettings) -> str:
    """Which files of the landing folder are input (``[source] files`` or the format's
    default)."""
    return config.files or DEFAULT_PATTERNS[config.format]


def newest_landing_files(source: FilesSourceSettings, limit: int) -> list[Path]:
    """Up to ``limit`` of the input files of the landing folder, newest (last modified)
    first; none if the folder does not exist."""
    folder = source.folder
    if not folder.is_dir():
        return []
    files = {f for glob in expand_pattern(landing_pattern(source)) for f in folder.glob(glob)}
    modified: dict[Path, float] = {}
    for f in files:
        if f.name.startswith((".", "_")):
            continue
        try:
            if f.is_file():
                modified[f] = f.stat().st_mtime
        except OSError:  # gone (moved aside, say) since the folder was listed
            continue
    return sorted(modified, key=lambda f: (modified[f], f.name), reverse=True)[:limit]


def _check_folder(path: Path) -> None:
    """A landing folder that is missing is a config error (exit 2), like any wrong setting."""
    if not path.is_dir():
        state = "is a file, not a folder" if path.exists() else "does not exist"
        raise LandingMissingError(
            f"landing directory {str(path)!r} {state}; create it or fix source.path in the config"
        )


def read_landing(spark: SparkSession, source: FilesSourceSettings) -> DataFrame:
    """A streaming DataFrame with one ``raw`` string column, one row per input record."""
    path = landing_folder(source)
    _check_folder(path)
    # Spark's own option would glob each file's name again when it reads a batch
    reader = spark.readStream.option("pathGlobFilter", landing_pattern(source))
    # set, not left to Spark's default: the file log is pruned by the same bound (file_log)
    reader = reader.option("maxFileAge", f"{int(MAX_FILE_AGE.total_seconds())}s")
    if source.max_files_per_trigger is not None:
        reader = reader.option("maxFilesPerTrigger", source.max_files_per_trigger)
    if source.format == "jsonl":
        return _raw_of(reader, source, str(path))
    schema = _parquet_schema(spark, path, landing_pattern(source))
    return _raw_of(reader.schema(schema), source, str(path))


def _raw_of(reader: Any, source: FilesSourceSettings, paths: str | list[str]) -> DataFrame:
    """``raw`` from a reader: a stream of a folder, or a batch of ``paths`` (each line, or each
    Parquet row as JSON)."""
    from pyspark.sql import functions as F

    if source.format == "jsonl":
        return reader.text(paths).select(F.col("value").alias("raw"))  # type: ignore[no-any-return]
    frame: DataFrame = reader.parquet(paths) if isinstance(paths, str) else reader.parquet(*paths)
    return frame.select(parquet_row_raw(frame).alias("raw"))


#: What an invalid-UTF-8 string column is rendered as by ``to_json`` before its bytes go back in.
_BYTES_MARK = "@streamwarden:bytes:{}@"


def parquet_row_raw(frame: DataFrame) -> Column:
    r"""A Parquet row as one JSON object (``raw``). Spark's ``to_json`` replaces the bytes of a
    string that is not valid UTF-8 by U+FFFD, so two user ids that differ only there would
    become one key; such a value keeps its exact bytes in ``raw`` instead (only ``"`` and ``\``
    escaped), which makes ``raw`` not UTF-8: validation then dead-letters the row as
    ``invalid_utf8`` with its bytes in base64, as it does a JSON line with such bytes. Binary
    columns are base64 in ``to_json``, their bytes kept. Top-level string columns only: a string
    inside a struct, array or map goes through ``to_json`` as it is."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    strings = [f.name for f in frame.schema.fields if isinstance(f.dataType, StringType)]
    valid = {c: F.is_valid_utf8(F.col(c)) | F.col(c).isNull() for c in strings}
    shown = [
        F.when(valid[c], F.col(c)).otherwise(F.lit(_BYTES_MARK.format(i))).alias(c)
        if c in valid
        else F.col(c)
        for i, c in enumerate(frame.columns)
    ]
    raw = F.to_json(F.struct(*shown))
    for i, c in enumerate(frame.columns):
        if c not in valid:
            continue
        # replace works on bytes: the value's bytes go back in as they are
        escaped = F.replace(
            F.replace(F.col(c), F.lit("\\"), F.lit("\\\\")), F.lit('"'), F.lit('\\"')
        )
        exact = F.replace(
            raw, F.lit(f'"{_BYTES_MARK.format(i)}"'), F.concat(F.lit('"'), escaped, F.lit('"'))
        )
        raw = F.when(valid[c], raw).otherwise(exact)
    return raw


def _parquet_schema(spark: SparkSession, path: Path, pattern: str) -> StructType:
    import fnmatch

    files = sorted(
        f
        for f in path.iterdir()
        if f.is_file()
        and not f.name.startswith((".", "_"))
        and any(fnmatch.fnmatchcase(f.name, p) for p in expand_pattern(pattern))
    )
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
