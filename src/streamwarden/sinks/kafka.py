"""Kafka topic sink (``kind = "kafka"``), exactly once per micro-batch through a Kafka
transaction.

Spark's own Kafka sink is at-least-once: its tasks write independently, and a replayed batch
writes again. This sink instead writes each batch from the driver (inside ``foreachBatch``) in
one transaction of a transactional producer whose ``transactional.id`` is stable for the
pipeline and the sink. The transaction also commits, atomically with the records, the batch id
as the position of a consumer group of the same name (``send_offsets_to_transaction`` on the
sink's topic, partition 0, offset = batch id + 1, and the rows' schema as the offset's metadata,
from which the accounting reads the topic back). After a crash:

- ``init_transactions`` of the new producer fences the old one and aborts its open transaction,
  so a half-written batch is never visible to a ``read_committed`` consumer;
- the group's committed position says which batch was the last one committed, and a replayed
  batch at or below it is skipped, as the Parquet sink skips a batch folder that exists.

A batch without rows opens no transaction (its replay has no rows either).

Consumers must read with ``isolation.level = read_committed`` (records of aborted transactions
are then never seen). Each record is a JSON object of the output row, keyed by what the row is
about (the column :attr:`~streamwarden.sinks.base.OutputShape.record_key` names, such as the
sessions' ``[schema]`` key, else a ``key`` column), with headers ``streamwarden-batch`` (the
batch id) and, where the row has one, ``streamwarden-id``: the idempotence key,
``<key>:<revision>`` for an output whose :class:`~streamwarden.sinks.base.OutputShape` declares
them (``session_id:revision``), or the row's ``match_id``.

The price: the rows of a batch pass through the driver, so this sink's throughput is the
driver's producer's (see bench/notes/kafka.md), not the executors'.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from streamwarden.errors import SinkError
from streamwarden.kafka.cluster import QUIET, error_text, require_topics
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext, pipeline_id
from streamwarden.sinks.base import SINK_KINDS, STANDALONE, OutputShape

if TYPE_CHECKING:
    from collections.abc import Mapping

    from confluent_kafka import Producer, TopicPartition
    from pyspark.sql import Column, DataFrame, SparkSession

    from streamwarden.settings.kafka import KafkaConfig

__all__ = ["BATCH_HEADER", "ID_HEADER", "KafkaBatchSink", "KafkaSinkSettings", "read_topic"]

BATCH_HEADER = "streamwarden-batch"
ID_HEADER = "streamwarden-id"
#: The column keying a row's record when its output's shape names none (and the row has it).
_KEY_COLUMN = "key"
#: How long one transaction step may wait for the broker before the batch fails (and the
#: query restarts from its checkpoint).
_TIMEOUT_S = 60.0


class KafkaSinkSettings(KindSettings):
    """``[sinks.<output>] kind = "kafka"``: a topic of the ``[kafka]`` cluster."""

    connections: ClassVar[frozenset[str]] = frozenset({"kafka"})
    extra: ClassVar[str | None] = "kafka"

    kind: Literal["kafka"]
    #: The topic the output's rows are written to (it must exist).
    topic: str = Field(min_length=1)
    #: The producer's ``transactional.id``; by default stable for the pipeline and the output.
    transactional_id: str | None = Field(default=None, min_length=1)


class KafkaBatchSink:
    """Writes each micro-batch's rows to ``topic`` in one Kafka transaction, exactly once."""

    settings_model = KafkaSinkSettings

    def __init__(
        self,
        name: str,
        topic: str,
        kafka: KafkaConfig,
        transactional_id: str,
        shape: OutputShape = STANDALONE,
    ) -> None:
        self.name = name
        self.topic = topic
        self.kafka = kafka
        self.transactional_id = transactional_id
        #: What the rows are: a revised output's key and revision make each record's id.
        self.shape = shape
        self._producer: Producer | None = None
        #: The sink group's identity for ``send_offsets_to_transaction`` (with the producer).
        self._group_metadata: object = None
        #: The last batch id committed to the topic (-1: none), known once the producer is up.
        self._committed = -1

    @staticmethod
    def check(name: str, settings: KindSettings, context: RunContext) -> None:
        kafka = context.require_kafka("a kafka sink")
        require_topics(
            kafka.librdkafka_options(),
            (_topic(settings),),
            kafka.connect_timeout_s,
            f"sinks.{name}.topic",
        )

    @staticmethod
    def jars(settings: KindSettings, context: RunContext) -> tuple[str, ...]:
        from streamwarden.kafka.jars import connector_jars

        return connector_jars()  # reading the topic back (accounting) uses Spark's reader

    @staticmethod
    def spark_conf(settings: KindSettings, context: RunContext) -> Mapping[str, str]:
        return {}

    @staticmethod
    def where(settings: KindSettings) -> str:
        return f"kafka topic {_topic(settings)}"

    @classmethod
    def open(
        cls,
        name: str,
        settings: KindSettings,
        context: RunContext,
        shape: OutputShape = STANDALONE,
    ) -> KafkaBatchSink:
        assert isinstance(settings, KafkaSinkSettings)  # the registry chose this kind by it
        return cls(
            name,
            _topic(settings),
            context.require_kafka("a kafka sink"),
            settings.transactional_id or _default_id(context, name),
            shape,
        )

    def write_batch(self, rows: DataFrame, batch_id: int) -> bool:
        from confluent_kafka import KafkaException

        producer = self._ready()
        if batch_id <= self._committed:
            return False  # committed before a crash; the replayed batch holds the same rows
        started = False  # a batch without rows needs no transaction (and its replay has none)
        try:
            for key, value, row_id in _records(rows, self.shape):  # Spark computes them here
                if not started:
                    producer.begin_transaction()
                    started = True
                headers: list[tuple[str, str | bytes | None]] = [
                    (BATCH_HEADER, str(batch_id).encode())
                ]
                if row_id is not None:
                    headers.append((ID_HEADER, row_id.encode()))
                self._produce(producer, key, value, headers)
            if started:
                self._commit(producer, batch_id, rows.schema.simpleString())
        except KafkaException as exc:
            if started:
                self._abort(producer)
            raise SinkError(
                f"sink {self.name}: batch {batch_id} could not be written to Kafka topic "
                f"{self.topic!r}: {error_text(exc)}; the batch is written again when the "
                "pipeline restarts"
            ) from None
        except BaseException:  # the batch's rows failed (a Spark error): no transaction left
            if started:
                self._abort(producer)
            raise
        self._committed = batch_id
        return True

    def written_batches(self) -> list[int]:
        """The batches up to the last committed one (each batch is committed before the next
        is written; one without rows has no transaction, and writes nothing when replayed).
        Read without a producer, so that asking never fences a running pipeline's
        transaction."""
        return list(range(self._last_committed(self.kafka.librdkafka_options()) + 1))

    def read(self, spark: SparkSession) -> DataFrame | None:
        """Every committed row, with the schema the last batch was written with."""
        schema = self._position(self.kafka.librdkafka_options()).metadata
        if not schema:
            return None  # no batch committed yet
        return read_topic(spark, self.kafka, self.topic, schema)

    def _ready(self) -> Producer:
        """The transactional producer, started once per process: it fences any earlier
        producer of this sink, then reads which batch was committed last."""
        if self._producer is not None:
            return self._producer
        from confluent_kafka import Producer

        client = self.kafka.librdkafka_options()
        producer = Producer(
            {
                **client,
                **self.kafka.producer_options,
                "transactional.id": self.transactional_id,
                "enable.idempotence": True,
                "logger": QUIET,
            }
        )
        try:
            producer.init_transactions(self.kafka.connect_timeout_s)
            self._committed = self._last_committed(client)
            self._group_metadata = _group_metadata(client, self.transactional_id)
        except Exception as exc:
            raise SinkError(
                f"sink {self.name}: Kafka at {client['bootstrap.servers']!r} refused the "
                f"transactional producer {self.transactional_id!r}: {error_text(exc)}; check the "
                "broker and that this principal may use transactions"
            ) from None
        self._producer = producer
        return producer

    def _last_committed(self, client: dict[str, str]) -> int:
        """The batch id in the sink group's committed position (-1: none)."""
        return max(self._position(client).offset, 0) - 1

    def _position(self, client: dict[str, str]) -> TopicPartition:
        """The sink group's committed position: the next batch id as its offset, the rows'
        schema as its metadata. A fresh cluster answers "not coordinator" while it creates its
        offsets topic: asked again until ``connect_timeout_s`` has passed."""
        from confluent_kafka import Consumer, KafkaException, TopicPartition

        settings: dict[str, Any] = {
            **client,
            "group.id": self.transactional_id,
            "enable.auto.commit": False,
            "logger": QUIET,
        }
        consumer = Consumer(settings)
        deadline = time.monotonic() + self.kafka.connect_timeout_s
        try:
            while True:
                try:
                    [position] = consumer.committed(
                        [TopicPartition(self.topic, 0)], timeout=self.kafka.connect_timeout_s
                    )
                    return position
                except KafkaException as exc:
                    if not _coordinator_busy(exc) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)  # back-off before asking the broker again
        finally:
            consumer.close()

    def _commit(self, producer: Producer, batch_id: int, schema: str) -> None:
        from confluent_kafka import TopicPartition

        producer.send_offsets_to_transaction(
            [TopicPartition(self.topic, 0, batch_id + 1, metadata=schema)],
            self._group_metadata,
            _TIMEOUT_S,
        )
        producer.commit_transaction(_TIMEOUT_S)

    @staticmethod
    def _abort(producer: Producer) -> None:
        try:
            producer.abort_transaction(_TIMEOUT_S)
        except Exception:  # the batch fails anyway; a new producer aborts it on restart
            return

    def _produce(
        self,
        producer: Producer,
        key: str | None,
        value: str,
        headers: list[tuple[str, str | bytes | None]],
    ) -> None:
        while True:
            try:
                producer.produce(
                    self.topic,
                    value=value.encode(),
                    key=None if key is None else key.encode(),
                    headers=headers,
                )
                producer.poll(0)
                return
            except BufferError:  # the local queue is full: wait for deliveries, then retry
                producer.poll(0.1)


