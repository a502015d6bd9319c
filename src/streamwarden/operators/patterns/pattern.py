"""The pattern DSL: stages, contiguity, quantifiers and a deadline, in the spirit of Flink's
Pattern API.

A pattern is immutable; every call returns a new one, so a pattern can be shared and extended::

    scans = (
        Pattern.begin("first").where(F.col("type") == "scan")
        .followed_by("second").where(F.col("type") == "scan")
        .within(timedelta(minutes=30))
        .skip(AfterMatch.skip_past_last_event())
    )

Stage conditions are Spark Column expressions, evaluated natively before the stateful step;
comparisons with an earlier stage's event (:meth:`Pattern.where_previous`) are evaluated by the
engine on the partial match.

Arguments of the wrong type (a stage name that is not a str, a window that is not a
``timedelta``, a condition that is not a Column) raise :class:`PatternError` naming the method,
the stage and what to pass instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from enum import StrEnum

from pyspark.sql import Column

from streamwarden.errors import PatternError
from streamwarden.operators.arguments import check_duration, check_int, shown
from streamwarden.operators.patterns.skip import AfterMatch, SkipKind

__all__ = [
    "AggregateCondition",
    "Contiguity",
    "Group",
    "Pattern",
    "PreviousCondition",
    "Stage",
    "StageKind",
]

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
AGGREGATES = ("count", "sum", "min", "max", "avg")
NO_SKIP = AfterMatch(SkipKind.NO_SKIP)


class Contiguity(StrEnum):
    """How events relate: ``strict`` (next event), ``relaxed`` (skip non-matching events),
    ``any`` (also skip matching ones: every combination)."""

    STRICT = "strict"
    RELAXED = "relaxed"
    ANY = "any"


class StageKind(StrEnum):
    NORMAL = "normal"
    NOT_NEXT = "not_next"
    NOT_FOLLOWED_BY = "not_followed_by"


@dataclass(frozen=True)
class PreviousCondition:
    """``field`` of this event ``op`` the same field of ``stage``'s last matched event."""

    field: str
    op: str
    stage: str


@dataclass(frozen=True)
class AggregateCondition:
    """``agg`` (count, sum, min, max, avg) of ``field`` over the events ``stage`` has taken,
    ``op`` ``value``; ``field`` is None for count."""

    agg: str
    field: str | None
    stage: str
    op: str
    value: float


@dataclass(frozen=True)
class Stage:
    """One named stage: its conditions (ANDed; ``or_`` adds alternatives) and quantifier."""

    name: str
    kind: StageKind = StageKind.NORMAL
    contiguity: Contiguity = Contiguity.RELAXED
    conditions: tuple[Column, ...] = ()
    alternatives: tuple[Column, ...] = ()
    previous: tuple[PreviousCondition, ...] = ()
    aggregates: tuple[AggregateCondition, ...] = ()
    min_times: int = 1
    max_times: int | None = 1
    optional: bool = False
    greedy: bool = False
    inner: Contiguity = Contiguity.RELAXED
    #: Flink's ``until``: an event meeting it ends the loop (it is neither taken nor skipped
    #: inside it; the next stage may take it).
    until: Column | None = None
    #: Aggregates over the events taken before the event under test that it must also meet to
    #: end the loop (ANDed with ``until`` when both are given): Flink's iterative until.
    until_aggregates: tuple[AggregateCondition, ...] = ()
    #: Flink's ``timesOrMore(n, windowTime)``: how long after its last event a partial match
    #: may wait for the loop's first event and its events up to the minimum.
    loop_gap: timedelta | None = None

    @property
    def looping(self) -> bool:
        return self.max_times is None or self.max_times > 1

    @property
    def negation(self) -> bool:
        return self.kind != StageKind.NORMAL


