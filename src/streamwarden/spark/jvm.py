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
    "first_line",
    "java_message",
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
    except Py4JError as exc:
        raise EngineError(
            f"the engine class for '{what}' is not on Spark's classpath ({exc}); create the "
            "SparkSession with streamwarden.spark.build_spark_session(), which adds the engine "
            "jar through spark.jars, before any other session is created"
        ) from None


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
