"""The local broker is a real Kafka: topics take records and give them back, transactions commit
and abort as a read_committed reader expects, Spark's connector reads it, and it stops cleanly.

Tests share one broker (the session's ``kafka_broker``), so each uses topics of its own names.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient

from streamwarden.errors import LocalBrokerError
from streamwarden.local.broker import LocalBroker

#: How long a reader waits for records that should be there.
READ_TIMEOUT_S = 30.0


def new_topic(broker: LocalBroker, partitions: int = 1) -> str:
    name = f"t-{uuid.uuid4().hex[:12]}"
    broker.create_topic(name, partitions=partitions)
    return name


def produce(broker: LocalBroker, topic: str, values: list[bytes]) -> None:
    """Writes ``values`` in order (keys ``k0``, ``k1``, ...) and waits until each is acked."""
    errors: list[KafkaError] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all"})
    for i, value in enumerate(values):
        producer.produce(topic, value, key=f"k{i}".encode(), on_delivery=_keep_error(errors))
    assert producer.flush(READ_TIMEOUT_S) == 0, "records still unacknowledged"
    assert not errors, errors


def _keep_error(errors: list[KafkaError]) -> Callable[[KafkaError | None, Message], None]:
    def on_delivery(error: KafkaError | None, _message: Message) -> None:
        if error is not None:
            errors.append(error)

    return on_delivery


@contextmanager
def reader(broker: LocalBroker, topic: str, isolation: str) -> Iterator[Consumer]:
    """A consumer of partition 0 of ``topic`` from its first record, told when it reaches the
    end (assigned, not subscribed: no group rebalance to wait for)."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "group.id": f"reader-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": isolation,
        }
    )
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    try:
        yield consumer
    finally:
        consumer.close()


def read_until(consumer: Consumer, *, last: bytes | None = None) -> list[bytes]:
    """The values read until ``last`` is read, or (without ``last``) until the end."""
    values: list[bytes] = []
    deadline = time.monotonic() + READ_TIMEOUT_S
    while time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        error = message.error()
        if error is not None and error.code() == KafkaError._PARTITION_EOF:
            if last is None:
                return values
            continue
        assert error is None, error
        value = message.value()
        assert isinstance(value, bytes)
        values.append(value)
        if value == last:
            return values
    raise AssertionError(f"read only {values!r} within {READ_TIMEOUT_S} s")


def test_a_topic_created_on_the_local_broker_takes_records_and_gives_them_back(kafka_broker):
    topic = new_topic(kafka_broker)
    values = [f"record {i}".encode() for i in range(100)]
    produce(kafka_broker, topic, values)
    with reader(kafka_broker, topic, "read_committed") as consumer:
        assert read_until(consumer) == values


def test_a_read_committed_reader_sees_committed_transactions_but_not_an_aborted_one(
    kafka_broker,
):
    topic = new_topic(kafka_broker)
    producer = Producer(
        {"bootstrap.servers": kafka_broker.bootstrap_servers, "transactional.id": topic}
    )
    producer.init_transactions(READ_TIMEOUT_S)
    for values, commit in (([b"a", b"b"], True), ([b"aborted"], False), ([b"c"], True)):
        producer.begin_transaction()
        for value in values:
            producer.produce(topic, value)
        assert producer.flush(READ_TIMEOUT_S) == 0  # written, even those about to be aborted
        if commit:
            producer.commit_transaction(READ_TIMEOUT_S)
        else:
            producer.abort_transaction(READ_TIMEOUT_S)
    # records come in offset order, so by the time "c" (written last) arrives every earlier
    # record has been delivered or withheld
    with reader(kafka_broker, topic, "read_committed") as consumer:
        assert read_until(consumer, last=b"c") == [b"a", b"b", b"c"]
    with reader(kafka_broker, topic, "read_uncommitted") as consumer:  # it was written
        assert read_until(consumer, last=b"c") == [b"a", b"b", b"aborted", b"c"]


def test_producing_to_a_topic_nobody_created_fails_instead_of_creating_it(kafka_broker):
    topic = f"missing-{uuid.uuid4().hex[:12]}"
    errors: list[KafkaError] = []
    producer = Producer(
        {"bootstrap.servers": kafka_broker.bootstrap_servers, "message.timeout.ms": 2000}
    )
    producer.produce(topic, b"lost", on_delivery=_keep_error(errors))
    producer.flush(READ_TIMEOUT_S)
    assert len(errors) == 1
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    assert topic not in admin.list_topics(timeout=READ_TIMEOUT_S).topics


def test_creating_a_topic_twice_is_an_error_naming_it_and_a_deleted_topic_is_gone(kafka_broker):
    topic = new_topic(kafka_broker)
    with pytest.raises(LocalBrokerError, match=f"could not create topic '{topic}'.*already"):
        kafka_broker.create_topic(topic)
    kafka_broker.delete_topic(topic)
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    assert topic not in admin.list_topics(timeout=READ_TIMEOUT_S).topics


@pytest.mark.spark
def test_spark_reads_back_exactly_the_records_produced_to_a_topic(spark, kafka_broker):
    topic = new_topic(kafka_broker)
    values = [f"pageview {i}".encode() for i in range(50)]
    produce(kafka_broker, topic, values)
    rows = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka_broker.bootstrap_servers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("CAST(key AS STRING) AS key", "value", "offset")
        .orderBy("offset")
        .collect()
    )
    assert [bytes(r.value) for r in rows] == values
    assert [(r.key, r.offset) for r in rows] == [(f"k{i}", i) for i in range(50)]


def test_stopping_a_broker_ends_its_jvm_and_removes_its_folder_and_is_safe_twice():
    broker = LocalBroker().start()
    folder = broker.log_path.parent
    assert processes_mentioning(str(folder))  # the JVM, started with its config from there
    broker.stop()
    assert not folder.exists()
    assert not processes_mentioning(str(folder))  # not even a zombie: it was reaped
    broker.stop()
    with pytest.raises(LocalBrokerError, match="not running; call start"):
        _ = broker.bootstrap_servers


def processes_mentioning(text: str) -> list[int]:
    """The ids of this machine's processes whose command line contains ``text`` (Linux)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:  # ended meanwhile
            continue
    return found
