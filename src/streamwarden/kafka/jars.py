"""Where the JVM pieces for Kafka are: the jar sets and the ``java`` that runs the local broker.

``scripts/fetch_jars.sh <set>`` fetches a set of jars listed in ``engine/deps/pom.xml`` from
Maven Central into ``<repo>/.cache/jars/<set>/`` and marks it complete with a ``.fetched``
stamp; ``make setup`` fetches both sets used here:

- ``kafka``: Spark's Kafka connector and the jars it needs beyond the pyspark wheel, for
  ``spark.jars`` (``build_spark_session(extra_jars=connector_jars())``);
- ``kafka-broker``: a Kafka broker and its runtime jars, for
  :class:`~streamwarden.kafka.local_broker.LocalBroker` only (never on Spark's classpath).

The environment variables this package reads are read here and nowhere else:
``STREAMWARDEN_JARS_DIR`` (another parent of the set folders, for a package installed away
from its source tree) and ``JAVA_HOME`` (the Java that runs the broker, as for Spark's).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from streamwarden.errors import ConfigError

__all__ = [
    "BROKER_SET",
    "CONNECTOR_SET",
    "JARS_DIR_VARIABLE",
    "broker_jars",
    "connector_jars",
    "jars_dir",
    "java_executable",
]

#: The environment variable naming the folder that holds the jar sets' folders.
JARS_DIR_VARIABLE = "STREAMWARDEN_JARS_DIR"
#: The profile ids in ``engine/deps/pom.xml``, and so the set folders' names.
CONNECTOR_SET = "kafka"
BROKER_SET = "kafka-broker"

#: ``src/streamwarden/kafka/jars.py`` -> the repository, whose ``.cache/jars`` holds the sets.
_REPO = Path(__file__).resolve().parents[3]
#: What scripts/fetch_jars.sh writes last: a folder without it is missing jars.
_STAMP = ".fetched"


def jars_dir() -> Path:
    """The folder holding one folder per jar set: ``$STREAMWARDEN_JARS_DIR`` if set, else the
    repository's ``.cache/jars``."""
    configured = os.environ.get(JARS_DIR_VARIABLE, "").strip()
    return Path(configured).expanduser().resolve() if configured else _REPO / ".cache" / "jars"


def connector_jars() -> tuple[str, ...]:
    """Absolute paths of Spark's Kafka connector jars (the ``kafka`` set), for ``spark.jars``.

    Raises :class:`ConfigError` naming the folder and the fix when the set was never fetched.
    """
    return _jar_set(CONNECTOR_SET)


def broker_jars() -> tuple[str, ...]:
    """Absolute paths of the local broker's jars (the ``kafka-broker`` set), its classpath.

    Raises :class:`ConfigError` naming the folder and the fix when the set was never fetched.
    """
    return _jar_set(BROKER_SET)


def java_executable() -> str:
    """The ``java`` to run: ``$JAVA_HOME/bin/java`` if JAVA_HOME is set, else the one on PATH
    (the same choice Spark's launcher makes)."""
    home = os.environ.get("JAVA_HOME", "").strip()
    candidate = Path(home) / "bin" / "java" if home else None
    if candidate is not None and candidate.is_file():
        return str(candidate)
    found = shutil.which("java")
    if found is None:
        where = f"JAVA_HOME={home!r} has no bin/java and " if home else ""
        raise ConfigError(
            f"{where}no 'java' is on PATH; install a JDK 17 or later (`java -version`)"
        )
    return found


def _jar_set(name: str) -> tuple[str, ...]:
    """The jars of one fetched set, sorted (so a classpath built from them is stable)."""
    folder = jars_dir() / name
    jars = sorted(folder.glob("*.jar")) if (folder / _STAMP).is_file() else []
    if not jars:
        raise ConfigError(
            f"the {name!r} jars are missing or incomplete in {str(folder)!r}; fetch them with "
            f"'make setup' or 'scripts/fetch_jars.sh {name}' (or point {JARS_DIR_VARIABLE} at "
            "the folder holding the jar sets)"
        )
    return tuple(str(jar) for jar in jars)
