"""Group patterns (a sub-pattern as one element with a quantifier, Flink's ``GroupPattern``),
through ``PatternTester`` and Flink's ``GroupITCase`` examples; and the plan they compile to:
a copy of the group's stages for each round (the engine's JUnit tests port the rest of
``GroupITCase``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pyspark.sql import Column
from pyspark.sql import functions as F

from streamwarden.errors import PatternError
from streamwarden.operators.patterns import AfterMatch, Pattern
from streamwarden.operators.patterns.compile import compile_pattern
from streamwarden.testing import PatternTester
from streamwarden.testing.pattern_tester import matched_names

pytestmark = pytest.mark.spark

WINDOW = timedelta(hours=1)


def named(prefix: str) -> Column:
    return F.col("name").startswith(prefix)


def matches(spark: Any, pattern: Pattern, *names: str) -> list[list[str]]:
    events = [{"key": "k", "ts": (i + 1) * 1000, "name": n} for i, n in enumerate(names)]
    return sorted(matched_names(PatternTester(spark, pattern, fields=("name",)).run(events)))


def ab() -> Pattern:
    """The group ``(a b)`` of Flink's GroupITCase."""
    return Pattern.begin("middle1").where(named("a")).followed_by("middle2").where(named("b"))


def c_group_d(group: Pattern) -> Pattern:
    return group.followed_by("end").where(named("d")).within(WINDOW)


def test_group_times_takes_the_rounds_in_order(spark: Any) -> None:
    """GroupITCase.testGroupFollowedByTimes: ``c (a b){2} d``."""
    pattern = c_group_d(Pattern.begin("start").where(named("c")).followed_by(ab()).times(2))
    got = matches(spark, pattern, "c", "a1", "b1", "a2", "b2", "d")
    assert got == [["c", "a1", "b1", "a2", "b2", "d"]]


def test_optional_group_is_left_out_whole(spark: Any) -> None:
    """GroupITCase.testGroupFollowedByOptional: ``c (a b)? d``."""
    pattern = c_group_d(Pattern.begin("start").where(named("c")).followed_by(ab()).optional())
    got = matches(spark, pattern, "c", "a1", "a2", "b", "d")
    assert got == [["c", "a1", "b", "d"], ["c", "d"]]


def test_group_starting_a_pattern_with_a_range(spark: Any) -> None:
    """GroupITCase.testGroupBegin: ``(a b){1,2} d``."""
    pattern = c_group_d(Pattern.begin(ab()).times(1, 2))
    got = matches(spark, pattern, "a1", "b1", "a2", "b2", "d")
    assert got == [["a1", "b1", "a2", "b2", "d"], ["a1", "b1", "d"], ["a2", "b2", "d"]]


def test_looping_group_goes_back_to_its_first_stage(spark: Any) -> None:
    """GroupITCase.testGroupFollowedByZeroOrMore: ``c (a b)* d``; the plan has a first round
    that may be left out, then a looping round whose last stage goes back to its first."""
    pattern = c_group_d(
        Pattern.begin("start").where(named("c")).followed_by(ab()).one_or_more().optional()
    )
    stages = compile_pattern(pattern).plan["stages"]
    assert [s.get("skip_to") for s in stages] == [None, 5, None, 5, None, None]
    assert [s.get("loop_to") for s in stages] == [None, None, None, None, 3, None]
    got = matches(spark, pattern, "c", "a1", "b1", "a2", "b2", "d")
    assert got == [["c", "a1", "b1", "a2", "b2", "d"], ["c", "a1", "b1", "d"], ["c", "d"]]


