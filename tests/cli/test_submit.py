"""``submit`` and ``jars``: what a cluster run is started with, checked before Spark starts."""

from __future__ import annotations

from pathlib import Path

from streamwarden.cli.main import main
from streamwarden.kafka.jars import connector_jars
from streamwarden.spark.engine_jar import engine_jar_path
from tests.config.test_loader import MINIMAL

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_submit_to_a_cluster_without_shared_storage_is_refused_before_spark_starts(
    tmp_path, capsys
):
    (tmp_path / "landing").mkdir()
    config = tmp_path / "p.toml"
    config.write_text(MINIMAL)
    assert main(["submit", str(config), "--once", "--master", "spark://127.0.0.1:7077"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: config") and "cluster-storage-not-shared" in err
    assert "spark://127.0.0.1:7077" in err and "shared_storage = true" in err
    assert not (tmp_path / "out").exists()  # no checkpoint, no log: Spark never started


def test_submit_with_a_master_spark_cannot_use_is_a_usage_error(tmp_path, capsys):
    config = tmp_path / "p.toml"
    config.write_text(MINIMAL)
    assert main(["submit", str(config), "--master", "spark:/oops"]) == 2
    assert "--master: spark.master 'spark:/oops' is not a Spark master" in capsys.readouterr().err


def test_jars_prints_the_engine_jar_alone_without_a_config(capsys):
    assert main(["jars"]) == 0
    assert capsys.readouterr().out.split() == [str(engine_jar_path())]


def test_jars_adds_the_connector_jars_a_config_needs_comma_separated(capsys):
    assert main(["jars", str(EXAMPLES / "kafka.toml"), "--comma"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == ",".join([str(engine_jar_path()), *connector_jars()])
