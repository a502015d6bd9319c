"""Bisection: which records make a batch fail, found by trying the batch without some of them.

A batch that fails the same way ``[supervisor] bisect_after`` times in a row is not going to get
through by restarting: something in it fails every time, outside every narrower catch. The
supervisor then tries the batch again in a side run that commits nothing
(:mod:`streamwarden.pipeline.trial`), without one half of its records, then the other, and so
on: group testing, about ``2 k log2(n)`` trials for ``k`` culprits among ``n`` records. The
records found are set aside as ``poison`` dead letters (:mod:`streamwarden.pipeline.quarantine`)
and the batch is replayed without them.

The search is pure (a trial is a function passed in), so its rules are tested without Spark.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["find_culprits"]

T = TypeVar("T")

#: A trial: does the batch get through when these records are set aside?
Passes = Callable[[frozenset[T]], bool]


def find_culprits(candidates: Sequence[T], passes: Passes[T]) -> frozenset[T] | None:
    """The records to set aside so that the batch gets through: a set whose removal makes
    ``passes`` true and from which no single record could be kept. None when the failure is not
    the records' (the whole batch gets through in a trial, so the trial cannot see the failure,
    or the batch fails even without any of them)."""
    if passes(frozenset()) or not candidates or not passes(frozenset(candidates)):
        return None
    return _narrow(list(candidates), frozenset(), passes)


def _narrow(group: list[T], base: frozenset[T], passes: Passes[T]) -> frozenset[T]:
    """Culprits within ``group``, given that the batch gets through without ``base | group`` and
    fails without ``base`` alone."""
    if len(group) == 1:
        return frozenset(group)
    half = len(group) // 2
    first, second = group[:half], group[half:]
    if passes(base | frozenset(first)):
        return _narrow(first, base, passes)
    if passes(base | frozenset(second)):
        return _narrow(second, base, passes)
    # culprits in both halves: those of the first with the second set aside, then the second's
    found = _narrow(first, base | frozenset(second), passes)
    if passes(base | found):
        return found
    return found | _narrow(second, base | found, passes)
