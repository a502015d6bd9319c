"""No call of the Kafka sink to the broker goes without a deadline: each gets the sink's timeout,
and one that overruns it (librdkafka issue 5456: ``send_offsets_to_transaction`` blocked for 11
minutes across a broker restart) abandons the batch: the producer is dropped (a new one fences
it and aborts its transaction), one line names the sink and the call, and the batch fails so
that the supervisor replays it. Without a broker or Spark: a fake producer (the real broker
case is tests/kafka/test_broker_outage.py)."""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta
from types import SimpleNamespace

import pytest

from streamwarden.errors import SinkError
from streamwarden.settings.kafka import KafkaConfig
from streamwarden.sinks import kafka as kafka_sink
from streamwarden.sinks.kafka import KafkaBatchSink, KafkaSinkSettings

TIMEOUT = timedelta(seconds=0.3)


class FakeProducer:
    """Records each call with the timeout it was given; ``stuck`` names a call that ignores
    its timeout and blocks until released."""

    def __init__(self, stuck: str | None = None) -> None:
        self.calls: list[tuple[str, float | None]] = []
        self.stuck = stuck
        self.release = threading.Event()

    def _call(self, name: str, timeout: float | None = None) -> None:
        self.calls.append((name, timeout))
        if name == self.stuck:
            self.release.wait(30)

    def begin_transaction(self) -> None:
        self._call("begin_transaction")

    def produce(self, topic, value, key, headers) -> None:
        self._call("produce")

    def poll(self, timeout: float) -> int:
        return 0

    def send_offsets_to_transaction(self, positions, group, timeout: float) -> None:
        self._call("send_offsets_to_transaction", timeout)

    def commit_transaction(self, timeout: float) -> None:
        self._call("commit_transaction", timeout)

    def abort_transaction(self, timeout: float) -> None:
        self._call("abort_transaction", timeout)


@pytest.fixture
def sink(monkeypatch):
    monkeypatch.setattr(kafka_sink, "_GRACE_S", 0.1)
    monkeypatch.setattr(
        kafka_sink, "_records", lambda rows, shape: iter([("u1", '{"n": 1}', None)])
    )
    kafka = KafkaConfig(bootstrap_servers="127.0.0.1:9")
    made = KafkaBatchSink("sessions", "out", kafka, "txn-id", timeout=TIMEOUT)
    return made


ROWS = SimpleNamespace(schema=SimpleNamespace(simpleString=lambda: "struct<n:int>"))


def test_every_transaction_step_gets_the_sinks_timeout(sink):
    producer = FakeProducer()
    sink._producer = producer
    assert sink.write_batch(ROWS, 0) is True
    timed = {name: timeout for name, timeout in producer.calls if timeout is not None}
    assert timed == {"send_offsets_to_transaction": 0.3, "commit_transaction": 0.3}


def test_a_call_that_overruns_its_deadline_abandons_the_batch_in_one_line(sink, caplog):
    producer = FakeProducer(stuck="send_offsets_to_transaction")
    sink._producer = producer
    started = time.monotonic()
    with caplog.at_level(logging.WARNING), pytest.raises(SinkError) as caught:
        sink.write_batch(ROWS, 7)
    waited = time.monotonic() - started
    producer.release.set()
    assert 0.3 <= waited < 2  # the timeout plus the grace, not the call's own 30 s
    message = str(caught.value)
    assert "\n" not in message
    assert "sink sessions: batch 7 abandoned" in message
    assert "send_offsets_to_transaction within 0.3 s" in message
    assert "written again when the pipeline restarts" in message
    assert sink._producer is None  # the next batch's producer fences this one
    assert sink._committed == -1  # not committed: replayed
    assert [r.getMessage() for r in caplog.records] == [message]


def test_a_full_producer_queue_waits_no_longer_than_the_deadline(sink):
    producer = FakeProducer()

    def full(topic, value, key, headers) -> None:
        raise BufferError("queue full")

    producer.produce = full  # type: ignore[method-assign]
    sink._producer = producer
    with pytest.raises(SinkError, match=r"deliveries of a full producer queue within 0\.3 s"):
        sink.write_batch(ROWS, 0)
    assert sink._producer is None


def test_a_failed_abort_drops_the_producer(sink):
    from confluent_kafka import KafkaError, KafkaException

    producer = FakeProducer()

    def fails(*args) -> None:
        raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "timed out"))

    producer.commit_transaction = fails  # type: ignore[method-assign]
    producer.abort_transaction = fails  # type: ignore[method-assign]
    sink._producer = producer
    with pytest.raises(SinkError, match="written again when the pipeline restarts"):
        sink.write_batch(ROWS, 0)
    assert sink._producer is None


def test_the_timeout_is_a_setting_of_the_sink():
    settings = KafkaSinkSettings.model_validate({"kind": "kafka", "topic": "t", "timeout": "20s"})
    assert settings.timeout == timedelta(seconds=20)
    assert KafkaSinkSettings.model_validate({"kind": "kafka", "topic": "t"}).timeout == timedelta(
        seconds=60
    )
