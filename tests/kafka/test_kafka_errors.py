"""What a user sees when a Kafka pipeline cannot run: one ``Error:`` line that says what is
wrong and what to do, the right exit code, no Java trace on the terminal, and never a secret,
neither on the terminal nor in any file the run leaves."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from streamwarden.cli.main import main
from tests.kafka.support import (
    SASL_PASSWORD,
    SASL_USER,
    committed_records,
    produce,
    topic_name,
)
from tests.support import PAGEVIEW_AGGREGATES_TOML, PAGEVIEW_TOML, pageview

CONFIG = (
    PAGEVIEW_TOML
    + PAGEVIEW_AGGREGATES_TOML
    + """
[source]
kind = "kafka"
topics = ["{source}"]
[kafka]
bootstrap_servers = "{servers}"
connect_timeout_s = 3
{extra}
[sinks.sessions]
kind = "kafka"
topic = "{sessions}"
[sinks.dead_letters]
path = "dead"
[checkpoint]
path = "checkpoint"
[monitoring]
prometheus_port = "off"
"""
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(root: Path, servers: str, source: str, sessions: str, extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "pipeline.toml"
    path.write_text(CONFIG.format(servers=servers, source=source, sessions=sessions, extra=extra))
    return path


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and lines[0].startswith("Error: "), err
    assert "Traceback" not in err and "at org.apache" not in err and "Py4J" not in err
    return lines[0]


def test_an_unreachable_broker_is_one_line_and_exit_1(tmp_path, capsys):
    config = _config(tmp_path, f"127.0.0.1:{_closed_port()}", "pageviews", "sessions")
    assert main(["run", str(config), "--once"]) == 1
    line = _one_error_line(capsys.readouterr().err)
    assert "did not answer within 3 s" in line and "bootstrap_servers" in line


def test_a_missing_topic_is_named_with_the_fix_and_exit_2(tmp_path, capsys, kafka_broker):
    sessions = topic_name("sessions")
    kafka_broker.create_topic(sessions)
    config = _config(tmp_path, kafka_broker.bootstrap_servers, "no-such-topic", sessions)
    assert main(["run", str(config), "--once"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "topic 'no-such-topic' does not exist" in line and "source.topics" in line


def test_doctor_reports_each_missing_topic_as_a_finding(spark, tmp_path, capsys, kafka_broker):
    config = _config(tmp_path, kafka_broker.bootstrap_servers, "no-source", "no-sessions")
    assert main(["doctor", str(config)]) == 2
    out = capsys.readouterr().out
    assert "source-io-setup" in out and "'no-source' does not exist" in out
    assert "sink-sessions-io-setup" in out and "'no-sessions' does not exist" in out


def test_missing_connector_jars_are_named_with_the_fix_and_exit_2(
    tmp_path, capsys, kafka_broker, monkeypatch
):
    source, sessions = topic_name("pageviews"), topic_name("sessions")
    kafka_broker.create_topic(source)
    kafka_broker.create_topic(sessions)
    monkeypatch.setenv("STREAMWARDEN_JARS_DIR", str(tmp_path / "no-jars"))
    config = _config(tmp_path, kafka_broker.bootstrap_servers, source, sessions)
    assert main(["run", str(config), "--once"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "no-jars" in line and "make setup" in line


def test_over_sasl_the_pipeline_runs_and_its_password_reaches_no_output_and_no_file(
    tmp_path, kafka_broker
):
    """The password comes from the environment; the Kafka source (Spark's Java client) and the
    sinks (librdkafka) log in with it; it is nowhere in what the run printed or wrote: outputs,
    dead letters, checkpoint, progress log, status file, Spark's log."""
    source, sessions = topic_name("pageviews"), topic_name("sessions")
    kafka_broker.create_topic(source)
    kafka_broker.create_topic(sessions)
    produce(kafka_broker, source, [pageview("u1", 0), pageview("u1", 3), "not json"])
    extra = (
        'security_protocol = "SASL_PLAINTEXT"\nsasl_mechanism = "PLAIN"\n'
        f'sasl_username = "{SASL_USER}"\nsasl_password_env = "SW_TEST_SECRET"'
    )
    config = _config(tmp_path, kafka_broker.sasl_servers, source, sessions, extra)
    env = {**os.environ, "SW_TEST_SECRET": SASL_PASSWORD}
    run = subprocess.run(
        [sys.executable, "-m", "streamwarden.cli.main", "run", str(config), "--once", "--drain"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    [session] = [r["value"] for r in committed_records(kafka_broker, sessions)]
    assert session["event_count"] == 2
    assert SASL_PASSWORD not in run.stdout + run.stderr
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(path.suffix == ".log" for path in written)  # Spark's log is among them
    for path in written:
        assert SASL_PASSWORD.encode() not in path.read_bytes(), path


def test_a_wrong_password_is_one_line_and_shows_no_password(tmp_path, capsys, kafka_broker):
    os.environ["SW_TEST_WRONG"] = "not-the-password-hunter2"
    try:
        extra = (
            'security_protocol = "SASL_PLAINTEXT"\nsasl_mechanism = "PLAIN"\n'
            f'sasl_username = "{SASL_USER}"\nsasl_password_env = "SW_TEST_WRONG"'
        )
        config = _config(tmp_path, kafka_broker.sasl_servers, "pageviews", "sessions", extra)
        assert main(["run", str(config), "--once"]) == 1
    finally:
        del os.environ["SW_TEST_WRONG"]
    err = capsys.readouterr().err
    line = _one_error_line(err)
    assert f"refused the login of user '{SASL_USER}'" in line and "hunter2" not in err


pytestmark = pytest.mark.spark
