"""What the testers return: one frozen record per engine output row, with typed fields.

The engine's harnesses hand back each output row as a JSON object named by the operator's
output columns (``EngineOutput.SCHEMA`` for sessions, ``PatternRows.SCHEMA`` for patterns);
:func:`session_record` and :func:`pattern_record` turn one such object into its record. Times are
epoch milliseconds (``_ms``), as in the operators' output columns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from streamwarden.errors import EngineError

__all__ = [
    "DeadLetter",
    "HeldSession",
    "HistoryEvent",
    "KeyPatternState",
    "MatchedEvent",
    "PartialMatchOverflow",
    "PatternMatch",
    "PatternOutput",
    "PatternTimeout",
    "SessionOutput",
    "SessionRevision",
    "UserSessionState",
    "pattern_record",
    "pattern_state",
    "session_record",
    "session_state",
]


@dataclass(frozen=True)
class SessionRevision:
    """One emission of a session: revision 0 when it closes, +1 for each late update."""

    kind: ClassVar[Literal["session"]] = "session"
    #: The key's value, as text (state is keyed by it).
    key: str
    session_id: str
    start_ms: int
    end_ms: int
    event_count: int
    bytes: int
    revision: int
    truncated: bool
    #: Ids of emitted sessions a late event merged into this one, or None.
    merged_session_ids: tuple[str, ...] | None
    #: Each declared aggregate by name, typed from its field (a TIMESTAMP as an aware
    #: datetime, a DATE as a date, ``collect_*`` as a tuple).
    aggregates: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DeadLetter:
    """An event the operator refused, with its reason code (``too_late``, a cap, ...)."""

    kind: ClassVar[Literal["dead_letter"]] = "dead_letter"
    #: The user id (sessions) or the pattern's key.
    key: str | None
    event_ts_ms: int | None
    raw: str | None
    reason: str
    detail: str | None


@dataclass(frozen=True)
class HistoryEvent:
    """A late event beyond ``allowed_lateness`` that found no session in state but is within
    ``history_lateness``: a pipeline merges it into its stored session (the history store)."""

    kind: ClassVar[Literal["history"]] = "history"
    key: str
    event_ts_ms: int
    raw: str | None


@dataclass(frozen=True)
class MatchedEvent:
    """One event of a match or timeout: the stage that took it, its time and carried values."""

    stage: str
    ts_ms: int
    #: The carried fields (``fields``, then those ``where_previous`` compares), as text.
    values: tuple[str | None, ...]


@dataclass(frozen=True)
class _PartialMatchReport:
    """The events of one key's (partial) match, as a match and a timeout both report them."""

    key: str
    match_id: str
    start_ms: int
    end_ms: int
    events: tuple[MatchedEvent, ...]


@dataclass(frozen=True)
class PatternMatch(_PartialMatchReport):
    """A completed match of the pattern for one key."""

    kind: ClassVar[Literal["match"]] = "match"


@dataclass(frozen=True)
class PatternTimeout(_PartialMatchReport):
    """A partial match whose window closed before it completed (with ``emit_timeouts``)."""

    kind: ClassVar[Literal["timeout"]] = "timeout"
    #: When the window closed: the first event's time + ``within``.
    deadline_ms: int


@dataclass(frozen=True)
class PartialMatchOverflow:
    """Partial matches of one key dropped at ``max_partials_per_key``."""

    kind: ClassVar[Literal["overflow"]] = "overflow"
    key: str
    reason: str
    dropped: int


@dataclass(frozen=True)
class HeldSession:
    """One session a user's state holds: open, or closed and kept for late events."""

    start_ms: int
    end_ms: int
    event_count: int
    bytes: int
    #: Emitted at least once (then kept until end + gap + allowed lateness).
    closed: bool
    #: Assigned at first emission; None before.
    session_id: str | None
    #: -1 until first emitted.
    revision: int
    truncated: bool


@dataclass(frozen=True)
class UserSessionState:
    """What the session operator holds for one user: its sessions and its one timer."""

    sessions: tuple[HeldSession, ...]
    #: Event time of the user's registered timer, or None.
    timer_ms: int | None


