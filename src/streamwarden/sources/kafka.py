"""Topics of a Kafka cluster, read with Spark's Kafka source (``[source] kind = "kafka"``).

Each record's value is one JSON record, validated exactly like a landing file's line. The
record's topic, partition, offset and key travel with it (``SOURCE_POSITION``), so that a dead
letter says where its record was; with ``event_time = "kafka_timestamp"`` the record's Kafka
timestamp is its event time (``SOURCE_TIME``) instead of a field of the JSON, and with
``key = "kafka_key"`` the record's key (UTF-8 text) is the value of ``schema.key``
(``SOURCE_KEY``).

Offsets live only in the checkpoint, committed with the state (Spark's Kafka source never commits
them to a consumer group): a restart from a checkpoint reads exactly what followed it. If
retention deleted records the checkpoint still expects, the query fails with Spark's data-loss
error, which the run reports as one line (``fail_on_data_loss = true``, the default); with
``fail_on_data_loss = false`` it goes on, and every batch that skipped offsets is counted and
reported (``monitoring``: ``offsets_skipped``) instead of passing in silence; so are the
records of a topic deleted and made again under the same name that the checkpoint's offsets
resume past (:mod:`streamwarden.sources.kafka_topics`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, model_validator

from streamwarden.errors import SourceError
from streamwarden.kafka.cluster import (
    existing_topics,
    matching_topics,
    partition_offsets,
    require_topics,
)
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext
from streamwarden.settings.kafka import KafkaConfig, refuse_literal_secrets
from streamwarden.sources.base import SOURCE_KEY, SOURCE_KINDS, SOURCE_POSITION, SOURCE_TIME
from streamwarden.sources.kafka_topics import (
    TopicsSeen,
    account_recreated,
    check_recreated,
    offsets_by_partition,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

__all__ = ["NO_KAFKA_TIMESTAMP", "KafkaSource", "KafkaSourceSettings", "kafka_records"]

#: A Kafka record's timestamp when it has none (``RecordBatch.NO_TIMESTAMP``): with
#: ``event_time = "kafka_timestamp"`` such a record has no event time (``invalid_timestamp``).
NO_KAFKA_TIMESTAMP = -1


class KafkaSourceSettings(KindSettings):
    """``[source] kind = "kafka"``: topics (or a topic pattern) of the ``[kafka]`` cluster."""

    connections: ClassVar[frozenset[str]] = frozenset({"kafka"})
    extra: ClassVar[str | None] = "kafka"

    kind: Literal["kafka"]
    topics: list[str] | None = Field(default=None, min_length=1)
    topic_pattern: str | None = None
    starting_offsets: str = "earliest"
    max_offsets_per_trigger: int | None = Field(default=None, ge=1)
    event_time: Literal["field", "kafka_timestamp"] = "field"
    #: Where the value of ``schema.key`` is read: the JSON record's field, or the Kafka record's
    #: key (its bytes as UTF-8 text), which then wins over the field.
    key: Literal["field", "kafka_key"] = "field"
    fail_on_data_loss: bool = True
    options: Annotated[
        dict[str, str], AfterValidator(lambda v: refuse_literal_secrets(v, "source.options"))
    ] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _fits(self) -> KafkaSourceSettings:
        if (self.topics is None) == (self.topic_pattern is None):
            raise ValueError("a kafka source needs topics or topic_pattern (one of them)")
        offsets = self.starting_offsets.strip()
        if offsets not in ("earliest", "latest"):
            try:
                parsed = json.loads(offsets)
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                raise ValueError(
                    "source.starting_offsets must be 'earliest', 'latest' or JSON such as "
                    '{"pageviews": {"0": 42, "1": -2}} (-2 earliest, -1 latest)'
                )
        for name in self.options:
            if name in _OWN_OPTIONS or name.startswith("kafka.bootstrap"):
                raise ValueError(
                    f"source.options {name!r} is set by streamwarden; use the source or [kafka] "
                    "setting instead"
                )
        return self


class KafkaSource:
    """Topics (or a topic pattern) of the ``[kafka]`` cluster; Spark keeps the offsets per
    topic partition, so the checkpoint depends on the topics read."""

    change_effect = (
        "Spark keeps offsets per topic partition, so the new topics would be read from "
        "starting_offsets while the old ones' offsets stayed in the checkpoint"
    )
    settings_model = KafkaSourceSettings

    def check(self, settings: KindSettings, context: RunContext) -> None:
        kafka = _cluster(context)
        client = kafka.librdkafka_options()
        topics = _own(settings).topics
        if topics is None:
            existing_topics(client, kafka.connect_timeout_s)  # a pattern may match none yet
            return
        require_topics(client, tuple(topics), kafka.connect_timeout_s, "source.topics")

    def jars(self, settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        from streamwarden.kafka.jars import connector_jars

        return connector_jars()

    def read(self, spark: SparkSession, settings: KindSettings, context: RunContext) -> DataFrame:
        source = _own(settings)
        reader = spark.readStream.format("kafka")
        for name, value in self.reader_options(source, context).items():
            reader = reader.option(name, value)
        return kafka_records(reader.load(), source)

    def reader_options(self, settings: KindSettings, context: RunContext) -> dict[str, str]:
        """Every option Spark's Kafka source gets (a secret among them: never print these)."""
        source = _own(settings)
        options = dict(_cluster(context).java_options())
        if source.topics is not None:
            options["subscribe"] = ",".join(source.topics)
        else:
            assert source.topic_pattern is not None
            options["subscribePattern"] = source.topic_pattern
        options["startingOffsets"] = source.starting_offsets.strip()
        options["failOnDataLoss"] = "true" if source.fail_on_data_loss else "false"
        options["includeHeaders"] = "false"
        if source.max_offsets_per_trigger is not None:
            options["maxOffsetsPerTrigger"] = str(source.max_offsets_per_trigger)
        return {**options, **source.options}

    def batch_input(
        self, spark: SparkSession, settings: KindSettings, context: RunContext, batch: int
    ) -> DataFrame:
        checkpoint = context.checkpoint
        # offsets/N holds the offsets batch N read up to; batch 0 starts where the source's own
        # log (sources/0/0) says, every later batch where batch N-1 ended
        line = 2 + context.source_index  # offsets/N: version, metadata, then one per source
        start = _source_line(checkpoint / "offsets" / str(batch - 1), line) if batch else None
        start = start or _source_line(context.source_log / "0", header=1)
        end = _source_line(checkpoint / "offsets" / str(batch), line)
        if start is None or end is None:
            raise SourceError(f"the checkpoint does not say which offsets batch {batch} read")
        options = self.reader_options(settings, context)
        options.pop("maxOffsetsPerTrigger", None)
        reader = spark.read.format("kafka")
        for name, value in {**options, "startingOffsets": start, "endingOffsets": end}.items():
            reader = reader.option(name, value)
        return kafka_records(reader.load(), _own(settings))

    def sample(
        self, spark: SparkSession, settings: KindSettings, context: RunContext, limit: int
    ) -> DataFrame | None:
        """Up to ``limit`` of the newest records of the topics (those the pattern matches now),
        spread over their partitions: each partition's newest, as many as its share of
        ``limit`` (:func:`_newest_shares`), read with the stream's options; None when they
        hold no record."""
        source = _own(settings)
        kafka = _cluster(context)
        client, timeout = kafka.librdkafka_options(), kafka.connect_timeout_s
        if source.topics is not None:
            partitions = require_topics(client, tuple(source.topics), timeout, "source.topics")
        else:
            assert source.topic_pattern is not None
            partitions = matching_topics(client, source.topic_pattern, timeout)
        offsets = partition_offsets(client, partitions, timeout)
        shares = _newest_shares({tp: high - low for tp, (low, high) in offsets.items()}, limit)
        read = {tp: n for tp, n in shares.items() if n > 0}
        if not read:
            return None
        options = self.reader_options(settings, context)
        for name in ("maxOffsetsPerTrigger", "subscribe", "subscribePattern"):
            options.pop(name, None)
        # exactly these partitions (a pattern's topics as listed above), from each one's share
        # of newest records to its end; retention deleting some meanwhile is no failure here
        ends = {tp: offsets[tp][1] for tp in read}
        assigned: dict[str, list[int]] = {}
        for topic, partition in sorted(read):
            assigned.setdefault(topic, []).append(partition)
        options |= {
            "assign": json.dumps(assigned),
            "startingOffsets": _by_topic({tp: ends[tp] - n for tp, n in read.items()}),
            "endingOffsets": _by_topic(ends),
            "failOnDataLoss": "false",
        }
        reader = spark.read.format("kafka")
        for name, value in options.items():
            reader = reader.option(name, value)
        return kafka_records(reader.load(), source).limit(limit)

    def before_start(self, settings: KindSettings, context: RunContext) -> None:
        """Notes a topic deleted and made again since the last start (or refuses to start over
        it, with ``fail_on_data_loss``): :mod:`streamwarden.sources.kafka_topics`."""
        source, kafka = _own(settings), _cluster(context)
        check_recreated(
            kafka.librdkafka_options(),
            kafka.connect_timeout_s,
            TopicsSeen.path(context.checkpoint, context.source_index),
            offsets_by_partition(_resume_offsets(context)),
            list(source.topics or ()),
            source.fail_on_data_loss,
        )

    def account(
        self, settings: KindSettings, context: RunContext, progress: dict[str, Any]
    ) -> dict[str, Any]:
        kafka = _cluster(context)
        path = TopicsSeen.path(context.checkpoint, context.source_index)
        client, timeout = kafka.librdkafka_options(), kafka.connect_timeout_s
        return account_recreated(client, timeout, path, context.source_index, progress)

    def after_batch(self, settings: KindSettings, context: RunContext) -> None:
        return None

    def sweep(self, settings: KindSettings, context: RunContext) -> list[str]:
        return []

    def where(self, settings: KindSettings) -> str:
        source = _own(settings)
        if source.topics is not None:
            return "kafka topics " + ", ".join(source.topics)
        return f"kafka topics matching {source.topic_pattern!r}"

    def advice(self, settings: KindSettings, cause: str) -> str | None:
        if "UnknownTopicOrPartitionException" in cause:  # Spark asked for a topic's offsets
            return (
                f"a topic of the source ({_topics_shown(_own(settings))}) was deleted while the "
                "pipeline read it: its records, and the offsets the checkpoint holds in it, are "
                "gone, and no restart brings them back. To go on, create the topic again and "
                "run again with source.fail_on_data_loss = false (the offsets read past are "
                "counted and reported); to start over, use a new checkpoint.path and new sinks"
            )
        signs = ("KAFKA_DATA_LOSS", "Some data may have been lost", "OffsetOutOfRangeException")
        if not any(sign in cause for sign in signs):
            return None
        return (
            "records the checkpoint still expects were deleted from Kafka before the pipeline "
            "read them (retention, or a topic deleted and made again): they cannot be read any "
            "more. To go on without them, set source.fail_on_data_loss = false and run again; "
            "the offsets read past are then counted and reported (offsets_skipped in the "
            "progress log, a warning, streamwarden_source_offsets_skipped_total). To keep this "
            "from happening, keep records longer (retention.ms) or read faster"
        )

    def identity(self, settings: KindSettings) -> dict[str, str]:
        source = _own(settings)
        if source.topics is not None:
            return {"kafka_topics": ",".join(sorted(source.topics))}
        return {"kafka_topic_pattern": str(source.topic_pattern)}

    def describe(self, identity: dict[str, str]) -> str:
        if "kafka_topics" in identity:
            return f"kafka topics {identity['kafka_topics']!r}"
        if "kafka_topic_pattern" in identity:
            return f"kafka topics matching {identity['kafka_topic_pattern']!r}"
        return f"files at {identity.get('path')!r}"


