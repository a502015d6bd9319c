"""``doctor``'s input sample of a Kafka source: the newest records of each partition of the
topics, read with the stream's options and validated as the pipeline validates them. A broker
that does not answer is a warning, not a failed ``doctor``."""

from __future__ import annotations

import json
import socket
from types import SimpleNamespace

import pytest

from streamwarden.doctor import Severity
from streamwarden.doctor.input_sample import SAMPLE, check_input_sample
from tests.kafka.support import kafka_pipeline_config, produce, topic_name
from tests.support import T0_MS, pageview

pytestmark = pytest.mark.spark


def config_of(root, broker, source, **sections):
    """A pageview pipeline reading ``source`` (its ``[source]`` settings, kind kafka); its sinks'
    topics are never asked for here."""
    return kafka_pipeline_config(
        root, broker, source, {"sessions": "sessions", "dead_letters": "dead"}, **sections
    )


def in_seconds(n: int) -> list[str]:
    return [
        json.dumps({"user_id": f"u{i}", "ts": T0_MS // 1000 + i, "page_number": 1, "url": "/"})
        for i in range(n)
    ]


def test_the_newest_records_of_a_topic_in_seconds_for_ms_name_the_unit_that_fits(
    spark, kafka_broker, tmp_path
):
    """Older records in ms, then newer ones in seconds, in each of two partitions: the sample
    is the newest :data:`SAMPLE`, all in seconds."""
    topic = topic_name("payments")
    kafka_broker.create_topic(topic, partitions=2)
    for partition in (0, 1):
        old = [pageview(f"u{i}", i) for i in range(50)]
        produce(kafka_broker, topic, old + in_seconds(SAMPLE // 2), partition=partition)
    findings = {
        f.code: f
        for f in check_input_sample(config_of(tmp_path, kafka_broker, {"topics": [topic]}), spark)
    }

    times = findings["implausible-event-times"]
    assert times.severity == Severity.ERROR
    assert (
        f"{SAMPLE} of {SAMPLE} event times read from the newest records of topic(s) {topic!r}"
        in times.message
    )
    assert "read in 's' they would be plausible" in times.message
    assert times.fix == "set schema.time_unit to 's'"
    rejected = findings["input-rejected"]  # before validation.earliest_event_time, each of them
    assert (
        f"of {SAMPLE} record(s) sampled from the newest records of topic(s) {topic!r}"
        in rejected.message
    )
    assert f"(invalid_timestamp {SAMPLE})" in rejected.message
    assert f"(at topic {topic} partition " in rejected.message  # where the example record was


def test_a_topic_pattern_samples_the_topics_it_matches(spark, kafka_broker, tmp_path):
    prefix = topic_name("clicks")
    for name, lines in ((f"{prefix}-a", [pageview("u1", 1)]), (f"{prefix}-b", in_seconds(1))):
        kafka_broker.create_topic(name)
        produce(kafka_broker, name, lines)
    config = config_of(tmp_path, kafka_broker, {"topic_pattern": f"{prefix}-.*"})
    findings = {f.code: f for f in check_input_sample(config, spark)}
    rejected = findings["input-rejected"]
    assert rejected.severity == Severity.WARNING
    assert (
        f"of 2 record(s) sampled from the newest records of the topics matching '{prefix}-.*'"
        in rejected.message
    )
    assert "1 would be dead letters (invalid_timestamp 1)" in rejected.message


def test_an_empty_topic_gives_no_finding(spark, kafka_broker, tmp_path):
    topic = topic_name("quiet")
    kafka_broker.create_topic(topic, partitions=2)
    assert check_input_sample(config_of(tmp_path, kafka_broker, {"topics": [topic]}), spark) == []


def test_a_broker_that_does_not_answer_is_a_warning_that_the_sample_was_not_read(spark, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = SimpleNamespace(bootstrap_servers=f"127.0.0.1:{s.getsockname()[1]}")
    config = config_of(tmp_path, closed, {"topics": ["payments"]}, kafka={"connect_timeout_s": 1})
    [finding] = check_input_sample(config, spark)
    assert (finding.code, finding.severity) == ("input-unread", Severity.WARNING)
    assert finding.message.startswith(
        "could not read a sample of the newest records of topic(s) 'payments' to check it "
        f"against [schema]: Kafka at {closed.bootstrap_servers!r} did not answer within 1 s"
    )
