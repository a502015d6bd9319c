"""The progress log: one JSON line per micro-batch, next to the checkpoint, for tools to read
after the fact (``streamwarden report``, ``streamwarden status``).

A checkpoint at ``X`` gets the folder ``X.progress/`` beside it, holding ``progress.jsonl`` and
the running query's ``status.json``. Beside, not inside: Spark owns the checkpoint folder, and
what the checkpoint holds is copied, rescaled and restored with it (L9 wants it small).

Each line: ``{"summary": BatchSummary, "checkpoint": CheckpointUsage, "partitions":
[PartitionLoad], "findings": [Finding], "progress": <Spark's progress JSON>}``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from streamwarden.errors import UsageError
from streamwarden.monitoring.checkpoint_usage import CheckpointUsage
from streamwarden.monitoring.findings import Finding
from streamwarden.monitoring.skew import PartitionLoad
from streamwarden.monitoring.summary import BatchSummary

__all__ = [
    "BatchRecord",
    "ProgressLog",
    "progress_dir",
    "read_progress_log",
    "read_status",
    "write_status",
]

PROGRESS_FILE = "progress.jsonl"
STATUS_FILE = "status.json"


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

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary.to_json(),
            "checkpoint": None if self.checkpoint is None else asdict(self.checkpoint),
            "partitions": [asdict(p) for p in self.partitions],
            "findings": [f.to_json() for f in self.findings],
            "progress": self.progress,
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
        )


class ProgressLog:
    """Appends one line per batch; each line is flushed so readers see whole batches."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, record: BatchRecord) -> None:
        line = json.dumps(record.to_json(), separators=(",", ":"), default=str)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")


def read_progress_log(path: Path) -> list[BatchRecord]:
    """The records of a progress log (a ``progress.jsonl`` file, or its folder). A last line
    cut short by a crash is skipped; any other bad line is an error naming it."""
    if path.is_dir():
        path = path / PROGRESS_FILE
    if not path.is_file():
        raise UsageError(
            f"no progress log at {str(path)!r}; a pipeline writes it to <checkpoint>.progress/"
            f"{PROGRESS_FILE} while it runs (monitoring.progress_log = true)"
        )
    lines = path.read_text(encoding="utf-8").splitlines()
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            records.append(BatchRecord.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError) as exc:
            if number == len(lines):
                break
            raise UsageError(
                f"{str(path)!r} line {number} is not a progress record ({exc}); was the file "
                "written by streamwarden?"
            ) from None
    return records


def write_status(folder: Path, status: dict[str, Any]) -> None:
    """Replaces ``status.json`` atomically, so that a reader never sees half a file."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{STATUS_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(status, indent=1, default=str), encoding="utf-8")
    tmp.replace(folder / STATUS_FILE)


def read_status(folder: Path) -> dict[str, Any] | None:
    """The status a running (or last) pipeline published, or None if there is none."""
    try:
        data: dict[str, Any] = json.loads((folder / STATUS_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return data
