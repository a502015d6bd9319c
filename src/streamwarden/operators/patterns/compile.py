"""Compiles a :class:`Pattern` into what runs: one native Spark column of stage bits, and the
JSON plan of the NFA that the Java engine (``PatternPlan.java``) reads."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import reduce
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from streamwarden.errors import PatternError
from streamwarden.operators.patterns.pattern import (
    AggregateCondition,
    Contiguity,
    Group,
    Pattern,
    Stage,
    StageKind,
)
from streamwarden.settings import defaults
from streamwarden.spark.jvm import call_engine

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = [
    "CompiledPattern",
    "compile_pattern",
    "condition_problem",
    "group_until_bits",
    "stage_condition",
    "until_bits",
]


@dataclass(frozen=True)
class CompiledPattern:
    """``mask`` sets bit *i* when an event meets stage *i*'s condition (and, after those, one
    bit per ``until`` condition); ``fields`` are the event fields the engine carries (for
    comparisons and for the output)."""

    pattern: Pattern
    mask: Column
    fields: tuple[str, ...]
    plan: dict[str, Any]
    #: The name of the first stage whose condition raised an error on the event (null if none):
    #: such an event is a ``poison`` dead letter instead of a failed batch.
    failed_stage: Column | None = None
    #: What that stage's condition threw (the exception's class and message), null if none.
    failure: Column | None = None

    @property
    def plan_json(self) -> str:
        return json.dumps(self.plan)

    @property
    def prefilter_safe(self) -> bool:
        """True if an event meeting no stage condition can change no match, so it may be
        dropped before the stateful step: every contiguity is relaxed (or any), there is no
        ``not_next``, and no loop ends at an ``until_aggregate`` (which any event may meet)."""
        for i, stage in enumerate(self.pattern.stages):
            if stage.kind == StageKind.NOT_NEXT or stage.until_aggregates:
                return False
            if i > 0 and stage.contiguity == Contiguity.STRICT:
                return False
            if stage.looping and stage.inner == Contiguity.STRICT:
                return False
        return all(g.inner != Contiguity.STRICT for g in self.pattern.groups if g.repeated)


def compile_pattern(
    pattern: Pattern,
    fields: Sequence[str] = (),
    numeric_fields: frozenset[str] = frozenset(),
    *,
    max_partials_per_key: int = defaults.MAX_PARTIALS_PER_KEY,
    max_buffered_per_key: int = defaults.MAX_BUFFERED_PER_KEY,
    emit_timeouts: bool = False,
    slow_key_threshold: timedelta | None = None,
    keep_empty_state: bool = False,
) -> CompiledPattern:
    """``fields`` are carried to the output; fields that ``where_previous`` compares are added.
    ``numeric_fields`` are compared as numbers, the others as strings. The options are those of
    :class:`~streamwarden.operators.patterns.PatternOptions`. ``keep_empty_state`` is for tests
    only: the engine then keeps each key's state record even when it holds nothing, lesson L1's
    leak on purpose, so that a test can show the leak is visible."""
    pattern.check()
    assert pattern.window is not None  # check() guarantees it
    if max_partials_per_key < 1:
        raise PatternError(f"max_partials_per_key must be >= 1, got {max_partials_per_key}")
    if max_buffered_per_key < 1:
        raise PatternError(f"max_buffered_per_key must be >= 1, got {max_buffered_per_key}")
    carried = list(dict.fromkeys(fields))
    for stage in pattern.stages:
        aggregates = (*stage.aggregates, *stage.until_aggregates)
        used = [p.field for p in stage.previous] + [a.field for a in aggregates if a.field]
        for field in used:
            if field not in carried:
                carried.append(field)
    names = pattern.stage_names
    template = [_stage_plan(s, names, carried, numeric_fields) for s in pattern.stages]
    for stage_plan, bit in until_bits(pattern).items():
        template[stage_plan]["until_bit"] = bit
    stages, first_copy = _expand(pattern, template)
    skip = pattern.after_match
    plan = {
        "stages": stages,
        "fields": carried,
        "within_ms": _ms(pattern.window),
        "within_gap_ms": 0 if pattern.gap is None else _ms(pattern.gap),
        "skip": {
            "kind": skip.kind.value,
            "stage": -1 if skip.stage is None else first_copy[names.index(skip.stage)],
            "throw_on_miss": skip.throw_on_miss,
        },
        "max_partials_per_key": max_partials_per_key,
        "max_buffered_per_key": max_buffered_per_key,
        "emit_timeouts": emit_timeouts,
        "slow_key_threshold_ms": 0 if slow_key_threshold is None else _ms(slow_key_threshold),
        "keep_empty_state": keep_empty_state,
    }
    # Each condition under Spark's TryEval: null where it raised an error on the event, which
    # then meets no stage and is set aside as poison (rows.py), so it cannot fail the batch.
    # The until conditions take the bits after the stages', in stage order (until_bits), then
    # the groups' (group_until_bits).
    conditions = [(s.name, stage_condition(s)) for s in pattern.stages]
    conditions += [(s.name, s.until) for s in pattern.stages if s.until is not None]
    conditions += [
        (pattern.stages[g.start].name, g.until) for g in pattern.groups if g.until is not None
    ]
    met = [_try_eval(F.coalesce(c, F.lit(False))) for _, c in conditions]
    bits = [F.when(m, F.lit(1 << i)).otherwise(F.lit(0)) for i, m in enumerate(met)]
    mask = reduce(lambda a, b: a.bitwiseOR(b), bits).cast("long")
    threw = [m.isNull() for m in met]
    failed = F.coalesce(
        *[F.when(t, F.lit(name)) for t, (name, _) in zip(threw, conditions, strict=True)]
    )
    # evaluated again, uncaught, only where it threw: to say what it threw
    failure = F.coalesce(
        *[F.when(t, _error_of(c)) for t, (_, c) in zip(threw, conditions, strict=True)]
    )
    return CompiledPattern(pattern, mask, tuple(carried), plan, failed, failure)


def _expand(
    pattern: Pattern, template: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The plan's stages: each stage of ``pattern`` once, but a group's stages once per round,
    as Flink's compiler makes a copy of a group's states for each round; and each stage's
    index to its (first) copy's. Copies share their stage's condition bit (``bit``). The first
    stage of a round that may be left out (beyond the minimum, or the first of an optional
    group) is optional and skips (``skip_to``) past the whole group; a looping group's last
    round goes back (``loop_to``) from its last stage to its first. References to stages
    (comparisons, aggregates) are renumbered to the copies; a stage repeated by a group cannot
    be one."""
    repeated = {i for g in pattern.groups if g.repeated for i in range(g.start, g.end)}
    bad = sorted(repeated & _referenced(pattern))
    if bad:
        raise PatternError(
            f"stage {pattern.stages[bad[0]].name!r} is inside a repeated group; "
            "where_previous, where_aggregate, until_aggregate and skip strategies cannot name "
            "it yet (each round has its own copy); name a stage outside the group"
        )
    expanded = _expand_range(pattern, template, 0, len(template), frozenset())
    first_copy: dict[int, int] = {}
    for position, stage in enumerate(expanded):
        first_copy.setdefault(stage["bit"], position)
    for stage in expanded:
        conditions = [
            *stage["field_conditions"],
            *stage["aggregate_conditions"],
            *stage["until_aggregate_conditions"],
        ]
        for condition in conditions:
            condition["ref_stage"] = first_copy[condition["ref_stage"]]
    return expanded, first_copy


