"""Calls into the Java engine and turns JVM failures into streamwarden errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from streamwarden.errors import EngineError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "PYSPARK_QUERY_LOGGERS",
    "call_engine",
    "engine_on_classpath",
    "first_line",
    "java_message",
    "missing_engine_message",
    "query_errors_unlogged",
]

#: PySpark loggers that print a failed query's whole Java stack trace, as one JSON line, to the
#: terminal when the error is raised, before any handler can catch it.
PYSPARK_QUERY_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def call_engine(spark: SparkSession, what: str, call: Callable[[Any], Any]) -> Any:
    """Runs ``call(jvm)``; a missing class means the jar is not on Spark's classpath."""
    from py4j.protocol import Py4JError, Py4JJavaError

    try:
        return call(spark._jvm)
    except Py4JJavaError as exc:
        raise EngineError(f"the engine could not build '{what}': {java_message(exc)}") from None
    except Py4JError:
        raise EngineError(missing_engine_message(f"the engine class for '{what}'")) from None
    except TypeError as exc:  # py4j makes an unknown class an uncallable JavaPackage
        if "JavaPackage" not in str(exc):
            raise
        raise EngineError(missing_engine_message(f"the engine class for '{what}'")) from None


def missing_engine_message(subject: str) -> str:
    """What to do when the engine jar is not on a session's classpath."""
    from streamwarden.spark.engine_jar import engine_jar_path

    return (
        f"{subject} is not on Spark's classpath: this Python process started Spark's JVM "
        "without streamwarden's engine jar, and a running JVM cannot gain it. Restart the "
        "process and create the first session with "
        "streamwarden.spark.session.build_spark_session() (or your own, with spark.jars and "
        f"spark.driver.extraClassPath set to {str(engine_jar_path())!r})"
    )


def engine_on_classpath(jvm: Any) -> bool:
    """Whether the engine's classes can be reached through a py4j ``jvm`` view (a session's
    ``_jvm``, or ``SparkContext._jvm``); False for none."""
    from py4j.java_gateway import JavaClass

    return jvm is not None and isinstance(jvm.io.streamwarden.engine.Sessionizer, JavaClass)


def java_message(exc: BaseException) -> str:
    """The innermost Java exception's class and message, without the stack trace."""
    java_exc = getattr(exc, "java_exception", None)
    if java_exc is None:
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    cause = java_exc
    while cause.getCause() is not None and cause.getCause() != cause:
        cause = cause.getCause()
    return f"{cause.getClass().getSimpleName()}: {cause.getMessage()}"


def first_line(message: str) -> str:
    """The first line of an error message: Spark appends the query plan on the next ones."""
    return message.strip().splitlines()[0] if message.strip() else message


@contextmanager
def query_errors_unlogged() -> Iterator[None]:
    """Keeps PySpark from logging the Java trace of an analysis error raised inside, for code
    that catches the error and raises its own, clearer one instead."""
    from pyspark.logger import PySparkLogger

    loggers = [PySparkLogger.getLogger(name) for name in PYSPARK_QUERY_LOGGERS]
    before = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = True
    try:
        yield
    finally:
        for logger, disabled in zip(loggers, before, strict=True):
            logger.disabled = disabled
