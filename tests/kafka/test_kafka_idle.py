"""Lesson L2 with a Kafka source: when the topic goes quiet, the continuous runner's idle ticks
still move event time, so the open sessions close and their state is freed without another
record. (The ticks are read beside any source; processing time is passed in, here a clock
that runs an hour per second.)"""

from __future__ import annotations

import _thread
import threading
import time

import pytest

from streamwarden.pipeline import Pipeline
from tests.kafka.support import committed_records, kafka_pipeline_config, produce, topic_name
from tests.support import pageview

pytestmark = pytest.mark.spark


class _Closed(Exception):
    """Raised from the progress callback once the state is empty: ends the continuous run."""


def test_a_quiet_topic_still_closes_its_sessions_and_frees_their_state(
    spark, kafka_broker, workdir
):
    source, sessions, dead = (topic_name(n) for n in ("pageviews", "sessions", "dead"))
    for topic in (source, sessions, dead):
        kafka_broker.create_topic(topic)
    produce(kafka_broker, source, [pageview("a", 0), pageview("b", 5), pageview("a", 10)])
    config = kafka_pipeline_config(
        workdir,
        kafka_broker,
        {"topics": [source]},
        {"sessions": sessions, "dead_letters": dead},
        sessions={"idle_timeout": "10m"},
        spark={"trigger_interval": "500ms"},
    )
    started = time.monotonic()
    hour_per_second = lambda: int((time.monotonic() - started) * 3_600_000)  # noqa: E731
    state_rows: list[int] = []

    def watch(progress, _stats):
        state_rows.append(int(progress["stateOperators"][0]["numRowsTotal"]))
        if state_rows[-1] == 0 and max(state_rows) > 0:
            raise _Closed

    guard = threading.Timer(180, _thread.interrupt_main)  # a bound, should the ticks not come
    guard.start()
    try:
        with pytest.raises(_Closed):
            Pipeline(config, spark).run(once=False, on_progress=watch, now_ms=hour_per_second)
    finally:
        guard.cancel()

    assert max(state_rows) == 2  # two users' sessions were open
    closed = [r["value"] for r in committed_records(kafka_broker, sessions)]
    assert sorted((s["user_id"], s["event_count"]) for s in closed) == [("a", 2), ("b", 1)]
