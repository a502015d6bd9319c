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

Every call to the broker has a deadline, the sink's ``timeout``: librdkafka is given it, and a
call that overruns it all the same (``send_offsets_to_transaction`` across a broker restart)
is left behind: the batch fails with one line naming the sink and the call, the producer is
dropped, and the next one, fencing it, aborts its transaction before the replayed batch.

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

import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from pydantic import Field

from streamwarden.errors import SinkError, SinkTopicGoneError, UnreachableError
from streamwarden.kafka.cluster import QUIET, error_text, existing_topics, require_topics
from streamwarden.settings.base import KindSettings
from streamwarden.settings.context import RunContext, pipeline_id
from streamwarden.settings.types import Duration
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
#: How long past its own timeout a call into librdkafka may run before the sink stops waiting
#: for it: some calls overrun theirs (``send_offsets_to_transaction`` across a broker restart,
#: librdkafka issue 5456, blocked for 11 minutes).
_GRACE_S = 5.0

_LOG = logging.getLogger(__name__)
_T = TypeVar("_T")


class _Overran(Exception):
    """A call to the broker did not return by its deadline; ``what`` names the call."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class KafkaSinkSettings(KindSettings):
    """``[sinks.<output>] kind = "kafka"``: a topic of the ``[kafka]`` cluster."""

    connections: ClassVar[frozenset[str]] = frozenset({"kafka"})
    extra: ClassVar[str | None] = "kafka"

    kind: Literal["kafka"]
    #: The topic the output's rows are written to (it must exist).
    topic: str = Field(min_length=1)
    #: The producer's ``transactional.id``; by default stable for the pipeline and the output.
    transactional_id: str | None = Field(default=None, min_length=1)
    #: The deadline of every call to the broker while a batch is written (each transaction
    #: step, a full producer queue): a batch whose call overruns it is abandoned (its
    #: transaction aborted by a new producer) and written again after a restart.
    timeout: Duration = timedelta(seconds=60)


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
        timeout: timedelta = timedelta(seconds=60),
    ) -> None:
        self.name = name
        self.topic = topic
        self.kafka = kafka
        self.transactional_id = transactional_id
        #: What the rows are: a revised output's key and revision make each record's id.
        self.shape = shape
        #: The deadline of each call to the broker while a batch is written, in seconds.
        self.timeout_s = timeout.total_seconds()
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
            settings.timeout,
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
        except _Overran as overran:
            # the stuck call may hold the producer (an abort would wait behind it): a new
            # producer's init_transactions fences this one and aborts its transaction
            self._producer = None
            message = (
                f"sink {self.name}: batch {batch_id} abandoned: Kafka at "
                f"{self.kafka.bootstrap_servers!r} did not answer {overran.what} within "
                f"{self.timeout_s:g} s (the sink's timeout); its transaction is aborted by a new "
                "producer and the batch is written again when the pipeline restarts"
            )
            _LOG.warning(message)
            raise SinkError(message) from None
        except KafkaException as exc:
            if started and not self._abort(producer):
                self._producer = None  # a new one aborts the transaction (see above)
            if self._topic_gone(exc):
                raise SinkTopicGoneError(
                    f"sink {self.name}: Kafka topic {self.topic!r} no longer exists (deleted "
                    f"while the pipeline wrote batch {batch_id}), and no restart brings it "
                    "back: create it again and run again (the pipeline goes on from its "
                    f"checkpoint, from batch {batch_id}; what the deleted topic held is gone), "
                    "or name another topic with a new checkpoint.path"
                ) from None
            raise SinkError(
                f"sink {self.name}: batch {batch_id} could not be written to Kafka topic "
                f"{self.topic!r}: {error_text(exc)}; the batch is written again when the "
                "pipeline restarts"
            ) from None
        except BaseException:  # the batch's rows failed (a Spark error): no transaction left
            if started and not self._abort(producer):
                self._producer = None
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

    def _topic_gone(self, exc: Exception) -> bool:
        """Whether a write failed because the topic is deleted: the broker said "unknown topic"
        (as it also may for a moment while a topic is made or a broker restarts), and the
        cluster, asked now, does not have it. Unknown when the cluster does not answer: no."""
        from confluent_kafka import KafkaError

        error = exc.args[0] if exc.args else None
        codes = (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC)
        said = (isinstance(error, KafkaError) and error.code() in codes) or (
            "Unknown topic or partition" in error_text(exc)
        )
        if not said:
            return False
        try:
            topics = existing_topics(self.kafka.librdkafka_options(), self.kafka.connect_timeout_s)
        except UnreachableError:
            return False
        return self.topic not in topics

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
            timeout = self.kafka.connect_timeout_s
            _within("init_transactions", timeout, lambda: producer.init_transactions(timeout))
            self._committed = self._last_committed(client)
            self._group_metadata = _group_metadata(client, self.transactional_id)
        except _Overran as overran:
            raise SinkError(
                f"sink {self.name}: Kafka at {client['bootstrap.servers']!r} did not answer "
                f"{overran.what} within {self.kafka.connect_timeout_s:g} s ([kafka] "
                "connect_timeout_s); the pipeline tries again when it restarts"
            ) from None
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
        """Commits the batch's position and then its transaction, each call under the sink's
        deadline (:func:`_within`)."""
        from confluent_kafka import TopicPartition

        timeout = self.timeout_s
        position = [TopicPartition(self.topic, 0, batch_id + 1, metadata=schema)]
        _within(
            "send_offsets_to_transaction",
            timeout,
            lambda: producer.send_offsets_to_transaction(position, self._group_metadata, timeout),
        )
        _within("commit_transaction", timeout, lambda: producer.commit_transaction(timeout))

    def _abort(self, producer: Producer) -> bool:
        """Aborts the open transaction; False if that failed or overran (then only a new
        producer, fencing this one, can abort it)."""
        timeout = self.timeout_s
        try:
            _within("abort_transaction", timeout, lambda: producer.abort_transaction(timeout))
        except Exception:  # the batch fails anyway
            return False
        return True

    def _produce(
        self,
        producer: Producer,
        key: str | None,
        value: str,
        headers: list[tuple[str, str | bytes | None]],
    ) -> None:
        deadline = time.monotonic() + self.timeout_s
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
                if time.monotonic() > deadline:
                    raise _Overran("the deliveries of a full producer queue") from None
                producer.poll(0.1)


def _within(what: str, timeout_s: float, call: Callable[[], _T]) -> _T:
    """``call()``, which passes ``timeout_s`` to librdkafka itself, on a thread of its own,
    waited for up to ``timeout_s`` plus :data:`_GRACE_S`: :class:`_Overran` naming ``what`` if
    it has not returned by then (the thread is left behind, ending when librdkafka returns)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name=f"streamwarden-kafka-{what}", daemon=True)
    thread.start()
    thread.join(timeout_s + _GRACE_S)
    if not outcome:
        raise _Overran(what)
    returned, value = outcome[0]
    if not returned:
        raise value
    return value  # type: ignore[no-any-return]


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
