"""Interval joins of two sources: each key's rows of both sides buffered while they can still
match, in the Java engine (``JoinLogic``), every row with a deadline."""

from streamwarden.operators.join.api import JoinResult, interval_join

__all__ = ["JoinResult", "interval_join"]
