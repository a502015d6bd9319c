"""What a Kafka cluster has, asked before a run: does the broker answer, which topics exist.

Used by the Kafka source and sink before Spark starts, so that an unreachable broker or a
missing topic is one clear line instead of a query that retries and then fails in the JVM.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from streamwarden.errors import ConfigError, UnreachableError

__all__ = [
    "INTERNAL_TOPICS",
    "QUIET",
    "error_text",
    "existing_topics",
    "matching_topics",
    "partition_offsets",
    "require_topics",
    "topic_ids",
]

T = TypeVar("T")

#: The broker's own topics, which a consumer subscribed by pattern never reads (Kafka's
#: ``exclude.internal.topics``, on by default).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def existing_topics(client: Mapping[str, str], timeout_s: float) -> dict[str, int]:
    """The cluster's topics with their partition counts; :class:`UnreachableError` naming the
    servers (never a secret) if no broker answers within ``timeout_s``."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import AdminClient

    servers = client.get("bootstrap.servers", "?")
    refused: list[str] = []

    def on_error(error: KafkaError) -> None:
        if error.code() == KafkaError._AUTHENTICATION:
            refused.append(str(error.str()))

    settings: dict[str, Any] = {**client, "logger": QUIET, "error_cb": on_error}
    admin = AdminClient(settings)
    try:
        metadata = admin.list_topics(timeout=timeout_s)
    except KafkaException as exc:
        admin.poll(0)  # serves the error callbacks of the failed attempts
        if refused:
            raise UnreachableError(
                f"Kafka at {servers!r} refused the login of user "
                f"{client.get('sasl.username')!r} ({refused[0].splitlines()[0]}); check "
                "[kafka] sasl_username, sasl_mechanism and the password's variable or file"
            ) from None
        raise UnreachableError(
            f"Kafka at {servers!r} did not answer within {timeout_s:g} s "
            f"({error_text(exc)}); check [kafka] bootstrap_servers and security settings, and "
            "that the broker is up"
        ) from None
    return {name: len(topic.partitions) for name, topic in metadata.topics.items()}


def require_topics(
    client: Mapping[str, str], topics: tuple[str, ...], timeout_s: float, setting: str
) -> dict[str, int]:
    """The partition counts of ``topics``; a :class:`ConfigError` naming those missing."""
    found = existing_topics(client, timeout_s)
    missing = [t for t in topics if t not in found]
    if missing:
        servers = client.get("bootstrap.servers", "?")
        raise ConfigError(
            f"{setting}: topic {', '.join(repr(t) for t in missing)} does not exist on Kafka at "
            f"{servers!r}; create it (kafka-topics.sh --create --topic NAME --partitions N) or "
            f"fix {setting}"
        )
    return {t: found[t] for t in topics}


def matching_topics(client: Mapping[str, str], pattern: str, timeout_s: float) -> dict[str, int]:
    """The partition counts of the cluster's topics that ``pattern`` (a regular expression)
    matches as a whole, as a consumer subscribed by pattern reads them (internal topics left
    out); none is no error, as a pattern may match no topic yet."""
    import re

    matches = re.compile(pattern).fullmatch
    found = existing_topics(client, timeout_s)
    return {t: n for t, n in found.items() if t not in INTERNAL_TOPICS and matches(t)}


def partition_offsets(
    client: Mapping[str, str], partitions: Mapping[str, int], timeout_s: float
) -> dict[tuple[str, int], tuple[int, int]]:
    """The low and high watermark offsets (the oldest record's, and the next record's) of each
    partition of ``partitions`` (topic -> partition count), by (topic, partition);
    :class:`UnreachableError` if the broker does not give them within ``timeout_s``."""
    from confluent_kafka import KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    wanted = [TopicPartition(t, p) for t, n in partitions.items() for p in range(n)]
    if not wanted:
        return {}
    settings: dict[str, Any] = {**client, "logger": QUIET}
    admin = AdminClient(settings)

    def offsets(spec: OffsetSpec) -> dict[tuple[str, int], int]:
        futures = admin.list_offsets({tp: spec for tp in wanted}, request_timeout=timeout_s)
        return {(tp.topic, tp.partition): f.result().offset for tp, f in futures.items()}

    deadline = time.monotonic() + timeout_s
    try:
        low = _retrying(lambda: offsets(OffsetSpec.earliest()), deadline)  # type: ignore[no-untyped-call]
        high = _retrying(lambda: offsets(OffsetSpec.latest()), deadline)  # type: ignore[no-untyped-call]
    except KafkaException as exc:
        servers = client.get("bootstrap.servers", "?")
        raise UnreachableError(
            f"Kafka at {servers!r} did not give the offsets of topic(s) "
            f"{', '.join(repr(t) for t in partitions)} within {timeout_s:g} s "
            f"({error_text(exc)}); check that the broker is up and the topics readable"
        ) from None
    return {tp: (low[tp], high[tp]) for tp in low}


def _retrying(call: Callable[[], T], deadline: float) -> T:
    """``call()``, asked again while it fails with an error confluent-kafka marks retriable and
    ``deadline`` (``time.monotonic()``) has not passed: a partition whose leader is still being
    elected (a topic just made, a broker just back) answers NOT_LEADER for a moment."""
    from confluent_kafka import KafkaException

    while True:
        try:
            return call()
        except KafkaException as exc:
            error = exc.args[0] if exc.args else None
            retriable = getattr(error, "retriable", None)
            if not (callable(retriable) and retriable()) or time.monotonic() >= deadline:
                raise
        time.sleep(0.2)


def topic_ids(client: Mapping[str, str], topics: list[str], timeout_s: float) -> dict[str, str]:
    """The id of each of ``topics`` that exists (Kafka's topic UUID, new each time a topic is
    made); :class:`UnreachableError` if the broker does not give them within ``timeout_s``."""
    from confluent_kafka import KafkaException, TopicCollection
    from confluent_kafka.admin import AdminClient

    if not topics:
        return {}
    settings: dict[str, Any] = {**client, "logger": QUIET}
    admin = AdminClient(settings)
    futures = admin.describe_topics(TopicCollection(topics), request_timeout=timeout_s)
    ids = {}
    for topic, future in futures.items():
        try:
            ids[topic] = str(future.result().topic_id)
        except KafkaException as exc:
            if "UNKNOWN_TOPIC" in str(exc).upper() or "Unknown topic" in error_text(exc):
                continue  # deleted, not (yet) made again
            servers = client.get("bootstrap.servers", "?")
            raise UnreachableError(
                f"Kafka at {servers!r} did not describe topic {topic!r} within {timeout_s:g} s "
                f"({error_text(exc)}); check that the broker is up and the topic readable"
            ) from None
    return ids


def error_text(exc: Exception) -> str:
    """The first line of a confluent-kafka error (its ``KafkaError.str()``), or its class."""
    error = exc.args[0] if exc.args else exc
    text = getattr(error, "str", lambda: str(error))()
    return str(text).splitlines()[0] if text else type(exc).__name__


class _Quiet:
    """librdkafka's own log lines (connection refused, retrying...) would reach the terminal;
    the errors raised say what matters. Pass as a client's ``logger``."""

    def log(self, *args: object, **kwargs: object) -> None:
        return None


QUIET = _Quiet()
