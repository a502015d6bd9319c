"""The landing guard's gate in front of Spark's file source.

The guard (:mod:`~streamwarden.sources.landing_guard`) checks new landing files on each poll of
the runner, every half second; Spark plans batches on its own thread, whenever a trigger fires.
Without a gate, a bad file that lands between two polls can be listed by Spark before the guard
sees it, and is read unchecked: records doubled (a glob character in its name) or a batch that
fails on every restart (a colon, a truncated gzip, Parquet of other columns). The gate closes
that gap: Spark's listing of the landing folder admits only the files the guard has passed, so
a new file waits, unlisted, for the next poll, which passes it or moves it aside.

It is a Hadoop path filter (``LandingFilter.java``, set as the session's
``mapreduce.input.pathFilter.class``) whose list of passed names lives in the driver's JVM,
which lists the folder. A folder that no guard watches is not filtered.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streamwarden.spark.jvm import call_engine

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from streamwarden.sources.landing_guard import LandingGuard

__all__ = ["FILTER_CLASS", "PATH_FILTER_SETTING", "LandingGate"]

#: Hadoop's setting naming the path filter of Spark's file listings (read from the session's
#: configuration: a reader option would be lower-cased, and Hadoop would not see it).
PATH_FILTER_SETTING = "mapreduce.input.pathFilter.class"
FILTER_CLASS = "io.streamwarden.engine.fs.LandingFilter"


class LandingGate:
    """Puts a :class:`LandingGuard`'s verdicts in front of Spark's listing of its folder."""

    def __init__(self, spark: SparkSession) -> None:
        self._spark = spark

    def attach(self, guard: LandingGuard) -> None:
        """From now on Spark lists only the files of ``guard``'s folder that it has passed
        (those passed so far, then each one as a sweep passes it, until a sweep finds it gone).
        Call before the query that reads the folder starts."""
        jvm_filter = call_engine(
            self._spark, "landing gate", lambda jvm: jvm.io.streamwarden.engine.fs.LandingFilter
        )
        self._spark.conf.set(PATH_FILTER_SETTING, FILTER_CLASS)
        folders = _spellings(str(guard.landing))
        for folder in folders:
            jvm_filter.guard(folder)
        jvm = self._spark._jvm
        assert jvm is not None

        def tell(method: str) -> Callable[[list[str]], None]:
            def told(names: list[str]) -> None:
                listed: Any = jvm.java.util.ArrayList()
                for name in names:
                    listed.add(name)
                for folder in folders:
                    getattr(jvm_filter, method)(folder, listed)

            return told

        guard.on_passed(tell("pass"))
        guard.on_gone(tell("forget"))


def _spellings(folder: str) -> list[str]:
    """The folder as Spark qualifies it (absolute, symbolic links kept) and, if different,
    with its links resolved."""
    absolute = os.path.abspath(folder)
    return list(dict.fromkeys([absolute, os.path.realpath(folder)]))
