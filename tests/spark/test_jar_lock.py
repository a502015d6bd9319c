"""The package's list of each jar set's exact jars (``spark/jar_sets.txt``) is what Maven
resolves for engine/deps/pom.xml: the same sets, every jar the pom names at its version, and
exactly the jars, byte for byte, that ``make setup`` fetched with Maven into ``.cache/jars``.
When the pom changes, ``python3 scripts/lock_jars.py`` writes the list again."""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from streamwarden.spark.maven import STAMP, locked_sets

ROOT = Path(__file__).resolve().parents[2]
POM = ROOT / "engine" / "deps" / "pom.xml"
FETCHED = ROOT / ".cache" / "jars"
NS = {"m": "http://maven.apache.org/POM/4.0.0"}
FIX = "the pom and src/streamwarden/spark/jar_sets.txt drift: run python3 scripts/lock_jars.py"


def _profiles() -> dict[str, set[str]]:
    """Each profile of the pom and the coordinates (group:artifact:version) it names."""
    profiles = {}
    for profile in ET.parse(POM).getroot().iterfind("m:profiles/m:profile", NS):
        named = {
            ":".join(
                d.findtext(f"m:{field}", namespaces=NS) or ""
                for field in ("groupId", "artifactId", "version")
            )
            for d in profile.iterfind("m:dependencies/m:dependency", NS)
        }
        profiles[profile.findtext("m:id", namespaces=NS) or ""] = named
    return profiles


def test_the_list_has_every_set_of_the_pom_but_the_source_tree_s_junit():
    assert set(locked_sets()) == set(_profiles()) - {"test"}, FIX


@pytest.mark.parametrize("name", sorted(locked_sets()))
def test_every_jar_the_pom_names_is_listed_at_its_version(name):
    listed = {jar.coordinate for jar in locked_sets()[name]}
    assert _profiles()[name] <= listed, FIX


@pytest.mark.parametrize("name", sorted(locked_sets()))
def test_the_list_is_exactly_the_jars_maven_fetched_for_the_set(name):
    folder = FETCHED / name
    stamp = folder / STAMP
    assert stamp.is_file() and stamp.stat().st_mtime >= POM.stat().st_mtime, (
        f"{folder} is missing or older than the pom: run make setup"
    )
    fetched = {jar.name: hashlib.sha1(jar.read_bytes()).hexdigest() for jar in folder.glob("*.jar")}
    listed = {jar.file_name: jar.sha1 for jar in locked_sets()[name]}
    assert listed == fetched, FIX
