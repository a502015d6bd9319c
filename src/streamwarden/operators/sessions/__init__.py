"""Sessionization: any keyed events in, sessions with declared aggregates and dead letters out,
with bounded state."""

from streamwarden.operators.sessions.api import SessionizeResult, sessionize
from streamwarden.operators.sessions.params import SessionParams

__all__ = ["SessionParams", "SessionizeResult", "sessionize"]
