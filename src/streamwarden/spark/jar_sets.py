"""Jar sets fetched from Maven Central: where they are, and each set's jars.

``scripts/fetch_jars.sh <set>`` fetches a set of jars listed in ``engine/deps/pom.xml`` into
``<repo>/.cache/jars/<set>/`` and marks it complete with a ``.fetched`` stamp; ``make setup``
fetches every set the Python side uses (Kafka's connector and broker, Delta Lake, PostgreSQL's
JDBC driver). The environment variable ``STREAMWARDEN_JARS_DIR`` (another parent of the set
folders, for a package installed away from its source tree) is read here and nowhere else.
"""

from __future__ import annotations

import os
from pathlib import Path

from streamwarden.errors import ConfigError

__all__ = ["JARS_DIR_VARIABLE", "jar_set", "jars_dir"]

#: The environment variable naming the folder that holds the jar sets' folders.
JARS_DIR_VARIABLE = "STREAMWARDEN_JARS_DIR"

#: ``src/streamwarden/spark/jar_sets.py`` -> the repository, whose ``.cache/jars`` holds the sets.
_REPO = Path(__file__).resolve().parents[3]
#: What scripts/fetch_jars.sh writes last: a folder without it is missing jars.
_STAMP = ".fetched"


def jars_dir() -> Path:
    """The folder holding one folder per jar set: ``$STREAMWARDEN_JARS_DIR`` if set, else the
    repository's ``.cache/jars``."""
    configured = os.environ.get(JARS_DIR_VARIABLE, "").strip()
    return Path(configured).expanduser().resolve() if configured else _REPO / ".cache" / "jars"


def jar_set(name: str) -> tuple[str, ...]:
    """Absolute paths of the jars of the fetched set ``name``, sorted (so a classpath built
    from them is stable).

    Raises :class:`ConfigError` naming the folder and the fix when the set was never fetched,
    or only in part.
    """
    folder = jars_dir() / name
    jars = sorted(folder.glob("*.jar")) if (folder / _STAMP).is_file() else []
    if not jars:
        raise ConfigError(
            f"the {name!r} jars are missing or incomplete in {str(folder)!r}; fetch them with "
            f"'make setup' or 'scripts/fetch_jars.sh {name}' (or point {JARS_DIR_VARIABLE} at "
            "the folder holding the jar sets)"
        )
    return tuple(str(jar) for jar in jars)
