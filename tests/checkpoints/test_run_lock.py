"""The run lock: held while a pipeline runs, seen by other openers, gone when released."""

from __future__ import annotations

import os

import pytest

from streamwarden.checkpoints.run_lock import checkpoint_holder, hold_checkpoint, refuse_if_held
from streamwarden.errors import CheckpointInUseError, UsageError


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
