"""Checkpoint log files cut short, and what a user can safely do about each.

Spark writes every ``offsets/N`` and ``commits/N`` whole and renames it into place; a machine
that loses power after the rename but before the content reached the disk can leave the file
empty or cut. Spark then refuses to restart ("Incomplete log file", or "next on empty
iterator") without saying what to do. Whether deleting the file is safe depends on what of
batch N already left the pipeline:

- the last ``commits/N``: batch N ran to the end and its offsets are intact. Deleted, Spark runs
  batch N again from the same offsets; the sinks find it written and skip it, and the stateful
  step runs again into nothing (the replay path of the batch writer). Nothing lost or doubled.
- the last ``offsets/N``, of a batch that never committed and that no sink holds: nothing of
  batch N left the pipeline. Deleted, Spark plans batch N again (perhaps with more files).
- anything else (the offsets of a committed batch, of a batch some sink already wrote, or an
  earlier offsets file): the plan behind outputs already written is lost. Planned again, batch N
  could hold other records than the ones written, and the sinks would skip it as written:
  records lost. Only a copy of the checkpoint, or a new start, is safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from streamwarden.checkpoints.files import CheckpointFiles
from streamwarden.config.model import PipelineConfig
from streamwarden.sinks.base import open_sink

__all__ = ["CutLog", "cut_log_fix", "cut_logs"]


@dataclass(frozen=True)
class CutLog:
    """One log file Spark cannot read back, and whether deleting it loses nothing."""

    path: Path
    deletable: bool


def cut_logs(config: PipelineConfig) -> list[CutLog]:
    """The cut log files of ``config``'s checkpoint (none when there is no checkpoint yet)."""
    files = CheckpointFiles.existing(config.checkpoint.path)
    if files is None:
        return []
    cut = files.cut_logs()
    offsets, commits = files.offset_batches(), files.committed_batches()
    cut_commits = {int(p.name) for p in cut if p.parent.name == "commits"}
    out = []
    for path in cut:
        n = int(path.name)
        if path.parent.name == "commits":
            deletable = n == commits[-1] and n in offsets
        else:
            uncommitted = n not in commits or n in cut_commits
            deletable = n == offsets[-1] and uncommitted and not _in_a_sink(config, n)
        out.append(CutLog(path, deletable))
    return out


def cut_log_fix(cut: list[CutLog]) -> str:
    """What to do about ``cut``, in one sentence."""
    if not all(c.deletable for c in cut):
        return (
            "the plan of a batch whose outputs may already be written is lost, so deleting "
            "the file could lose records: restore the checkpoint from a copy, or start over on "
            "a new checkpoint.path with new sink folders"
        )
    names = ", ".join(f"{c.path} and {c.path.parent / ('.' + c.path.name + '.crc')}" for c in cut)
    return (
        f"delete {names} (if present), then run again: Spark plans or runs that batch again and "
        "the sinks skip what they already hold, so nothing is lost or doubled"
    )


def _in_a_sink(config: PipelineConfig, batch_id: int) -> bool:
    return any(
        batch_id in open_sink(name, config.context).written_batches() for name in config.sinks
    )