#: Options a source sets from its own settings; giving them in ``options`` too is refused.
_OWN_OPTIONS = frozenset(
    {
        "subscribe",
        "subscribePattern",
        "assign",
        "startingOffsets",
        "failOnDataLoss",
        "maxOffsetsPerTrigger",
        "includeHeaders",
        "kafka.security.protocol",
        "kafka.sasl.jaas.config",
        "kafka.sasl.mechanism",
    }
)


def _newest_shares(available: dict[tuple[str, int], int], limit: int) -> dict[tuple[str, int], int]:
    """How many of its newest records each partition gives to a sample of ``limit``: an even
    share each, a partition with fewer records than its share giving them all and the rest
    shared among the others (as many as ``limit`` in all when the partitions hold that many)."""
    shares: dict[tuple[str, int], int] = {}
    left = limit
    by_size = sorted(available, key=lambda tp: (available[tp], tp))
    for i, tp in enumerate(by_size):
        shares[tp] = min(max(available[tp], 0), left // (len(by_size) - i))
        left -= shares[tp]
    return shares


def _by_topic(offsets: dict[tuple[str, int], int]) -> str:
    """Offsets by (topic, partition) as Spark's Kafka source takes them: JSON such as
    ``{"pageviews": {"0": 42, "1": 7}}``."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return json.dumps(out)


def _resume_offsets(context: RunContext) -> str | None:
    """The source's offsets in the checkpoint's newest ``offsets/N``: where the query reads on
    from (None: no batch planned yet)."""
    folder = context.checkpoint / "offsets"
    planned = [int(f.name) for f in folder.glob("[0-9]*")] if folder.is_dir() else []
    if not planned:
        return None
    return _source_line(folder / str(max(planned)), 2 + context.source_index)


def _source_line(path: Path, header: int = 2) -> str | None:
    """The records source's offsets (JSON) in a checkpoint log file: the line after the
    ``header`` lines (``offsets/N``: version and metadata; the source's own log: version)."""
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[header] if len(lines) > header and lines[header].startswith("{") else None


def kafka_records(frame: DataFrame, settings: KafkaSourceSettings) -> DataFrame:
    """The source's records from rows of Spark's Kafka source (``key``, ``value`` binary,
    ``topic``, ``partition``, ``offset``, ``timestamp``): ``raw`` is the value's bytes as they
    are (a value that is not UTF-8 is then ``invalid_utf8``, its bytes kept), the position names
    the record, and the Kafka timestamp is the event time (none for Kafka's "no timestamp", -1),
    and its key the value of the key field, when so configured."""
    from pyspark.sql import functions as F

    where = ("topic", "partition", "offset")
    position = F.concat_ws(
        " ",
        *(part for name in where for part in (F.lit(name), F.col(name))),
        # a record's key, when it has one, is part of where it was (a user id, often)
        F.when(F.col("key").isNotNull(), F.concat(F.lit("key "), _key_text(F.col("key")))),
    )
    columns = [
        # a record without a value (a tombstone) is not a JSON object: malformed_json; the cast
        # keeps a value's bytes as they are, so validation sees one that is not UTF-8
        F.coalesce(F.col("value").cast("string"), F.lit("")).alias("raw"),
        position.alias(SOURCE_POSITION),
    ]
    if settings.event_time == "kafka_timestamp":
        # -1 is Kafka's "no timestamp" (RecordBatch.NO_TIMESTAMP), not 1969: no time at all
        stamp = F.unix_millis("timestamp")
        columns.append(F.when(stamp != NO_KAFKA_TIMESTAMP, stamp).alias(SOURCE_TIME))
    if settings.key == "kafka_key":
        columns.append(F.col("key").cast("string").alias(SOURCE_KEY))
    return frame.select(*columns)


def _key_text(key: Column) -> Column:
    """A record's key as a dead letter's detail shows it: its text, or ``base64:`` and its bytes
    when it is not UTF-8 (a detail is text; a key's bytes are never replaced by U+FFFD)."""
    from pyspark.sql import functions as F

    text = F.try_validate_utf8(key.cast("string"))
    one_line = F.regexp_replace(F.base64(key), r"[\r\n]", "")  # Spark's base64 is MIME-wrapped
    return F.coalesce(text, F.concat(F.lit("base64:"), one_line))


def _topics_shown(source: KafkaSourceSettings) -> str:
    if source.topics is not None:
        return ", ".join(repr(t) for t in source.topics)
    return f"matching {source.topic_pattern!r}"


def _own(settings: KindSettings) -> KafkaSourceSettings:
    assert isinstance(settings, KafkaSourceSettings)  # the registry chose this kind by it
    return settings


def _cluster(context: RunContext) -> KafkaConfig:
    return context.require_kafka("[source] kind = 'kafka'")


SOURCE_KINDS.register("kafka", KafkaSource())