def test_until_on_a_looping_group_ends_it_in_every_stage(spark: Any) -> None:
    """GroupITCase.testGroupFollowedByOneOrMoreWithUntilCondition: ``c (a b)+ until d, d``;
    the until bit comes after the stages' bits and is on every copy of the group's stages."""
    group = Pattern.begin("start").where(named("c")).followed_by(ab()).one_or_more()
    pattern = c_group_d(group.until(named("d")))
    stages = compile_pattern(pattern).plan["stages"]
    assert [s.get("until_bit") for s in stages] == [None, 4, 4, 4, 4, None]
    got = matches(spark, pattern, "c", "a1", "b1", "a2", "b2", "d")
    assert got == [["c", "a1", "b1", "a2", "b2", "d"], ["c", "a1", "b1", "d"]]
    with pytest.raises(PatternError, match=r"until\(\) needs a looping group"):
        Pattern.begin("s").where(named("s")).followed_by(ab()).times(2).until(named("d"))
    looping_inside = Pattern.begin("x").where(named("x")).one_or_more()
    with pytest.raises(PatternError, match="a loop inside a group with until is not supported"):
        Pattern.begin("s").where(named("s")).followed_by(looping_inside).one_or_more().until(
            named("d")
        )


def test_nested_groups_compile_to_a_copy_per_round(spark: Any) -> None:
    """``d (a (b c){2})? e``: the inner group's two rounds, the outer group optional (its first
    stage skips past both rounds); the copies share their stage's condition bit."""
    bc = Pattern.begin("b").where(named("b")).followed_by("c").where(named("c"))
    inner = Pattern.begin("a").where(named("a")).followed_by(bc).times(2).consecutive()
    pattern = (
        Pattern.begin("d")
        .where(named("d"))
        .followed_by_any(inner)
        .optional()
        .followed_by("e")
        .where(named("e"))
        .within(WINDOW)
    )
    stages = compile_pattern(pattern).plan["stages"]
    assert [s["name"] for s in stages] == ["d", "a", "b", "c", "b", "c", "e"]
    assert [s["bit"] for s in stages] == [0, 1, 2, 3, 2, 3, 4]
    assert [s["contiguity"] for s in stages] == [
        "strict", "any", "relaxed", "relaxed", "strict", "relaxed", "relaxed",
    ]  # fmt: skip
    assert stages[1]["optional"] and stages[1]["skip_to"] == 6
    assert all("skip_to" not in s for i, s in enumerate(stages) if i != 1)
    got = matches(spark, pattern, "d", "a1", "b1", "c1", "b2", "c2", "e")
    assert got == [["d", "a1", "b1", "c1", "b2", "c2", "e"], ["d", "e"]]


def test_what_a_group_does_not_take_is_refused(spark: Any) -> None:
    group = Pattern.begin("s").where(named("s")).followed_by(ab())
    with pytest.raises(PatternError, match=r"greedy\(\) on a group is not supported yet"):
        group.one_or_more().greedy()
    with pytest.raises(PatternError, match="a looping group must end with a stage"):
        Pattern.begin("s").where(named("s")).followed_by(ab().optional()).one_or_more()
    with pytest.raises(PatternError, match=r"where\(\) after the group \(middle1 middle2\)"):
        group.where(named("x"))
    with pytest.raises(PatternError, match="has at most one round: call times"):
        group.consecutive()
    with pytest.raises(PatternError, match="no within, within_consecutive or skip of its own"):
        Pattern.begin("s").where(named("s")).followed_by(ab().within(WINDOW))
    with pytest.raises(PatternError, match="'middle1' is used twice"):
        Pattern.begin("middle1").where(named("s")).followed_by(ab())
    optional_head = Pattern.begin("x").where(named("x")).optional().next("y").where(named("y"))
    with pytest.raises(PatternError, match="must start with a mandatory stage"):
        Pattern.begin("s").where(named("s")).followed_by(optional_head).optional()
    repeated = group.times(2).followed_by("end").where(named("d")).within(WINDOW)
    with pytest.raises(PatternError, match="'middle1' is inside a repeated group"):
        compile_pattern(repeated.skip(AfterMatch.skip_to_first("middle1")))
