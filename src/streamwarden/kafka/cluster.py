"""What a Kafka cluster has, asked before a run: does the broker answer, which topics exist.

Used by the Kafka source and sink before Spark starts, so that an unreachable broker or a
missing topic is one clear line instead of a query that retries and then fails in the JVM.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streamwarden.errors import ConfigError, UnreachableError

__all__ = ["QUIET", "error_text", "existing_topics", "require_topics"]


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
