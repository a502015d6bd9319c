"""Test harnesses for streamwarden operators, usable in users' own test suites too.

``SessionTester`` and ``PatternTester`` run the operators' own Java processors under an
in-memory state handle, micro-batch by micro-batch, and return the typed records below.
"""

from streamwarden.testing.pattern_tester import PatternTester
from streamwarden.testing.records import (
    DeadLetter,
    HeldSession,
    HistoryEvent,
    KeyPatternState,
    MatchedEvent,
    PartialMatchOverflow,
    PatternMatch,
    PatternOutput,
    PatternTimeout,
    SessionOutput,
    SessionRevision,
    UserSessionState,
)
from streamwarden.testing.session_tester import SessionTester

__all__ = [
    "DeadLetter",
    "HeldSession",
    "HistoryEvent",
    "KeyPatternState",
    "MatchedEvent",
    "PartialMatchOverflow",
    "PatternMatch",
    "PatternOutput",
    "PatternTester",
    "PatternTimeout",
    "SessionOutput",
    "SessionRevision",
    "SessionTester",
    "UserSessionState",
]
