"""Landing files Spark cannot read correctly are moved aside before Spark lists them.

Spark's file source mis-reads some files instead of failing on them alone:

- a name with a glob character (``*?[]{}``) makes it read the folder again (every file of the
  batch twice, or more), with no error: records doubled, silently;
- a name with a colon fails every batch (``URISyntaxException`` on its ``.crc`` name);
- a truncated ``.gz`` fails every batch ("Unexpected end of input stream");
- a file that is not Parquet in a Parquet folder, or Parquet whose columns differ from the
  source's schema, fails every batch.

So each landing file the pattern selects is checked once, before the run and on every poll of a
continuous run, and a bad one is moved into ``<landing>/_quarantine/`` (Spark skips ``_`` names)
with a line in ``_quarantine/bad_files.jsonl``: its name, the reason, its size and how many
records could be counted in it. That is the ``bad_file`` part of the accounting: every record
of a quarantined file is in the file, kept, and counted, never read.

The checks read only what they need: a name, a gzip stream to its end, a Parquet footer.
"""

from __future__ import annotations

import fnmatch
import gzip
import json
import os
import re
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from streamwarden.atomic import write_atomically

__all__ = [
    "QUARANTINE",
    "BadFile",
    "LandingGuard",
    "bad_files",
    "expand_pattern",
    "parquet_schema_of",
    "unreadable_name",
]

#: The folder inside the landing folder that bad files are moved to.
QUARANTINE = "_quarantine"
_LISTING = "bad_files.jsonl"
_GLOB = re.compile(r"[*?\[\]{}\\]")


@dataclass(frozen=True)
class BadFile:
    """A landing file moved aside, and why."""

    name: str
    reason: str  # "unreadable_name", "corrupt_gzip", "not_parquet", "parquet_schema"
    detail: str
    bytes: int
    records: int | None  # lines (or Parquet rows) counted in it; None if they cannot be
    moved_to: str
    at: str


def expand_pattern(pattern: str) -> list[str]:
    """The alternatives of a ``{a,b}`` pattern as plain globs (one level, as the config allows)."""
    match = re.fullmatch(r"\{([^{}]*)\}", pattern)
    return [p.strip() for p in match.group(1).split(",")] if match else [pattern]


def unreadable_name(name: str) -> str | None:
    """Why Spark cannot read a file of this name exactly once, or None."""
    if _GLOB.search(name):
        return (
            f"its name has a glob character ({''.join(sorted(set(_GLOB.findall(name))))}): "
            "Spark would read other files of the folder again"
        )
    if ":" in name:
        return "its name has a colon: Spark (Hadoop) cannot open it"
    return None


