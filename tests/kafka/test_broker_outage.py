"""The broker goes away and comes back, and nobody has to step in: a continuous run started while
the broker is down waits for it (``[supervisor] wait_for_connections``, one line per attempt),
and a broker killed with SIGKILL under a running pipeline and restarted 30 s later on the same
ports and storage costs about a minute beyond the outage, with exactly-once output (every call
of the Kafka sink has a deadline: tests/sinks/test_kafka_sink_deadlines.py).

Each test starts a broker of its own (it is killed), and a pipeline process: the long suite
(``make soak``)."""

from __future__ import annotations

import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from streamwarden.local.broker import LocalBroker
from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from tests.kafka.support import committed_records, kafka_pipeline_config, produce, topic_name
from tests.support import PAGEVIEW_AGGREGATES_TOML, PAGEVIEW_TOML, pageview, run_command

pytestmark = [pytest.mark.spark, pytest.mark.soak]

CONFIG_TOML = (
    """
name = "broker-outage"
[source]
kind = "kafka"
topics = ["{source}"]
max_offsets_per_trigger = {per_batch}
[kafka]
bootstrap_servers = "{servers}"
connect_timeout_s = {connect_timeout_s}
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
trigger_interval = "1s"
[monitoring]
prometheus_port = "off"
"""
)
#: A broker down at start: asked for 2 s per attempt, again after 1, 2, 4... s, up to 3 minutes.
WAITING = """
[supervisor]
initial_backoff = "1s"
max_backoff = "8s"
wait_for_connections = "3m"
"""


def _config(
    root: Path, broker: LocalBroker, topics: dict[str, str], per_batch: int, extra: str = ""
) -> Path:
    root.mkdir(parents=True)
    path = root / "pipeline.toml"
    text = CONFIG_TOML.format(
        servers=broker.bootstrap_servers,
        per_batch=per_batch,
        connect_timeout_s=2 if extra else 10,  # the default but when waiting for the broker
        **topics,
    )
    path.write_text(text + extra)
    return path


def _topics(broker: LocalBroker) -> dict[str, str]:
    topics = {name: topic_name(name) for name in ("source", "sessions", "dead")}
    for topic in topics.values():
        broker.create_topic(topic)
    return topics


def _committed(checkpoint: Path) -> int:
    """The newest batch Spark committed to the checkpoint (-1: none)."""
    return max((int(f.name) for f in (checkpoint / "commits").glob("[0-9]*")), default=-1)


def _until(condition, process: subprocess.Popen[bytes], what: str, timeout_s: float) -> float:
    """Polls ``condition`` while ``process`` runs; the time it took."""
    started = time.monotonic()
    while not condition():
        assert process.poll() is None, f"the pipeline ended before {what}"
        assert time.monotonic() - started < timeout_s, f"no {what} within {timeout_s} s"
        time.sleep(0.2)
    return time.monotonic() - started


def test_a_continuous_run_started_with_the_broker_down_waits_for_it_and_then_runs(workdir):
    with LocalBroker() as broker:
        topics = _topics(broker)
        produce(broker, topics["source"], [pageview(f"u{i}", i) for i in range(20)])
        config = _config(workdir / "run", broker, topics, per_batch=100, extra=WAITING)
        broker.kill()
        log = workdir / "run" / "stderr.txt"
        with log.open("wb") as err:
            process = subprocess.Popen(
                run_command(config), cwd=config.parent, stdout=subprocess.DEVNULL, stderr=err
            )
        try:
            _until(lambda: log.read_text().count("waiting: ") >= 2, process, "2 attempts", 120)
            broker.restart()
            _until(lambda: _committed(config.parent / "checkpoint") >= 0, process, "batch", 300)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=120) == 0, log.read_text()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    waiting = [line for line in log.read_text().splitlines() if line.startswith("waiting: ")]
    assert waiting[0].startswith("waiting: connection check 1 failed after ")
    assert "did not answer within 2 s" in waiting[0] and "next attempt in 1.0 s" in waiting[0]
    assert "Error:" not in log.read_text()


SPEC = TrafficSpec(
    users=100,
    events=2_000,
    rate_per_second=0.3,
    events_per_file=2_000,
    late_fraction=0.02,
    too_late_fraction=0.005,
    malformed_fraction=0.01,
)
OUTAGE_S = 30.0


def _outputs(broker: LocalBroker, sessions: str, dead: str) -> tuple[Counter, Counter]:
    revisions = Counter(
        (r["value"]["session_id"], r["value"]["revision"], r["value"]["event_count"])
        for r in committed_records(broker, sessions)
    )
    letters = Counter(
        (r["value"]["raw"], r["value"]["reason"]) for r in committed_records(broker, dead)
    )
    return revisions, letters


def test_a_broker_killed_and_restarted_under_a_running_pipeline_costs_about_a_minute(
    spark, workdir, capsys
):
    with LocalBroker() as broker:
        topics = _topics(broker)
        summary = generate_traffic(SPEC, workdir / "generated")
        lines = [line for f in summary.files for line in f.read_text().splitlines()]
        produce(broker, topics["source"], lines)
        reference = {"sessions": topic_name("ref-sessions"), "dead": topic_name("ref-dead")}
        for topic in reference.values():
            broker.create_topic(topic)
        reference_config = kafka_pipeline_config(
            workdir / "reference",
            broker,
            {"topics": [topics["source"]], "max_offsets_per_trigger": 200},
            {"sessions": reference["sessions"], "dead_letters": reference["dead"]},
            sessions={"allowed_lateness": "10m"},
            name="broker-outage",
        )
        Pipeline(reference_config, spark).run(once=True, drain=True)

        config = _config(workdir / "outage", broker, topics, per_batch=200)
        checkpoint = config.parent / "checkpoint"
        log = config.parent / "stderr.txt"
        with log.open("wb") as err:
            process = subprocess.Popen(
                run_command(config, "--once", "--drain"),
                cwd=config.parent,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        try:
            _until(lambda: _committed(checkpoint) >= 2, process, "batch 2", 600)
            broker.kill()
            killed_at, last_before = time.monotonic(), _committed(checkpoint)
            time.sleep(OUTAGE_S)
            broker.restart()
            restarted_at, at_restart = time.monotonic(), _committed(checkpoint)
            recovery = _until(lambda: _committed(checkpoint) > at_restart, process, "batch", 600)
            assert process.wait(timeout=900) == 0, log.read_text()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        outage = restarted_at - killed_at
        with capsys.disabled():
            print(
                f"\nbroker outage {outage:.1f} s; the next batch committed {recovery:.1f} s "
                f"after the broker was back (batch {last_before} was the last before)"
            )
        assert recovery < 90, log.read_text()  # about a minute beyond the outage, not 11
        crashed = _outputs(broker, topics["sessions"], topics["dead"])
        assert max(crashed[0].values()) == 1  # no revision twice
        assert crashed == _outputs(broker, reference["sessions"], reference["dead"])
