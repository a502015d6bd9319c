"""The exact jars of each jar set, and their fetch from a Maven repository.

The package ships ``jar_sets.txt``: for each set (``kafka``, ``kafka-broker``, ``delta``,
``postgres``) the exact artifacts Maven resolves for its profile of ``engine/deps/pom.xml``,
each with its SHA-1 (``scripts/lock_jars.py`` writes it; a test fails when it and the pom
drift). :func:`fetch_jars` downloads a set's artifacts, checks each against the SHA-1 the
repository publishes beside it and the one in the list, and makes the set's folder appear whole
or not at all: the jars go to a temporary folder, the ``.fetched`` stamp last, then one rename.

Nothing here reads the environment: :mod:`streamwarden.spark.jar_sets` chooses the folder and
the repository.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from streamwarden.errors import ConfigError, UnreachableError

__all__ = [
    "MAVEN_CENTRAL",
    "STAMP",
    "MavenJar",
    "fetch_jars",
    "locked_sets",
    "parse_lock",
    "set_digest",
]

#: The repository Spark resolves ``spark.jars.packages`` from unless told otherwise.
MAVEN_CENTRAL = "https://repo1.maven.org/maven2/"
#: Written last into a set's folder: a folder without it is missing jars.
STAMP = ".fetched"
_LOCK = "jar_sets.txt"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class MavenJar:
    """One artifact of a set: its Maven coordinate and the SHA-1 of its jar."""

    group: str
    artifact: str
    version: str
    classifier: str
    sha1: str

    @property
    def coordinate(self) -> str:
        parts = [self.group, self.artifact, self.version]
        return ":".join([*parts, self.classifier] if self.classifier else parts)

    @property
    def file_name(self) -> str:
        """The jar's name as Maven stores it (and as ``copy-dependencies`` copies it)."""
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.jar"

    def url(self, repository: str) -> str:
        group = self.group.replace(".", "/")
        return f"{repository.rstrip('/')}/{group}/{self.artifact}/{self.version}/{self.file_name}"


def parse_lock(text: str) -> dict[str, tuple[MavenJar, ...]]:
    """The sets of a ``jar_sets.txt`` text: ``<set> <group>:<artifact>:<version>[:<classifier>]
    <sha1>`` per line, ``#`` comments."""
    sets: dict[str, list[MavenJar]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            name, coordinate, sha1 = line.split()
            group, artifact, version, *classifier = coordinate.split(":")
            (extra,) = classifier or [""]
        except ValueError:
            raise ValueError(f"line {number} of the jar list is not a jar: {line!r}") from None
        sets.setdefault(name, []).append(MavenJar(group, artifact, version, extra, sha1.lower()))
    return {name: tuple(jars) for name, jars in sets.items()}


@functools.cache
def locked_sets() -> Mapping[str, tuple[MavenJar, ...]]:
    """The sets the package ships the list of (read once)."""
    text = resources.files("streamwarden.spark").joinpath(_LOCK).read_text(encoding="utf-8")
    return parse_lock(text)


def set_digest(jars: tuple[MavenJar, ...]) -> str:
    """12 hex digits naming the exact content of a set: a cache folder per content, so that two
    versions of the package with different lists never share one."""
    listing = "\n".join(sorted(f"{jar.coordinate} {jar.sha1}" for jar in jars))
    return hashlib.sha256(listing.encode()).hexdigest()[:12]


def fetch_jars(
    jars: tuple[MavenJar, ...],
    folder: Path,
    repository: str,
    *,
    progress: Callable[[MavenJar], None] = lambda jar: None,
    timeout: float = 60.0,
) -> None:
    """Downloads ``jars`` from ``repository`` into ``folder``, which appears whole with its
    stamp or not at all (one that exists without a stamp is replaced). ``progress`` is called
    before each download.

    Raises :class:`UnreachableError` when the repository does not answer or lacks a jar, and
    :class:`ConfigError` when a jar does not match its checksums (a repository serving other
    bytes than Maven Central's).
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:12]}.tmp")
    work.mkdir()  # the umask's permissions, as a folder Maven fills: others may share the set
    try:
        for jar in jars:
            progress(jar)
            _download_verified(jar, work / jar.file_name, repository, timeout)
        with (work / STAMP).open("w", encoding="utf-8") as stamp:
            stamp.write("".join(f"{j.coordinate} {j.sha1}\n" for j in jars))
            stamp.flush()
            os.fsync(stamp.fileno())
        _fsync_folder(work)
        _move_into_place(work, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _download_verified(jar: MavenJar, target: Path, repository: str, timeout: float) -> None:
    url = jar.url(repository)
    digest = hashlib.sha1()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer, target.open("wb") as out:
            while chunk := answer.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        with urllib.request.urlopen(f"{url}.sha1", timeout=timeout) as answer:
            published = answer.read().decode("ascii", "replace").split()
    except (urllib.error.URLError, OSError) as exc:
        raise UnreachableError(
            f"could not fetch {jar.coordinate} from {url!r} into {str(target.parent)!r}: "
            f"{exc}; try again once that is fixed (a proxy is taken from https_proxy)"
        ) from None
    got = digest.hexdigest()
    if not published or published[0].lower() != got or got != jar.sha1:
        said = published[0] if published else "nothing"
        raise ConfigError(
            f"{jar.coordinate} from {url!r} has SHA-1 {got}, the repository's .sha1 says "
            f"{said} and the package expects {jar.sha1}; the repository serves other jars than "
            "Maven Central's, use one that mirrors it"
        )


def _move_into_place(work: Path, folder: Path) -> None:
    """Renames ``work`` to ``folder``; a complete folder another process put there first wins,
    an incomplete one (no stamp) is replaced."""
    if folder.exists() and not (folder / STAMP).is_file():
        old = folder.with_name(f".{folder.name}.{os.getpid()}.old")
        with contextlib.suppress(FileNotFoundError):
            folder.rename(old)
        shutil.rmtree(old, ignore_errors=True)
    try:
        work.rename(folder)
    except OSError:
        if not (folder / STAMP).is_file():  # not a concurrent fetch that won: a real failure
            raise
    _fsync_folder(folder.parent)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