@dataclass(frozen=True)
class Group:
    """A sub-pattern used as one element (Flink's group pattern, e.g. ``c (a b){2} d``): the
    pattern's stages ``start`` to ``end`` (exclusive), repeated ``min_times`` to ``max_times``
    rounds, the whole optional or not. The first stage's contiguity relates the first round to
    what came before; ``inner`` relates each later round to the one before it."""

    start: int
    end: int
    min_times: int = 1
    #: None for a loop (``one_or_more``, ``times_or_more``).
    max_times: int | None = 1
    optional: bool = False
    inner: Contiguity = Contiguity.RELAXED
    #: Flink's ``until`` on a looping group: an event meeting it is neither taken nor skipped
    #: by any of the group's stages, which ends the loop (the next stage may take it).
    until: Column | None = None

    @property
    def repeated(self) -> bool:
        """More than one round is possible."""
        return self.max_times is None or self.max_times > 1

    @property
    def may_be_left_out(self) -> bool:
        """Some round, or the whole group, may take no event."""
        return self.optional or self.max_times is None or self.min_times < self.max_times


@dataclass(frozen=True)
class Pattern:
    """A sequence of stages with a deadline (``within``) and an after-match skip strategy."""

    stages: tuple[Stage, ...]
    #: The group patterns over ``stages`` (outer ones before the groups nested in them).
    groups: tuple[Group, ...] = ()
    window: timedelta | None = None
    #: The longest gap between a match's consecutive events (Flink's ``within`` of type
    #: PREVIOUS_AND_CURRENT); the whole match stays bounded by ``window``.
    gap: timedelta | None = None
    after_match: AfterMatch = NO_SKIP

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def begin(cls, name: str | Pattern) -> Pattern:
        """Starts a pattern with its first stage, or with a group: a sub-pattern (itself
        built with ``Pattern.begin``) used as one element, which ``times``, ``optional``,
        ``consecutive`` and ``allow_combinations`` then apply to as a whole (Flink's
        ``Pattern.begin(Pattern)``)."""
        if isinstance(name, Pattern):
            return cls(stages=())._append_group("Pattern.begin", name, Contiguity.STRICT)
        checked = _checked_name(name, (), f"Pattern.begin({name!r})")
        return cls(stages=(Stage(checked, contiguity=Contiguity.STRICT),))

    def next(self, name: str | Pattern) -> Pattern:
        """A stage (or a group, see :meth:`begin`) whose event must directly follow the
        previous stage's (strict)."""
        if isinstance(name, Pattern):
            return self._append_group("next", name, Contiguity.STRICT)
        return self._append("next", name, StageKind.NORMAL, Contiguity.STRICT)

    def followed_by(self, name: str | Pattern) -> Pattern:
        """A stage (or a group, see :meth:`begin`) whose event may come after non-matching
        events (relaxed), e.g. ``c (a b){2}``: ``.followed_by(Pattern.begin("a").where(..)
        .followed_by("b").where(..)).times(2)``."""
        if isinstance(name, Pattern):
            return self._append_group("followed_by", name, Contiguity.RELAXED)
        return self._append("followed_by", name, StageKind.NORMAL, Contiguity.RELAXED)

    def followed_by_any(self, name: str | Pattern) -> Pattern:
        """Like ``followed_by``, but matching events may be skipped too (every combination)."""
        if isinstance(name, Pattern):
            return self._append_group("followed_by_any", name, Contiguity.ANY)
        return self._append("followed_by_any", name, StageKind.NORMAL, Contiguity.ANY)

    def not_next(self, name: str) -> Pattern:
        """Discards the partial match if the very next event meets this stage's condition."""
        return self._append("not_next", name, StageKind.NOT_NEXT, Contiguity.STRICT)

    def not_followed_by(self, name: str) -> Pattern:
        """Discards the partial match if an event meeting this stage's condition comes before
        the next stage's event (or, as the last stage, before the window closes)."""
        return self._append("not_followed_by", name, StageKind.NOT_FOLLOWED_BY, Contiguity.RELAXED)

    def where(self, condition: Column) -> Pattern:
        """Adds a condition (a boolean Spark Column) to the current stage; conditions AND."""
        self._check_stage_last("where()")
        self._check_condition("where", condition)
        return self._with_last(conditions=(*self._last.conditions, condition))

    def or_(self, condition: Column) -> Pattern:
        """Lets the current stage accept events meeting ``condition`` instead."""
        self._check_stage_last("or_()")
        self._check_condition("or_", condition)
        return self._with_last(alternatives=(*self._last.alternatives, condition))

    def where_previous(self, field: str, op: str, stage: str) -> Pattern:
        """Requires ``field`` of this event to compare (``op``) with the same field of the last
        event matched by the earlier ``stage``, e.g. ``where_previous("url", "!=", "first")``."""
        self._check_stage_last("where_previous()")
        call = f"where_previous({field!r}, {op!r}, {stage!r}) on stage {self._last.name!r}"
        if not isinstance(field, str) or not field:
            raise PatternError(
                f"{call}: the field must be a column name such as 'url', got {shown(field)}"
            )
        if op not in COMPARISONS:
            raise PatternError(f"{call}: comparison {op!r} is not one of {', '.join(COMPARISONS)}")
        earlier = [s.name for s in self.stages[:-1] if not s.negation]
        if stage not in earlier:
            raise PatternError(
                f"stage {self._last.name!r} compares with {stage!r}, which is not an earlier "
                f"stage that matches events; earlier stages: {', '.join(earlier) or 'none'}"
            )
        cond = PreviousCondition(field, op, stage)
        return self._with_last(previous=(*self._last.previous, cond))

    def where_aggregate(
        self, agg: str, field: str | None, stage: str, op: str, value: float
    ) -> Pattern:
        """Requires ``agg`` (count, sum, min, max or avg) of the numeric ``field`` over the
        events ``stage`` has taken so far to compare (``op``) with ``value``; a limited, typed
        form of Flink's iterative conditions, evaluated by the engine. ``stage`` is an earlier
        stage or this one; for this one (a loop) the event under test counts too, e.g. a loop
        whose prices stay below 100: ``.where_aggregate("sum", "price", "items", "<", 100)``.
        Over no event, count and sum are 0 and min, max and avg fail. ``field`` is None for
        count."""
        cond = self._aggregate("where_aggregate", agg, field, stage, op, value)
        return self._with_last(aggregates=(*self._last.aggregates, cond))

    def _aggregate(
        self, method: str, agg: str, field: str | None, stage: str, op: str, value: float
    ) -> AggregateCondition:
        self._check_stage_last(f"{method}()")
        call = f"{method}({agg!r}, {field!r}, {stage!r}, {op!r}, {value!r})"
        call += f" on stage {self._last.name!r}"
        if agg not in AGGREGATES:
            raise PatternError(f"{call}: aggregate {agg!r} is not one of {', '.join(AGGREGATES)}")
        if agg != "count" and (not isinstance(field, str) or not field):
            raise PatternError(
                f"{call}: {agg} needs a numeric column name such as 'price', got {shown(field)}"
            )
        if op not in COMPARISONS:
            raise PatternError(f"{call}: comparison {op!r} is not one of {', '.join(COMPARISONS)}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise PatternError(
                f"{call}: the bound must be a number such as 100, got {shown(value)}"
            )
        stages = [s.name for s in self.stages if not s.negation]
        if stage not in stages:
            raise PatternError(
                f"{call}: {stage!r} is not this or an earlier stage that matches events; "
                f"stages: {', '.join(stages) or 'none'}"
            )
        return AggregateCondition(agg, None if agg == "count" else field, stage, op, float(value))

    def times(self, n: int, m: int | None = None) -> Pattern:
        """Exactly ``n`` events, or from ``n`` to ``m`` when ``m`` is given. ``times(0, m)``
        is ``times(1, m).optional()``, as in Flink (where a minimum of 0 makes the stage
        optional): the stage may take no event at all."""
        call = f"times({n!r}, {m!r}) on stage {self._last.name!r}"
        check_int(PatternError, f"{call}: n", n, example="2")
        if m is not None:
            check_int(PatternError, f"{call}: m", m, example="3 (or None for exactly n)")
        high = n if m is None else m
        if self._last_group is not None:
            if n < 0 or high < max(n, 1):
                raise PatternError(f"{call}: need 1 <= n <= m, or 0 = n < m")
            return self._group_quantified(call, max(n, 1), high, optional=n == 0)
        if n == 0 and m is not None and m >= 1:
            return self._quantified(min_times=1, max_times=m)._with_last(optional=True)
        if n < 1 or high < n:
            raise PatternError(
                f"times({n}, {m}) on {self._last.name!r}: need 1 <= n <= m, or 0 = n < m"
            )
        return self._quantified(min_times=n, max_times=high)

    def times_or_more(self, n: int, gap: timedelta | None = None) -> Pattern:
        """``n`` or more events. With ``gap`` (Flink's ``timesOrMore(n, windowTime)``), a
        partial match waiting for the loop's first event, or for its events up to ``n``, ends
        when ``gap`` passes after its last event; as in Flink, the wait after the ``n``-th
        event has no such bound (the pattern's ``within`` still has), nor, at an optional
        loop, the wait after an event the loop skipped before its first."""
        shown_gap = "" if gap is None else f", {gap!r}"
        if self._last_group is not None:
            call = f"times_or_more({n!r}{shown_gap})"
            check_int(PatternError, f"{call}: n", n, example="2")
            if n < 1 or gap is not None:
                raise PatternError(
                    f"{call} on the group ({self._group_names(self._last_group)}): need n >= 1 "
                    "and no gap (a gap on a group's loop is not supported)"
                )
            return self._group_quantified(call, n, None, optional=False)
        call = f"times_or_more({n!r}{shown_gap}) on stage {self._last.name!r}"
        check_int(PatternError, f"{call}: n", n, example="2")
        if n < 1:
            raise PatternError(f"times_or_more({n}) on {self._last.name!r}: need n >= 1")
        if gap is not None:
            check_duration(PatternError, f"{call}: the gap", gap, example="timedelta(seconds=30)")
            if gap <= timedelta(0):
                raise PatternError(f"{call}: the gap must be > 0")
        quantified = self._quantified(min_times=n, max_times=None)
        return quantified._with_last(loop_gap=gap)

    def one_or_more(self, gap: timedelta | None = None) -> Pattern:
        """One or more events; ``gap`` as in :meth:`times_or_more` (Flink's
        ``oneOrMore(windowTime)``)."""
        return self.times_or_more(1, gap)

    def optional(self) -> Pattern:
        """The current stage may match no event at all (an optional first stage lets the next
        stage start a match, as in Flink)."""
        if self._last_group is not None:
            group = self._last_group
            return self._group_quantified(
                "optional()", group.min_times, group.max_times, optional=True
            )
        if self._last.negation:
            raise PatternError(
                f"negation {self._last.name!r} cannot be optional: it forbids events and takes "
                "none, so there is nothing to make optional; remove .optional()"
            )
        return self._with_last(optional=True)

    def greedy(self) -> Pattern:
        """A looping stage takes as many events as it can before the next stage starts."""
        self._check_stage_last("greedy()")
        if not self._last.looping:
            raise PatternError(f"greedy() needs a looping stage; {self._last.name!r} is not")
        return self._with_last(greedy=True)

    def until(self, condition: Column) -> Pattern:
        """Ends a loop (``one_or_more``, ``times_or_more``) at the first event meeting
        ``condition``: the loop neither takes nor skips it, and the next stage may take it, as
        Flink's ``until``."""
        self._check_condition("until", condition)
        group = self._last_group
        if group is not None:
            return self._group_until(group, condition)
        self._check_looping("until()")
        return self._with_last(until=condition)

    def _group_until(self, group: Group, condition: Column) -> Pattern:
        names = self._group_names(group)
        if group.max_times is not None:
            raise PatternError(
                f"until() needs a looping group (one_or_more or times_or_more); the group "
                f"({names}) is not"
            )
        inside = self.stages[group.start : group.end]
        nested = [g for g in self.groups if g is not group and group.start <= g.start < group.end]
        if any(s.looping or s.until is not None or s.until_aggregates for s in inside) or any(
            g.repeated for g in nested
        ):
            raise PatternError(
                f"until() on the group ({names}): its stages must take one event each and have "
                "no until of their own (a loop inside a group with until is not supported)"
            )
        changed = replace(group, until=condition)
        return replace(self, groups=tuple(changed if g is group else g for g in self.groups))

    def until_aggregate(
        self, agg: str, field: str | None, stage: str, op: str, value: float
    ) -> Pattern:
        """Ends a loop at the first event for which ``agg`` (count, sum, min, max or avg) of
        the numeric ``field`` over the events ``stage`` (this loop or an earlier stage) has
        taken so far compares (``op``) with ``value``: Flink's iterative ``until``, e.g. stop
        once the loop's prices sum to 6: ``.until_aggregate("sum", "price", "items", "==", 6)``.
        The event under test does not count (the condition decides whether it is taken). With
        :meth:`until`, or several of these, the event must meet all of them."""
        cond = self._aggregate("until_aggregate", agg, field, stage, op, value)
        self._check_looping("until_aggregate()")
        return self._with_last(until_aggregates=(*self._last.until_aggregates, cond))

    def _check_looping(self, method: str) -> None:
        self._check_stage_last(method)
        if self._last.negation or self._last.max_times is not None:
            raise PatternError(
                f"{method} needs a looping stage (one_or_more or times_or_more); "
                f"{self._last.name!r} is not"
            )

    def consecutive(self) -> Pattern:
        """A looping stage's events must follow each other directly (strict inside the loop)."""
        if self._last_group is not None:
            return self._group_inner(Contiguity.STRICT)
        if not self._last.looping:
            raise PatternError(f"consecutive() needs a looping stage; {self._last.name!r} is not")
        return self._with_last(inner=Contiguity.STRICT)

    def allow_combinations(self) -> Pattern:
        """A looping stage may skip matching events too (every combination inside the loop)."""
        if self._last_group is not None:
            return self._group_inner(Contiguity.ANY)
        if not self._last.looping:
            raise PatternError(
                f"allow_combinations() needs a looping stage; {self._last.name!r} is not"
            )
        return self._with_last(inner=Contiguity.ANY)

    def within(self, duration: timedelta) -> Pattern:
        """The deadline: a match must complete within ``duration`` of its first event. Every
        partial match is dropped at that deadline, so state cannot leak
        (docs/failure-modes.md#state-without-deadline)."""
        check_duration(
            PatternError,
            f"within({duration!r}): the window",
            duration,
            example="timedelta(minutes=30)",
        )
        if duration <= timedelta(0):
            raise PatternError(f"within({duration!r}): the window must be > 0")
        return replace(self, window=duration)

    def within_consecutive(self, gap: timedelta) -> Pattern:
        """Also ends a partial match when ``gap`` passes after its last event without the
        next one (Flink's ``within`` between the previous and the current event). The whole
        match stays bounded by :meth:`within`, which a pattern still needs."""
        check_duration(
            PatternError,
            f"within_consecutive({gap!r}): the gap",
            gap,
            example="timedelta(seconds=30)",
        )
        if gap <= timedelta(0):
            raise PatternError(f"within_consecutive({gap!r}): the gap must be > 0")
        return replace(self, gap=gap)

    def skip(self, strategy: AfterMatch) -> Pattern:
        """Which partial matches to discard after a match (default: no skip)."""
        if not isinstance(strategy, AfterMatch):
            raise PatternError(
                f"skip({strategy!r}): the strategy must be an AfterMatch such as "
                f"AfterMatch.skip_past_last_event(), got {shown(strategy)}"
            )
        if strategy.stage is not None and strategy.stage not in self.stage_names:
            raise PatternError(
                f"{strategy.kind.value}({strategy.stage!r}) names no stage of this pattern; "
                f"stages: {', '.join(self.stage_names)}"
            )
        return replace(self, after_match=strategy)

    # -- reading ----------------------------------------------------------------------------
    @property
    def stage_names(self) -> tuple[str, ...]:
        """The stages' names, first to last."""
        return tuple(s.name for s in self.stages)

    def check(self, *, complete: bool = True) -> None:
        """Raises :class:`PatternError` if the pattern cannot run (e.g. it has no deadline).
        ``complete = False`` checks a pattern that more stages will follow (a config's pattern
        as it is built, stage by stage): what only the last stage decides is left out."""
        if self.window is None:
            raise PatternError(
                "the pattern has no deadline: add .within(timedelta(...)); without one a "
                "partial match could wait forever and state would leak (see "
                "docs/failure-modes.md#state-without-deadline)"
            )
        bits = len(self.stages) + sum(1 for s in self.stages if s.until is not None)
        bits += sum(1 for g in self.groups if g.until is not None)
        if bits > 62:
            raise PatternError(
                f"a pattern has at most 62 stages and until() conditions, this one {bits}"
            )
        if complete and self._last.greedy:
            raise PatternError(
                f"stage {self._last.name!r}: a greedy loop cannot end a pattern, as in Flink "
                "SQL (Flink CEP's answer for one has changed between versions: the longest run, "
                "or every prefix); follow it with a stage, or drop greedy()"
            )
        for stage in self.stages:
            if not stage.conditions and not stage.alternatives:
                raise PatternError(
                    f"stage {stage.name!r} has no condition; add .where(...) (F.lit(True) "
                    "accepts every event)"
                )
        for stage in self.stages:
            if stage.loop_gap is not None and stage.loop_gap > self.window:
                raise PatternError(
                    f"stage {stage.name!r}: the gap of its loop ({stage.loop_gap}) is longer "
                    f"than the pattern's within ({self.window}), so it can never apply; use a "
                    "shorter gap or a longer within"
                )
        for group in self.groups:
            names = self._group_names(group)
            if self.stages[group.end - 1].negation:
                raise PatternError(
                    f"the group ({names}) ends with negation {self.stages[group.end - 1].name!r}"
                    "; a negation needs a stage after it inside the group"
                )
            if (
                group.end < len(self.stages)
                and self.stages[group.end].negation
                and group.may_be_left_out
            ):
                raise PatternError(
                    f"negation {self.stages[group.end].name!r} follows the group ({names}), "
                    "which may be left out, which is ambiguous; make the group mandatory"
                )
        for before, stage in zip(self.stages, self.stages[1:], strict=False):
            if stage.negation and before.optional:
                raise PatternError(
                    f"negation {stage.name!r} follows optional stage {before.name!r}, "
                    "which is ambiguous; make the earlier stage mandatory"
                )

    # -- internals --------------------------------------------------------------------------
    @property
    def _last(self) -> Stage:
        return self.stages[-1]

    @property
    def _last_group(self) -> Group | None:
        """The group that is the pattern's last element (the outermost one ending at the last
        stage), or None when the last element is a stage."""
        ending = [g for g in self.groups if g.end == len(self.stages)]
        return min(ending, key=lambda g: g.start) if ending else None

    def _group_names(self, group: Group) -> str:
        return " ".join(s.name for s in self.stages[group.start : group.end])

    def _check_stage_last(self, method: str) -> None:
        group = self._last_group
        if group is not None:
            raise PatternError(
                f"{method} after the group ({self._group_names(group)}): a group takes "
                "times(n), times(n, m), one_or_more(), times_or_more(n), optional(), "
                "consecutive(), allow_combinations() and (on a loop) until(); greedy() on a "
                "group is not supported yet, and conditions belong to the sub-pattern's stages"
            )

    def _append_group(self, method: str, sub: Pattern, contiguity: Contiguity) -> Pattern:
        call = f"{method}(<sub-pattern {' '.join(sub.stage_names)}>)"
        if not isinstance(sub, Pattern) or not sub.stages:
            raise PatternError(f"{call}: a group must be a Pattern started with Pattern.begin")
        if sub.window is not None or sub.gap is not None or sub.after_match != NO_SKIP:
            raise PatternError(
                f"{call}: a sub-pattern has no within, within_consecutive or skip of its own; "
                "set them on the whole pattern"
            )
        for stage in sub.stages:
            _checked_name(stage.name, self.stage_names, call)
        offset = len(self.stages)
        first = replace(sub.stages[0], contiguity=contiguity)
        nested = tuple(replace(g, start=g.start + offset, end=g.end + offset) for g in sub.groups)
        group = Group(offset, offset + len(sub.stages))
        return replace(
            self,
            stages=(*self.stages, first, *sub.stages[1:]),
            groups=(*self.groups, group, *nested),
        )

    def _group_quantified(
        self, call: str, min_times: int, max_times: int | None, *, optional: bool
    ) -> Pattern:
        """The last group with ``min_times`` to ``max_times`` rounds (None: a loop)."""
        group = self._last_group
        assert group is not None
        changed = replace(
            group,
            min_times=min_times,
            max_times=max_times,
            optional=group.optional or optional,
        )
        head = self.stages[group.start]
        tail = self.stages[group.end - 1]
        if max_times is None and (tail.optional or tail.negation):
            raise PatternError(
                f"{call} on the group ({self._group_names(group)}): its last stage "
                f"{tail.name!r} is optional or a negation; a looping group must end with a "
                "stage that takes an event"
            )
        if changed.may_be_left_out and head.optional:
            raise PatternError(
                f"{call} on the group ({self._group_names(group)}): its first stage "
                f"{head.name!r} is optional itself; a group that may be left out must start "
                "with a mandatory stage"
            )
        return replace(self, groups=tuple(changed if g is group else g for g in self.groups))

    def _group_inner(self, inner: Contiguity) -> Pattern:
        group = self._last_group
        assert group is not None
        if not group.repeated:
            raise PatternError(
                f"consecutive() and allow_combinations() need a repeated group; the group "
                f"({self._group_names(group)}) has at most one round: call times(n) first"
            )
        changed = replace(group, inner=inner)
        return replace(self, groups=tuple(changed if g is group else g for g in self.groups))

    def _append(self, method: str, name: str, kind: StageKind, contiguity: Contiguity) -> Pattern:
        call = f"{method}({name!r}) after stage {self._last.name!r}"
        stage = Stage(_checked_name(name, self.stage_names, call), kind=kind, contiguity=contiguity)
        return replace(self, stages=(*self.stages, stage))

    def _check_condition(self, method: str, condition: object) -> None:
        if isinstance(condition, Column):
            return
        hint = f"; for SQL text, pass F.expr({condition!r})" if isinstance(condition, str) else ""
        raise PatternError(
            f"{method}() on stage {self._last.name!r}: a condition must be a boolean Spark "
            f"Column such as F.col('type') == 'scan', got {shown(condition)}{hint}"
        )

    def _with_last(self, **changes: object) -> Pattern:
        self._check_stage_last(f"setting {', '.join(changes)}")
        return replace(self, stages=(*self.stages[:-1], replace(self._last, **changes)))  # type: ignore[arg-type]

    def _quantified(self, *, min_times: int, max_times: int | None) -> Pattern:
        if self._last.negation:
            raise PatternError(f"negation {self._last.name!r} cannot take a quantifier")
        return self._with_last(min_times=min_times, max_times=max_times)


def _checked_name(name: str, taken: tuple[str, ...], call: str) -> str:
    if not isinstance(name, str):
        raise PatternError(f"{call}: a stage name must be a str such as 'first', got {shown(name)}")
    if not name or ":" in name:
        raise PatternError(f"stage name {name!r} must be non-empty and contain no ':'")
    if name in taken:
        raise PatternError(f"stage name {name!r} is used twice; names must be unique")
    return name
