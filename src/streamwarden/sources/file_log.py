"""Spark's file source logs (``<checkpoint>/sources/N``), read and kept bounded.

Spark's file stream source writes one file per batch listing the files it read (a ``v1`` line,
then one JSON line per file: ``path``, ``timestamp`` = the file's modification time in epoch
ms, ``batchId``); every tenth batch (``spark.sql.streaming.fileSource.log.compactInterval``)
it writes ``N.compact`` instead, which repeats every entry before it, and deletes the older
files, keeping the last ``spark.sql.streaming.minBatchesToRetain`` batches (at once:
streamwarden sets Spark's ten-minute delay for that to none, see
:data:`streamwarden.spark.session.SOURCE_LOG`). Spark 4.2 never drops an entry from a compact
file (its ``FileStreamSourceLog`` keeps every entry; ``cleanSource`` moves or deletes the
landing files, not their entries), so the log grows by about 100 bytes per file ever read.

What Spark needs of it: on restart it reloads the entries into its map of seen files, then
forgets every file older than the newest one less ``maxFileAge``, and from then on ignores
any file that old as not new (:data:`MAX_FILE_AGE`, which streamwarden sets explicitly). An
entry older than that bound is dead weight: whether it is listed or not, the file is not read
again. :func:`prune_file_log` drops those entries from the latest compact file, keeping every
entry of a batch not yet committed (a replay reads its batch's entries), and the newest entry
(so the bound Spark computes on restart is the same).

The rewrite is crash-safe and safe beside a running query: the checksum ``.N.compact.crc`` is
deleted first (Hadoop reads a file without one), then the pruned file is renamed into place, so
a reader sees the old file or the new one, never a checksum of the other.

The idle ticks' file source (``sources/1``) deletes each tick file once read (``cleanSource``):
:func:`prune_spent_entries` drops the entries of its files that are gone, so its log holds a
few entries however many ticks a run has written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from streamwarden.atomic import write_atomically

__all__ = [
    "MAX_FILE_AGE",
    "files_of_batch",
    "gone_planned_files",
    "last_committed",
    "latest_compact",
    "prune_file_log",
    "prune_once_per_compact",
    "prune_spent_entries",
]

#: The files source's ``maxFileAge`` (Spark's default, set explicitly so that pruning uses it).
MAX_FILE_AGE = timedelta(days=7)
_LOG_FILE = re.compile(r"([0-9]+)(\.compact)?")


def _log_files(log: Path) -> list[tuple[int, Path]]:
    if not log.is_dir():
        return []
    found = [(m, f) for f in log.iterdir() if (m := _LOG_FILE.fullmatch(f.name))]
    return sorted((int(m.group(1)), f) for m, f in found)


def _entries(path: Path) -> list[dict[str, object]]:
    """The entries of one log file; none if Spark deleted it after it was listed (it deletes a
    file once a later compact file repeats its entries)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines()[1:] if line]


def files_of_batch(log: Path, batch: int) -> list[str]:
    """The files the source read in ``batch``, from its log."""
    found = {
        str(e["path"]) for _, f in _log_files(log) for e in _entries(f) if e["batchId"] == batch
    }
    return sorted(found)


def latest_compact(log: Path) -> Path | None:
    compacts = [f for _, f in _log_files(log) if f.name.endswith(".compact")]
    return compacts[-1] if compacts else None


def prune_file_log(log: Path, committed: int | None, max_age: timedelta = MAX_FILE_AGE) -> int:
    """Drops from the latest compact file of ``log`` the entries Spark no longer needs: files
    older than the newest file read less ``max_age``, of batches up to ``committed`` (the last
    committed batch). Returns the number of entries dropped."""
    compact = latest_compact(log)
    if compact is None or committed is None:
        return 0
    number = int(compact.name.split(".")[0])
    entries = _entries(compact)
    later = [e for n, f in _log_files(log) if n > number for e in _entries(f)]
    timestamps = [int(str(e["timestamp"])) for e in entries + later]
    if not timestamps:
        return 0
    bound = max(timestamps) - int(max_age.total_seconds() * 1000)

    def needed(e: dict[str, object]) -> bool:
        return int(str(e["timestamp"])) >= bound or int(str(e["batchId"])) > committed

    return _rewrite(compact, entries, [e for e in entries if needed(e)])


