"""Test harnesses for streamwarden operators, usable in users' own test suites too."""

from streamwarden.testing.pattern_tester import PatternTester
from streamwarden.testing.session_tester import SessionTester

__all__ = ["PatternTester", "SessionTester"]
