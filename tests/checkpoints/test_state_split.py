"""State on disk split into what the latest version needs (live) and the older versions Spark
retains (history), from the files alone."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from streamwarden.checkpoints.files import CheckpointFiles


def _snapshot(path: Path, ssts: list[str]) -> int:
    listed = [{"dfsSstFileName": s, "sizeBytes": 0} for s in ssts]
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("metadata", "v1\n" + json.dumps({"sstFiles": listed}))
    return path.stat().st_size


def test_live_state_is_the_newest_snapshot_its_ssts_and_the_changelogs_after_it(tmp_path):
    (tmp_path / "offsets").mkdir()
    part = tmp_path / "state" / "0" / "0"
    (part / "SSTs").mkdir(parents=True)
    for version in range(1, 7):
        (part / f"{version}.changelog").write_bytes(b"c" * 100 * version)
    (part / ".6.changelog.crc").write_bytes(b"x" * 7)  # checksums are not state
    old_zip = _snapshot(part / "2_aaaa.zip", ["old.sst"])
    new_zip = _snapshot(part / "4_bbbb.zip", ["kept.sst"])
    (part / "SSTs" / "old.sst").write_bytes(b"o" * 1000)
    (part / "SSTs" / "kept.sst").write_bytes(b"k" * 2000)

    split = CheckpointFiles(tmp_path).state_split()

    assert split.live_bytes == new_zip + 2000 + 500 + 600
    assert split.history_bytes == old_zip + 1000 + 100 + 200 + 300 + 400


def test_without_a_snapshot_every_changelog_is_live(tmp_path):
    (tmp_path / "offsets").mkdir()
    part = tmp_path / "state" / "0" / "1"
    part.mkdir(parents=True)
    for version in (1, 2, 3):
        (part / f"{version}.changelog").write_bytes(b"c" * 10)
    split = CheckpointFiles(tmp_path).state_split()
    assert (split.live_bytes, split.history_bytes) == (30, 0)
