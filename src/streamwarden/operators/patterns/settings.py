"""The patterns operator's settings, ``[patterns]``: the pattern's stages, its time bounds and
its caps."""

from __future__ import annotations

from collections.abc import Collection
from datetime import timedelta
from typing import Literal

from pydantic import Field, model_validator

from streamwarden.operators.settings import OperatorSettings
from streamwarden.schema.model import Schema
from streamwarden.settings import defaults
from streamwarden.settings.types import Duration, OptionalDuration, Strict
from streamwarden.settings.units import format_duration

__all__ = [
    "AggregateConfig",
    "PatternStageConfig",
    "PatternsConfig",
    "PreviousConfig",
    "stage_tree",
]


class PreviousConfig(Strict):
    """A condition on an earlier stage's event: this event's ``field`` ``op`` that one's."""

    field: str
    op: Literal["==", "!=", "<", "<=", ">", ">="]
    stage: str


class AggregateConfig(Strict):
    """A condition on the events a stage has taken: ``agg`` of ``field`` ``op`` ``value``
    (``field`` is left out for count)."""

    agg: Literal["count", "sum", "min", "max", "avg"]
    field: str | None = None
    stage: str
    op: Literal["==", "!=", "<", "<=", ">", ">="]
    value: float


Contiguity = Literal[
    "begin", "next", "followed_by", "followed_by_any", "not_next", "not_followed_by"
]


