"""The layout of a Structured Streaming checkpoint folder, read from files alone (no Spark).

A checkpoint holds ``metadata`` (the query id), ``offsets/N`` (what batch N planned, with the
watermark and the SQL conf it ran with), ``commits/N`` (batch N finished; in checkpoint format
v2 also the state version ids), ``sources/`` and ``state/<operator>/<partition>/`` (RocksDB
snapshots ``V_<id>.zip`` with their ``SSTs/`` and changelogs ``V_<id>.changelog``; state version
V is written by batch V-1). This module turns that into sizes per batch (lesson L9: metadata must
stay small and independent of state size) and bytes on disk per operator and partition.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamwarden.errors import NotACheckpointError, StateError

__all__ = ["BatchFiles", "CheckpointFiles", "PartitionDisk", "StateSplit"]

_STATE_FILE = re.compile(r"^(\d+)(?:_[^.]+)?\.(zip|changelog|delta|snapshot)$")
_SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


@dataclass(frozen=True)
class BatchFiles:
    """What one batch left in the checkpoint's logs and state folders, in bytes."""

    batch_id: int
    offsets_bytes: int
    commit_bytes: int | None  # None: planned, never committed
    state_metadata_bytes: int
    state_written_bytes: int
    seconds: float | None  # from the offsets file's time to the commit file's time

    @property
    def committed(self) -> bool:
        return self.commit_bytes is not None


@dataclass(frozen=True)
class PartitionDisk:
    """Files of one state partition of one operator: every retained version, as on disk."""

    operator_id: int
    partition: int
    bytes: int
    files: int


@dataclass(frozen=True)
class StateSplit:
    """State bytes on disk in two parts. ``live``: what loading the latest version reads (its
    newest snapshot, the SST files that snapshot lists, and the changelogs after it): this
    follows the state's size. ``history``: the older versions Spark keeps so that it can replay
    or roll back a batch (``spark.sql.streaming.minBatchesToRetain``, 100 by default): this
    levels off once that many batches have run."""

    live_bytes: int
    history_bytes: int


