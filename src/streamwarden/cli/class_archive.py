"""Makes the class archive of Spark's JVM for this installation (``spark/class_archive.py``
says what it is, how a JVM gets it and which folder holds it): ``make setup`` runs this module
in the source tree; a package installed from a wheel runs it the same way, and the archive goes
to the user's cache (or to ``$STREAMWARDEN_JVM_CACHE`` when that is set, for runs too).

Usage: ``python -m streamwarden.cli.class_archive``
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamwarden.config import load_config
from streamwarden.errors import EngineError, StreamwardenError
from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from streamwarden.spark.class_archive import DRIVER_OPTIONS, archive_for
from streamwarden.spark.session import build_spark_session, driver_settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["main", "make_archive"]


def make_archive(folder: Path | None = None) -> Path:
    """Makes the archive for this installation, unless it exists; returns its path.

    Runs in a process with no JVM yet: it starts one that writes the archive when it exits
    (its output, a line per class it cannot archive, goes to ``class-archive.log`` beside the
    archive), runs a small sessions pipeline and a small patterns pipeline on it (the classes a
    run loads), stops it and waits for the archive."""
    from pyspark import SparkContext

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
            f"Spark's JVM exited with {code} and wrote no class archive; see {str(log)!r}, "
            "then run this again (without an archive pipelines run as before, only their "
            "starts are slower)"
        )
    for old in target.parent.glob("spark-classes-*.jsa"):  # made for another installation
        old.unlink()
    partial.replace(target)
    return target


_SCHEMA = """
[schema]
key = "user_id"
time = "ts"
fields = "user_id STRING, ts BIGINT, page_number INT, url STRING"
[schema.checks.page_number]
min = 1
"""

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
[sessions.aggregates]
first_url = "first(url)"
urls = "collect_list(url)"
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


def _load_a_run_s_classes(spark: SparkSession, work: Path) -> None:
    """A drained run of each operator over a little traffic, malformed records included."""
    spec = TrafficSpec(
        users=100, events=1_000, rate_per_second=0.2, events_per_file=500, malformed_fraction=0.02
    )
    for name, text in (("sessions", _SESSIONS), ("patterns", _PATTERNS)):
        root = work / name
        generate_traffic(spec, root / "landing")
        (root / "pipeline.toml").write_text(text + _SCHEMA)
        Pipeline(load_config(root / "pipeline.toml"), spark).run(once=True, drain=True)


def main() -> int:
    try:
        path = make_archive()
    except StreamwardenError as exc:  # a run of the small pipelines that failed, too
        print(f"streamwarden: could not make the class archive: {exc}", file=sys.stderr)
        return 1
    print(f"class archive: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
