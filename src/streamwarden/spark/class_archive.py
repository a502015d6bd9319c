"""A class-data archive of Spark's JVM: the classes a pipeline loads, already parsed, mapped at
start instead of searched for in 277 jars and parsed again.

A start of ``streamwarden run`` spends much of its time loading classes (JDK Flight Recorder:
class lookups in jars were the most sampled frames). Java's application class-data sharing
(CDS) maps them from an archive instead: with one, a sessions pipeline commits its first batch
in 16.1 s instead of 23.2 (bench/notes/scale.md, "Start time").

The archive is made once per installation, by ``make setup`` or
``python -m streamwarden.cli.class_archive`` (``cli/class_archive.py``): a small sessions run
and a small patterns run in a JVM started with ``-XX:ArchiveClassesAtExit``, which writes the
classes it loaded when it exits. It is only valid for the same Java and the same class path
(the JVM checks, and starts without it otherwise, saying so in one line of its output), so its
name is a digest of what decides both: the Java executable, the driver's class path setting
and the jars and configuration of Spark's installation. Anything that changes them (an upgrade
of pyspark or Java, a rebuilt engine jar, a class path of the user's) leaves no archive of the
new name until it is made again: starts are slower, nothing fails.

Its folder (:func:`cache_dir`), the first that applies, as for the jar sets
(:mod:`streamwarden.spark.jar_sets`):

1. ``$STREAMWARDEN_JVM_CACHE`` when that variable is set;
2. ``<repository>/.cache/jvm/`` when the package runs from its source tree (beside the jars
   ``make setup`` fetches);
3. otherwise the user's cache, ``$XDG_CACHE_HOME/streamwarden/jvm/<installation>/``
   (``~/.cache`` without the variable), one folder per installed copy of the package, named by
   a digest of where it is installed: a new archive replaces the old ones in its folder, and
   an installation's archive must not replace another's (two virtual environments, each with
   its own pyspark).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from streamwarden.errors import EngineError
from streamwarden.spark import jar_sets

__all__ = [
    "CACHE_VARIABLE",
    "CLASS_PATH",
    "DRIVER_OPTIONS",
    "archive_for",
    "archive_name",
    "cache_dir",
    "java_options",
    "make_command",
    "users_own",
]

#: The environment variable naming the folder of the archive.
CACHE_VARIABLE = "STREAMWARDEN_JVM_CACHE"
#: The settings that carry JVM options and class path entries to the driver.
DRIVER_OPTIONS = "spark.driver.extraJavaOptions"
CLASS_PATH = "spark.driver.extraClassPath"
#: Options of the user's that decide class sharing themselves: with any of them we add none.
_USERS_OWN = ("-Xshare", "SharedArchiveFile", "ArchiveClassesAtExit", "DumpLoadedClassList")

#: The installed package's folder, whose digest names its folder in the user's cache.
_PACKAGE = Path(__file__).resolve().parents[1]


def cache_dir() -> Path:
    """The archive's folder: ``$STREAMWARDEN_JVM_CACHE`` if set, else the source tree's
    ``.cache/jvm``, else this installation's folder in the user's cache (the module's
    docstring says why one per installation)."""
    configured = os.environ.get(CACHE_VARIABLE, "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    # the source tree and the user's cache are decided where the jar sets' folders are
    if jar_sets._in_source_tree():
        return jar_sets._REPO / ".cache" / "jvm"
    installation = hashlib.sha256(str(_PACKAGE).encode()).hexdigest()[:12]
    return jar_sets._user_cache().parent / "jvm" / installation


def make_command() -> str:
    """How to make the archive, as a user of this installation types it: this Python running
    ``streamwarden.cli.class_archive`` (a package installed from a wheel has no Makefile), or
    ``make setup`` in the source tree."""
    command = f"`{sys.executable} -m streamwarden.cli.class_archive`"
    return f"{command} or `make setup`" if jar_sets._in_source_tree() else command


def _java() -> Path | None:
    """The Java executable Spark's launcher runs: ``$JAVA_HOME/bin/java``, else ``java`` on
    the PATH."""
    home = os.environ.get("JAVA_HOME", "").strip()
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    return Path(found).resolve() if found and Path(found).is_file() else None


def _spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def archive_name(java: Path, class_path: str, spark_home: Path) -> str:
    """The archive's file name: a digest of the Java executable, the driver's class path setting
    and every file of Spark's ``jars`` and ``conf`` folders (names, sizes, modification times),
    and of each file the class path names."""
    digest = hashlib.sha256()

    def add(path: Path) -> None:
        try:
            stat = path.stat()
        except OSError:
            digest.update(f"{path}|absent\n".encode())
            return
        digest.update(f"{path}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())

    add(java)
    digest.update(f"class path: {class_path}\n".encode())
    for entry in filter(None, class_path.split(os.pathsep)):
        add(Path(entry))
    for folder in ("jars", "conf"):
        for path in sorted((spark_home / folder).glob("*")):
            add(path)
    return f"spark-classes-{digest.hexdigest()[:20]}.jsa"


def archive_for(settings: Mapping[str, str], folder: Path | None = None) -> Path:
    """Where the archive for a JVM started with ``settings`` is (or would be)."""
    java = _java()
    if java is None:
        raise EngineError("no Java found: install Java 17 or later, or set JAVA_HOME")
    name = archive_name(java, settings.get(CLASS_PATH, ""), _spark_home())
    return (folder or cache_dir()) / name


def users_own(settings: Mapping[str, str]) -> bool:
    """Whether the user's own driver options decide class sharing (we then add no archive)."""
    return any(option in settings.get(DRIVER_OPTIONS, "") for option in _USERS_OWN)


def java_options(settings: Mapping[str, str], folder: Path | None = None) -> str | None:
    """The driver's JVM options with the archive added, when one was made for these settings
    and the user's own options leave class sharing to us; None to leave them as they are."""
    own = settings.get(DRIVER_OPTIONS, "")
    if users_own(settings) or _java() is None:
        return None
    archive = archive_for(settings, folder)
    if not archive.is_file():
        return None
    return " ".join(filter(None, (own, f"-XX:SharedArchiveFile={archive}")))
