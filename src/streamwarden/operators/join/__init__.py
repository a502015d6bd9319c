"""Interval joins of two sources: each key's rows of both sides buffered while they can still
match, in the Java engine (``JoinLogic``), every row with a deadline."""
