"""A sessions pipeline from a Kafka topic to Kafka topics, on a real broker: every record read
ends in exactly one place, counted from the topics as a ``read_committed`` consumer sees them;
a rejected record's dead letter says where it was read; the event time can be the record's
Kafka timestamp."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta

import pytest

from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.operators.base import account_run
from streamwarden.pipeline import Pipeline
from streamwarden.sinks.kafka import BATCH_HEADER, ID_HEADER
from tests.kafka.support import committed_records, kafka_pipeline_config, produce, topic_name
from tests.support import T0_MS, minutes, pageview

pytestmark = pytest.mark.spark


def _generated_lines(folder) -> list[str]:
    spec = TrafficSpec(
        users=60,
        events=1500,
        rate_per_second=0.2,
        late_fraction=0.03,
        late_delay=(timedelta(minutes=45), timedelta(minutes=70)),
        too_late_fraction=0.01,
        too_late_delay=timedelta(hours=2),
        malformed_fraction=0.02,
        files=3,
        seed=11,
    )
    summary = generate_traffic(spec, folder)
    lines = [
        line for path in summary.files for line in path.read_text(encoding="utf-8").splitlines()
    ]
    assert len(lines) == summary.records
    return lines


def test_records_from_a_topic_end_in_the_session_and_dead_letter_topics_exactly_once(
    spark, kafka_broker, workdir
):
    source, sessions, dead = (topic_name(n) for n in ("pageviews", "sessions", "dead"))
    kafka_broker.create_topic(source, partitions=2)
    kafka_broker.create_topic(sessions, partitions=2)
    kafka_broker.create_topic(dead)
    lines = _generated_lines(workdir / "generated")
    produce(kafka_broker, source, lines)
    config = kafka_pipeline_config(
        workdir,
        kafka_broker,
        {"topics": [source], "max_offsets_per_trigger": 400},
        {"sessions": sessions, "dead_letters": dead},
        sessions={"gap": "30m", "allowed_lateness": "45m"},
    )

    result = Pipeline(config, spark).run(once=True, drain=True)

    assert len(result.batches) >= 4  # several batches, each its own transaction
    accounting = account_run(spark, config, len(lines))
    assert accounting.balanced, accounting.describe()
    revisions = committed_records(kafka_broker, sessions)
    ids = [r["headers"][ID_HEADER] for r in revisions]
    assert len(ids) == len(set(ids))  # no session revision twice
    assert all(r["key"] == r["value"]["user_id"] for r in revisions)
    assert {r["headers"][BATCH_HEADER] for r in revisions} <= {
        str(b.batch_id) for b in result.batches
    }
    letters = committed_records(kafka_broker, dead)
    assert sum(accounting.dead_letters.values()) == len(letters)
    rejected = [d["value"] for d in letters if d["value"]["reason"] != "too_late"]
    assert rejected and all(
        f"(at topic {source} partition " in d["detail"] and " offset " in d["detail"]
        for d in rejected
    )


def test_a_rejected_record_s_dead_letter_names_its_topic_partition_offset_and_key(
    spark, kafka_broker, workdir
):
    from confluent_kafka import Producer

    source, sessions, dead = (topic_name(n) for n in ("pageviews", "sessions", "dead"))
    for topic in (source, sessions, dead):
        kafka_broker.create_topic(topic)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
    producer.produce(source, value=b"{broken", key=b"user-7")
    producer.produce(source, value=b"[]")
    assert producer.flush(30) == 0
    config = kafka_pipeline_config(
        workdir, kafka_broker, {"topics": [source]}, {"sessions": sessions, "dead_letters": dead}
    )
    Pipeline(config, spark).run(once=True)

    details = sorted(r["value"]["detail"] for r in committed_records(kafka_broker, dead))
    assert details == [
        "record ends inside its JSON object (cut short?) "
        f"(at topic {source} partition 0 offset 0 key user-7)",
        "record is not a JSON object (it starts with '[') "
        f"(at topic {source} partition 0 offset 1)",
    ]


def test_a_second_run_on_the_same_checkpoint_writes_nothing_again(spark, kafka_broker, workdir):
    source, sessions, dead = (topic_name(n) for n in ("pageviews", "sessions", "dead"))
    for topic in (source, sessions, dead):
        kafka_broker.create_topic(topic)
    produce(kafka_broker, source, [pageview("u1", 0), pageview("u1", 5), pageview("u2", 1)])
    config = kafka_pipeline_config(
        workdir, kafka_broker, {"topics": [source]}, {"sessions": sessions, "dead_letters": dead}
    )
    Pipeline(config, spark).run(once=True, drain=True)
    first = committed_records(kafka_broker, sessions)
    # the sinks' last committed batch survives the process: a fresh sink object skips it
    Pipeline(config, spark).run(once=True, drain=True)

    assert committed_records(kafka_broker, sessions) == first
    assert sorted(r["value"]["event_count"] for r in first) == [1, 2]


def test_the_kafka_timestamp_can_be_the_event_time(spark, kafka_broker, workdir):
    source, sessions, dead = (topic_name(n) for n in ("pageviews", "sessions", "dead"))
    for topic in (source, sessions, dead):
        kafka_broker.create_topic(topic)
    # the records' own ts says minute 0 for all four; their Kafka timestamps 40 minutes apart,
    # but the last has Kafka's "no timestamp" (-1, as librdkafka sends it as CreateTime)
    lines = [json.dumps({"user_id": "u1", "ts": T0_MS, "page_number": 1})] * 4
    stamps = [minutes(0), minutes(40), minutes(80), -1]
    produce(kafka_broker, source, lines, timestamp_ms=lambda i: stamps[i])
    config = kafka_pipeline_config(
        workdir,
        kafka_broker,
        {"topics": [source], "event_time": "kafka_timestamp"},
        {"sessions": sessions, "dead_letters": dead},
        sessions={"gap": "30m"},
        # no earliest time: -1 is refused as "no timestamp", not as a time before 2000
        validation={"earliest_event_time": "off"},
    )
    Pipeline(config, spark).run(once=True, drain=True)

    starts = Counter(r["value"]["session_start"] for r in committed_records(kafka_broker, sessions))
    assert len(starts) == 3  # three sessions: the Kafka timestamps, not the field, decided
    [letter] = [r["value"] for r in committed_records(kafka_broker, dead)]
    assert letter["reason"] == "invalid_timestamp"
    assert "no event time" in letter["detail"] and "offset 3" in letter["detail"]