class CheckpointFiles:
    """A checkpoint folder. Raises :class:`NotACheckpointError` when ``path`` is not one."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise NotACheckpointError(
                f"checkpoint {str(self.path)!r} does not exist; pass the folder a query was "
                "started with as checkpointLocation (checkpoint.path in a pipeline config)"
            )
        markers = [self.path / "offsets", self.path / "commits", self.path / "metadata"]
        if not self.path.is_dir() or not any(m.exists() for m in markers):
            hint = (
                " (that is a config file: pass the folder its checkpoint.path names)"
                if self.path.suffix in (".toml", ".yaml", ".yml")
                else ""
            )
            raise NotACheckpointError(
                f"{str(self.path)!r} is not a streaming checkpoint: it has no offsets/, commits/ "
                f"or metadata{hint}; pass the folder given to the query as checkpointLocation"
            )

    @classmethod
    def existing(cls, path: Path) -> CheckpointFiles | None:
        """The checkpoint at ``path``, or None if there is none yet: no folder, or one made
        ahead of a first run (what a pipeline's ``checkpoint.path`` holds before it runs)."""
        try:
            return cls(path)
        except NotACheckpointError:
            return None

    # -- logs ---------------------------------------------------------------------------------

    def query_id(self) -> str | None:
        meta = self.path / "metadata"
        if not meta.is_file():
            return None
        return str(_json_object(meta, _text(meta) or "{}").get("id")) or None

    def offset_batches(self) -> list[int]:
        return _numbered(self.path / "offsets")

    def committed_batches(self) -> list[int]:
        return _numbered(self.path / "commits")

    def last_planned(self) -> int | None:
        batches = self.offset_batches()
        return batches[-1] if batches else None

    def last_committed(self) -> int | None:
        batches = self.committed_batches()
        return batches[-1] if batches else None

    def offset_metadata(self, batch_id: int) -> dict[str, Any]:
        """The JSON line of ``offsets/N`` that carries the watermark and the SQL conf."""
        return _metadata_line(self.path / "offsets" / str(batch_id))

    def commit_metadata(self, batch_id: int) -> dict[str, Any]:
        return _metadata_line(self.path / "commits" / str(batch_id))

    def watermark_ms(self) -> int:
        """The event-time watermark the next batch starts from (0 if none was ever set)."""
        last = self.last_committed()
        if last is None:
            return 0
        commit = self.commit_metadata(last)
        if "nextBatchWatermarkMs" in commit:
            return int(commit["nextBatchWatermarkMs"])
        return int(self.offset_metadata(last).get("batchWatermarkMs", 0))

    def watermark_ever_set(self) -> bool:
        """False when every planned batch ran with watermark 0: no watermark, or no event time."""
        return (
            any(
                int(self.offset_metadata(b).get("batchWatermarkMs", 0)) > 0
                for b in self.offset_batches()
            )
            or self.watermark_ms() > 0
        )

    def shuffle_partitions(self) -> int | None:
        """The partition count the checkpoint pins: Spark takes it over the session's conf."""
        batches = self.offset_batches()
        if not batches:
            return None
        value = self.offset_metadata(batches[-1]).get("conf", {}).get(_SHUFFLE_PARTITIONS)
        if value is None:
            return None
        try:
            return int(value)
        except (TypeError, ValueError):
            offsets = self.path / "offsets" / str(batches[-1])
            raise _damaged(offsets, f"{_SHUFFLE_PARTITIONS} is {value!r}") from None

    def orphan_checksums(self, *, with_debris: bool = False) -> list[Path]:
        """Checksum files (``.N.crc``) of the query's logs whose file ``N`` is gone, as when
        ``commits/N`` was deleted by hand and its hidden checksum was not. Spark cannot write
        ``N`` again beside one: it fails the batch with "Multiple streaming queries are
        concurrently using", which is not the cause. Deleting them is safe.

        The checksum of a temporary file (``..N.<uuid>.tmp.crc``) is not one: a process killed
        between Spark's rename of ``N`` into place and the rename of its checksum leaves it,
        and Spark never writes that temporary name again, so it harms nothing (a restart
        resumes, and needs no person). ``with_debris`` lists those too, for advice after a
        failure that named them (deleting them is as safe)."""
        folders = [self.path / "offsets", self.path / "commits"]
        sources = self.path / "sources"
        if sources.is_dir():
            folders += [d for d in sorted(sources.iterdir()) if d.is_dir()]
        return [
            checksum
            for folder in folders
            if folder.is_dir()
            for checksum in sorted(folder.glob(".*.crc"))
            if (with_debris or not checksum.name.endswith(".tmp.crc"))
            and not (folder / checksum.name[1 : -len(".crc")]).exists()
        ]

    def cut_logs(self) -> list[Path]:
        """The log files Spark reads to restart (the last two ``offsets/N``, the last
        ``commits/N``) that it cannot read back: empty, or cut before the lines Spark writes (a
        version line; for offsets also the metadata line and one line per source). Spark fails
        on them with "Incomplete log file" or "next on empty iterator"."""
        cut = [
            self.path / "offsets" / str(n)
            for n in self.offset_batches()[-2:]
            if _cut(self.path / "offsets" / str(n), lines=3)
        ]
        last = self.last_committed()
        if last is not None and _cut(self.path / "commits" / str(last), lines=1):
            cut.append(self.path / "commits" / str(last))
        return cut

    # -- sizes --------------------------------------------------------------------------------

    def operator_ids(self) -> list[int]:
        return _numbered(self.path / "state")

    def partition_disk(self) -> list[PartitionDisk]:
        """Bytes on disk per operator and partition, every retained version included."""
        out = []
        for op in self.operator_ids():
            for part in _numbered(self.path / "state" / str(op)):
                files = [f for f in (self.path / "state" / str(op) / str(part)).rglob("*")]
                data = [f for f in files if f.is_file() and not f.name.startswith(".")]
                out.append(PartitionDisk(op, part, sum(f.stat().st_size for f in data), len(data)))
        return out

    def state_split(self) -> StateSplit:
        """State bytes on disk, live and retained history (see :class:`StateSplit`)."""
        live = total = 0
        for op in self.operator_ids():
            for part in _numbered(self.path / "state" / str(op)):
                part_live, part_total = _partition_split(self.path / "state" / str(op) / str(part))
                live, total = live + part_live, total + part_total
        return StateSplit(live, total - live)

    def log_bytes(self) -> dict[str, int]:
        """Bytes of the query's logs and metadata (not state data), by folder."""
        sizes = {name: _tree_bytes(self.path / name) for name in ("offsets", "commits", "sources")}
        sizes["metadata"] = _file_bytes(self.path / "metadata")
        sizes["state_metadata"] = sum(
            _tree_bytes(self.path / "state" / str(op) / sub)
            for op in self.operator_ids()
            for sub in ("_metadata", "_stateSchema")
        )
        return sizes

    def batches(self) -> list[BatchFiles]:
        """One row per planned batch still in the offset log (Spark retains the newest ones)."""
        written = self._state_bytes_by_version()
        committed = set(self.committed_batches())
        rows = []
        for batch in self.offset_batches():
            offsets = self.path / "offsets" / str(batch)
            commit = self.path / "commits" / str(batch)
            seconds = None
            if batch in committed:
                seconds = round(commit.stat().st_mtime - offsets.stat().st_mtime, 3)
            rows.append(
                BatchFiles(
                    batch_id=batch,
                    offsets_bytes=_file_bytes(offsets),
                    commit_bytes=_file_bytes(commit) if batch in committed else None,
                    state_metadata_bytes=sum(
                        _file_bytes(self.path / "state" / str(op) / "_metadata" / "v2" / str(batch))
                        for op in self.operator_ids()
                    ),
                    state_written_bytes=written.get(batch + 1, 0),
                    seconds=seconds,
                )
            )
        return rows

    def _state_bytes_by_version(self) -> dict[int, int]:
        """State bytes each version added: its changelog and snapshot files, and the SST files a
        snapshot uploaded first (RocksDB shares unchanged SST files between snapshots)."""
        by_version: dict[int, int] = {}
        for op in self.operator_ids():
            for part in _numbered(self.path / "state" / str(op)):
                folder = self.path / "state" / str(op) / str(part)
                seen_ssts: set[str] = set()
                entries = sorted(
                    (int(m.group(1)), f)
                    for f in folder.iterdir()
                    if f.is_file() and (m := _STATE_FILE.match(f.name))
                )
                for version, file in entries:
                    size = file.stat().st_size
                    if file.suffix == ".zip":
                        size += _new_sst_bytes(file, folder / "SSTs", seen_ssts)
                    by_version[version] = by_version.get(version, 0) + size
        return by_version


def _partition_split(folder: Path) -> tuple[int, int]:
    """(live, total) bytes of one state partition's folder (see :class:`StateSplit`)."""
    versions: list[tuple[int, Path]] = []
    total = 0
    for f in folder.rglob("*"):
        if not f.is_file() or f.name.startswith("."):
            continue
        size = f.stat().st_size
        total += size
        if f.parent == folder and (m := _STATE_FILE.match(f.name)):
            versions.append((int(m.group(1)), f))
    if not versions:
        return 0, total
    snapshots = [(v, f) for v, f in versions if f.suffix == ".zip"]
    base = max(snapshots)[0] if snapshots else 0
    live = sum(f.stat().st_size for v, f in versions if v > base and f.suffix != ".zip")
    if snapshots:
        newest = max(snapshots)[1]
        live += newest.stat().st_size + _new_sst_bytes(newest, folder / "SSTs", set())
    return live, total


def _snapshot_ssts(snapshot: Path) -> list[dict[str, Any]]:
    """The SST files a RocksDB snapshot zip lists (its ``metadata`` entry)."""
    try:
        with zipfile.ZipFile(snapshot) as zf:
            meta_lines = zf.read("metadata").decode("utf-8").splitlines()
    except (KeyError, zipfile.BadZipFile, OSError):
        return []
    if len(meta_lines) < 2:
        return []
    return list(_json_object(snapshot, meta_lines[1]).get("sstFiles", []))


def _new_sst_bytes(snapshot: Path, sst_dir: Path, seen: set[str]) -> int:
    """Bytes of SST files listed by a RocksDB snapshot zip and by no earlier snapshot."""
    listed = _snapshot_ssts(snapshot)
    total = 0
    for sst in listed:
        name = str(sst.get("dfsSstFileName", ""))
        if name and name not in seen:
            seen.add(name)
            on_disk = sst_dir / name
            total += on_disk.stat().st_size if on_disk.is_file() else int(sst.get("sizeBytes", 0))
    return total


def _metadata_line(log_file: Path) -> dict[str, Any]:
    """The JSON object on the second line of an offset or commit log file, or {} if none."""
    lines = _text(log_file).splitlines()
    return _json_object(log_file, lines[1]) if len(lines) > 1 and lines[1].startswith("{") else {}


def _cut(log_file: Path, lines: int) -> bool:
    """Whether ``log_file`` holds fewer than ``lines`` lines or does not start with Spark's
    version line (``v1``)."""
    if not log_file.is_file():
        return False
    text = log_file.read_bytes().decode("utf-8", errors="replace").splitlines()
    return len(text) < lines or not re.fullmatch(r"v\d+", text[0].strip())


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise _damaged(path, "not UTF-8 text") from None
    except OSError as exc:  # a folder where a log file belongs, unreadable, ...
        raise _damaged(path, exc.strerror or str(exc)) from None


def _json_object(path: Path, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _damaged(path, f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise _damaged(path, f"a JSON {type(data).__name__} where an object belongs")
    return data


def _damaged(path: Path, what: str) -> StateError:
    return StateError(
        f"checkpoint file {str(path)!r} is damaged ({what}); Spark cannot restart from this "
        "checkpoint either: restore it from a copy, or start the pipeline on a new checkpoint"
    )


def _numbered(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def _file_bytes(path: Path) -> int:
    return path.stat().st_size if path.is_file() else 0


def _tree_bytes(folder: Path) -> int:
    if not folder.is_dir():
        return 0
    return sum(
        f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.name.startswith(".")
    )
