"""The progress log: one JSON line per micro-batch, next to the checkpoint, for tools to read
after the fact (``streamwarden report``, ``streamwarden status``).

A checkpoint at ``X`` gets the folder ``X.progress/`` beside it, holding ``progress.jsonl``
(and, once it has been rotated, ``progress.1.jsonl``, ``progress.2.jsonl``, ..., older and
older) and the running query's ``status.json``. Beside, not inside: Spark owns the checkpoint
folder, and what the checkpoint holds is copied, rescaled and restored with it (L9 wants it
small).

Each line: ``{"summary": BatchSummary, "checkpoint": CheckpointUsage, "partitions":
[PartitionLoad], "findings": [Finding], "progress": <Spark's progress JSON>,
"state_rows_by_state": {name: rows}}``; the last, for a keyed processor, is the rows each of
its states holds after the batch (:class:`StateRowsTally`), null where not known.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.atomic import write_atomically
from streamwarden.errors import MonitoringError, UsageError
from streamwarden.monitoring.checkpoint_usage import CheckpointUsage
from streamwarden.monitoring.failures import QueryFailure
from streamwarden.monitoring.findings import Finding
from streamwarden.monitoring.skew import PartitionLoad
from streamwarden.monitoring.summary import BatchSummary
from streamwarden.operators.process.guard import STATE_ROWS_ADDED

__all__ = [
    "BatchRecord",
    "ProgressLog",
    "StateRowsTally",
    "has_progress_log",
    "progress_dir",
    "read_failures",
    "read_last_record",
    "read_progress_log",
    "read_status",
    "write_status",
]

PROGRESS_FILE = "progress.jsonl"
STATUS_FILE = "status.json"
#: Size at which ``progress.jsonl`` is rotated (``monitoring.progress_log_max_size``).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: Rotated files kept besides the current one (``monitoring.progress_log_keep``).
DEFAULT_KEEP = 4


def progress_dir(checkpoint: Path) -> Path:
    """``X`` -> ``X.progress``: where a checkpoint's progress log and status file live."""
    return checkpoint.with_name(checkpoint.name + ".progress")


