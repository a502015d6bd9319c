"""The patterns operator over Kafka: matches, timeouts and dead letters each to a topic of
their own, exactly once, keyed by the pattern key, with the match id as the idempotence key;
the same hand-worked results as from landing files (tests/pipeline/test_pattern_pipeline.py)."""

from __future__ import annotations

import pytest

from streamwarden.operators.base import account_run
from streamwarden.pipeline import Pipeline
from streamwarden.sinks.kafka import ID_HEADER
from tests.kafka.support import committed_records, kafka_pipeline_config, produce, topic_name
from tests.pipeline.test_pattern_pipeline import BATCHES, PATTERNS, RECORDS

pytestmark = pytest.mark.spark


@pytest.mark.soak  # 30 s; the default run writes Kafka topics with sessions (test_kafka_pipeline)
def test_a_pattern_pipeline_writes_its_matches_timeouts_and_dead_letters_to_topics(
    spark, kafka_broker, workdir
):
    names = ("pageviews", "matches", "timeouts", "dead")
    source, matches, timeouts, dead = (topic_name(n) for n in names)
    for topic in (source, matches, timeouts, dead):
        kafka_broker.create_topic(topic)
    config = kafka_pipeline_config(
        workdir,
        kafka_broker,
        {"topics": [source]},
        {"matches": matches, "timeouts": timeouts, "dead_letters": dead},
        operator="patterns",
        patterns=PATTERNS,
    )
    batches = []
    for i, batch in enumerate(BATCHES):  # one run per batch: the second is late for "b"
        produce(kafka_broker, source, batch)
        batches += Pipeline(config, spark).run(once=True, drain=i == len(BATCHES) - 1).batches

    found = committed_records(kafka_broker, matches)
    assert sorted(r["key"] for r in found) == ["a", "e"]
    assert all(r["headers"][ID_HEADER] == r["value"]["match_id"] for r in found)
    assert sorted(r["value"]["key"] for r in committed_records(kafka_broker, timeouts)) == [
        "b",
        "b",
        "c",
        "c",
    ]
    reasons = sorted(r["value"]["reason"] for r in committed_records(kafka_broker, dead))
    assert reasons == ["malformed_json", "missing_field", "too_late"]
    accounting = account_run(spark, config, RECORDS, batches)
    assert accounting.balanced, accounting.describe()
