#!/usr/bin/env python3
"""Writes src/streamwarden/spark/jar_sets.txt, the exact jars of each jar set that the package
ships, from what Maven resolves for engine/deps/pom.xml's profiles (every profile but ``test``,
the JUnit launcher, which only the source tree uses).

Run it after editing a set's profile in the pom (it needs ``mvn``; the sets' jars are fetched
into Maven's local repository on the way):

    python3 scripts/lock_jars.py

tests/spark/test_jar_lock.py fails when the pom and the list drift.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POM = ROOT / "engine" / "deps" / "pom.xml"
LOCK = ROOT / "src" / "streamwarden" / "spark" / "jar_sets.txt"
#: Profiles of the pom that the package does not ship.
SOURCE_TREE_ONLY = {"test"}
_NS = {"m": "http://maven.apache.org/POM/4.0.0"}

HEADER = """\
# The exact jars of each jar set, one line each: <set> <group>:<artifact>:<version>[:<classifier>]
# <sha1>. What Maven resolves for the set's profile of engine/deps/pom.xml, written by
# scripts/lock_jars.py: do not edit by hand (tests/spark/test_jar_lock.py fails on a drift).
# An installed package fetches these from Maven Central (streamwarden.spark.maven).
"""


def shipped_profiles() -> list[str]:
    ids = [
        p.findtext("m:id", namespaces=_NS) or ""
        for p in ET.parse(POM).getroot().iterfind("m:profiles/m:profile", _NS)
    ]
    return [i for i in ids if i not in SOURCE_TREE_ONLY]


def resolved(profile: str) -> list[tuple[str, Path]]:
    """(coordinate, jar in the local repository) of each jar Maven resolves for ``profile``."""
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "list.txt"
        subprocess.run(
            [
                "mvn",
                "-q",
                "-B",
                "-f",
                str(POM),
                "-P",
                profile,
                "dependency:list",
                f"-DoutputFile={listing}",
                "-DoutputAbsoluteArtifactFilename=true",
            ],
            check=True,
        )
        lines = listing.read_text().splitlines()
    jars = []
    for line in lines:
        # group:artifact:type[:classifier]:version:scope:/path/to/the.jar
        fields = line.strip().split(":")
        if len(fields) < 6 or fields[2] != "jar":
            continue
        group, artifact = fields[0], fields[1]
        if len(fields) >= 7 and not fields[5].startswith("/"):
            classifier, version, path = fields[3], fields[4], ":".join(fields[6:])
        else:
            classifier, version, path = "", fields[3], ":".join(fields[5:])
        coordinate = ":".join([group, artifact, version, *([classifier] if classifier else [])])
        jars.append((coordinate, Path(path)))
    return sorted(jars)


def main() -> int:
    lines = [HEADER]
    for profile in shipped_profiles():
        for coordinate, jar in resolved(profile):
            sha1 = hashlib.sha1(jar.read_bytes()).hexdigest()
            lines.append(f"{profile} {coordinate} {sha1}\n")
    LOCK.write_text("".join(lines))
    print(LOCK)
    return 0


if __name__ == "__main__":
    sys.exit(main())
