"""Spark's JVM maps the installation's class archive at its start (``make setup`` made it): the
archive is named after what decides whether it fits (Java, the class path, Spark's jars), a JVM
is only given the archive made for its own settings, and options of the user's that decide
class sharing themselves are left alone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from streamwarden.cli.class_archive import make_archive
from streamwarden.errors import EngineError
from streamwarden.spark.class_archive import archive_for, archive_name, java_options
from streamwarden.spark.session import driver_settings


def installation(root: Path) -> tuple[Path, Path]:
    """A Java executable and a Spark installation (``jars``, ``conf``) as files on disk."""
    (root / "spark" / "jars").mkdir(parents=True)
    (root / "spark" / "conf").mkdir()
    (root / "spark" / "jars" / "spark-core.jar").write_bytes(b"core")
    (root / "java").write_bytes(b"java")
    return root / "java", root / "spark"


def test_the_archive_s_name_changes_with_java_the_class_path_and_spark_s_jars(tmp_path):
    java, spark_home = installation(tmp_path)
    engine = tmp_path / "engine.jar"
    engine.write_bytes(b"engine")
    name = archive_name(java, str(engine), spark_home)
    assert archive_name(java, str(engine), spark_home) == name  # nothing changed

    assert archive_name(java, f"{engine}{os.pathsep}{tmp_path / 'mine.jar'}", spark_home) != name
    jar = spark_home / "jars" / "spark-core.jar"
    os.utime(jar, ns=(jar.stat().st_atime_ns, jar.stat().st_mtime_ns + 1_000_000_000))
    assert archive_name(java, str(engine), spark_home) != name  # pyspark upgraded
    renamed = archive_name(java, str(engine), spark_home)
    engine.write_bytes(b"rebuilt engine")
    assert archive_name(java, str(engine), spark_home) != renamed  # the engine jar rebuilt
    rebuilt = archive_name(java, str(engine), spark_home)
    java.write_bytes(b"another java")
    assert archive_name(java, str(engine), spark_home) != rebuilt


def test_a_jvm_gets_the_archive_only_when_one_was_made_for_its_settings(tmp_path):
    settings = {"spark.driver.extraClassPath": "/opt/engine.jar"}
    assert java_options(settings, tmp_path) is None  # none made yet: the JVM starts as before

    archive = archive_for(settings, tmp_path)
    archive.write_bytes(b"")
    assert java_options(settings, tmp_path) == f"-XX:SharedArchiveFile={archive}"
    other = {"spark.driver.extraClassPath": "/opt/engine.jar:/opt/mine.jar"}
    assert java_options(other, tmp_path) is None  # made for another class path


def test_the_archive_is_added_to_the_user_s_options_unless_they_decide_sharing(tmp_path):
    settings = {"spark.driver.extraClassPath": "/opt/engine.jar"}
    archive = archive_for(settings, tmp_path)
    archive.write_bytes(b"")
    logging = "-Dlog4j2.configurationFile=file:/x.properties"
    with_logging = {**settings, "spark.driver.extraJavaOptions": logging}
    assert java_options(with_logging, tmp_path) == f"{logging} -XX:SharedArchiveFile={archive}"
    for own in ("-Xshare:off", "-XX:SharedArchiveFile=/mine.jsa", "-XX:ArchiveClassesAtExit=/a"):
        mine = {**settings, "spark.driver.extraJavaOptions": f"{logging} {own}"}
        assert java_options(mine, tmp_path) is None


@pytest.mark.spark
def test_the_test_session_s_jvm_maps_the_archive_made_for_its_class_path(spark):
    archive = archive_for(driver_settings())
    system = spark._jvm.java.lang.System
    arguments = list(
        spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    )
    assert f"-XX:SharedArchiveFile={archive}" in arguments
    # -Xshare:on refuses to start with an archive that does not fit the class path
    java = Path(system.getProperty("java.home")) / "bin" / "java"
    class_path = system.getProperty("java.class.path")
    check = subprocess.run(
        [
            str(java),
            "-Xshare:on",
            f"-XX:SharedArchiveFile={archive}",
            "-cp",
            class_path,
            "-version",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.spark
def test_the_archive_is_not_made_in_a_process_whose_jvm_runs_already(spark, tmp_path):
    with pytest.raises(EngineError, match="make the archive in a new one"):
        make_archive(tmp_path)
    assert not list(tmp_path.iterdir())
