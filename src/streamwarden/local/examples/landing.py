"""What the example generators share: writing records into a landing folder as a pipeline with
``max_files_per_trigger = 1`` must read them (one file per micro-batch, in order), the hostile
records with the reason each must get, and the watermark each file is read under.

Files appear atomically (written under a dot-name, then renamed: Spark's file source skips
dot-files) with strictly increasing modification times, later than any file already in the
folder and than ``mtime_after``, so that Spark's file source takes them in order.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

from streamwarden.validation.reasons import Reason

__all__ = [
    "EPOCH",
    "Hostile",
    "Line",
    "epoch_ms",
    "iso_ms",
    "split_evenly",
    "watermarks",
    "write_landing",
]

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: A modification time before any real landing file: where an empty folder's files start.
_FIRST_MTIME = 1_700_000_000.0


@dataclass(frozen=True)
class Line:
    """One record as written (its bytes, without the line break), with the reason validation
    must give it when it is hostile (None for a valid record)."""

    data: bytes
    reason: Reason | None = None


@dataclass(frozen=True)
class Hostile:
    """A record that must become a dead letter at validation, and where it was written."""

    file: str
    #: 1-based line number in ``file``.
    line: int
    reason: Reason
    #: The record as a dead letter's ``raw`` shows it: its text, or its bytes in base64 (one
    #: line) when they are not UTF-8.
    raw: str


def epoch_ms(moment: datetime) -> int:
    """``moment`` (timezone-aware) in epoch milliseconds."""
    return (moment - EPOCH) // timedelta(milliseconds=1)


def iso_ms(ms: int) -> str:
    """Epoch milliseconds as RFC 3339 text in UTC with milliseconds: 2026-01-01T00:00:00.000Z."""
    moment = EPOCH + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def split_evenly(count: int, parts: int) -> list[tuple[int, int]]:
    """(first, end) of ``parts`` slices of ``count`` items as even as can be (fewer slices when
    there are fewer items, none for no items)."""
    parts = min(parts, count)
    if parts == 0:
        return []
    cuts = [count * k // parts for k in range(parts + 1)]
    return list(pairwise(cuts))


def watermarks(
    files_event_ms: Sequence[Sequence[int]], max_out_of_orderness: timedelta
) -> list[int | None]:
    """The watermark each file is read under by a pipeline that reads one file per micro-batch:
    the largest event time of the files before it less ``max_out_of_orderness`` (None before
    any event). Index ``len(files)`` is the watermark after the last file. ``files_event_ms``
    holds the event times of each file's valid records (records behind the watermark cannot
    move it, and rejected records do not)."""
    delay_ms = max_out_of_orderness // timedelta(milliseconds=1)
    out: list[int | None] = []
    latest: int | None = None
    for times in files_event_ms:
        out.append(None if latest is None else latest - delay_ms)
        if times:
            latest = max(times) if latest is None else max(latest, max(times))
    out.append(None if latest is None else latest - delay_ms)
    return out


def write_landing(
    landing: Path, files: Sequence[Sequence[Line]], *, prefix: str, mtime_after: float = 0.0
) -> tuple[list[Path], list[Hostile]]:
    """Writes each of ``files`` (its records, one a line) as ``<prefix>-NNNNNN.jsonl`` in
    ``landing``; returns the paths in order and the hostile records with where they are."""
    landing.mkdir(parents=True, exist_ok=True)
    existing = max((p.stat().st_mtime for p in landing.iterdir()), default=_FIRST_MTIME)
    base_mtime = max(existing, mtime_after)
    paths: list[Path] = []
    hostile: list[Hostile] = []
    for n, lines in enumerate(files):
        name = f"{prefix}-{n:06d}.jsonl"
        tmp = landing / f".{name}.tmp"
        tmp.write_bytes(b"".join(line.data + b"\n" for line in lines))
        mtime = base_mtime + 1 + n
        os.utime(tmp, (mtime, mtime))
        tmp.rename(landing / name)
        paths.append(landing / name)
        hostile += [
            Hostile(name, number, line.reason, _raw(line.data))
            for number, line in enumerate(lines, start=1)
            if line.reason is not None
        ]
    return paths, hostile


def _raw(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii")
