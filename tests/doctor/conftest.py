"""The session ``streamwarden doctor`` runs on, in tests: the shared one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def doctor_spark(spark) -> Iterator[object]:
    """The shared SparkSession, which ``doctor`` finds running and reuses, as it is after the
    test: ``doctor`` builds its session with the config's ``[spark.conf]``, and Spark's builder
    applies those settings it can to a running session, which would leave them (another state
    store, say) to the tests after this one. The settings that changed are put back (those a
    running session can change: the others have no effect on it)."""
    before = spark.conf.getAll
    yield spark
    for name, value in spark.conf.getAll.items():
        if not spark.conf.isModifiable(name):
            continue
        if name not in before:
            spark.conf.unset(name)
        elif value != before[name]:
            spark.conf.set(name, before[name])