def prune_spent_entries(log: Path, committed: int | None) -> int:
    """Drops from the latest compact file of ``log`` the entries of files that are gone, of
    batches up to ``committed``, keeping the newest entry: for a source whose files are
    deleted once read (the idle ticks, ``cleanSource = delete``), whose log would otherwise
    keep one entry per file ever read. A gone file cannot be read again, listed or not; the
    newest entry keeps the bound Spark computes on restart. Returns the number dropped."""
    from urllib.parse import unquote, urlparse

    compact = latest_compact(log)
    if compact is None or committed is None:
        return 0
    entries = _entries(compact)
    if not entries:
        return 0
    newest = max(entries, key=lambda e: int(str(e["timestamp"])))

    def needed(e: dict[str, object]) -> bool:
        uri = urlparse(str(e["path"]))
        if e is newest or int(str(e["batchId"])) > committed or uri.scheme not in ("", "file"):
            return True
        return Path(unquote(uri.path)).exists()

    return _rewrite(compact, entries, [e for e in entries if needed(e)])


def prune_once_per_compact(
    log: Path,
    checkpoint: Path,
    prune: Callable[[Path, int | None], int],
    *,
    unless_pruned: Path | None = None,
) -> Path | None:
    """Runs ``prune`` (:func:`prune_file_log` or :func:`prune_spent_entries`) on ``log`` with
    ``checkpoint``'s last committed batch, unless its latest compact file is ``unless_pruned``;
    returns that compact file, to pass as ``unless_pruned`` next time. Spark adds entries only
    in new files, so a compact file once pruned stays pruned: called after every batch, this
    reads the log once per compact file Spark writes, not once per batch."""
    compact = latest_compact(log)
    if compact is not None and compact != unless_pruned:
        prune(log, last_committed(checkpoint))
    return compact


def _rewrite(compact: Path, entries: list[dict[str, object]], kept: list[dict[str, object]]) -> int:
    """Replaces ``compact``'s entries by ``kept`` (crash-safe, see the module's docstring);
    returns how many were dropped."""
    if len(kept) == len(entries):
        return 0
    header = compact.read_text(encoding="utf-8").split("\n", 1)[0]
    text = "\n".join([header, *(json.dumps(e, separators=(",", ":")) for e in kept)])
    mode = compact.stat().st_mode & 0o777  # as Spark made it (owner-only, by the umask)
    (compact.parent / f".{compact.name}.crc").unlink(missing_ok=True)
    write_atomically(compact, text, mode=mode)
    return len(entries) - len(kept)


def last_committed(checkpoint: Path) -> int | None:
    """The last batch the checkpoint committed (``commits/N``), if any."""
    return max((n for n, f in _log_files(checkpoint / "commits") if f.name.isdigit()), default=None)


def gone_planned_files(checkpoint: Path, log: Path | None = None) -> list[tuple[int, str]]:
    """Local landing files that a batch planned but not committed (``offsets/N`` without
    ``commits/N``) lists and that no longer exist, as (batch, path). Spark would replay such a
    batch without the file's records, with no more than a warning ("Was it deleted very
    recently?"): records lost unaccounted."""
    from urllib.parse import unquote, urlparse

    committed = last_committed(checkpoint)
    log = log or checkpoint / "sources" / "0"  # the source's own log (the first source's)
    gone = []
    for batch, _ in _log_files(checkpoint / "offsets"):
        if committed is not None and batch <= committed:
            continue
        for name in (str(batch), f"{batch}.compact"):
            if not (log / name).is_file():
                continue
            for entry in _entries(log / name):
                uri = urlparse(str(entry["path"]))
                local = entry["batchId"] == batch and uri.scheme in ("", "file")
                if local and not Path(unquote(uri.path)).exists():
                    gone.append((batch, unquote(uri.path)))
    return gone
