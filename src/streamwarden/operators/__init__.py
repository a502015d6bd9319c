"""Stateful operators: functions over DataFrames whose per-key logic runs in the Java engine,
and the pipeline operators built on them (contract and registry in ``base``; one module per
operator, ``<operator>/operator.py``, imported here so that it registers)."""

from streamwarden.operators.base import OPERATORS, Operator, operator_of
from streamwarden.operators.join import operator as _join_operator  # noqa: F401
from streamwarden.operators.patterns import operator as _patterns_operator  # noqa: F401
from streamwarden.operators.process import operator as _process_operator  # noqa: F401
from streamwarden.operators.sessions import SessionizeResult, SessionParams, sessionize
from streamwarden.operators.sessions import operator as _sessions_operator  # noqa: F401
from streamwarden.operators.windows import operator as _windows_operator  # noqa: F401

__all__ = [
    "OPERATORS",
    "Operator",
    "SessionParams",
    "SessionizeResult",
    "operator_of",
    "sessionize",
]
