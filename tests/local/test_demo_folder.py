"""The demo empties its --out folder only when that cannot cost the user anything."""

from pathlib import Path

import pytest

from streamwarden.cli.main import main
from streamwarden.errors import UsageError
from streamwarden.local.demo_folder import MARKER, replace_demo_folder
from streamwarden.local.demo_patterns import patterns_demo_command
from streamwarden.local.demo_sessions import sessions_demo_command


def test_a_folder_with_files_the_demo_did_not_make_is_refused_and_kept(tmp_path: Path) -> None:
    precious = tmp_path / "project"
    precious.mkdir()
    (precious / "notes.txt").write_text("important")
    with pytest.raises(UsageError, match="not empty and was not made by the demo"):
        replace_demo_folder(precious)
    assert (precious / "notes.txt").read_text() == "important"


def test_a_folder_an_earlier_demo_made_is_emptied_and_marked_again(tmp_path: Path) -> None:
    out = replace_demo_folder(tmp_path / "demo-output")
    (out / "landing").mkdir()
    (out / "landing" / "part-0.jsonl").write_text("{}\n")
    assert replace_demo_folder(out) == out
    assert sorted(p.name for p in out.iterdir()) == [MARKER]


def test_an_empty_or_absent_folder_is_used_and_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert (replace_demo_folder(tmp_path / "empty") / MARKER).is_file()
    assert (replace_demo_folder(tmp_path / "new" / "out") / MARKER).is_file()
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        replace_demo_folder(tmp_path / "a-file")


def test_bad_demo_arguments_fail_before_the_out_folder_is_touched(tmp_path: Path) -> None:
    earlier = replace_demo_folder(tmp_path / "demo-output")
    (earlier / "sessions").mkdir()
    with pytest.raises(SystemExit) as caught:  # argparse: usage error, exit code 2
        main(["demo", "--events", "-5", "--out", str(earlier)])
    assert caught.value.code == 2
    with pytest.raises(UsageError, match="must be >= 1"):
        sessions_demo_command(earlier, events=10, users=0, seed=1)
    with pytest.raises(UsageError, match="must be >= 1"):
        patterns_demo_command(earlier, events=10, users=0, actors=1, seed=1)
    assert (earlier / "sessions").is_dir()
