"""The run lock: held while a pipeline runs, seen by other openers, gone when released."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from streamwarden.checkpoints.run_lock import checkpoint_holder, hold_checkpoint, refuse_if_held
from streamwarden.cli.main import main
from streamwarden.errors import CheckpointInUseError, StateError, UsageError
from tests.config.test_loader import MINIMAL


def test_a_held_checkpoint_names_its_holder_and_is_free_after(tmp_path):
    assert checkpoint_holder(tmp_path) is None
    with hold_checkpoint(tmp_path, "pipeline 'a'"):
        holder = checkpoint_holder(tmp_path)
        assert holder is not None
        assert holder["what"] == "pipeline 'a'" and holder["pid"] == os.getpid()
    assert checkpoint_holder(tmp_path) is None


def test_a_second_holder_is_refused_with_who_holds_it(tmp_path):
    with hold_checkpoint(tmp_path, "pipeline 'a'"):
        second = hold_checkpoint(tmp_path, "rescale")
        with pytest.raises(CheckpointInUseError, match=r"in use by pipeline 'a' \(pid"):
            second.__enter__()


@pytest.mark.parametrize("inside", ["", "cp"], ids=["the checkpoint", "a parent"])
def test_a_checkpoint_path_through_a_file_is_refused_saying_which_file(tmp_path, inside):
    blocker = tmp_path / "f"
    blocker.write_text("not a folder")
    lock = hold_checkpoint(blocker / inside if inside else blocker, "a run")
    with pytest.raises(UsageError, match=rf"'{blocker}' is a file; point checkpoint.path"):
        lock.__enter__()


def test_a_command_refuses_a_held_checkpoint_without_taking_the_lock(tmp_path):
    held = pytest.raises(CheckpointInUseError, match=r"in use by pipeline 'p' .* retry a run")
    with hold_checkpoint(tmp_path, "pipeline 'p'"), held:
        refuse_if_held(tmp_path, "a run")
    refuse_if_held(tmp_path, "a run")  # free again: nothing raised
    assert checkpoint_holder(tmp_path) is None


def test_a_checkpoint_that_cannot_be_written_is_a_state_error_saying_what_to_do():
    lock = hold_checkpoint(Path("/proc/streamwarden-test/checkpoint"), "a run")
    with pytest.raises(StateError) as caught:
        lock.__enter__()
    message = str(caught.value)
    assert message.startswith("checkpoint path '/proc/streamwarden-test/checkpoint' cannot be")
    assert "give the user running the pipeline write access to it" in message


def test_run_on_a_checkpoint_that_cannot_be_written_is_one_line_and_exit_1(tmp_path, capsys):
    (tmp_path / "landing").mkdir()
    config = tmp_path / "pipeline.toml"
    config.write_text(
        MINIMAL.replace('path = "out/checkpoint"', 'path = "/proc/streamwarden-test/cp"')
    )
    assert main(["run", str(config), "--once"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: checkpoint path '/proc/streamwarden-test/cp' cannot be written")
    assert "unexpected failure" not in err and len(err.strip().splitlines()) == 1
