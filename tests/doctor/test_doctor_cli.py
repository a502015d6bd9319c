"""``streamwarden doctor CONFIG`` and the same checks run by ``streamwarden run``."""

from __future__ import annotations

from streamwarden.cli.main import main
from tests.config.test_loader import MINIMAL

HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"


def test_doctor_exits_0_and_says_so_on_a_clean_config(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL)
    assert main(["doctor", str(path)]) == 0
    assert "no findings" in capsys.readouterr().out


def test_doctor_exits_0_with_warnings_only(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL + '[sessions]\nallowed_lateness = "2d"\n')
    assert main(["doctor", str(path)]) == 0
    out = capsys.readouterr().out
    assert "warning: long-state-horizon: " in out and "fix:" in out
    assert "see: docs/failure-modes.md#state-without-deadline" in out


def test_doctor_exits_2_on_an_error(tmp_path, capsys):
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


def test_doctor_plan_builds_the_sessions_query_and_finds_its_watermark(spark, tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL + '[spark]\nmaster = "local[2]"\nshuffle_partitions = 4\n')
    (tmp_path / "landing").mkdir()
    assert main(["doctor", str(path), "--plan"]) == 0
    assert "no findings" in capsys.readouterr().out


def test_a_where_on_an_unknown_column_is_one_message_with_no_java_trace(spark, tmp_path, capfd):
    from tests.config.test_pattern_config import PATTERN

    path = tmp_path / "p.toml"
    path.write_text(PATTERN.replace("where = \"url LIKE '/scan/%'\"", 'where = "nosuchcol > 3"', 1))
    (tmp_path / "landing").mkdir()
    assert main(["doctor", str(path), "--plan"]) == 2
    out, err = capfd.readouterr()
    assert "Error: patterns.stages.0 ('scan'): where = 'nosuchcol > 3'" in err
    assert "UNRESOLVED_COLUMN" in err  # Spark's reason, in the one message
    assert "at org.apache.spark" not in out + err and "Py4JJavaError" not in out + err