def _group_metadata(client: dict[str, str], group: str) -> object:
    """The identity of consumer group ``group``, as a transaction's offsets commit needs it
    (the group has no members: only its committed position is used)."""
    from confluent_kafka import Consumer

    consumer = Consumer({**client, "group.id": group, "logger": QUIET})
    try:
        return consumer.consumer_group_metadata()
    finally:
        consumer.close()


def _coordinator_busy(exc: Exception) -> bool:
    """Whether an error says only that the group coordinator is not ready yet."""
    from confluent_kafka import KafkaError

    error = exc.args[0] if exc.args else None
    busy = (
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
    )
    return isinstance(error, KafkaError) and (error.retriable() or error.code() in busy)


def _records(rows: DataFrame, shape: OutputShape) -> Iterator[tuple[str | None, str, str | None]]:
    """(key, JSON value, idempotence key) of each row, computed by Spark, read partition by
    partition (never the whole batch in the driver's memory at once)."""
    from pyspark.sql import functions as F

    columns = rows.columns
    named = shape.record_key or (_KEY_COLUMN if _KEY_COLUMN in columns else None)
    key = F.lit(None) if named is None else F.col(f"`{named}`")
    selected = rows.select(
        key.cast("string").alias("k"),
        F.to_json(F.struct(*[F.col(c) for c in columns])).alias("v"),
        _row_id(columns, shape).alias("i"),
    )
    for row in selected.toLocalIterator(prefetchPartitions=True):
        yield row["k"], row["v"], row["i"]


