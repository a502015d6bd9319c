"""Spark's JVM maps the installation's class archive at its start (``make setup`` made it): the
archive is named after what decides whether it fits (Java, the class path, Spark's jars), a JVM
is only given the archive made for its own settings, and options of the user's that decide
class sharing themselves are left alone. Its folder is ``$STREAMWARDEN_JVM_CACHE``, else the
source tree's ``.cache/jvm``, else the installation's own folder in the user's cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from streamwarden.cli.class_archive import make_archive
from streamwarden.errors import EngineError
from streamwarden.spark import class_archive, jar_sets
from streamwarden.spark.class_archive import (
    CACHE_VARIABLE,
    archive_for,
    archive_name,
    cache_dir,
    java_options,
    make_command,
)
from streamwarden.spark.session import driver_settings

REPO = Path(__file__).resolve().parents[2]
MAKER = f"`{sys.executable} -m streamwarden.cli.class_archive`"


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The package as installed from a wheel (no source tree, no ``$STREAMWARDEN_JVM_CACHE``);
    returns its user cache, ``$XDG_CACHE_HOME``."""
    monkeypatch.setattr(jar_sets, "_POM", tmp_path / "no-source-tree" / "pom.xml")
    monkeypatch.setattr(class_archive, "_PACKAGE", tmp_path / "venv" / "site-packages" / "sw")
    monkeypatch.delenv(CACHE_VARIABLE, raising=False)
    monkeypatch.delenv(jar_sets.JARS_DIR_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_in_the_source_tree_the_archive_is_in_its_cache_and_make_setup_makes_it(monkeypatch):
    monkeypatch.delenv(CACHE_VARIABLE, raising=False)
    assert cache_dir() == REPO / ".cache" / "jvm"
    assert make_command() == f"{MAKER} or `make setup`"


def test_an_installed_package_keeps_it_in_the_user_cache_beside_the_jars(installed):
    folder = cache_dir()
    assert folder.parent == installed / "streamwarden" / "jvm" == jar_sets.jars_dir().parent / "jvm"
    assert len(folder.name) == 12  # this installation's folder
    assert make_command() == MAKER  # no Makefile in a wheel


def test_each_installation_has_its_own_folder_so_none_removes_another_s_archive(
    installed, monkeypatch, tmp_path
):
    first = cache_dir()
    monkeypatch.setattr(class_archive, "_PACKAGE", tmp_path / "other-venv" / "site-packages" / "sw")
    assert cache_dir() != first and cache_dir().parent == first.parent


def test_without_xdg_s_variable_the_user_cache_is_under_home(installed, monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir().parent == tmp_path / "home" / ".cache" / "streamwarden" / "jvm"


def test_the_variable_names_the_folder_in_the_source_tree_and_installed(
    installed, monkeypatch, tmp_path
):
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"  # installed
    monkeypatch.setattr(jar_sets, "_POM", REPO / "engine" / "deps" / "pom.xml")
    assert cache_dir() == tmp_path / "mine"  # the source tree


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