def _referenced(pattern: Pattern) -> set[int]:
    """Indexes of the stages that conditions or the skip strategy name."""
    names = pattern.stage_names
    used = {names.index(p.stage) for s in pattern.stages for p in s.previous}
    used |= {
        names.index(a.stage) for s in pattern.stages for a in (*s.aggregates, *s.until_aggregates)
    }
    if pattern.after_match.stage is not None:
        used.add(names.index(pattern.after_match.stage))
    return used


def _expand_range(
    pattern: Pattern,
    template: list[dict[str, Any]],
    lo: int,
    hi: int,
    expanding: frozenset[int],
) -> list[dict[str, Any]]:
    """Stages ``lo`` to ``hi`` expanded, with ``skip_to`` relative to the first of them; the
    groups numbered in ``expanding`` (those being expanded around this range) are left out."""
    out: list[dict[str, Any]] = []
    i = lo
    while i < hi:
        starting = [
            n
            for n, g in enumerate(pattern.groups)
            if g.start == i and g.end <= hi and n not in expanding
        ]
        if not starting:
            stage = json.loads(json.dumps(template[i]))
            stage["bit"] = i
            out.append(stage)
            i += 1
            continue
        # the outermost group starting here (outer groups come first in pattern.groups)
        number = max(starting, key=lambda n: (pattern.groups[n].end, -n))
        group: Group = pattern.groups[number]
        body = _expand_range(pattern, template, group.start, group.end, expanding | {number})
        if group.until is not None:  # every stage of the group, in each round
            bit = group_until_bits(pattern)[number]
            for stage in body:
                stage["until_bit"] = bit
        # a loop: its minimum of rounds, then a looping round that may be left out
        rounds = group.min_times + 1 if group.max_times is None else group.max_times
        end = len(out) + rounds * len(body)  # past the group's last round
        for round_ in range(rounds):
            offset = len(out)
            for k, original in enumerate(body):
                stage = json.loads(json.dumps(original))
                for edge in ("skip_to", "loop_to"):
                    if edge in stage:
                        stage[edge] += offset
                if k == 0:
                    if round_ > 0:
                        stage["contiguity"] = group.inner.value
                    if round_ >= group.min_times or (round_ == 0 and group.optional):
                        stage["optional"] = True
                        stage["skip_to"] = end
                if group.max_times is None and round_ == rounds - 1 and k == len(body) - 1:
                    stage["loop_to"] = offset  # the looping round's end: back to its start
                out.append(stage)
        i = group.end
    return out


