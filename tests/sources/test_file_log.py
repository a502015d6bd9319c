"""Spark's file source log kept bounded: entries of files older than ``maxFileAge`` before the
newest, in committed batches, leave the latest compact file; nothing Spark still needs does."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from streamwarden.sources.file_log import (
    files_of_batch,
    gone_planned_files,
    last_committed,
    prune_file_log,
    prune_once_per_compact,
    prune_spent_entries,
)

DAY_MS = 86_400_000


def _write(log: Path, name: str, entries: list[tuple[str, int, int]]) -> None:
    lines = [json.dumps({"path": p, "timestamp": t, "batchId": b}) for p, t, b in entries]
    (log / name).write_text("\n".join(["v1", *lines]))


def _paths(path: Path) -> list[str]:
    return [json.loads(x)["path"] for x in path.read_text().splitlines()[1:]]


def _log(tmp_path: Path) -> Path:
    log = tmp_path / "sources" / "0"
    log.mkdir(parents=True)
    # day d's file read in batch d; batch 9's compact file repeats batches 0-9
    _write(log, "9.compact", [(f"f{d}", d * DAY_MS, d) for d in range(10)])
    (log / ".9.compact.crc").write_bytes(b"crc\x00")
    _write(log, "10", [("f10", 10 * DAY_MS, 10)])
    return log


def test_entries_older_than_the_max_file_age_before_the_newest_file_are_dropped(tmp_path):
    log = _log(tmp_path)
    dropped = prune_file_log(log, committed=10, max_age=timedelta(days=7))
    # the newest file is day 10: days 0-2 are older than 7 days before it
    assert dropped == 3
    assert _paths(log / "9.compact") == [f"f{d}" for d in range(3, 10)]
    assert (log / "9.compact").read_text().startswith("v1\n")
    assert not (log / ".9.compact.crc").exists()  # a checksum of the old content would fail


def test_entries_of_a_batch_not_yet_committed_are_kept_whatever_their_age(tmp_path):
    log = _log(tmp_path)
    assert prune_file_log(log, committed=0, max_age=timedelta(days=7)) == 1
    assert _paths(log / "9.compact")[:2] == ["f1", "f2"]


def test_a_log_with_nothing_to_drop_is_left_as_it_is(tmp_path):
    log = _log(tmp_path)
    before = (log / "9.compact").read_text()
    assert prune_file_log(log, committed=10, max_age=timedelta(days=30)) == 0
    assert (log / "9.compact").read_text() == before and (log / ".9.compact.crc").exists()
    assert prune_file_log(tmp_path / "absent", committed=3) == 0


def test_the_files_of_one_batch_are_read_from_the_compact_file_or_the_batch_file(tmp_path):
    log = _log(tmp_path)
    assert files_of_batch(log, 4) == ["f4"]
    assert files_of_batch(log, 10) == ["f10"]
    assert files_of_batch(log, 11) == []


def test_the_last_committed_batch_is_the_highest_numbered_commit(tmp_path):
    assert last_committed(tmp_path) is None
    (tmp_path / "commits").mkdir()
    for name in ("0", "1", "12", ".12.crc"):
        (tmp_path / "commits" / name).write_text("v1")
    assert last_committed(tmp_path) == 12


def test_a_gone_file_of_a_batch_not_yet_committed_is_found_and_only_that(tmp_path):
    landing = tmp_path / "landing"
    landing.mkdir()
    for name in ("old.jsonl", "kept.jsonl"):
        (landing / name).write_text("{}\n")
    log = tmp_path / "sources" / "0"
    log.mkdir(parents=True)
    _write(log, "0", [((landing / "gone-but-committed.jsonl").as_uri(), 1, 0)])
    _write(log, "1", [((landing / "kept.jsonl").as_uri(), 2, 1)])
    _write(log, "2", [((landing / "gone.jsonl").as_uri(), 3, 2)])
    for folder, batches in (("offsets", (0, 1, 2)), ("commits", (0,))):
        (tmp_path / folder).mkdir()
        for b in batches:
            (tmp_path / folder / str(b)).write_text("v1")
    assert gone_planned_files(tmp_path) == [(2, str(landing / "gone.jsonl"))]


def test_spent_entries_of_files_that_are_gone_leave_the_log_but_the_newest_stays(tmp_path):
    """The idle ticks' log: each tick file is deleted once read; its entry is dead weight."""
    ticks = tmp_path / "ticks"
    ticks.mkdir()
    log = tmp_path / "sources" / "1"
    log.mkdir(parents=True)
    live = ticks / "tick-8.jsonl"  # read in batch 8 and not deleted yet
    live.write_text("{}\n")
    entries = [(f"file://{ticks}/tick-{b}.jsonl", 1000 + b, b) for b in range(10)]
    _write(log, "9.compact", entries)
    assert prune_spent_entries(log, committed=8) == 8
    # tick 8's file is still there; tick 9 is the newest and of a batch not yet committed
    assert _paths(log / "9.compact") == [
        f"file://{ticks}/tick-8.jsonl",
        f"file://{ticks}/tick-9.jsonl",
    ]
    live.unlink()
    assert prune_spent_entries(log, committed=9) == 1
    assert _paths(log / "9.compact") == [f"file://{ticks}/tick-9.jsonl"]  # the newest is kept
    assert prune_spent_entries(log, committed=9) == 0


def test_a_compact_file_is_pruned_once_and_the_next_one_when_spark_writes_it(tmp_path):
    log = _log(tmp_path)
    (tmp_path / "commits").mkdir()
    (tmp_path / "commits" / "10").write_text("v1")
    calls: list[tuple[Path, int | None]] = []

    def prune(log: Path, committed: int | None) -> int:
        calls.append((log, committed))
        return 0

    first = prune_once_per_compact(log, tmp_path, prune)
    assert first == log / "9.compact" and calls == [(log, 10)]
    assert prune_once_per_compact(log, tmp_path, prune, unless_pruned=first) == first
    assert len(calls) == 1  # the same compact file: not read again
    _write(log, "19.compact", [("f19", 19 * DAY_MS, 19)])
    assert prune_once_per_compact(log, tmp_path, prune, unless_pruned=first) == log / "19.compact"
    assert len(calls) == 2
    assert prune_once_per_compact(tmp_path / "absent", tmp_path, prune) is None and len(calls) == 2
