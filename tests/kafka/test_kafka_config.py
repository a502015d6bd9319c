"""A Kafka source or sink is configured by kind, with one ``[kafka]`` section for the cluster.
Mistakes fail at load with one line per problem (exit 2), and a secret is never written in a
config file nor shown: it comes from an environment variable or a file."""

from __future__ import annotations

import pytest

from streamwarden.cli.main import main
from streamwarden.config import load_config
from streamwarden.errors import ConfigError
from streamwarden.settings.secrets import MASK
from streamwarden.sources.kafka import KafkaSource
from tests.config.test_loader import write
from tests.support import PAGEVIEW_AGGREGATES_TOML, PAGEVIEW_TOML

KAFKA = (
    PAGEVIEW_TOML
    + PAGEVIEW_AGGREGATES_TOML
    + """
[source]
kind = "kafka"
topics = ["pageviews"]
[kafka]
bootstrap_servers = "127.0.0.1:9092"
[sinks.sessions]
kind = "kafka"
topic = "sessions"
[sinks.dead_letters]
path = "out/dead"
[checkpoint]
path = "out/checkpoint"
"""
)

SASL = KAFKA.replace(
    'bootstrap_servers = "127.0.0.1:9092"',
    'bootstrap_servers = "127.0.0.1:9092"\nsecurity_protocol = "SASL_PLAINTEXT"\n'
    'sasl_mechanism = "PLAIN"\nsasl_username = "svc"\nsasl_password_env = "SW_TEST_KAFKA_PW"',
)

MISTAKES = [
    (KAFKA.replace('[kafka]\nbootstrap_servers = "127.0.0.1:9092"', ""), "needs a [kafka] section"),
    (KAFKA.replace('topics = ["pageviews"]', ""), "needs topics or topic_pattern"),
    (
        KAFKA.replace('topics = ["pageviews"]', 'topics = ["a"]\ntopic_pattern = "a.*"'),
        "needs topics or topic_pattern (one of them)",
    ),
    (
        KAFKA.replace('kind = "kafka"\ntopics', 'kind = "kafka"\npath = "x"\ntopics'),
        "source.path is not a setting of kind 'kafka'",
    ),
    (
        KAFKA.replace('topic = "sessions"', 'path = "out/s"'),
        "sinks.sessions.path is not a setting of kind 'kafka'",
    ),
    (
        KAFKA.replace(
            'topics = ["pageviews"]', 'topics = ["pageviews"]\nstarting_offsets = "oldest"'
        ),
        "starting_offsets must be 'earliest', 'latest' or JSON",
    ),
    (
        KAFKA.replace(
            'topics = ["pageviews"]', 'topics = ["pageviews"]\noptions = { subscribe = "x" }'
        ),
        "'subscribe' is set by streamwarden",
    ),
]


@pytest.mark.parametrize(("text", "expected"), MISTAKES)
def test_a_kafka_config_mistake_fails_at_load_naming_it(tmp_path, text, expected):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert expected in str(caught.value)


SECRETS_IN_THE_FILE = [
    SASL.replace('sasl_password_env = "SW_TEST_KAFKA_PW"', 'sasl_password = "hunter2-secret"'),
    KAFKA.replace(
        'topics = ["pageviews"]',
        'topics = ["pageviews"]\noptions = { "kafka.ssl.key.password" = "hunter2-secret" }',
    ),
    KAFKA.replace(
        'bootstrap_servers = "127.0.0.1:9092"',
        'bootstrap_servers = "127.0.0.1:9092"\n'
        'producer_options = { "sasl.password" = "hunter2-secret" }',
    ),
]


@pytest.mark.parametrize("text", SECRETS_IN_THE_FILE, ids=["sasl_password", "source", "producer"])
def test_a_secret_written_in_the_config_is_refused_without_showing_it(tmp_path, capsys, text):
    assert main(["run", str(write(tmp_path, text)), "--once"]) == 2
    captured = capsys.readouterr()
    assert "Error: config" in captured.err and "environment variable" in captured.err
    assert "hunter2" not in captured.err + captured.out


def test_the_password_comes_from_the_environment_and_never_prints(tmp_path, monkeypatch):
    monkeypatch.setenv("SW_TEST_KAFKA_PW", "hunter2-secret")
    config = load_config(write(tmp_path, SASL))
    assert config.kafka is not None
    secret = config.kafka.password()
    assert secret is not None and secret.reveal() == "hunter2-secret"
    assert str(secret) == MASK and "hunter2" not in repr(secret) + f"{secret}"
    assert "hunter2" not in repr(config) + config.model_dump_json()
    options = KafkaSource().reader_options(config.source, config.context)
    assert 'password="hunter2-secret"' in options["kafka.sasl.jaas.config"]
    assert config.kafka.librdkafka_options()["sasl.password"] == "hunter2-secret"


def test_a_password_file_is_read_and_a_missing_variable_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("SW_TEST_KAFKA_PW", raising=False)
    config = load_config(write(tmp_path, SASL))
    assert config.kafka is not None
    with pytest.raises(ConfigError, match=r"'SW_TEST_KAFKA_PW'.*is not set"):
        config.kafka.password()
    (tmp_path / "pw").write_text("from-a-file\n")
    text = SASL.replace('sasl_password_env = "SW_TEST_KAFKA_PW"', 'sasl_password_file = "pw"')
    (tmp_path / "f").mkdir()
    from_file = load_config(write(tmp_path / "f", text.replace('"pw"', f'"{tmp_path / "pw"}"')))
    assert from_file.kafka is not None
    secret = from_file.kafka.password()
    assert secret is not None and secret.reveal() == "from-a-file"


def test_the_kafka_example_config_loads():
    from pathlib import Path

    config = load_config(Path(__file__).parents[2] / "examples" / "kafka.toml")
    assert config.source.kind == "kafka" and config.source.topics == ["pageviews"]
    assert {s.kind for s in config.sinks.values()} == {"kafka"}