def _row_id(columns: list[str], shape: OutputShape) -> Column:
    """The idempotence key of a row: ``<key>:<revision>`` for an output whose shape declares
    them (sessions), else the row's own ``match_id`` (a match stands alone: its shape declares
    no key, since no later row replaces it), else none."""
    from pyspark.sql import functions as F

    if shape.key is not None and shape.revision is not None:
        return F.concat_ws(":", F.col(shape.key), F.col(shape.revision).cast("string"))
    if "match_id" in columns:
        return F.col("match_id").cast("string")
    return F.lit(None).cast("string")


def read_topic(spark: SparkSession, kafka: KafkaConfig, topic: str, schema: str) -> DataFrame:
    """Every committed record of ``topic`` (``read_committed``) as rows of ``schema`` (DDL)."""
    from pyspark.sql import functions as F

    values = (
        spark.read.format("kafka")
        .options(**kafka.java_options())
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .option("kafka.isolation.level", "read_committed")
        .load()
    )
    return values.select(F.from_json(F.col("value").cast("string"), schema).alias("r")).select(
        "r.*"
    )


def _default_id(context: RunContext, name: str) -> str:
    """Stable for a pipeline and a sink: its name and its checkpoint's path (one pipeline per
    checkpoint), so two pipelines never fence each other."""
    return pipeline_id(context.name, context.checkpoint, name)


def _topic(settings: KindSettings) -> str:
    assert isinstance(settings, KafkaSinkSettings)  # the registry chose this kind by it
    return settings.topic


SINK_KINDS.register("kafka", KafkaBatchSink)
