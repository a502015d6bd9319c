"""Records the checkpoint still expects, deleted from the topic before the pipeline read them
(retention, or a delete): by default the run stops with one line that says what was lost and
what to do; with ``fail_on_data_loss = false`` it goes on, and the skipped offsets are counted
and reported. Never a silent skip."""

from __future__ import annotations

import pytest

from streamwarden.cli.main import main
from streamwarden.pipeline import Pipeline
from tests.kafka.support import (
    client,
    kafka_pipeline_config,
    produce,
    topic_name,
)
from tests.support import PAGEVIEW_AGGREGATES_TOML, PAGEVIEW_TOML, pageview

pytestmark = pytest.mark.spark


def _delete_before(broker, topic: str, offset: int) -> None:
    """What retention does: the partition's records before ``offset`` are gone."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(client(broker))
    [future] = admin.delete_records([TopicPartition(topic, 0, offset)]).values()
    assert future.result(timeout=30).low_watermark == offset


def _topics_with_a_gap(broker, workdir, spark, **source):
    source_topic, sessions, dead = (topic_name(n) for n in ("pageviews", "sessions", "dead"))
    for topic in (source_topic, sessions, dead):
        broker.create_topic(topic)
    config = kafka_pipeline_config(
        workdir, broker, {"topics": [source_topic], **source},
        {"sessions": sessions, "dead_letters": dead},
    )  # fmt: skip
    produce(broker, source_topic, [pageview("u1", m) for m in range(10)])
    Pipeline(config, spark).run(once=True)  # reads offsets 0-9
    produce(broker, source_topic, [pageview("u1", 10 + m) for m in range(10)])
    _delete_before(broker, source_topic, 15)  # 10-14 never read
    return config


def test_by_default_a_deleted_range_stops_the_run_with_one_line_saying_what_to_do(
    spark, kafka_broker, workdir, capsys
):
    config = _topics_with_a_gap(kafka_broker, workdir, spark)
    toml = workdir / "pipeline.toml"
    toml.write_text(
        f"""
name = "kafka-test"
[source]
kind = "kafka"
topics = {config.source.topics!r}
[kafka]
bootstrap_servers = "{kafka_broker.bootstrap_servers}"
[sinks.sessions]
kind = "kafka"
topic = "{config.sinks["sessions"].topic}"
[sinks.dead_letters]
kind = "kafka"
topic = "{config.sinks["dead_letters"].topic}"
[checkpoint]
path = "{config.checkpoint.path}"
[spark]
shuffle_partitions = 2
[monitoring]
prometheus_port = "off"
{PAGEVIEW_TOML}{PAGEVIEW_AGGREGATES_TOML}""".replace("['", '["').replace("']", '"]')
    )
    assert main(["run", str(toml), "--once", "--skip-doctor"]) == 1
    err = capsys.readouterr().err
    first = err.strip().splitlines()[0]
    assert first.startswith("Error: ") and "Traceback" not in err
    assert "deleted from Kafka before the pipeline read them" in err
    assert "fail_on_data_loss = false" in err


def test_allowed_a_deleted_range_is_counted_and_reported(spark, kafka_broker, workdir):
    config = _topics_with_a_gap(kafka_broker, workdir, spark, fail_on_data_loss=False)
    pipeline = Pipeline(config, spark)
    result = pipeline.run(once=True)

    assert sum(int(p["numInputRows"]) for p in result.progress) == 5  # offsets 15-19
    assert pipeline.monitor is not None
    skipped = [r.summary.offsets_skipped for r in pipeline.monitor.records]
    findings = [f for r in pipeline.monitor.records for f in r.findings]
    assert sum(skipped) == 5
    assert [f.kind for f in findings] == ["offsets_skipped"] and "5 Kafka offsets" in findings[
        0
    ].message


def _remade_topic(broker, workdir, spark, old: int, new: int, **source):
    """A topic read up to offset ``old``, then deleted and made again under the same name with
    ``new`` records (offsets 0 to ``new - 1``)."""
    source_topic, sessions, dead = (topic_name(n) for n in ("remade", "sessions", "dead"))
    for topic in (source_topic, sessions, dead):
        broker.create_topic(topic)
    config = kafka_pipeline_config(
        workdir, broker, {"topics": [source_topic], **source},
        {"sessions": sessions, "dead_letters": dead},
    )  # fmt: skip
    produce(broker, source_topic, [pageview("u1", m) for m in range(old)])
    Pipeline(config, spark).run(once=True)  # reads offsets 0 to old - 1
    broker.delete_topic(source_topic)
    broker.create_topic(source_topic)
    produce(broker, source_topic, [pageview("u2", m) for m in range(new)])
    return config


def _skips(pipeline) -> tuple[list[int], list[str]]:
    assert pipeline.monitor is not None
    skipped = [r.summary.offsets_skipped for r in pipeline.monitor.records]
    findings = [f.message for r in pipeline.monitor.records for f in r.findings]
    return skipped, findings


def test_a_topic_made_again_under_its_name_has_every_skipped_offset_counted(
    spark, kafka_broker, workdir
):
    # the checkpoint resumes at 10; the new topic holds 0-29: Spark reads 10-29 without a word
    config = _remade_topic(kafka_broker, workdir, spark, 10, 30, fail_on_data_loss=False)
    pipeline = Pipeline(config, spark)
    result = pipeline.run(once=True)
    assert sum(int(p["numInputRows"]) for p in result.progress) == 20
    skipped, findings = _skips(pipeline)
    assert sum(skipped) == 10  # offsets 0-9 of the new topic
    assert len(findings) == 1 and "10 Kafka offsets" in findings[0]


@pytest.mark.soak
def test_a_topic_made_again_shorter_than_the_checkpoint_has_its_offsets_counted_too(
    spark, kafka_broker, workdir
):
    # the checkpoint resumes at 20; the new topic holds 0-7: Spark starts over at its end
    config = _remade_topic(kafka_broker, workdir, spark, 20, 8, fail_on_data_loss=False)
    pipeline = Pipeline(config, spark)
    pipeline.run(once=True)
    skipped, _ = _skips(pipeline)
    assert sum(skipped) == 8
    produce(kafka_broker, config.source.topics[0], [pageview("u3", m) for m in range(5)])
    again = Pipeline(config, spark)
    result = again.run(once=True)  # goes on in the new topic, skipping nothing more
    assert sum(int(p["numInputRows"]) for p in result.progress) == 5
    assert sum(_skips(again)[0]) == 0


@pytest.mark.soak
def test_by_default_a_topic_made_again_stops_the_run_saying_what_would_be_skipped(
    spark, kafka_broker, workdir
):
    from streamwarden.errors import SourceRecordsLostError

    config = _remade_topic(kafka_broker, workdir, spark, 10, 30)
    with pytest.raises(SourceRecordsLostError) as caught:
        Pipeline(config, spark).run(once=True)
    message = str(caught.value)
    assert "deleted and made again" in message and "offsets 0-9" in message
    assert "fail_on_data_loss = false" in message
