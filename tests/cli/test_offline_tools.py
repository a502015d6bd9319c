"""``streamwarden inspect`` and ``rescale`` from the command line: exit codes and one-line
errors, never a Java trace."""

from __future__ import annotations

import json
import shutil

from streamwarden.checkpoints.run_lock import hold_checkpoint
from streamwarden.cli.main import main


def test_inspect_json_flags_the_leaking_aggregation(leaky_aggregation_checkpoint, capsys):
    assert main(["inspect", str(leaky_aggregation_checkpoint), "--json", "--top", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["leak_suspected"] is True
    assert len(report["operators"][0]["states"][0]["heaviest_keys"]) == 2


def test_inspect_of_a_folder_that_is_not_a_checkpoint_exits_2_in_one_line(tmp_path, capsys):
    assert main(["inspect", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and "not a streaming checkpoint" in err
    assert err.count("\n") == 1


def test_rescale_of_a_streaming_aggregation_prints_counts_and_time(
    leaky_aggregation_checkpoint, tmp_path, capsys
):
    checkpoint = tmp_path / "checkpoint"
    shutil.copytree(leaky_aggregation_checkpoint, checkpoint)
    assert main(["rescale", str(checkpoint), "--partitions", "3"]) == 0
    out = capsys.readouterr().out
    assert "2 -> 3 state partitions in" in out
    assert "0/default: 30 rows before, 30 after" in out


def test_rescale_refuses_a_checkpoint_in_use_with_exit_1(leaky_aggregation_checkpoint, capsys):
    with hold_checkpoint(leaky_aggregation_checkpoint, "pipeline 'counts'"):
        assert main(["rescale", str(leaky_aggregation_checkpoint), "--partitions", "4"]) == 1
    err = capsys.readouterr().err
    assert "in use by pipeline 'counts'" in err and "at org.apache" not in err
