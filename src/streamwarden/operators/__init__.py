"""Stateful operators: functions over DataFrames whose per-key logic runs in the Java engine."""

from streamwarden.operators.sessions import SessionizeResult, SessionParams, sessionize

__all__ = ["SessionParams", "SessionizeResult", "sessionize"]