class PatternStageConfig(Strict):
    """One stage of a pattern. ``where`` is a Spark SQL boolean expression over the fields
    ``[schema]`` declares (a dotted name reaches into a STRUCT); it is compiled when the
    pipeline starts. ``previous`` compares with an earlier
    stage's event; ``aggregates`` aggregate the events of this or an earlier stage.
    Quantifiers: ``times`` (with ``times_max`` for a range; ``times = 0`` with a
    ``times_max`` makes the stage optional), ``one_or_more``, ``optional``,
    ``times_or_more``, ``greedy``, ``consecutive``; ``loop_gap`` on a ``one_or_more`` or
    ``times_or_more`` loop is Flink's ``timesOrMore(n, windowTime)``; ``until`` (a boolean
    expression like ``where``) ends a
    ``one_or_more`` loop at the first event meeting it, as Flink's ``until``;
    ``until_aggregates`` (like ``aggregates``, over the events taken before that event) end it
    too, ANDed with ``until`` when both are set.

    A group (Flink's group pattern, e.g. ``c (a b){2} d``) has ``group``, its own list of
    stages (the first ``begin``; groups may nest), instead of ``where``, and takes
    ``contiguity``, ``times``/``times_max``, ``one_or_more``, ``times_or_more``, ``optional``,
    ``consecutive``, ``allow_combinations`` and, on a loop, ``until``, all applying to the
    group as a whole; its ``name`` (unique with the stage names) names it in error messages
    and matches hold no group name, only its stages' names."""

    name: str
    contiguity: Contiguity = "followed_by"
    where: str | None = None
    group: list[PatternStageConfig] | None = None
    until: str | None = None
    #: 0 (with ``times_max``) makes the stage optional, as ``times(0, m)`` does.
    times: int | None = Field(default=None, ge=0)
    times_max: int | None = Field(default=None, ge=1)
    one_or_more: bool = False
    times_or_more: int | None = Field(default=None, ge=1)
    loop_gap: OptionalDuration = None
    optional: bool = False
    greedy: bool = False
    consecutive: bool = False
    allow_combinations: bool = False
    previous: list[PreviousConfig] = Field(default_factory=list)
    aggregates: list[AggregateConfig] = Field(default_factory=list)
    until_aggregates: list[AggregateConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_quantifier(self) -> PatternStageConfig:
        if (self.where is None) == (self.group is None):
            raise ValueError(
                f"stage {self.name!r}: set exactly one of where (a stage) and group (a group)"
            )
        if self.group is not None:
            self._check_group(self.group)
        if self.times_max is not None and self.times is None:
            raise ValueError(f"stage {self.name!r}: times_max needs times (the minimum)")
        chosen = [
            setting
            for setting, value in (
                ("times", self.times),
                ("one_or_more", self.one_or_more or None),
                ("times_or_more", self.times_or_more),
            )
            if value is not None
        ]
        if len(chosen) > 1:
            raise ValueError(
                f"stage {self.name!r}: use one of times, one_or_more and times_or_more, "
                f"not {' and '.join(chosen)}"
            )
        if self.loop_gap is not None and not (self.one_or_more or self.times_or_more):
            raise ValueError(
                f"stage {self.name!r}: loop_gap needs a loop (one_or_more or times_or_more)"
            )
        if self.loop_gap is not None and self.loop_gap <= timedelta(0):
            raise ValueError(f"stage {self.name!r}: loop_gap must be > 0, or 'off'")
        return self

    def _check_group(self, group: list[PatternStageConfig]) -> None:
        if self.contiguity in ("not_next", "not_followed_by"):
            raise ValueError(
                f"group {self.name!r}: a group cannot be a negation; use begin, next, "
                "followed_by or followed_by_any"
            )
        conditions = [
            setting
            for setting in ("previous", "aggregates", "until_aggregates")
            if getattr(self, setting)
        ]
        if conditions:
            raise ValueError(
                f"group {self.name!r}: a group takes no {' or '.join(conditions)}; put "
                "conditions on the group's stages"
            )
        _check_begins(group, self.name)
        if group[-1].contiguity in ("not_next", "not_followed_by"):
            raise ValueError(
                f"group {self.name!r} ends with negation {group[-1].name!r}; a negation needs "
                "a stage after it inside the group"
            )


def _check_begins(stages: list[PatternStageConfig], group: str | None = None) -> None:
    """The first of ``stages`` (the pattern's, or ``group``'s) is ``begin``, and only the
    first."""
    owner = "" if group is None else f"group {group!r}: "
    if not stages:
        raise ValueError(f"{owner}needs at least one stage")
    if stages[0].contiguity != "begin":
        raise ValueError(
            f"{owner}the first stage {stages[0].name!r} must have contiguity = 'begin'"
        )
    for stage in stages[1:]:
        if stage.contiguity == "begin":
            raise ValueError(
                f"stage {stage.name!r}: only the first stage may be 'begin'; use next, "
                "followed_by, followed_by_any, not_next or not_followed_by"
            )


def stage_tree(
    stages: list[PatternStageConfig], path: str = "patterns.stages"
) -> list[tuple[str, PatternStageConfig]]:
    """Every stage and group of a pattern, nested ones included, in order, each with its
    config path as error messages show it (``patterns.stages.2.group.0 ('b')``)."""
    found: list[tuple[str, PatternStageConfig]] = []
    for i, stage in enumerate(stages):
        found.append((f"{path}.{i} ({stage.name!r})", stage))
        if stage.group is not None:
            found += stage_tree(stage.group, f"{path}.{i}.group")
    return found


SkipStrategy = Literal[
    "no_skip", "skip_to_next", "skip_past_last_event", "skip_to_first", "skip_to_last"
]


class PatternsConfig(OperatorSettings):
    """A keyed pattern over the validated events (operator ``patterns``). ``key`` is a
    declared field (default: ``schema.key``); ``fields`` are the declared fields carried into
    each matched event of the output, with their types (default: every top-level field). Every
    partial match is dropped at its first event + ``within`` (lesson L3), and,
    with ``within_consecutive``, sooner when that long passes after its last event."""

    outputs = ("matches",)
    optional_outputs = ("timeouts",)
    needs = "its stages"

    key: str | None = None
    fields: list[str] | None = None
    within: Duration
    within_consecutive: OptionalDuration = None
    skip: SkipStrategy = "no_skip"
    skip_stage: str | None = None
    skip_throw_on_miss: bool = False
    max_out_of_orderness: Duration = defaults.MAX_OUT_OF_ORDERNESS
    max_partials_per_key: int = Field(default=defaults.MAX_PARTIALS_PER_KEY, ge=1)
    max_buffered_per_key: int = Field(default=defaults.MAX_BUFFERED_PER_KEY, ge=1)
    emit_timeouts: bool = False
    idle_timeout: OptionalDuration = defaults.IDLE_TIMEOUT
    slow_key_threshold: OptionalDuration = defaults.SLOW_KEY_THRESHOLD
    stages: list[PatternStageConfig] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> PatternsConfig:
        if self.within <= timedelta(0):
            raise ValueError(f"patterns.within must be > 0, got {format_duration(self.within)!r}")
        if self.within_consecutive is not None and self.within_consecutive <= timedelta(0):
            raise ValueError("patterns.within_consecutive must be > 0, or 'off'")
        if self.idle_timeout is not None and self.idle_timeout <= timedelta(0):
            raise ValueError("patterns.idle_timeout must be > 0, or 'off' to turn it off")
        _check_begins(self.stages)
        seen: dict[str, str] = {}
        for path, stage in stage_tree(self.stages):
            if stage.name in seen:
                raise ValueError(
                    f"{path}: the name {stage.name!r} is used twice (also at "
                    f"{seen[stage.name]}); stage and group names must be unique"
                )
            seen[stage.name] = path
        names = [s.name for _, s in stage_tree(self.stages) if s.group is None]
        needs_stage = self.skip in ("skip_to_first", "skip_to_last")
        if needs_stage and self.skip_stage not in names:
            raise ValueError(
                f"patterns.skip = {self.skip!r} needs skip_stage naming a stage "
                f"({', '.join(names)}), got {self.skip_stage!r}"
            )
        if not needs_stage and self.skip_stage is not None:
            raise ValueError("patterns.skip_stage only goes with skip_to_first or skip_to_last")
        if not needs_stage and self.skip_throw_on_miss:
            raise ValueError(
                "patterns.skip_throw_on_miss only goes with skip_to_first or skip_to_last"
            )
        return self

    def key_of(self, schema: Schema) -> str:
        """The field whose value keys the pattern's state."""
        return self.key or schema.key

    def fields_of(self, schema: Schema) -> list[str]:
        """The fields carried into each matched event."""
        return (
            list(self.fields) if self.fields is not None else [f.name for f in schema.struct.fields]
        )

    def check_sinks(self, configured: Collection[str]) -> None:
        if self.emit_timeouts != ("timeouts" in configured):
            raise ValueError(
                "patterns.emit_timeouts = true and [sinks.timeouts] go together: set both "
                "to write timed-out partial matches, or neither"
            )
