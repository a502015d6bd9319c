"""A SparkSession without the engine jar is refused with the fix, not a py4j TypeError."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from streamwarden.spark.jvm import engine_on_classpath

SCRIPT = textwrap.dedent(
    """
    from pyspark.sql import SparkSession
    from streamwarden.errors import EngineError
    from streamwarden.spark.session import build_spark_session

    plain = SparkSession.builder.master("local[1]").getOrCreate()  # no engine jar
    try:
        build_spark_session()
    except EngineError as exc:
        print("EngineError:", exc)
    plain.stop()  # stopping the session does not stop the JVM, nor change its classpath
    try:
        build_spark_session()
    except EngineError as exc:
        print("again EngineError")
    again = SparkSession.builder.master("local[1]").getOrCreate()
    print("plain reads still work:", again.range(3).count() == 3)
    """
)


@pytest.mark.spark
def test_the_test_session_reaches_the_engine(spark):
    assert engine_on_classpath(spark._jvm)


def test_a_jvm_started_without_the_engine_jar_is_refused_saying_what_to_do(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert out.startswith("EngineError: the engine jar is not on Spark's classpath")
    assert "a running JVM cannot gain it. Restart the process" in out
    assert "streamwarden-engine.jar" in out
    assert "again EngineError" in out
    assert "plain reads still work: True" in out
