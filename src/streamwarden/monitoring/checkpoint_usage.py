"""Bytes a checkpoint gains per batch, and the size of its metadata (lesson L9).

Spark's checkpoint holds metadata (``metadata``, ``offsets/N``, ``commits/N``, ``sources/*/N``,
``state/*/_metadata``, ``state/*/*/_metadata``) and state files (RocksDB changelogs and snapshot
zips named by their state version, which is batch id + 1, and SST files under ``SSTs/``). State
bytes written by batch N are its versioned files (``N+1.changelog``, ``N+1_<id>.zip``, ...,
found by name, so the count is exact even when the next batch has already run) plus SST files
first seen at this measurement: snapshots are uploaded by a background maintenance task, so
their SST files may be counted a batch late.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from streamwarden.checkpoints.files import CheckpointFiles

__all__ = ["CheckpointMeter", "CheckpointUsage"]

_VERSIONED = re.compile(r"^\.?(\d+)(_[0-9a-fA-F-]+)?\.(changelog|zip)(\.crc)*$")


@dataclass(frozen=True)
class CheckpointUsage:
    """What one batch added to the checkpoint, and how big its metadata is; and the state on
    disk after it, live and retained history
    (:class:`~streamwarden.checkpoints.files.StateSplit`; None in lines of older versions)."""

    state_bytes_written: int
    state_files_written: int
    batch_metadata_bytes: int
    metadata_bytes_total: int
    state_live_bytes: int | None = None
    state_history_bytes: int | None = None
    #: Of :attr:`state_bytes_written`, the batch's own changelogs: the state it changed, without
    #: the snapshots maintenance uploads (None in lines of older versions).
    changelog_bytes_written: int | None = None


def _is_metadata(relative: Path) -> bool:
    parts = relative.parts
    return parts[0] != "state" or "_metadata" in parts


def _walk(root: Path) -> dict[Path, int]:
    """Every file under ``root`` with its size; files that vanish meanwhile are skipped."""
    sizes: dict[Path, int] = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder, name)
            try:
                sizes[path.relative_to(root)] = path.stat().st_size
            except FileNotFoundError:
                continue
    return sizes


def _state_version(relative: Path) -> int | None:
    """The state version a changelog or snapshot file belongs to; None for SST files."""
    match = _VERSIONED.match(relative.name)
    return int(match.group(1)) if match and "SSTs" not in relative.parts else None


def _belongs_to_batch(relative: Path, batch_id: int) -> bool:
    """``offsets/N``, ``commits/N``, ``sources/*/N`` and their ``.N.crc`` checksums."""
    return relative.parts[0] != "state" and relative.name.lstrip(".").split(".")[0] == str(batch_id)


class CheckpointMeter:
    """Measures a checkpoint after each batch. Create it before the query starts: files already
    there are old, so a restarted query does not report its whole history as one batch."""

    def __init__(self, checkpoint: Path) -> None:
        self.checkpoint = checkpoint
        self._seen = {p for p in _walk(checkpoint) if not _is_metadata(p)}

    def measure(self, batch_id: int) -> CheckpointUsage:
        """Call once per batch, in batch order, after the batch has committed."""
        files = _walk(self.checkpoint)
        state = {p: s for p, s in files.items() if not _is_metadata(p)}
        new = [p for p in state if _state_version(p) == batch_id + 1]
        new += [p for p in state if _state_version(p) is None and p not in self._seen]
        self._seen = set(state)
        meta = {p: s for p, s in files.items() if _is_metadata(p)}
        split = CheckpointFiles(self.checkpoint).state_split()
        return CheckpointUsage(
            state_bytes_written=sum(state[p] for p in new),
            state_files_written=len(new),
            batch_metadata_bytes=sum(s for p, s in meta.items() if _belongs_to_batch(p, batch_id)),
            metadata_bytes_total=sum(meta.values()),
            state_live_bytes=split.live_bytes,
            state_history_bytes=split.history_bytes,
            changelog_bytes_written=sum(state[p] for p in new if ".changelog" in p.name),
        )
