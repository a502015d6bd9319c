"""The progress log stays bounded however long a pipeline runs, and survives a crash mid-line."""

import re
from pathlib import Path

import pytest

from streamwarden.errors import MonitoringError, UsageError
from streamwarden.monitoring.progress_log import (
    BatchRecord,
    ProgressLog,
    has_progress_log,
    read_progress_log,
    read_status,
)
from streamwarden.monitoring.summary import BatchSummary


def record(batch_id: int) -> BatchRecord:
    summary = BatchSummary("q", batch_id, 0, 10, 0.0, 0.0, {}, None, None, [])
    return BatchRecord(summary, progress={"padding": "x" * 200})


def batch_ids(records: list[BatchRecord]) -> list[int]:
    return [r.summary.batch_id for r in records]


def line_bytes(tmp_path: Path) -> int:
    probe = ProgressLog(tmp_path / "probe" / "progress.jsonl")
    probe.append(record(0))
    return probe.path.stat().st_size


def test_a_full_log_is_rotated_and_only_keep_older_files_remain(tmp_path: Path) -> None:
    size = line_bytes(tmp_path)
    log = ProgressLog(tmp_path / "p" / "progress.jsonl", max_bytes=3 * size, keep=2)
    for batch in range(20):
        log.append(record(batch))
    names = sorted(p.name for p in log.path.parent.iterdir())
    assert names == ["progress.1.jsonl", "progress.2.jsonl", "progress.jsonl"]
    assert sum(p.stat().st_size for p in log.path.parent.iterdir()) <= 3 * 3 * size
    # the newest batches survive, in order, read across the rotated files
    assert batch_ids(read_progress_log(log.path.parent)) == list(range(12, 20))
    assert batch_ids(read_progress_log(log.path, last=4)) == [16, 17, 18, 19]
    assert batch_ids(read_progress_log(log.path, last=100)) == list(range(12, 20))


def test_keep_zero_keeps_only_the_current_file(tmp_path: Path) -> None:
    size = line_bytes(tmp_path)
    log = ProgressLog(tmp_path / "p" / "progress.jsonl", max_bytes=2 * size, keep=0)
    for batch in range(5):
        log.append(record(batch))
    assert [p.name for p in log.path.parent.iterdir()] == ["progress.jsonl"]
    assert batch_ids(read_progress_log(log.path)) == [4]


def test_a_smaller_keep_on_restart_removes_the_files_beyond_it(tmp_path: Path) -> None:
    size = line_bytes(tmp_path)
    path = tmp_path / "p" / "progress.jsonl"
    first = ProgressLog(path, max_bytes=size, keep=3)
    for batch in range(4):
        first.append(record(batch))
    assert (path.parent / "progress.3.jsonl").exists()
    second = ProgressLog(path, max_bytes=size, keep=1)
    second.append(record(4))
    assert sorted(p.name for p in path.parent.iterdir()) == ["progress.1.jsonl"]
    assert batch_ids(read_progress_log(path.parent)) == [4]


def test_a_line_cut_short_by_a_crash_is_dropped_when_the_log_reopens(tmp_path: Path) -> None:
    path = tmp_path / "p" / "progress.jsonl"
    log = ProgressLog(path)
    log.append(record(0))
    log.append(record(1))
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) - 40])  # the process died while writing batch 1
    assert batch_ids(read_progress_log(path)) == [0]  # a reader skips the cut line
    ProgressLog(path).append(record(2))  # the restarted pipeline
    assert batch_ids(read_progress_log(path)) == [0, 2]


def test_a_bad_line_in_the_middle_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "p" / "progress.jsonl"
    log = ProgressLog(path)
    log.append(record(0))
    with path.open("a", encoding="utf-8") as out:
        out.write("not json\n")
    log.append(record(1))
    with pytest.raises(UsageError, match="line 2 is not a progress record"):
        read_progress_log(path)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"this is not json\n", "line 1 is not a progress record"),
        (b'[1, 2]\n"x"\n', "line 1 is not a progress record (a JSON list, not an object)"),
        (b"\xff\xfe\n", "is not UTF-8 text"),
    ],
)
def test_a_file_that_is_no_progress_log_is_an_error_not_an_empty_log(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "progress.jsonl"
    path.write_bytes(content)
    with pytest.raises(UsageError, match=re.escape(expected)):
        read_progress_log(path)


@pytest.mark.parametrize("content", [b"{not json", b"[]"])
def test_a_damaged_status_file_is_an_error_saying_what_to_do(tmp_path: Path, content: bytes):
    (tmp_path / "status.json").write_bytes(content)
    with pytest.raises(MonitoringError, match="not a status file written by streamwarden"):
        read_status(tmp_path)


def test_a_log_whose_current_file_was_just_rotated_away_is_still_found(tmp_path: Path) -> None:
    size = line_bytes(tmp_path)
    log = ProgressLog(tmp_path / "p" / "progress.jsonl", max_bytes=size, keep=1)
    log.append(record(0))  # rotated at once: only progress.1.jsonl is left
    assert not log.path.exists()
    assert has_progress_log(log.path.parent)
    assert batch_ids(read_progress_log(log.path.parent, last=5)) == [0]
