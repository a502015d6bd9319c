"""Kafka in, Kafka out, killed with SIGKILL at three points and restarted on its checkpoint:
what a ``read_committed`` consumer sees is exactly the output of an uninterrupted run (0 lost,
0 doubled). The kill points: while a batch's transaction is being written (its records visible
to a ``read_uncommitted`` consumer), right after a batch's transaction committed (visible to
``read_committed``; Spark may not have committed the batch yet, so it replays it), and right
after Spark committed a batch to the checkpoint.

Four pipeline processes (about 2.5 minutes): in the long suite (``make soak``), for the default
run's budget; the default run kills file-source runs (tests/pipeline/test_crash_restart.py and
test_pattern_crash_restart.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from streamwarden.sinks.kafka import BATCH_HEADER
from tests.kafka.support import (
    client,
    committed_records,
    kafka_pipeline_config,
    produce,
    topic_name,
)
from tests.support import PAGEVIEW_AGGREGATES_TOML, PAGEVIEW_TOML, run_command

pytestmark = [pytest.mark.spark, pytest.mark.soak]

SPEC = TrafficSpec(
    users=200,
    events=4_000,
    rate_per_second=0.3,
    events_per_file=4_000,
    late_fraction=0.02,
    too_late_fraction=0.005,
    malformed_fraction=0.01,
)

CONFIG_TOML = (
    """
name = "kafka-crash"
[source]
kind = "kafka"
topics = ["{source}"]
max_offsets_per_trigger = 500
[kafka]
bootstrap_servers = "{servers}"
[sessions]
allowed_lateness = "10m"
"""
    + PAGEVIEW_AGGREGATES_TOML
    + PAGEVIEW_TOML
    + """
[sinks.sessions]
kind = "kafka"
topic = "{sessions}"
[sinks.dead_letters]
kind = "kafka"
topic = "{dead}"
[checkpoint]
path = "checkpoint"
[spark]
shuffle_partitions = 2
[monitoring]
prometheus_port = "off"
"""
)


def _batches_seen(broker, topic: str, isolation: str) -> set[int]:
    """Batch ids of the records of ``topic`` a consumer of this isolation level sees now."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            **client(broker),
            "group.id": topic_name("probe"),
            "isolation.level": isolation,
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        seen = set()
        while (msg := consumer.poll(0.2)) is not None:
            if not msg.error():
                seen.add(int(dict(msg.headers() or [])[BATCH_HEADER]))
        return seen
    finally:
        consumer.close()


def _kill_when(command: list[str], condition: Callable[[], bool], cwd: Path) -> None:
    """Starts ``command`` (its own process group) and kills the whole group with SIGKILL as
    soon as ``condition`` holds."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 600
    try:
        while not condition():
            assert process.poll() is None, "the pipeline ended before the kill point"
            assert time.monotonic() < deadline, "the kill point never came"
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL


def _outputs(broker, sessions: str, dead: str) -> tuple[Counter, Counter]:
    revisions = Counter(
        (r["value"]["session_id"], r["value"]["revision"], r["value"]["event_count"])
        for r in committed_records(broker, sessions)
    )
    letters = Counter(
        (r["value"]["raw"], r["value"]["reason"]) for r in committed_records(broker, dead)
    )
    return revisions, letters


def test_killed_three_times_while_writing_to_kafka_it_resumes_to_the_uninterrupted_output(
    spark, kafka_broker, workdir
):
    source = topic_name("pageviews")
    kafka_broker.create_topic(source, partitions=2)
    summary = generate_traffic(SPEC, workdir / "generated")
    lines = [line for f in summary.files for line in f.read_text().splitlines()]
    produce(kafka_broker, source, lines)
    topics = {}
    for run in ("reference", "crashed"):
        topics[run] = (topic_name("sessions"), topic_name("dead"))
        for topic in topics[run]:
            kafka_broker.create_topic(topic)
    ref_sessions, ref_dead = topics["reference"]
    reference = kafka_pipeline_config(
        workdir / "reference",
        kafka_broker,
        {"topics": [source], "max_offsets_per_trigger": 500},
        {"sessions": ref_sessions, "dead_letters": ref_dead},
        sessions={"allowed_lateness": "10m"},
        name="kafka-crash",
    )
    Pipeline(reference, spark).run(once=True, drain=True)

    sessions, dead = topics["crashed"]
    root = workdir / "crashed"
    root.mkdir()
    config = root / "pipeline.toml"
    config.write_text(
        CONFIG_TOML.format(
            source=source, servers=kafka_broker.bootstrap_servers, sessions=sessions, dead=dead
        )
    )
    command = run_command(config, "--once", "--drain")
    checkpoint_commits = root / "checkpoint" / "commits"

    def seen(n: int, isolation: str) -> Callable[[], bool]:
        return lambda: any(b >= n for b in _batches_seen(kafka_broker, sessions, isolation))

    def writing_batch(n: int) -> Callable[[], bool]:
        return seen(n, "read_uncommitted")

    def committed_batch(n: int) -> Callable[[], bool]:
        return seen(n, "read_committed")

    def checkpointed_batch(n: int) -> Callable[[], bool]:
        return lambda: any(int(f.name) >= n for f in checkpoint_commits.glob("[0-9]*"))

    for kill_point in (writing_batch(2), committed_batch(5), checkpointed_batch(8)):
        _kill_when(command, kill_point, root)
    restarted = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    assert restarted.returncode == 0, restarted.stderr

    crashed_revisions, crashed_letters = _outputs(kafka_broker, sessions, dead)
    assert max(crashed_revisions.values()) == 1  # no revision twice
    assert (crashed_revisions, crashed_letters) == _outputs(kafka_broker, ref_sessions, ref_dead)
    assert sum(crashed_letters.values()) + sum(
        event_count for (_, _, event_count) in crashed_revisions
    ) >= len(lines)  # (revisions repeat events; the accounting test checks the exact balance)
