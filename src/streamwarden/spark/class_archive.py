"""A class-data archive of Spark's JVM: the classes a pipeline loads, already parsed, mapped at
start instead of searched for in 277 jars and parsed again.

A start of ``streamwarden run`` spends about a third of its time loading classes (JDK Flight
Recorder: class lookups in jars were the most sampled frames). Java's application class-data
sharing (CDS) maps them from an archive instead: with one, a sessions pipeline commits its
first batch in 18 s instead of 26 (BENCHMARKS.md "Start time").

The archive is made once per installation, by ``make setup`` or
``python -m streamwarden.spark.class_archive``: a small sessions run and a small patterns run
in a JVM started with ``-XX:ArchiveClassesAtExit``, which writes the classes it loaded when it
exits. It is only valid for the same Java and the same class path (the JVM checks, and starts
without it otherwise, saying so in one line of its output), so its name is a digest of what
decides both: the Java executable, the driver's class path setting and the jars and
configuration of Spark's installation. Anything that changes them (an upgrade of pyspark or
Java, a rebuilt engine jar, a class path of the user's) leaves no archive of the new name until
it is made again: starts are slower, nothing fails.

It lives in ``<repo>/.cache/jvm/`` (beside the fetched jars), or in ``$STREAMWARDEN_JVM_CACHE``
for a package installed away from its source tree; a new archive replaces the old ones there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from streamwarden.errors import EngineError

__all__ = [
    "CACHE_VARIABLE",
    "archive_for",
    "archive_name",
    "cache_dir",
    "java_options",
    "make_archive",
]

#: The environment variable naming the folder of the archive.
CACHE_VARIABLE = "STREAMWARDEN_JVM_CACHE"
#: The settings that carry JVM options to the driver.
DRIVER_OPTIONS = "spark.driver.extraJavaOptions"
CLASS_PATH = "spark.driver.extraClassPath"
#: Options of the user's that decide class sharing themselves: with any of them we add none.
_USERS_OWN = ("-Xshare", "SharedArchiveFile", "ArchiveClassesAtExit", "DumpLoadedClassList")

#: ``src/streamwarden/spark/class_archive.py`` -> the repository, whose ``.cache`` holds it.
_REPO = Path(__file__).resolve().parents[3]


def cache_dir() -> Path:
    """``$STREAMWARDEN_JVM_CACHE`` if set, else the repository's ``.cache/jvm``."""
    configured = os.environ.get(CACHE_VARIABLE, "").strip()
    return Path(configured).expanduser().resolve() if configured else _REPO / ".cache" / "jvm"


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


def java_options(settings: Mapping[str, str], folder: Path | None = None) -> str | None:
    """The driver's JVM options with the archive added, when one was made for these settings
    and the user's own options leave class sharing to us; None to leave them as they are."""
    own = settings.get(DRIVER_OPTIONS, "")
    if any(option in own for option in _USERS_OWN) or _java() is None:
        return None
    archive = archive_for(settings, folder)
    if not archive.is_file():
        return None
    return " ".join(filter(None, (own, f"-XX:SharedArchiveFile={archive}")))


def make_archive(folder: Path | None = None) -> Path:
    """Makes the archive for this installation, unless it exists; returns its path.

    Runs in a process with no JVM yet: it starts one that writes the archive when it exits
    (its output, a line per class it cannot archive, goes to ``class-archive.log`` beside the
    archive), runs a small sessions pipeline and a small patterns pipeline on it (the classes a
    run loads), stops it and waits for the archive."""
    from pyspark import SparkContext

    from streamwarden.spark.session import build_spark_session, driver_settings

    if SparkContext._gateway is not None:
        raise EngineError("a JVM runs in this process already: make the archive in a new one")
    target = archive_for(driver_settings(), folder)
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    log = target.parent / "class-archive.log"  # the JVM's output: a line per class it skips
    spark = build_spark_session(
        jvm_output=log,
        app_name="streamwarden-class-archive",
        extra_conf={
            "spark.ui.enabled": "false",
            DRIVER_OPTIONS: f"-XX:ArchiveClassesAtExit={partial}",
        },
    )
    with tempfile.TemporaryDirectory(prefix="streamwarden-classes-") as work:
        _load_a_run_s_classes(spark, Path(work))
    gateway: Any = SparkContext._gateway  # started above, with its process
    spark.stop()
    process = gateway.proc
    gateway.shutdown()
    process.stdin.close()  # the JVM exits when its stdin closes, and then writes the archive
    code = process.wait()
    if code != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        raise EngineError(
            f"Spark's JVM exited with {code} and wrote no class archive; see {str(log)!r}"
        )
    for old in target.parent.glob("spark-classes-*.jsa"):  # made for another installation
        old.unlink()
    partial.replace(target)
    return target


_SESSIONS = """
name = "class-archive-sessions"
[source]
path = "landing"
[sinks.sessions]
path = "sessions"
[sinks.dead_letters]
path = "dead_letters"
[checkpoint]
path = "checkpoint"
"""

_PATTERNS = """
name = "class-archive-patterns"
operator = "patterns"
[source]
path = "landing"
[patterns]
within = "30m"
emit_timeouts = true
[[patterns.stages]]
name = "first"
contiguity = "begin"
where = "page_number = 1"
[[patterns.stages]]
name = "second"
contiguity = "followed_by"
where = "page_number = 2"
[sinks.matches]
path = "matches"
[sinks.timeouts]
path = "timeouts"
[sinks.dead_letters]
path = "dead_letters"
[checkpoint]
path = "checkpoint"
"""


def _load_a_run_s_classes(spark: object, work: Path) -> None:
    """A drained run of each operator over a little traffic, malformed records included."""
    from streamwarden.config import load_config
    from streamwarden.pipeline import Pipeline
    from streamwarden.sources.generator import TrafficSpec, generate_traffic

    spec = TrafficSpec(
        users=100, events=1_000, rate_per_second=0.2, events_per_file=500, malformed_fraction=0.02
    )
    for name, text in (("sessions", _SESSIONS), ("patterns", _PATTERNS)):
        root = work / name
        generate_traffic(spec, root / "landing")
        (root / "pipeline.toml").write_text(text)
        Pipeline(load_config(root / "pipeline.toml"), spark).run(once=True, drain=True)  # type: ignore[arg-type]


def main() -> int:
    try:
        path = make_archive()
    except EngineError as exc:
        print(f"streamwarden: {exc}", file=sys.stderr)
        return 1
    print(f"class archive: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
