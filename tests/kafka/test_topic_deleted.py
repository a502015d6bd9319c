"""A topic deleted under a pipeline, on a real broker: no restart brings it back, so the
supervisor does not try; the run ends at the first failure with what to do (issue 43, item 6).
A sink topic made again lets the next run go on from its checkpoint."""

from __future__ import annotations

import pytest

from streamwarden.errors import SinkTopicGoneError, SourceRecordsLostError
from streamwarden.pipeline import Pipeline
from tests.kafka.support import committed_records, kafka_pipeline_config, produce, topic_name
from tests.support import pageview

# four short runs on the shared broker, about 40 s in all
pytestmark = [pytest.mark.spark, pytest.mark.soak]

#: Restarts quick and many: a test that wrongly restarts fails on the count, not the clock.
SUPERVISOR = {"initial_backoff": "1s", "max_backoff": "1s", "max_restarts": 5, "bisect_after": 0}


def test_a_deleted_topic_ends_the_run_at_once_saying_what_to_do(spark, kafka_broker, workdir):
    source, sessions, dead = (topic_name(n) for n in ("pageviews", "sessions", "dead"))
    for topic in (source, sessions, dead):
        kafka_broker.create_topic(topic)
    config = kafka_pipeline_config(
        workdir,
        kafka_broker,
        {"topics": [source]},
        {"sessions": sessions, "dead_letters": dead},
        supervisor=SUPERVISOR,
    )
    produce(kafka_broker, source, [pageview("u1", m) for m in range(3)])
    Pipeline(config, spark).run(once=True)

    # the dead letters' topic is deleted, and a record arrives that is a dead letter
    kafka_broker.delete_topic(dead)
    produce(kafka_broker, source, ["not json"])
    failures: list = []
    with pytest.raises(SinkTopicGoneError) as sink_gone:
        Pipeline(config, spark).run(once=True, supervise=True, on_failure=failures.append)
    message = str(sink_gone.value)
    assert [f.restartable for f in failures] == [False]  # no restart tried
    assert f"Kafka topic {dead!r} no longer exists" in message and "create it again" in message
    assert "resumes from the checkpoint" not in message and len(message.splitlines()) == 1

    # made again, as the message says: the next run writes the batch that failed
    kafka_broker.create_topic(dead)
    Pipeline(config, spark).run(once=True, supervise=True)
    assert [r["value"]["reason"] for r in committed_records(kafka_broker, dead)] == [
        "malformed_json"
    ]

    # the source topic is deleted: its offsets are gone with it
    kafka_broker.delete_topic(source)
    failures.clear()
    with pytest.raises(SourceRecordsLostError) as source_gone:
        Pipeline(config, spark).run(once=True, supervise=True, on_failure=failures.append)
    message = str(source_gone.value)
    assert [f.restartable for f in failures] == [False]
    assert f"a topic of the source ({source!r}) was deleted" in message
    assert "fail_on_data_loss = false" in message and "new checkpoint.path" in message
    assert "resumes from the checkpoint" not in message
