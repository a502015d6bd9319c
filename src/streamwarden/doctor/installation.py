"""Checks of the installation a pipeline starts on rather than of its config: ``doctor`` runs
them, ``run`` does not (nothing here stops or endangers a run; it only starts slower)."""

from __future__ import annotations

from pathlib import Path

from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.findings import Finding, Severity
from streamwarden.errors import EngineError
from streamwarden.plan import PipelinePlan
from streamwarden.spark.class_archive import archive_for, make_command, users_own
from streamwarden.spark.session import driver_settings

__all__ = ["archive_of", "check_class_archive", "installation_findings"]


def archive_of(config: PipelineConfig) -> Path | None:
    """The class archive this config's driver would map (made or not); None when the config's
    own driver options decide class sharing, or there is no Java (the run itself says so)."""
    settings = driver_settings(
        master=config.spark.master, extra_conf=PipelinePlan.of(config).spark_conf()
    )
    if users_own(settings):
        return None
    try:
        return archive_for(settings)
    except EngineError:
        return None


def check_class_archive(config: PipelineConfig) -> list[Finding]:
    """A warning when no class archive was made for the Java and class path this config's
    driver starts with (``spark/class_archive.py``): every start then loads Spark's classes
    from its jars, about 7 s more (a sessions pipeline's first batch in 23 s instead of 16,
    bench/notes/scale.md, "Start time")."""
    archive = archive_of(config)
    if archive is None or archive.is_file():
        return []
    return [
        Finding(
            code="no-class-archive",
            severity=Severity.WARNING,
            message=f"no class archive of Spark's JVM for this Java and class path in "
            f"{str(archive.parent)!r}: each start of the pipeline loads Spark's classes from "
            "its jars, about 7 s more",
            fix="make it once (about a minute), and again after an upgrade of Java or "
            f"pyspark: {make_command()}",
        )
    ]


def installation_findings(config: PipelineConfig) -> list[Finding]:
    """Every installation check's findings for ``config``."""
    return check_class_archive(config)
