"""Outputs, the checkpoint and the landing folder are apart: the same folder twice, or one
inside another, is refused at load with exit code 2 (issue 19, defect 4), and config paths that
are wrong say how (defect 9)."""

from __future__ import annotations

import pytest

from streamwarden.cli.main import main
from streamwarden.config.loader import load_config
from streamwarden.errors import ConfigError
from streamwarden.sources.files import FilesSource
from tests.config.test_loader import SCHEMA
from tests.support import pipeline_config


def test_two_sinks_in_one_folder_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"sinks\.sessions\.path and sinks\.dead_letters"):
        pipeline_config(tmp_path, sinks={"dead_letters": {"path": str(tmp_path / "sessions")}})


def test_a_sink_inside_the_checkpoint_is_refused(tmp_path):
    inner = str(tmp_path / "checkpoint" / "out")
    with pytest.raises(ConfigError, match=r"sinks\.sessions\.path .* is inside checkpoint\.path"):
        pipeline_config(tmp_path, sinks={"sessions": {"path": inner}})


def test_the_checkpoint_inside_the_landing_folder_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"checkpoint\.path .* is inside source\.path"):
        pipeline_config(tmp_path, checkpoint={"path": str(tmp_path / "landing" / "ck")})


def test_a_path_written_another_way_is_the_same_folder(tmp_path):
    other = str(tmp_path / "x" / ".." / "sessions")
    with pytest.raises(ConfigError, match="same folder"):
        pipeline_config(tmp_path, sinks={"dead_letters": {"path": other}})


def test_folders_beside_each_other_are_accepted(tmp_path):
    config = pipeline_config(tmp_path, sinks={"dead_letters": {"path": str(tmp_path / "sess")}})
    assert config.sinks["dead_letters"].path.name == "sess"


def test_overlapping_folders_exit_2_from_the_command_line(tmp_path, capsys):
    config = tmp_path / "p.toml"
    config.write_text(
        SCHEMA + '[source]\npath = "landing"\n[sinks.sessions]\npath = "out"\n'
        '[sinks.dead_letters]\npath = "out"\n[checkpoint]\npath = "ck"\n'
    )
    assert main(["run", str(config), "--once"]) == 2
    assert "same folder" in capsys.readouterr().err


def test_a_config_path_that_is_a_folder_says_so(tmp_path):
    with pytest.raises(ConfigError, match="is a folder, not a file"):
        load_config(tmp_path)


def test_a_missing_landing_folder_is_a_config_error_with_exit_code_2(tmp_path):
    config = pipeline_config(tmp_path)
    with pytest.raises(ConfigError, match="does not exist; create it") as caught:
        FilesSource().check(config.source, config.context)
    assert caught.value.exit_code == 2
