"""streamwarden: stateful stream processing on PySpark whose state never leaks.

The public API, importable from here (loaded on first use, so that the command line starts
without importing Spark)::

    from streamwarden import Schema, validate, sessionize, SessionParams, build_spark_session
    from streamwarden import detect, Pattern, PatternOptions, AfterMatch
    from streamwarden import KeyedProcessor, ValueState, ListState, MapState, keyed_process
    from streamwarden import run_query

``run_query`` runs what ``sessionize``, ``detect`` or ``keyed_process`` returned as a pipeline
runs its operator: idle ticks, the drain at the end of a finite input, exactly-once sinks. The
pipeline runner is :class:`streamwarden.pipeline.Pipeline` with a config from
:func:`streamwarden.config.load_config`; the testers are in :mod:`streamwarden.testing`.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamwarden.config import load_config
    from streamwarden.operators.join import JoinResult, interval_join
    from streamwarden.operators.patterns import AfterMatch, Pattern, PatternOptions, detect
    from streamwarden.operators.process import (
        KeyedProcessor,
        ListState,
        MapState,
        ProcessResult,
        ValueState,
        keyed_process,
    )
    from streamwarden.operators.sessions import SessionizeResult, SessionParams, sessionize
    from streamwarden.operators.sessions.aggregates import AGGREGATE_FUNCTIONS
    from streamwarden.operators.windows import WindowsResult, aggregate_windows
    from streamwarden.pipeline import Pipeline
    from streamwarden.pipeline.python_query import run_query
    from streamwarden.schema import Schema
    from streamwarden.spark.session import build_spark_session
    from streamwarden.validation.api import Validated, validate

try:
    __version__ = version("streamwarden")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

_HOMES = {
    "JoinResult": "streamwarden.operators.join",
    "interval_join": "streamwarden.operators.join",
    "AfterMatch": "streamwarden.operators.patterns",
    "Pattern": "streamwarden.operators.patterns",
    "PatternOptions": "streamwarden.operators.patterns",
    "detect": "streamwarden.operators.patterns",
    "KeyedProcessor": "streamwarden.operators.process",
    "ListState": "streamwarden.operators.process",
    "MapState": "streamwarden.operators.process",
    "ProcessResult": "streamwarden.operators.process",
    "ValueState": "streamwarden.operators.process",
    "keyed_process": "streamwarden.operators.process",
    "SessionParams": "streamwarden.operators.sessions",
    "SessionizeResult": "streamwarden.operators.sessions",
    "sessionize": "streamwarden.operators.sessions",
    "WindowsResult": "streamwarden.operators.windows",
    "aggregate_windows": "streamwarden.operators.windows",
    "Pipeline": "streamwarden.pipeline",
    "run_query": "streamwarden.pipeline.python_query",
    "load_config": "streamwarden.config",
    "Schema": "streamwarden.schema",
    "AGGREGATE_FUNCTIONS": "streamwarden.operators.sessions.aggregates",
    "Validated": "streamwarden.validation.api",
    "validate": "streamwarden.validation.api",
    "build_spark_session": "streamwarden.spark.session",
}

__all__ = [
    "AGGREGATE_FUNCTIONS",
    "AfterMatch",
    "JoinResult",
    "KeyedProcessor",
    "ListState",
    "MapState",
    "Pattern",
    "PatternOptions",
    "Pipeline",
    "ProcessResult",
    "Schema",
    "SessionParams",
    "SessionizeResult",
    "Validated",
    "ValueState",
    "WindowsResult",
    "__version__",
    "aggregate_windows",
    "build_spark_session",
    "detect",
    "interval_join",
    "keyed_process",
    "load_config",
    "run_query",
    "sessionize",
    "validate",
]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'streamwarden' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value
