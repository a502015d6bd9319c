"""Builds a :class:`Pattern` and its :class:`PatternOptions` from a pipeline config's
``[patterns]`` section, turning every problem into a :class:`ConfigError` naming the stage.

Two passes: at load time the structure is checked with stand-in conditions (no Spark needed);
when the pipeline starts, each ``where`` is compiled with ``F.expr`` and checked against the
validated events, so bad SQL fails before the query runs, with the stage named.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING

from pyspark.sql import Column

from streamwarden.errors import ConfigError, PatternError
from streamwarden.operators.patterns.api import PatternOptions
from streamwarden.operators.patterns.pattern import Pattern
from streamwarden.operators.patterns.settings import PatternsConfig, PatternStageConfig, stage_tree
from streamwarden.operators.patterns.skip import AfterMatch, SkipKind
from streamwarden.schema.model import Schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["compile_conditions", "options_from_config", "pattern_from_config", "until_key"]

#: Stands in for every condition when only the structure is checked; never compiled. A Column
#: (so that ``Pattern.where`` takes it) made without a SparkSession, holding no expression.
_STAND_IN: Column = object.__new__(Column)


def pattern_from_config(
    config: PatternsConfig, schema: Schema, conditions: Mapping[str, Column] | None = None
) -> Pattern:
    """The pattern the config declares over ``schema``'s records. ``conditions`` maps stage
    names to compiled ``where`` columns (see :func:`compile_conditions`); without them only
    the structure is built and checked, which is what loading a config does."""
    _check_columns(config, schema)
    pattern = _sequence(config.stages, "patterns.stages", config.within, conditions)
    skip = AfterMatch(SkipKind(config.skip), config.skip_stage, config.skip_throw_on_miss)
    try:
        pattern = pattern.within(config.within).skip(skip)
        if config.within_consecutive is not None:
            pattern = pattern.within_consecutive(config.within_consecutive)
        pattern.check()
    except PatternError as exc:
        raise ConfigError(f"patterns: {exc}") from None
    return pattern


def _sequence(
    stages: list[PatternStageConfig],
    path: str,
    within: timedelta,
    conditions: Mapping[str, Column] | None,
) -> Pattern:
    """The pattern (or a group's sub-pattern) of ``stages``, found at ``path`` in the config.
    The pattern so far is checked after each element, so that a problem (such as a negation
    after a group that may be left out) names the element that brings it in."""
    pattern: Pattern | None = None
    for i, stage in enumerate(stages):
        until = _STAND_IN if conditions is None else conditions.get(until_key(stage.name))
        where = f"{path}.{i} ({stage.name!r})"
        try:
            if stage.group is not None:
                sub = _sequence(stage.group, f"{path}.{i}.group", within, conditions)
                pattern = _with_group(pattern, stage, sub, until)
            else:
                condition = _STAND_IN if conditions is None else conditions[stage.name]
                pattern = _with_stage(pattern, stage, condition, until)
            pattern.within(within).check(complete=False)
        except PatternError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    assert pattern is not None  # the config model refuses an empty list of stages
    return pattern


def _check_columns(config: PatternsConfig, schema: Schema) -> None:
    used = [("patterns.key", config.key_of(schema))]
    used += [("patterns.fields", f) for f in config.fields_of(schema)]
    for path, stage in stage_tree(config.stages):
        used += [(f"{path}.previous", p.field) for p in stage.previous]
        for setting in ("aggregates", "until_aggregates"):
            aggregated = f"{path}.{setting}"
            used += [(aggregated, a.field) for a in getattr(stage, setting) if a.field is not None]
    declared = ", ".join(f.name for f in schema.struct.fields)
    for where, column in used:
        if schema.type_of(column) is None:
            raise ConfigError(
                f"{where}: {column!r} is not a declared field (schema.fields declares "
                f"{declared}; a dotted name reaches into a STRUCT)"
            )


def until_key(stage: str) -> str:
    """The key of a stage's ``until`` condition among the compiled conditions (stage names
    contain no ':')."""
    return f"{stage}:until"


def _appended(
    pattern: Pattern | None, stage: PatternStageConfig, element: str | Pattern
) -> Pattern:
    if pattern is None:
        return Pattern.begin(element)
    return getattr(pattern, stage.contiguity)(element)  # type: ignore[no-any-return]


def _quantified(pattern: Pattern, stage: PatternStageConfig) -> Pattern:
    """The quantifiers a stage and a group share, applied to the pattern's last element."""
    if stage.times is not None:
        pattern = pattern.times(stage.times, stage.times_max)
    if stage.one_or_more:
        pattern = pattern.one_or_more(stage.loop_gap)
    if stage.times_or_more is not None:
        pattern = pattern.times_or_more(stage.times_or_more, stage.loop_gap)
    if stage.optional:
        pattern = pattern.optional()
    if stage.greedy:
        pattern = pattern.greedy()
    if stage.consecutive:
        pattern = pattern.consecutive()
    if stage.allow_combinations:
        pattern = pattern.allow_combinations()
    return pattern


