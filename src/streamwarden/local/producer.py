"""Writes records to a topic, for the Kafka demo, the tests and the benchmark: what a producer
upstream of a pipeline does. Not used by the pipeline itself (its sinks are transactional,
:mod:`streamwarden.sinks.kafka`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from streamwarden.errors import UnreachableError
from streamwarden.kafka.cluster import QUIET

__all__ = ["produce_lines"]


def produce_lines(
    client: Mapping[str, str],
    topic: str,
    lines: Iterable[str],
    *,
    partition: int | None = None,
    timestamp_ms: Callable[[int], int | None] | None = None,
    on_sent: Callable[[int], None] | None = None,
    timeout_s: float = 60.0,
) -> int:
    """Produces each line as one record's value (no key) to ``topic`` (to ``partition`` if
    given); ``timestamp_ms(i)`` sets record i's Kafka timestamp. Waits until every record is
    acknowledged; returns how many were. ``on_sent(i)`` is called after record i is queued
    (the demo paces its rate there). Raises :class:`UnreachableError` if the broker does not
    acknowledge them all within ``timeout_s`` after the last."""
    from confluent_kafka import Producer

    settings: dict[str, Any] = {**client, "linger.ms": 20, "logger": QUIET}
    producer = Producer(settings)
    failures: list[str] = []

    def delivered(err: Any, _msg: Any) -> None:
        if err is not None:
            failures.append(err.str())

    sent = 0
    for i, line in enumerate(lines):
        extra: dict[str, Any] = {}
        if partition is not None:
            extra["partition"] = partition
        if timestamp_ms is not None and (ts := timestamp_ms(i)) is not None:
            extra["timestamp"] = ts
        while True:
            try:
                producer.produce(topic, value=line.encode(), on_delivery=delivered, **extra)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
        sent += 1
        if on_sent is not None:
            on_sent(i)
    left = producer.flush(timeout_s)
    if left or failures:
        reason = failures[0] if failures else f"{left} records unacknowledged"
        raise UnreachableError(
            f"Kafka at {client.get('bootstrap.servers')!r} did not take every record for "
            f"topic {topic!r} ({reason}); check that the broker is up and the topic exists"
        )
    return sent
