"""Where the JVM pieces for Kafka are: the jar sets and the ``java`` that runs the local broker.

The jar sets are found as :mod:`streamwarden.spark.jar_sets` finds every set
(``$STREAMWARDEN_JARS_DIR/<set>/``, the source tree's ``.cache/jars/<set>/``, or the user's
cache, where a missing set is fetched from Maven Central on first need):

- ``kafka``: Spark's Kafka connector and the jars it needs beyond the pyspark wheel, for
  ``spark.jars`` (``build_spark_session(extra_jars=connector_jars())``);
- ``kafka-broker``: a Kafka broker and its runtime jars, for
  :class:`~streamwarden.local.broker.LocalBroker` only (never on Spark's classpath).

``JAVA_HOME`` (the Java that runs the broker, as for Spark's) is read here and nowhere else.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from streamwarden.errors import ConfigError
from streamwarden.spark.jar_sets import JARS_DIR_VARIABLE, jar_set, jars_dir

__all__ = [
    "BROKER_SET",
    "CONNECTOR_SET",
    "JARS_DIR_VARIABLE",
    "broker_jars",
    "connector_jars",
    "jars_dir",
    "java_executable",
]

#: The profile ids in ``engine/deps/pom.xml``, and so the sets' names.
CONNECTOR_SET = "kafka"
BROKER_SET = "kafka-broker"


def connector_jars() -> tuple[str, ...]:
    """Absolute paths of Spark's Kafka connector jars (the ``kafka`` set), for ``spark.jars``.

    Raises :class:`ConfigError` naming the folder and the fix when the set is missing (see
    :func:`~streamwarden.spark.jar_sets.jar_set`).
    """
    return jar_set(CONNECTOR_SET)


def broker_jars() -> tuple[str, ...]:
    """Absolute paths of the local broker's jars (the ``kafka-broker`` set), its classpath.

    Raises :class:`ConfigError` naming the folder and the fix when the set is missing (see
    :func:`~streamwarden.spark.jar_sets.jar_set`).
    """
    return jar_set(BROKER_SET)


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
