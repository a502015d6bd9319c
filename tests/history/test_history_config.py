"""``[history]`` and ``history_lateness`` in a config, and what ``doctor`` says about them."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from streamwarden.doctor import Severity, diagnose
from streamwarden.errors import ConfigError
from streamwarden.history.base import HISTORY_KINDS
from tests.support import pipeline_config

STORE = {"kind": "postgres", "host": "127.0.0.1", "database": "d", "user": "u",
         "password_env": "NO_SUCH_VARIABLE_FOR_TESTS"}  # fmt: skip


def config(**sections):
    return pipeline_config(Path("/nonexistent"), **sections)


def test_history_lateness_is_off_by_default():
    assert config().section.history_lateness is None and config().history is None


def test_history_lateness_needs_a_history_store():
    with pytest.raises(ConfigError, match=r"history_lateness needs a \[history\] section"):
        config(sessions={"history_lateness": "3d"})


def test_a_password_written_in_the_config_is_refused_without_showing_it():
    with pytest.raises(ConfigError) as caught:
        config(history={**STORE, "password": "hunter2"})
    assert "must not be written in the config file" in str(caught.value)
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize("table", ["Sessions", "a;drop table x", "1abc"])
def test_a_table_name_must_be_a_plain_name(table):
    with pytest.raises(ConfigError, match=r"history\.table"):
        config(history={**STORE, "table": table})


def test_a_postgres_store_needs_host_database_and_user():
    with pytest.raises(ConfigError, match="needs host, database, user"):
        config(history={"kind": "postgres"})


def test_a_history_lateness_not_longer_than_the_allowed_lateness_is_refused_at_load():
    with pytest.raises(ConfigError, match=r"history_lateness \(30m\) must be longer"):
        config(sessions={"allowed_lateness": "1h", "history_lateness": "30m"}, history=STORE)


def test_doctor_finds_a_history_lateness_not_longer_than_the_allowed_lateness():
    """A config built in code skips the load's operator check; doctor still finds it."""
    fine = config(sessions={"history_lateness": "3d"}, history=STORE)
    short = {"allowed_lateness": timedelta(hours=1), "history_lateness": timedelta(minutes=30)}
    cfg = fine.model_copy(update={"section": fine.section.model_copy(update=short)})
    [finding] = [f for f in diagnose(cfg, connections=False)
                 if f.code == "history-lateness-too-short"]  # fmt: skip
    assert finding.severity == Severity.ERROR and "allowed_lateness" in finding.fix


def test_doctor_finds_an_unreachable_history_store(monkeypatch):
    monkeypatch.setenv("NO_SUCH_VARIABLE_FOR_TESTS", "secret-value")
    cfg = config(sessions={"history_lateness": "3d"}, history={**STORE, "port": 1})
    [finding] = [f for f in diagnose(cfg) if f.code.startswith("history-store")]
    assert finding.code == "history-store-unreachable"
    assert "127.0.0.1:1" in finding.message and "secret-value" not in finding.message


DELTA_SESSIONS = {"sessions": {"kind": "delta", "path": "/nonexistent/sessions"}}


def test_the_delta_store_is_the_default_and_is_the_delta_sessions_table():
    cfg = config(sessions={"history_lateness": "3d"}, history={}, sinks=DELTA_SESSIONS)
    assert cfg.history is not None and cfg.history.kind == "delta"
    where = HISTORY_KINDS["delta"].where(cfg.history, cfg.context)
    assert where == "the sessions sink's delta table at /nonexistent/sessions"


@pytest.mark.parametrize(
    ("sessions_sink", "named"),
    [
        ({"path": "/nonexistent/s"}, "kind = 'parquet'"),
        ({"kind": "delta", "path": "/nonexistent/s", "keep": "all"}, "keep = 'all'"),
    ],
)
def test_the_delta_store_needs_a_delta_sessions_sink_keeping_the_latest_revision(
    sessions_sink, named
):
    with pytest.raises(ConfigError) as caught:
        config(history={}, sinks={"sessions": sessions_sink})
    message = str(caught.value)
    assert named in message and message.count("\n  - ") == 1  # one problem, one line
    assert 'set [sinks.sessions] kind = "delta"' in message and 'kind = "postgres"' in message


def test_postgres_settings_without_a_kind_say_the_default_is_delta():
    with pytest.raises(ConfigError, match=r"not a setting of kind 'delta' \(the default\).*"
                       r'set history.kind = "postgres"'):  # fmt: skip
        config(history={"host": "127.0.0.1"}, sinks=DELTA_SESSIONS)


def test_the_postgres_store_is_named_without_its_password(monkeypatch):
    monkeypatch.setenv("NO_SUCH_VARIABLE_FOR_TESTS", "secret-value")
    cfg = config(history=STORE)
    where = HISTORY_KINDS["postgres"].where(cfg.history, cfg.context)
    assert where == "postgresql://u@127.0.0.1:5432/d table streamwarden_sessions"
