"""After-match skip strategies: which partial matches a match discards (Flink's semantics)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["AfterMatch", "SkipKind"]


class SkipKind(StrEnum):
    NO_SKIP = "no_skip"
    SKIP_TO_NEXT = "skip_to_next"
    SKIP_PAST_LAST_EVENT = "skip_past_last_event"
    SKIP_TO_FIRST = "skip_to_first"
    SKIP_TO_LAST = "skip_to_last"


@dataclass(frozen=True)
class AfterMatch:
    """A skip strategy; build one with the class methods."""

    kind: SkipKind
    stage: str | None = None
    #: Flink's ``throwExceptionOnMiss``: a match without an event to skip to (or whose skip
    #: would return to its own first event) is an error instead of no skip: the query stops
    #: with a message naming the key and the stage, as the Flink job fails.
    throw_on_miss: bool = False

    @classmethod
    def no_skip(cls) -> AfterMatch:
        """Every possible match is reported."""
        return cls(SkipKind.NO_SKIP)

    @classmethod
    def skip_to_next(cls) -> AfterMatch:
        """Discards partial matches that started with (or before) the match's first event."""
        return cls(SkipKind.SKIP_TO_NEXT)

    @classmethod
    def skip_past_last_event(cls) -> AfterMatch:
        """Discards partial matches that started before the match's last event: no event is
        part of two matches."""
        return cls(SkipKind.SKIP_PAST_LAST_EVENT)

    @classmethod
    def skip_to_first(cls, stage: str, *, throw_on_miss: bool = False) -> AfterMatch:
        """Discards partial matches that started before the first event of ``stage``."""
        return cls(SkipKind.SKIP_TO_FIRST, stage, throw_on_miss)

    @classmethod
    def skip_to_last(cls, stage: str, *, throw_on_miss: bool = False) -> AfterMatch:
        """Discards partial matches that started before the last event of ``stage``."""
        return cls(SkipKind.SKIP_TO_LAST, stage, throw_on_miss)