@dataclass(frozen=True)
class KeyPatternState:
    """What the pattern operator holds for one key."""

    #: Events waiting for the watermark.
    buffered: int
    #: Event time of the key's registered timer, or None.
    timer_ms: int | None
    #: Each partial match as ``stage@ts_ms`` of its events, e.g. ``("a@1000",)``.
    partials: tuple[tuple[str, ...], ...]


SessionOutput = SessionRevision | DeadLetter | HistoryEvent
PatternOutput = PatternMatch | PatternTimeout | PartialMatchOverflow | DeadLetter


def session_record(
    row: Mapping[str, Any], aggregates: Mapping[str, Callable[[Any], Any]] | None = None
) -> SessionOutput:
    """The record of one session engine output row (the columns of ``EngineOutput.schema``);
    ``aggregates`` converts each aggregate's engine value (``agg_<i>``, in order) to its
    type, by name."""
    if row["kind"] == "dead_letter":
        return _dead_letter(row, "key")
    if row["kind"] == "history":
        return HistoryEvent(row["key"], row["event_ts_ms"], row["raw"])
    if row["kind"] != "session":
        raise _unknown(row)
    return SessionRevision(
        key=row["key"],
        session_id=row["session_id"],
        start_ms=row["start_ms"],
        end_ms=row["end_ms"],
        event_count=row["event_count"],
        bytes=row["bytes"],
        revision=row["revision"],
        truncated=row["truncated"],
        merged_session_ids=_tuple(row["merged_session_ids"]),
        aggregates={
            name: convert(row[f"agg_{i}"])
            for i, (name, convert) in enumerate((aggregates or {}).items())
        },
    )


def pattern_record(row: Mapping[str, Any]) -> PatternOutput:
    """The record of one pattern engine output row (columns of ``PatternRows.SCHEMA``)."""
    kind = row["kind"]
    if kind == "dead_letter":
        return _dead_letter(row, "key")
    if kind == "overflow":
        return PartialMatchOverflow(key=row["key"], reason=row["reason"], dropped=row["dropped"])
    columns = (row["ev_stage"], row["ev_ts_ms"], row["ev_values"])
    events = tuple(
        MatchedEvent(stage=stage, ts_ms=ts, values=tuple(values))
        for stage, ts, values in zip(*columns, strict=True)
    )
    found = {
        "key": row["key"],
        "match_id": row["match_id"],
        "start_ms": row["start_ms"],
        "end_ms": row["end_ms"],
        "events": events,
    }
    if kind == "match":
        return PatternMatch(**found)
    if kind == "timeout":
        return PatternTimeout(**found, deadline_ms=row["deadline_ms"])
    raise _unknown(row)


def session_state(state: Mapping[str, Any]) -> UserSessionState:
    """The record of one user's state as the harness shows it (the ``UserSessions`` bean)."""
    return UserSessionState(
        sessions=tuple(
            HeldSession(
                start_ms=s["startMs"],
                end_ms=s["endMs"],
                event_count=s["eventCount"],
                bytes=s["bytes"],
                closed=s["closed"],
                session_id=s["sessionId"],
                revision=s["revision"],
                truncated=s["truncated"],
            )
            for s in state["sessions"]
        ),
        timer_ms=_timer(state["timerMs"]),
    )


def pattern_state(state: Mapping[str, Any]) -> KeyPatternState:
    """The record of one key's state as the harness shows it."""
    return KeyPatternState(
        buffered=state["buffered"],
        timer_ms=_timer(state["timer_ms"]),
        partials=tuple(tuple(p) for p in state["partials"]),
    )


#: The engine's "no timer" value (Java's Long.MIN_VALUE).
_NO_TIMER = -(2**63)


def _timer(value: int) -> int | None:
    return None if value == _NO_TIMER else value


def _dead_letter(row: Mapping[str, Any], key_column: str) -> DeadLetter:
    return DeadLetter(
        key=row[key_column],
        event_ts_ms=row["event_ts_ms"],
        raw=row["raw"],
        reason=row["reason"],
        detail=row["detail"],
    )


def _tuple(values: list[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


def _unknown(row: Mapping[str, Any]) -> EngineError:
    return EngineError(
        f"the engine returned an output row of unknown kind {row.get('kind')!r}: the engine jar "
        "and the streamwarden package differ; rebuild the jar (make setup)"
    )