def _with_group(
    pattern: Pattern | None, stage: PatternStageConfig, sub: Pattern, until: Column | None
) -> Pattern:
    pattern = _quantified(_appended(pattern, stage, sub), stage)
    if stage.until is not None:
        assert until is not None  # compiled with the stages' where
        pattern = pattern.until(until)
    return pattern


def _with_stage(
    pattern: Pattern | None, stage: PatternStageConfig, condition: Column, until: Column | None
) -> Pattern:
    pattern = _appended(pattern, stage, stage.name).where(condition)
    for prev in stage.previous:
        pattern = pattern.where_previous(prev.field, prev.op, prev.stage)
    for agg in stage.aggregates:
        pattern = pattern.where_aggregate(agg.agg, agg.field, agg.stage, agg.op, agg.value)
    pattern = _quantified(pattern, stage)
    if stage.until is not None:
        assert until is not None  # compiled with the stage's where
        pattern = pattern.until(until)
    for agg in stage.until_aggregates:
        pattern = pattern.until_aggregate(agg.agg, agg.field, agg.stage, agg.op, agg.value)
    return pattern


def compile_conditions(
    config: PatternsConfig, events: DataFrame, schema: Schema
) -> dict[str, Column]:
    """Each stage's ``where`` and ``until`` (nested stages' and groups' too) as a Spark
    Column, checked against ``events`` (parsed, resolved and boolean); the first failure raises
    a :class:`ConfigError` naming the stage by its config path."""
    from pyspark.sql import functions as F

    from streamwarden.operators.patterns.compile import condition_problem

    compiled: dict[str, Column] = {}
    # Checked against the declared fields only: the control columns validation adds are the
    # pipeline's own and mean nothing in a condition.
    names = [f.name for f in schema.struct.fields]
    visible = events.select(*(F.col(f"`{n}`") for n in names))
    columns = ", ".join(names)
    for path, stage in stage_tree(config.stages):
        expressions = [] if stage.where is None else [("where", stage.name, stage.where)]
        if stage.until is not None:
            expressions.append(("until", until_key(stage.name), stage.until))
        for setting, key, text in expressions:
            where = f"{path}: {setting} = {text!r}"
            condition = F.expr(text)  # parsed when analysed, in condition_problem
            problem = condition_problem(visible, condition)
            if problem is not None:
                raise ConfigError(
                    f"{where} {problem} (declared fields: {columns}); write a boolean over "
                    "those fields, such as status = 'failure'"
                )
            compiled[key] = condition
    return compiled


def options_from_config(config: PatternsConfig) -> PatternOptions:
    return PatternOptions(
        max_out_of_orderness=config.max_out_of_orderness,
        max_partials_per_key=config.max_partials_per_key,
        max_buffered_per_key=config.max_buffered_per_key,
        emit_timeouts=config.emit_timeouts,
        slow_key_threshold=config.slow_key_threshold,
    )
