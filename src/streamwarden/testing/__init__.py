"""Test harnesses for streamwarden operators, usable in users' own test suites too.

``SessionTester`` and ``PatternTester`` run the operators' own Java processors under an
in-memory state handle, micro-batch by micro-batch, and return the typed records below;
``ProcessorTester`` runs a ``KeyedProcessor`` under its guard in plain Python.
"""

from streamwarden.testing.pattern_tester import PatternTester
from streamwarden.testing.processor_tester import Emitted, ProcessorOutput, ProcessorTester
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
    "Emitted",
    "HeldSession",
    "HistoryEvent",
    "KeyPatternState",
    "MatchedEvent",
    "PartialMatchOverflow",
    "PatternMatch",
    "PatternOutput",
    "PatternTester",
    "PatternTimeout",
    "ProcessorOutput",
    "ProcessorTester",
    "SessionOutput",
    "SessionRevision",
    "SessionTester",
    "UserSessionState",
]
