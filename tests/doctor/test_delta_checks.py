"""Delta sinks before a run: missing Delta jars are a doctor finding and a refused run (exit 2),
each naming the folder and ``make setup``; a delta sink names a path or a table, not both."""

from __future__ import annotations

import pytest

from streamwarden.cli.main import main
from streamwarden.errors import ConfigError
from tests.support import pipeline_config

DELTA_CONFIG = """
[schema]
key = "user_id"
time = "ts"
fields = "user_id STRING, ts BIGINT, page_number INT, url STRING"
[source]
path = "landing"
[sinks.sessions]
kind = "delta"
path = "out/sessions"
[sinks.dead_letters]
kind = "delta"
table = "dead_letters"
[checkpoint]
path = "out/checkpoint"
"""


@pytest.mark.spark
def test_doctor_reports_missing_delta_jars_with_the_fix(
    doctor_spark, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("STREAMWARDEN_JARS_DIR", str(tmp_path / "no-jars"))
    config = tmp_path / "p.toml"
    config.write_text(DELTA_CONFIG)
    (tmp_path / "landing").mkdir()
    assert main(["doctor", str(config)]) == 2
    out = capsys.readouterr().out
    assert "sink-sessions-io-setup" in out and "sink-dead_letters-io-setup" in out
    assert "'delta' jars are missing" in out and "make setup" in out
    assert str(tmp_path / "no-jars" / "delta") in out


def test_a_run_without_the_delta_jars_stops_before_spark_with_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("STREAMWARDEN_JARS_DIR", str(tmp_path / "no-jars"))
    config = tmp_path / "p.toml"
    config.write_text(DELTA_CONFIG)
    (tmp_path / "landing").mkdir()
    assert main(["run", str(config), "--once"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "make setup" in err[0] and "Traceback" not in err[0]


@pytest.mark.parametrize(
    "sink",
    [{"kind": "delta"}, {"kind": "delta", "path": "x", "table": "t"}],
    ids=["neither", "both"],
)
def test_a_delta_sink_names_a_path_or_a_table(tmp_path, sink):
    with pytest.raises(ConfigError, match="a delta sink needs a path or a table"):
        pipeline_config(tmp_path, sinks={"sessions": sink})


def test_delta_settings_are_refused_on_a_parquet_sink(tmp_path):
    with pytest.raises(
        ConfigError, match=r"sinks\.sessions\.keep is not a setting of kind 'parquet'"
    ):
        pipeline_config(tmp_path, sinks={"sessions": {"path": "x", "keep": "all"}})
