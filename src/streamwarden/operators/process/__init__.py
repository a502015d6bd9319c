"""Keyed logic of your own, in Python, whose state cannot leak: a :class:`KeyedProcessor`
declares its states, each with a deadline in event time, and ``keyed_process`` (or a pipeline's
``operator = "process"``) runs it under a guard on Spark's ``transformWithState``."""

from streamwarden.operators.process.api import ProcessResult, keyed_process
from streamwarden.operators.process.processor import Context, KeyedProcessor
from streamwarden.operators.process.states import ListState, MapState, ValueState

__all__ = [
    "Context",
    "KeyedProcessor",
    "ListState",
    "MapState",
    "ProcessResult",
    "ValueState",
    "keyed_process",
]
