"""Helpers of the Kafka tests: configs over a topic, records produced and read back as a
``read_committed`` consumer sees them."""

from __future__ import annotations

import itertools
import json
import secrets
from pathlib import Path
from typing import Any

from streamwarden.config import PipelineConfig, parse_config
from streamwarden.local.producer import produce_lines
from tests.support import PAGEVIEW_AGGREGATES, PAGEVIEW_SCHEMA

_names = itertools.count()

#: The user the session's broker takes SASL/PLAIN logins of, with a password new each session
#: (a secret that the tests look for everywhere it must not be).
SASL_USER = "svc"
SASL_PASSWORD = "sw-" + secrets.token_hex(12)


def topic_name(prefix: str) -> str:
    """A topic name no other test of this session uses (one broker serves them all)."""
    return f"{prefix}-{next(_names)}"


def client(broker: Any) -> dict[str, str]:
    return {"bootstrap.servers": broker.bootstrap_servers}


def produce(broker: Any, topic: str, lines: list[str], **kwargs: Any) -> int:
    return produce_lines(client(broker), topic, lines, **kwargs)


def committed_records(broker: Any, topic: str) -> list[dict[str, Any]]:
    """Every record of ``topic`` a ``read_committed`` consumer sees: value (parsed), key and
    headers. Reads up to the end offsets taken first, so it returns when it has them all."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            **client(broker),
            "group.id": topic_name("reader"),
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        ends = {}
        for p in partitions:
            _, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            ends[p] = high
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        out: list[dict[str, Any]] = []
        done = {p for p, high in ends.items() if high == 0}
        while len(done) < len(ends):
            msg = consumer.poll(5)
            if msg is None:
                # past the last committed record: a read_committed consumer's position moves
                # over aborted records and markers, so compare positions
                positions = consumer.position([TopicPartition(topic, p) for p in ends])
                done |= {tp.partition for tp in positions if tp.offset >= ends[tp.partition]}
                continue
            if msg.error():
                continue
            out.append(
                {
                    "value": json.loads(msg.value()),
                    "key": None if msg.key() is None else msg.key().decode(),
                    "headers": {k: v.decode() for k, v in (msg.headers() or [])},
                    "partition": msg.partition(),
                }
            )
            if msg.offset() + 1 >= ends[msg.partition()]:
                done.add(msg.partition())
        return out
    finally:
        consumer.close()


def kafka_pipeline_config(
    root: Path, broker: Any, source: dict[str, Any], sinks: dict[str, str], **sections: Any
) -> PipelineConfig:
    """A sessions (or patterns) pipeline of pageviews (:data:`~tests.support.PAGEVIEW_SCHEMA`,
    sessions with :data:`~tests.support.PAGEVIEW_AGGREGATES`) reading ``source`` (``[source]``
    settings, kind kafka) and writing each sink of ``sinks`` (name -> topic) to Kafka;
    ``sections`` override parts (``schema`` replaces the whole schema)."""
    data: dict[str, Any] = {
        "name": "kafka-test",
        "schema": PAGEVIEW_SCHEMA,
        "source": {"kind": "kafka", **source},
        "kafka": {"bootstrap_servers": broker.bootstrap_servers},
        "sinks": {name: {"kind": "kafka", "topic": topic} for name, topic in sinks.items()},
        "checkpoint": {"path": str(root / "checkpoint")},
        "spark": {"shuffle_partitions": 2},
        "monitoring": {"prometheus_port": "off"},
    }
    for key, value in sections.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    if data.get("operator", "sessions") == "sessions":
        data["sessions"] = {"aggregates": PAGEVIEW_AGGREGATES, **data.get("sessions", {})}
    if "schema" in sections:
        data["schema"] = sections["schema"]
    return parse_config(data, origin="test")
