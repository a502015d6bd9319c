"""``doctor`` reads a sample of the input against the schema: what each record would get.

A field-name typo in ``[schema]`` sends every record to the dead letters; event times in seconds
read as milliseconds land in January 1970; a ``[schema.checks]`` bound or a ``[[schema.rules]]``
rule that the data never meets rejects it all. Each passes every check of the settings alone,
so ``doctor`` reads up to :data:`SAMPLE` of the newest records of the source (its
:meth:`~streamwarden.sources.base.Source.sample`: the newest landing files, JSON lines or
Parquet, or the newest records of each Kafka partition) and validates them with the pipeline's
own validation (:func:`~streamwarden.validation.validate_records`, on Spark): it reports the
share that would be dead letters with their reasons, and event times that are implausible for
the declared unit (with the unit that would make them plausible). A sample that cannot be read
is a warning saying why, never a failed ``doctor``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.findings import Finding, Severity
from streamwarden.errors import StreamwardenError
from streamwarden.plan import PipelinePlan
from streamwarden.schema.model import Schema
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext
from streamwarden.sources.base import source_of
from streamwarden.sources.files import FilesSourceSettings
from streamwarden.sources.kafka import KafkaSourceSettings
from streamwarden.spark.jvm import first_line, java_message, query_errors_unlogged
from streamwarden.validation import DETAIL, REASON, TICK_SOURCE, TS_MS, validate_records

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SAMPLE", "check_input_sample"]

#: How many records doctor reads.
SAMPLE = 200
_UNIT_MS = {"s": 1000, "ms": 1, "us": 0.001}


def check_input_sample(config: PipelineConfig, spark: SparkSession) -> list[Finding]:
    """Findings from a sample of the input, validated on ``spark`` as the pipeline validates
    it; none when there is no input to read yet, one warning (``input-unread``) when the
    sample cannot be read. A ``[schema]`` that validation refuses to build (a rule that is not
    Spark SQL) raises its :class:`~streamwarden.errors.ConfigError`, as a run would."""
    several = config.several
    if several is None:
        return _sample_findings(
            config, spark, config.source, config.schema, config.context, _where(config)
        )
    findings = []
    for index, (name, own) in enumerate(several.named.items()):
        context = replace(config.context, source_index=index)
        where = f"[sources.{name}] ({source_of(own).where(own)})"
        findings += _sample_findings(config, spark, own, config.schemas[name], context, where)
    return findings


def _sample_findings(
    config: PipelineConfig,
    spark: SparkSession,
    settings: KindSettings,
    schema: Schema,
    context: RunContext,
    where: str,
) -> list[Finding]:
    """The findings of one source's sample, validated against its ``schema``."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F

    unreadable = (StreamwardenError, PySparkException, Py4JError, OSError)
    try:
        with query_errors_unlogged():
            frame = source_of(settings).sample(spark, settings, context, SAMPLE)
    except unreadable as exc:
        return [_unread(where, exc)]
    if frame is None:
        return []
    records = frame.withColumn(TICK_SOURCE, F.lit(False))  # the source's records, no ticks
    outcomes = validate_records(records, schema, config.validation)
    try:
        with query_errors_unlogged():
            rows = outcomes.select(REASON, DETAIL, TS_MS).collect()
    except unreadable as exc:
        return [_unread(where, exc)]
    if not rows:
        return []
    sampled = [{"reason": r[0], "detail": r[1], "ts_ms": r[2]} for r in rows]
    return [*_rejects(sampled, len(sampled), where), *_times(config, schema, sampled, where)]


def _where(config: PipelineConfig) -> str:
    """Where the sample is read, as the findings name it."""
    source = config.source
    if isinstance(source, FilesSourceSettings):
        return f"the newest landing files of {str(source.folder)!r}"
    if isinstance(source, KafkaSourceSettings):
        if source.topics is not None:
            return f"the newest records of topic(s) {', '.join(map(repr, source.topics))}"
        return f"the newest records of the topics matching {source.topic_pattern!r}"
    return f"the newest records of {PipelinePlan.of(config).source.where(source)}"


def _unread(where: str, exc: BaseException) -> Finding:
    return Finding(
        "input-unread",
        Severity.WARNING,
        f"could not read a sample of {where} to check it against [schema]: "
        f"{first_line(java_message(exc))}",
        "make the input readable (the broker up, the files readable), then run doctor again to "
        "check its records",
        "bad-input",
    )


def _rejects(outcomes: list[dict[str, Any]], sampled: int, where: str) -> list[Finding]:
    reasons = Counter(o["reason"] for o in outcomes if o["reason"] is not None)
    rejected = sum(reasons.values())
    if not rejected:
        return []
    top = reasons.most_common(1)[0][0]
    detail = next(o["detail"] for o in outcomes if o["reason"] == top)
    listed = ", ".join(f"{reason} {n}" for reason, n in reasons.most_common())
    return [
        Finding(
            "input-rejected",
            Severity.ERROR if rejected == sampled else Severity.WARNING,
            f"of {sampled} record(s) sampled from {where}, {rejected} would be dead letters "
            f"({listed}); e.g. {top}: {detail}",
            "check [schema] (field names, types, key, time and time_unit) against these records",
            "bad-input",
        )
    ]


def _times(
    config: PipelineConfig, schema: Schema, outcomes: list[dict[str, Any]], where: str
) -> list[Finding]:
    # every event time read, those of records rejected for it too (before
    # earliest_event_time, too far ahead): a wrong unit is what puts them there
    times = [o["ts_ms"] for o in outcomes if o["ts_ms"] is not None]
    earliest = config.validation.earliest_event_time
    # with earliest_event_time off, the user says early times are real: only the far future
    # (seconds read as microseconds, say) is implausible
    low = datetime(1, 1, 1, tzinfo=UTC) if earliest is None else earliest
    high = datetime.now(UTC) + timedelta(days=366)
    plausible = [t for t in times if _plausible(t, low, high)]
    if not times or len(plausible) == len(times):
        return []
    odd = next(t for t in times if not _plausible(t, low, high))
    unit = schema.time_unit
    better = [
        u
        for u, per_ms in _UNIT_MS.items()
        if u != unit and all(_plausible(int(t / _UNIT_MS[unit] * per_ms), low, high) for t in times)
    ]
    hint = f"; read in {better[0]!r} they would be plausible" if better else ""
    return [
        Finding(
            "implausible-event-times",
            Severity.ERROR if not plausible else Severity.WARNING,
            f"{len(times) - len(plausible)} of {len(times)} event times read from {where} are "
            f"outside {low:%Y-%m-%d} .. {high:%Y-%m-%d} (validation.earliest_event_time .. a "
            f"year from now), e.g. {_shown(odd)} (schema.time "
            f"{schema.time!r} in {unit!r}){hint}",
            f"set schema.time_unit to {better[0]!r}"
            if better
            else "check schema.time and schema.time_unit against these records",
            "bad-input",
        )
    ]


def _plausible(ms: int, low: datetime, high: datetime) -> bool:
    return low.timestamp() * 1000 <= ms <= high.timestamp() * 1000


def _shown(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, ValueError, OSError):
        return f"{ms} ms"
