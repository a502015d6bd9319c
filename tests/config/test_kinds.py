"""The config selects the operator, the source and each sink by name from a registry: an
unknown name is a config error that names the known ones (exit 2 through the CLI), and the
names the config knows are the names registered."""

from __future__ import annotations

import importlib.util

import pytest

from streamwarden.cli.main import main
from streamwarden.config import load_config
from streamwarden.errors import ConfigError
from streamwarden.operators import OPERATORS, operator_of
from streamwarden.sinks import SINK_KINDS, ParquetBatchSink, open_sink
from streamwarden.sources import SOURCE_KINDS, FilesSource, source_of
from tests.config.test_loader import MINIMAL, write
from tests.config.test_pattern_config import PATTERN

UNKNOWN = [
    ('operator = "joins"\n' + MINIMAL, "operator: unknown operator 'joins'; known operators: "),
    (
        MINIMAL.replace("[source]\n", '[source]\nkind = "pulsar"\n'),
        "source.kind: unknown source kind 'pulsar'; known kinds: files, kafka",
    ),
    (
        MINIMAL.replace("[sinks.sessions]\n", '[sinks.sessions]\nkind = "iceberg"\n'),
        "sinks.sessions.kind: unknown sink kind 'iceberg'; known kinds: delta, kafka, parquet",
    ),
]


@pytest.mark.parametrize(("text", "expected"), UNKNOWN, ids=["operator", "source", "sink"])
def test_an_unknown_name_is_a_config_error_naming_the_known_ones(tmp_path, text, expected):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert expected in str(caught.value)


@pytest.mark.parametrize(("text", "expected"), UNKNOWN, ids=["operator", "source", "sink"])
def test_an_unknown_name_exits_2_through_the_cli(tmp_path, capsys, text, expected):
    assert main(["run", str(write(tmp_path, text)), "--once"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: config") and expected in err


def test_the_operators_the_config_knows_are_the_registered_ones():
    assert OPERATORS.names() == ["join", "patterns", "process", "sessions", "windows"]


def test_without_a_kind_the_source_is_files_and_the_sinks_parquet(tmp_path):
    config = load_config(write(tmp_path, MINIMAL))
    assert config.source.kind == "files" and SOURCE_KINDS.names() == ["files", "kafka"]
    assert isinstance(source_of(config.source), FilesSource)
    assert SINK_KINDS.names() == ["delta", "kafka", "parquet"]
    for name, sink in config.sinks.items():
        assert sink.kind == "parquet"
        opened = open_sink(name, config.context)
        assert isinstance(opened, ParquetBatchSink) and opened.path == sink.path


def test_each_operator_is_found_by_the_name_the_config_gives(tmp_path):
    for text, name in ((MINIMAL, "sessions"), (PATTERN, "patterns")):
        (tmp_path / name).mkdir()
        config = load_config(write(tmp_path / name, text))
        assert operator_of(config).name == config.operator == name


def test_a_kind_whose_extra_is_missing_fails_at_load_naming_the_pip_install(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "confluent_kafka" else real(name, *args),
    )
    text = MINIMAL.replace(
        '[sinks.sessions]\npath = "out/sessions"',
        '[kafka]\nbootstrap_servers = "127.0.0.1:9092"\n[sinks.sessions]\nkind = "kafka"\n'
        'topic = "sessions"',
    )
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert (
        "[sinks.sessions] kind = 'kafka' needs the kafka extra: pip install "
        "'streamwarden[kafka]'" in str(caught.value)
    )
    assert str(caught.value).count("\n  - ") == 1  # one problem, one line