def group_until_bits(pattern: Pattern) -> dict[int, int]:
    """Group index -> mask bit of its ``until`` condition: after the stages' until bits."""
    first = len(pattern.stages) + len(until_bits(pattern))
    with_until = [n for n, g in enumerate(pattern.groups) if g.until is not None]
    return {n: first + k for k, n in enumerate(with_until)}


def until_bits(pattern: Pattern) -> dict[int, int]:
    """Stage index -> mask bit of its ``until`` condition: after every stage's own bit, in
    stage order (the engine reads it as ``until_bit``, ``PatternPlan.java``)."""
    with_until = [i for i, s in enumerate(pattern.stages) if s.until is not None]
    return {i: len(pattern.stages) + k for k, i in enumerate(with_until)}


def _try_eval(condition: Column) -> Column:
    """``condition`` under Spark's ``TryEval`` (``ConditionGuard.java``): null where it threw."""
    return _guarded("tryEval", condition, condition)


def _error_of(condition: Column) -> Column:
    """What ``condition`` threw on the record, as ``class: message`` (``ConditionError.java``),
    null where it did not throw."""
    return _guarded("errorOf", condition, F.lit(None).cast("string"))


def _guarded(method: str, condition: Column, without_jvm: Column) -> Column:
    """``ConditionGuard.<method>(condition)``; ``without_jvm`` when no Spark session is active
    (the caller only inspects the plan)."""
    from pyspark.sql import SparkSession
    from pyspark.sql.classic.column import Column as ClassicColumn

    spark = SparkSession.getActiveSession()
    if spark is None:
        return without_jvm
    jcol = call_engine(
        spark,
        "stage condition",
        lambda jvm: getattr(jvm.io.streamwarden.engine.ConditionGuard, method)(condition._jc),
    )
    return ClassicColumn(jcol)


def stage_condition(stage: Stage) -> Column:
    """The stage's conditions ANDed, ORed with its alternatives; the stage must have one."""
    when_all = reduce(lambda a, b: a & b, stage.conditions) if stage.conditions else None
    options = [c for c in (when_all, *stage.alternatives) if c is not None]
    return reduce(lambda a, b: a | b, options)


def _stage_plan(
    stage: Stage, names: tuple[str, ...], carried: list[str], numeric: frozenset[str]
) -> dict[str, Any]:
    return {
        "name": stage.name,
        "kind": stage.kind.value,
        "contiguity": stage.contiguity.value,
        "inner": stage.inner.value,
        "min": 0 if stage.negation else stage.min_times,
        "max": -1 if stage.max_times is None else stage.max_times,
        "greedy": stage.greedy,
        "optional": stage.optional,
        "loop_gap_ms": 0 if stage.loop_gap is None else _ms(stage.loop_gap),
        "field_conditions": [
            {
                "field": carried.index(p.field),
                "op": p.op,
                "ref_stage": names.index(p.stage),
                "numeric": p.field in numeric,
            }
            for p in stage.previous
        ],
        "aggregate_conditions": [_aggregate_plan(a, names, carried) for a in stage.aggregates],
        "until_aggregate_conditions": [
            _aggregate_plan(a, names, carried) for a in stage.until_aggregates
        ],
    }


def _aggregate_plan(
    a: AggregateCondition, names: tuple[str, ...], carried: list[str]
) -> dict[str, Any]:
    return {
        "agg": a.agg,
        "field": -1 if a.field is None else carried.index(a.field),
        "ref_stage": names.index(a.stage),
        "op": a.op,
        "value": a.value,
    }


def _ms(value: timedelta) -> int:
    return int(value.total_seconds() * 1000)


def condition_problem(events: DataFrame, condition: Column, *, boolean: bool = True) -> str | None:
    """What keeps ``condition`` from being a stage condition over ``events``, in one line
    (Spark's analysis error, or, with ``boolean``, the type it gives instead of a boolean);
    None if nothing. Spark only analyses the condition here; nothing runs, and its query-error
    log stays quiet."""
    from pyspark.errors import PySparkException
    from pyspark.sql import types as T

    from streamwarden.spark.jvm import first_line, java_message, query_errors_unlogged

    try:
        with query_errors_unlogged():
            # in a filter first: an aggregate (count(*) > 1), a window function or a generator
            # passes a select of its own (a one-row query, ...), but no per-event condition
            events.where(condition.isNotNull())
            result_type = events.select(condition.alias("c")).schema["c"].dataType
    except PySparkException as exc:  # parse and analysis errors: unknown column, wrong types
        return f"cannot be evaluated: {first_line(java_message(exc))}"
    if boolean and not isinstance(result_type, T.BooleanType):
        return f"gives {result_type.simpleString()}, not a boolean"
    return None