@dataclass(frozen=True)
class BatchRecord:
    """Everything monitoring learnt about one batch."""

    summary: BatchSummary
    checkpoint: CheckpointUsage | None = None
    partitions: list[PartitionLoad] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    progress: dict[str, Any] = field(default_factory=dict)
    #: A keyed processor's rows per state name after the batch (None: not a keyed processor,
    #: or not known; see :class:`StateRowsTally`).
    state_rows_by_state: dict[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary.to_json(),
            "checkpoint": None if self.checkpoint is None else asdict(self.checkpoint),
            "partitions": [asdict(p) for p in self.partitions],
            "findings": [f.to_json() for f in self.findings],
            "progress": self.progress,
            "state_rows_by_state": self.state_rows_by_state,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BatchRecord:
        checkpoint = data.get("checkpoint")
        return cls(
            summary=BatchSummary.from_json(data["summary"]),
            checkpoint=None if checkpoint is None else CheckpointUsage(**checkpoint),
            partitions=[
                PartitionLoad(
                    operator=p["operator"],
                    state_rows={int(k): v for k, v in p["state_rows"].items()},
                    input_rows={int(k): v for k, v in p["input_rows"].items()},
                )
                for p in data.get("partitions", [])
            ],
            findings=[Finding.from_json(f) for f in data.get("findings", [])],
            progress=data.get("progress", {}),
            state_rows_by_state=data.get("state_rows_by_state"),
        )


class StateRowsTally:
    """A keyed processor's rows per state name, batch after batch.

    Spark counts a ``transformWithState``'s rows for all its states together; the guard counts
    them per state as it writes them, each batch adding up the rows it added to each state (its
    observed ``state_rows_added_<name>``), at no cost of a job of its own. This keeps the sum
    since batch 0, carried on from the progress log's last line (``last``) across restarts.
    The sum is only known while no batch goes unseen: after a gap in the batch numbers (a batch
    committed but never logged) it is None, and the rows a batch added are still in its
    progress.
    """

    def __init__(self, last: BatchRecord | None = None) -> None:
        self._rows = None if last is None else last.state_rows_by_state
        self._batch = None if last is None else last.summary.batch_id

    def add(self, batch_id: int, progress: dict[str, Any]) -> dict[str, int] | None:
        """The rows per state name after batch ``batch_id`` (None if not known, or not a keyed
        processor's batch)."""
        added = state_rows_added(progress)
        if batch_id == 0 and added:
            rows: dict[str, int] | None = {}
        elif self._rows is not None and self._batch is not None and batch_id == self._batch + 1:
            rows = self._rows
        else:
            rows = None
        self._batch = batch_id
        if rows is not None:
            rows = {n: rows.get(n, 0) + added.get(n, 0) for n in {*rows, *added}}
        self._rows = rows
        return None if rows is None else dict(sorted(rows.items()))


def state_rows_added(progress: dict[str, Any]) -> dict[str, int]:
    """The rows a batch added to each of a keyed processor's states (negative: freed), by the
    state's name, from its observed metrics ({} for another operator's batch)."""
    added = {}
    for metrics in (progress.get("observedMetrics") or {}).values():
        for name, value in metrics.items():
            if name.startswith(STATE_ROWS_ADDED):
                added[name.removeprefix(STATE_ROWS_ADDED)] = int(value or 0)
    return added


class ProgressLog:
    """Appends one line per batch; each line is flushed so readers see whole batches.

    The log cannot grow without bound next to a job that runs for months: once
    ``progress.jsonl`` reaches ``max_bytes`` it becomes ``progress.1.jsonl`` (the older files
    move up one number) and a new one starts; only ``keep`` rotated files are kept, so the log
    never holds much more than ``(keep + 1) * max_bytes``. A line cut short by a crash is cut
    off when the log is opened again, so the next line starts on a line of its own.
    """

    def __init__(
        self, path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, keep: int = DEFAULT_KEEP
    ) -> None:
        if max_bytes < 1 or keep < 0:
            raise ValueError(f"max_bytes must be >= 1 and keep >= 0, not {max_bytes}, {keep}")
        self.path = path
        self.max_bytes = max_bytes
        self.keep = keep
        path.parent.mkdir(parents=True, exist_ok=True)
        _cut_partial_line(path)

    def append(self, record: BatchRecord) -> None:
        self._append_line(record.to_json())

    def append_failure(self, failure: QueryFailure) -> None:
        """A failure of the query, as a ``{"failure": ...}`` line between the batches."""
        self._append_line({"failure": failure.to_json()})

    def _append_line(self, data: dict[str, Any]) -> None:
        line = json.dumps(data, separators=(",", ":"), default=str)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
            size = out.tell()
        if size >= self.max_bytes:
            self._rotate()

    def _rotate(self) -> None:
        stale = self.keep + 1  # the oldest kept file's successor, and any left by a larger keep
        while _numbered(self.path, stale).exists():
            _numbered(self.path, stale).unlink()
            stale += 1
        for n in range(self.keep, 1, -1):  # .keep-1 -> .keep, ..., .1 -> .2
            if _numbered(self.path, n - 1).exists():
                _numbered(self.path, n - 1).replace(_numbered(self.path, n))
        if self.keep:
            self.path.replace(_numbered(self.path, 1))
        else:
            self.path.unlink()


def _numbered(current: Path, n: int) -> Path:
    """``progress.N.jsonl`` beside ``progress.jsonl``: the Nth newest rotated file."""
    return current.with_name(f"{current.stem}.{n}{current.suffix}")


def _cut_partial_line(path: Path, chunk: int = 64 * 1024) -> None:
    """Truncates ``path`` after its last newline: a crash can leave half a line behind, and
    the next line must not be glued to it."""
    if not path.is_file():
        return
    with path.open("rb+") as log:
        end = log.seek(0, os.SEEK_END)
        while end > 0:
            start = max(0, end - chunk)
            log.seek(start)
            at = log.read(end - start).rfind(b"\n")
            if at >= 0:
                end = start + at + 1
                break
            end = start
        log.truncate(end)


def _log_files(path: Path) -> list[Path]:
    """The files of the log whose current file is ``path``, oldest first."""
    rotated: list[Path] = []
    while _numbered(path, len(rotated) + 1).is_file():
        rotated.append(_numbered(path, len(rotated) + 1))
    return [*reversed(rotated), *([path] if path.is_file() else [])]


def has_progress_log(folder: Path) -> bool:
    """Whether ``folder`` holds a progress log (its current file may be rotated away)."""
    return bool(_log_files(folder / PROGRESS_FILE))


def read_progress_log(path: Path, *, last: int | None = None) -> list[BatchRecord]:
    """The records of a progress log (its ``progress.jsonl`` file, or its folder), rotated
    files included, oldest first; with ``last``, only the last that many (reading no more
    files than needed). A last line cut short by a crash (no newline at its end) is skipped;
    any other bad line is an error naming it."""
    if path.is_dir():
        path = path / PROGRESS_FILE
    files = _log_files(path)
    if not files:
        raise UsageError(
            f"no progress log at {str(path)!r}; a pipeline writes it to <checkpoint>.progress/"
            f"{PROGRESS_FILE} while it runs (monitoring.progress_log = true)"
        )
    records: list[BatchRecord] = []
    for file in reversed(files):
        if last is not None and len(records) >= last:
            break
        records = _read_file(file) + records
    return records if last is None else records[max(len(records) - last, 0) :]


def read_last_record(folder: Path, chunk: int = 256 * 1024) -> BatchRecord | None:
    """The last batch record of the progress log in ``folder`` (None: none), read from the end
    of its newest file: a long log is not read whole for it."""
    for file in reversed(_log_files(folder / PROGRESS_FILE)):
        with file.open("rb") as log:
            end = log.seek(0, os.SEEK_END)
            size = min(chunk, end)
            while True:
                log.seek(end - size)
                lines = log.read(size).splitlines()
                whole = lines if size == end else lines[1:]  # the first may be cut
                for line in reversed(whole):
                    data = _json_object(line)
                    if data is not None and "summary" in data:
                        return BatchRecord.from_json(data)
                if size == end:
                    break
                size = min(size * 4, end)
    return None


def _json_object(line: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(line)
    except ValueError:  # a line cut short by a crash
        return None
    return data if isinstance(data, dict) else None


def read_failures(path: Path) -> list[QueryFailure]:
    """The query failures the supervisor recorded in a progress log (file or folder), oldest
    first; none if there is no log."""
    if path.is_dir():
        path = path / PROGRESS_FILE
    return [f for file in _log_files(path) for f in _read_file(file, failures=True)]


def _read_file(path: Path, *, failures: bool = False) -> list[Any]:
    """The batch records of one file of the log, or with ``failures`` its failure lines."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            f"{str(path)!r} is not UTF-8 text, so not a progress log written by streamwarden"
        ) from None
    lines = text.splitlines()
    cut_short = bool(text) and not text.endswith("\n")  # a crash can cut only the last line
    records: list[Any] = []
    for number, line in enumerate(lines, start=1):
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise TypeError(f"a JSON {type(data).__name__}, not an object")
            if "failure" in data:
                if failures:
                    records.append(QueryFailure.from_json(data["failure"]))
            elif not failures:
                records.append(BatchRecord.from_json(data))
        except (ValueError, KeyError, TypeError) as exc:
            if number == len(lines) and cut_short:
                break
            raise UsageError(
                f"{str(path)!r} line {number} is not a progress record ({exc}); was the file "
                "written by streamwarden?"
            ) from None
    return records


def write_status(folder: Path, status: dict[str, Any]) -> None:
    """Replaces ``status.json`` atomically, so that a reader never sees half a file."""
    write_atomically(folder / STATUS_FILE, json.dumps(status, indent=1, default=str))


def read_status(folder: Path) -> dict[str, Any] | None:
    """The status a running (or last) pipeline published, or None if there is none."""
    path = folder / STATUS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError as exc:  # bad JSON or bad UTF-8
        raise _not_a_status_file(path, str(exc)) from None
    if not isinstance(data, dict):
        raise _not_a_status_file(path, f"a JSON {type(data).__name__}, not an object")
    return data


def _not_a_status_file(path: Path, what: str) -> MonitoringError:
    return MonitoringError(
        f"{str(path)!r} is not a status file written by streamwarden ({what}); the pipeline "
        "rewrites it when it starts: delete it, or run the pipeline again"
    )
