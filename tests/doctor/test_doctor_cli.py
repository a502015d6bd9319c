"""``streamwarden doctor CONFIG`` and the same checks run by ``streamwarden run``. ``doctor``
reads its input sample on Spark, so its tests run on the shared session (``doctor_spark``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from streamwarden.cli.main import main
from streamwarden.config import load_config
from streamwarden.doctor.installation import archive_of
from streamwarden.spark import jar_sets
from streamwarden.spark.class_archive import CACHE_VARIABLE
from tests.config.test_loader import MINIMAL

HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"


@pytest.fixture
def archives(tmp_path, monkeypatch):
    """An empty folder of class archives (``$STREAMWARDEN_JVM_CACHE``), and how to make the
    archive a config's driver would map (an empty file: only its name is checked)."""
    folder = tmp_path / "jvm"
    folder.mkdir()
    monkeypatch.setenv(CACHE_VARIABLE, str(folder))

    def make_for(config_path: Path) -> None:
        archive = archive_of(load_config(config_path))
        assert archive is not None and archive.parent == folder
        archive.write_bytes(b"")

    return make_for


@pytest.mark.spark
def test_doctor_exits_0_and_says_so_on_a_clean_config(doctor_spark, tmp_path, capsys, archives):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL)
    archives(path)
    assert main(["doctor", str(path)]) == 0
    assert "no findings" in capsys.readouterr().out


@pytest.mark.spark
def test_doctor_warns_when_no_class_archive_was_made_and_says_how_to_make_one(
    doctor_spark, tmp_path, capsys, archives
):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL)
    assert main(["doctor", str(path)]) == 0
    out = capsys.readouterr().out
    assert "warning: no-class-archive: " in out and "about 7 s more" in out
    assert "fix: make it once (about a minute), and again after an upgrade of Java or " in out
    assert f"pyspark: `{sys.executable} -m streamwarden.cli.class_archive` or `make setup`" in out


@pytest.mark.spark
def test_an_installed_package_is_told_of_its_archive_folder_and_a_command_it_can_run(
    doctor_spark, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(jar_sets, "_POM", tmp_path / "no-source-tree" / "pom.xml")
    monkeypatch.delenv(CACHE_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL)
    assert main(["doctor", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"in '{tmp_path / 'cache' / 'streamwarden' / 'jvm'}/" in out
    assert f"pyspark: `{sys.executable} -m streamwarden.cli.class_archive`\n" in out
    assert "make setup" not in out


@pytest.mark.spark
def test_an_archive_made_for_another_class_path_does_not_count(
    doctor_spark, tmp_path, capsys, archives
):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL)
    archives(path)
    own = tmp_path / "own.toml"
    own.write_text(MINIMAL + '[spark.conf]\n"spark.driver.extraClassPath" = "/opt/udfs.jar"\n')
    assert main(["doctor", str(own)]) == 0
    assert "warning: no-class-archive: " in capsys.readouterr().out


@pytest.mark.spark
def test_no_archive_is_asked_for_when_the_users_own_options_decide_class_sharing(
    doctor_spark, tmp_path, capsys, archives
):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL + '[spark.conf]\n"spark.driver.extraJavaOptions" = "-Xshare:off"\n')
    assert main(["doctor", str(path)]) == 0
    assert "no findings" in capsys.readouterr().out


def test_run_does_not_warn_about_the_class_archive(tmp_path, capsys, archives):
    from streamwarden.cli.doctor import preflight

    path = tmp_path / "p.toml"
    path.write_text(MINIMAL + '[sessions]\nallowed_lateness = "2d"\n')
    preflight(load_config(path), path)  # no archive made: doctor would warn
    err = capsys.readouterr().err
    assert "warning: long-state-horizon: " in err  # run's checks print their warnings
    assert "no-class-archive" not in err


@pytest.mark.spark
def test_doctor_exits_0_with_warnings_only(doctor_spark, tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL + '[sessions]\nallowed_lateness = "2d"\n')
    assert main(["doctor", str(path)]) == 0
    out = capsys.readouterr().out
    assert "warning: long-state-horizon: " in out and "fix:" in out
    assert "see: docs/failure-modes.md#state-without-deadline" in out


@pytest.mark.spark
def test_doctor_exits_2_on_an_error(doctor_spark, tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(
        MINIMAL + f'[spark.conf]\n"spark.sql.streaming.stateStore.providerClass" = "{HDFS}"\n'
    )
    assert main(["doctor", str(path)]) == 2
    assert "error: rocksdb-off" in capsys.readouterr().out


def test_run_refuses_a_config_with_an_error_before_starting_spark(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL + '[resources]\ncontainer_memory = "1g"\n')
    (tmp_path / "landing").mkdir()
    assert main(["run", str(path), "--once"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: config") and "memory-over-container" in err
    assert not (tmp_path / "out" / "checkpoint").exists()


@pytest.mark.spark
def test_doctor_plan_builds_the_sessions_query_and_finds_its_watermark(
    doctor_spark, tmp_path, capsys, archives
):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL + '[spark]\nmaster = "local[2]"\nshuffle_partitions = 4\n')
    (tmp_path / "landing").mkdir()
    archives(path)
    assert main(["doctor", str(path), "--plan"]) == 0
    assert "no findings" in capsys.readouterr().out


@pytest.mark.spark
def test_a_where_on_an_unknown_column_is_one_message_with_no_java_trace(
    doctor_spark, tmp_path, capfd
):
    from tests.config.test_pattern_config import PATTERN

    path = tmp_path / "p.toml"
    path.write_text(PATTERN.replace("where = \"url LIKE '/scan/%'\"", 'where = "nosuchcol > 3"', 1))
    (tmp_path / "landing").mkdir()
    assert main(["doctor", str(path), "--plan"]) == 2
    out, err = capfd.readouterr()
    assert "Error: patterns.stages.0 ('scan'): where = 'nosuchcol > 3'" in err
    assert "UNRESOLVED_COLUMN" in err  # Spark's reason, in the one message
    assert "at org.apache.spark" not in out + err and "Py4JJavaError" not in out + err
