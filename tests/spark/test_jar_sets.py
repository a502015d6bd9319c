"""Jar sets: found in ``$STREAMWARDEN_JARS_DIR``, the source tree, or the user's cache, where an
installed package fetches a missing set on first need; a fetch checks every jar against the
repository's .sha1 and the package's list, and a set's folder appears whole or not at all.

The repository here is a folder served through ``file://`` URLs (urllib reads them as it reads
Maven Central), so nothing leaves the machine.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import pytest

from streamwarden.cli.main import main
from streamwarden.errors import ConfigError, UnreachableError
from streamwarden.spark import jar_sets, maven
from streamwarden.spark.jar_sets import (
    JARS_DIR_VARIABLE,
    REPOSITORY_VARIABLE,
    fetch_jar_set,
    jar_set,
    maven_repository,
    set_folder,
)
from streamwarden.spark.maven import MAVEN_CENTRAL, STAMP, MavenJar, fetch_jars, parse_lock


def _jar(repo: Path, coordinate: str, content: bytes, *, published: str | None = None) -> MavenJar:
    """Puts a jar and its .sha1 into the fake repository ``repo``; returns its list entry."""
    group, artifact, version = coordinate.split(":")
    jar = MavenJar(group, artifact, version, "", hashlib.sha1(content).hexdigest())
    path = repo / jar.url("").lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    path.with_name(path.name + ".sha1").write_text(published or jar.sha1)
    return jar


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return tmp_path / "repository"


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, repo: Path) -> tuple[MavenJar, ...]:
    """The package as installed from a wheel (no source tree, no STREAMWARDEN_JARS_DIR), its
    cache under ``tmp_path/cache``, shipping one set ``demo`` of two jars from ``repo``."""
    jars = (_jar(repo, "org.example:one:1.0", b"one"), _jar(repo, "org.example:two:2.1", b"two"))
    monkeypatch.setattr(jar_sets, "_POM", tmp_path / "no-source-tree" / "pom.xml")
    monkeypatch.setattr(jar_sets, "locked_sets", lambda: {"demo": jars})
    monkeypatch.delenv(JARS_DIR_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(REPOSITORY_VARIABLE, repo.as_uri())
    return jars


def test_the_list_names_coordinates_files_and_urls_as_maven_does():
    [jar] = parse_lock("# comment\n\nkafka org.lz4:lz4-java:1.8.0:natives ABCDEF\n")["kafka"]
    assert jar.coordinate == "org.lz4:lz4-java:1.8.0:natives" and jar.sha1 == "abcdef"
    assert jar.file_name == "lz4-java-1.8.0-natives.jar"
    assert jar.url(MAVEN_CENTRAL) == (
        "https://repo1.maven.org/maven2/org/lz4/lz4-java/1.8.0/lz4-java-1.8.0-natives.jar"
    )


def test_a_line_that_is_no_jar_is_refused_with_its_number():
    with pytest.raises(ValueError, match="line 2"):
        parse_lock("kafka a:b:1 ff\nkafka a:b ff extra\n")


def test_the_shipped_sets_are_the_connectors_and_the_broker():
    assert set(jar_sets.shipped_sets()) == {"kafka", "kafka-broker", "delta", "postgres"}


def test_the_repository_is_maven_central_unless_spark_s_variable_names_another(monkeypatch):
    monkeypatch.delenv(REPOSITORY_VARIABLE, raising=False)
    assert maven_repository() == "https://repo1.maven.org/maven2/"
    monkeypatch.setenv(REPOSITORY_VARIABLE, "https://mirror.example/maven2/")
    assert maven_repository() == "https://mirror.example/maven2/"


def test_an_installed_package_fetches_a_missing_set_into_the_user_cache_once(installed, caplog):
    with caplog.at_level(logging.WARNING, logger="streamwarden.jars"):
        first = jar_set("demo")
    folder = set_folder("demo")
    assert first == (str(folder / "one-1.0.jar"), str(folder / "two-2.1.jar"))
    assert (folder / STAMP).is_file() and (folder / "one-1.0.jar").read_bytes() == b"one"
    [line] = [r.getMessage() for r in caplog.records]
    assert "'demo' jars" in line and str(folder) in line and "streamwarden jars --fetch" in line
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="streamwarden.jars"):
        assert jar_set("demo") == first
    assert not caplog.records  # fetched once


def test_the_user_cache_is_xdg_s_and_a_set_s_folder_is_named_by_its_content(installed, tmp_path):
    folder = set_folder("demo")
    assert folder.parent == tmp_path / "cache" / "streamwarden" / "jars"
    assert folder.name == f"demo-{maven.set_digest(installed)}"
    other = (*installed[:1], MavenJar("org.example", "two", "2.2", "", "00"))
    assert maven.set_digest(other) != maven.set_digest(installed)


def test_a_jar_whose_bytes_differ_from_the_published_sha1_is_refused_and_nothing_appears(
    installed, repo
):
    bad = installed[1].url(repo.as_uri()).removeprefix("file://")
    Path(bad).write_bytes(b"tampered")
    with pytest.raises(ConfigError, match=r"org\.example:two:2\.1 .* SHA-1") as caught:
        jar_set("demo")
    assert "\n" not in str(caught.value)
    folder = set_folder("demo")
    assert not folder.exists() and not list(folder.parent.iterdir())  # no half set, no leftovers


def test_a_jar_that_matches_the_repository_but_not_the_package_s_list_is_refused(tmp_path, repo):
    jar = _jar(repo, "org.example:one:1.0", b"one")
    listed = MavenJar(jar.group, jar.artifact, jar.version, "", "0" * 40)
    with pytest.raises(ConfigError, match="package expects 0000"):
        fetch_jars((listed,), tmp_path / "out" / "set", repo.as_uri())
    assert not (tmp_path / "out" / "set").exists()


def test_a_repository_without_the_jar_is_unreachable_naming_the_url(tmp_path, repo):
    jar = MavenJar("org.example", "gone", "1.0", "", "0" * 40)
    with pytest.raises(UnreachableError, match=r"org\.example:gone:1\.0 from '.*gone-1\.0\.jar'"):
        fetch_jars((jar,), tmp_path / "out" / "set", repo.as_uri())
    assert not (tmp_path / "out" / "set").exists()


def test_a_folder_left_without_a_stamp_is_replaced_whole(tmp_path, repo):
    jar = _jar(repo, "org.example:one:1.0", b"one")
    folder = tmp_path / "jars" / "set"
    folder.mkdir(parents=True)
    (folder / "stale-0.1.jar").write_bytes(b"")
    fetch_jars((jar,), folder, repo.as_uri())
    assert sorted(p.name for p in folder.iterdir()) == [STAMP, "one-1.0.jar"]
    assert (folder / STAMP).read_text() == f"org.example:one:1.0 {jar.sha1}\n"


def test_a_given_folder_is_never_fetched_into_unasked_and_its_error_names_the_command(
    installed, monkeypatch, tmp_path
):
    monkeypatch.setenv(JARS_DIR_VARIABLE, str(tmp_path / "given"))
    with pytest.raises(ConfigError) as caught:
        jar_set("demo")
    message = str(caught.value)
    assert str(tmp_path / "given" / "demo") in message and "\n" not in message
    assert "'streamwarden jars --fetch demo'" in message and JARS_DIR_VARIABLE in message
    assert "make setup" not in message  # no source tree here
    assert not (tmp_path / "given").exists()


def test_jars_fetch_fills_the_given_folder_and_says_so(installed, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(JARS_DIR_VARIABLE, str(tmp_path / "given"))
    assert main(["jars", "--fetch", "demo"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        f"demo: {tmp_path / 'given' / 'demo'} (fetched from {maven_repository()})"
    ]
    assert "fetching org.example:one:1.0" in captured.err
    assert jar_set("demo") == (
        str(tmp_path / "given" / "demo" / "one-1.0.jar"),
        str(tmp_path / "given" / "demo" / "two-2.1.jar"),
    )
    assert main(["jars", "--fetch"]) == 0  # every set: here only demo, there already
    assert capsys.readouterr().out.strip().endswith("(already there)")


def test_jars_fetch_of_an_unknown_set_names_the_sets(installed, capsys):
    assert main(["jars", "--fetch", "kafak"]) == 2
    assert "no jar set 'kafak'; the sets are 'demo'" in capsys.readouterr().err


def test_jars_takes_a_config_or_fetch_not_both(installed, tmp_path, capsys):
    assert main(["jars", str(tmp_path / "p.toml"), "--fetch"]) == 2
    assert "not both" in capsys.readouterr().err


def test_in_the_source_tree_the_sets_are_make_setup_s(monkeypatch):
    monkeypatch.delenv(JARS_DIR_VARIABLE, raising=False)
    assert jar_sets.jars_dir() == Path(jar_sets.__file__).resolve().parents[3] / ".cache" / "jars"
    assert fetch_jar_set("kafka")[1] is False  # make setup fetched it: nothing to do