class LandingGuard:
    """Checks the files ``pattern`` selects in ``landing`` once each, quarantining bad ones.

    ``schema`` is the Parquet source's schema as ``(name, arrow type text)`` pairs, None for
    JSON lines."""

    def __init__(
        self, landing: Path, pattern: str, schema: list[tuple[str, str]] | None = None
    ) -> None:
        self.landing = landing
        self.patterns = expand_pattern(pattern)
        self.schema = schema
        self._checked: set[str] = set()
        self._on_passed: Callable[[list[str]], None] | None = None
        self._on_gone: Callable[[list[str]], None] | None = None
        #: Whether :meth:`sweep` ran at least once.
        self.swept = False

    def on_passed(self, callback: Callable[[list[str]], None]) -> None:
        """Tells ``callback`` the names of the files passed so far, then those each sweep
        passes (the landing gate, :mod:`~streamwarden.sources.landing_gate`). One callback: a
        later one replaces it."""
        self._on_passed = callback
        if self._checked:
            callback(sorted(self._checked))

    def on_gone(self, callback: Callable[[list[str]], None]) -> None:
        """Tells ``callback`` the names of passed files that a sweep found gone from the folder
        (deleted by a retention job, moved away), so that the gate forgets them too. One
        callback: a later one replaces it."""
        self._on_gone = callback

    def sweep(self) -> list[BadFile]:
        """Checks the files not checked yet; returns those moved aside this time. Costs one
        listing of the folder when nothing new landed.

        The names passed are kept only while their files are in the folder: a stream that runs
        for months beside a retention job that deletes old landing files would otherwise hold
        the name of every file it ever read (here and in the gate), growing without end."""
        moved: list[BadFile] = []
        passed: list[str] = []
        self.swept = True
        try:
            with os.scandir(self.landing) as listing:
                present = {e.name for e in listing}
        except FileNotFoundError:
            present = set()
        gone = self._checked - present
        if gone:
            self._checked -= gone
            if self._on_gone is not None:
                self._on_gone(sorted(gone))
        new = sorted(present - self._checked)
        for name in new:
            path = self.landing / name
            if name.startswith((".", "_")) or not path.is_file():
                continue
            if not any(fnmatch.fnmatchcase(name, p) for p in self.patterns):
                continue
            problem = self._problem(path)
            if problem is None:
                self._checked.add(name)
                passed.append(name)
                continue
            bad = self._quarantine(path, *problem)
            if bad is not None:
                moved.append(bad)
        if passed and self._on_passed is not None:
            self._on_passed(passed)
        return moved

    def _problem(self, path: Path) -> tuple[str, str, int | None] | None:
        why = unreadable_name(path.name)
        if why is not None:
            return "unreadable_name", why, _count_lines(path)
        if path.name.endswith(".gz"):
            return _check_gzip(path)
        if self.schema is not None:
            return _check_parquet(path, self.schema)
        return None

    def _quarantine(
        self, path: Path, reason: str, detail: str, records: int | None
    ) -> BadFile | None:
        folder = self.landing / QUARANTINE
        folder.mkdir(exist_ok=True)
        target = folder / path.name
        n = 1
        while target.exists():
            target = folder / f"{path.name}.{n}"
            n += 1
        try:
            size = path.stat().st_size
            path.rename(target)
        except FileNotFoundError:  # the producer took it back
            return None
        bad = BadFile(
            name=path.name,
            reason=reason,
            detail=detail,
            bytes=size,
            records=records,
            moved_to=str(target),
            at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        listing = folder / _LISTING
        old = listing.read_text(encoding="utf-8") if listing.exists() else ""
        write_atomically(listing, old + json.dumps(asdict(bad), sort_keys=True) + "\n")
        return bad


def bad_files(landing: Path) -> list[BadFile]:
    """Every file quarantined in ``landing`` so far, oldest first."""
    listing = landing / QUARANTINE / _LISTING
    if not listing.exists():
        return []
    return [
        BadFile(**json.loads(line))
        for line in listing.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def _count_lines(path: Path) -> int | None:
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as handle:
                return sum(1 for _ in handle)
        if path.name.endswith(".parquet"):
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(path).metadata.num_rows)
        with path.open("rb") as handle:
            return sum(1 for _ in handle)
    except Exception:  # a count is a courtesy: the file itself is kept
        return None


def _check_gzip(path: Path) -> tuple[str, str, int | None] | None:
    lines = 0
    try:
        with gzip.open(path, "rb") as handle:
            for _ in handle:
                lines += 1
    except (EOFError, OSError, zlib.error) as exc:
        return (
            "corrupt_gzip",
            f"not a whole gzip stream ({exc}); {lines} lines before the damage",
            lines,
        )
    return None


def _check_parquet(path: Path, schema: list[tuple[str, str]]) -> tuple[str, str, int | None] | None:
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(path)
    except Exception as exc:
        return "not_parquet", f"not a Parquet file ({str(exc).splitlines()[0]})", None
    have = [(f.name, str(f.type)) for f in meta.schema_arrow]
    if have != schema:
        differ = [f"{n}: {t}" for n, t in have if (n, t) not in schema] or [
            f"missing {n}" for n, _ in schema if n not in dict(have)
        ]
        expected = ", ".join(f"{n}: {t}" for n, t in schema)
        return (
            "parquet_schema",
            f"columns differ from the source's ({', '.join(differ)}; expected {expected})",
            int(meta.metadata.num_rows),
        )
    return None


def parquet_schema_of(landing: Path, pattern: str) -> list[tuple[str, str]] | None:
    """The columns of the first file (by name) of ``landing`` that the pattern selects and that
    is Parquet: the schema every other file must have; None if there is none yet."""
    import pyarrow.parquet as pq

    patterns = expand_pattern(pattern)
    for path in sorted(landing.iterdir()):
        if not path.is_file() or path.name.startswith((".", "_")) or unreadable_name(path.name):
            continue
        if not any(fnmatch.fnmatchcase(path.name, p) for p in patterns):
            continue
        try:
            return [(f.name, str(f.type)) for f in pq.ParquetFile(path).schema_arrow]
        except Exception:
            continue
    return None
