"""Wrong arguments to the pattern API are refused with the method or option, the stage, the
value given and what to pass instead; never a TypeError or AttributeError from inside."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from streamwarden.errors import PatternError
from streamwarden.operators.patterns import Pattern, PatternOptions
from streamwarden.operators.patterns.skip import AfterMatch

A = Pattern.begin("a")


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (
            lambda: Pattern.begin(1),
            "Pattern.begin(1): a stage name must be a str such as 'first', got 1 (int)",
        ),
        (
            lambda: A.followed_by(None),
            "followed_by(None) after stage 'a': a stage name must be a str",
        ),
        (
            lambda: A.within(30),
            "within(30): the window must be a datetime.timedelta such as "
            "timedelta(minutes=30), got 30 (int)",
        ),
        (
            lambda: A.within("30m"),
            "within('30m'): the window must be a datetime.timedelta such as "
            "timedelta(minutes=30), got '30m' (str); to read a config string such as '30m', "
            "use streamwarden.config.units.parse_duration('30m')",
        ),
        (
            lambda: A.times("2"),
            "times('2', None) on stage 'a': n must be an int such as 2, got '2' (str)",
        ),
        (lambda: A.times(2, 3.5), "times(2, 3.5) on stage 'a': m must be an int"),
        (
            lambda: A.times_or_more(True),
            "times_or_more(True) on stage 'a': n must be an int such as 2, got True (bool)",
        ),
        (
            lambda: A.where("url LIKE '/scan/%'"),
            "where() on stage 'a': a condition must be a boolean Spark Column such as "
            "F.col('type') == 'scan', got \"url LIKE '/scan/%'\" (str); for SQL text, pass "
            "F.expr(\"url LIKE '/scan/%'\")",
        ),
        (lambda: A.or_(True), "or_() on stage 'a': a condition must be a boolean Spark Column"),
        (
            lambda: A.followed_by("b").where_previous(1, "==", "a"),
            "where_previous(1, '==', 'a') on stage 'b': the field must be a column name such "
            "as 'url', got 1 (int)",
        ),
        (
            lambda: A.skip("skip_past_last_event"),
            "skip('skip_past_last_event'): the strategy must be an AfterMatch such as "
            "AfterMatch.skip_past_last_event(), got 'skip_past_last_event' (str)",
        ),
    ],
    ids=[
        "begin-int",
        "followed_by-None",
        "within-int",
        "within-str",
        "times-str",
        "times-float-max",
        "times_or_more-bool",
        "where-str",
        "or_-bool",
        "where_previous-int",
        "skip-str",
    ],
)
def test_a_pattern_method_given_the_wrong_type_names_the_method_the_stage_and_the_fix(
    build: Callable[[], Any], expected: str
) -> None:
    with pytest.raises(PatternError) as caught:
        build()
    assert str(caught.value).startswith(expected)


def test_a_pattern_method_given_the_right_types_builds_the_stage() -> None:
    pattern = A.times(2, 3).within(timedelta(minutes=5)).skip(AfterMatch.skip_to_next())
    assert (pattern.stages[0].min_times, pattern.stages[0].max_times) == (2, 3)
    assert pattern.window == timedelta(minutes=5)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"max_out_of_orderness": 60},
            "max_out_of_orderness must be a datetime.timedelta such as timedelta(minutes=1), "
            "got 60 (int)",
        ),
        (
            {"slow_key_threshold": "1s"},
            "slow_key_threshold must be a datetime.timedelta such as timedelta(seconds=1) or "
            "None, got '1s' (str)",
        ),
        (
            {"max_partials_per_key": "10"},
            "max_partials_per_key must be an int such as 1000, got '10' (str)",
        ),
        ({"max_buffered_per_key": 1.5}, "max_buffered_per_key must be an int"),
        ({"emit_timeouts": 1}, "emit_timeouts must be True or False, got 1 (int)"),
        ({"prefilter": None}, "prefilter must be True or False, got None (NoneType)"),
        (
            {"max_out_of_orderness": timedelta(seconds=-1)},
            "max_out_of_orderness must be >= 0, got datetime.timedelta(days=-1, seconds=86399)",
        ),
        ({"max_partials_per_key": 0}, "max_partials_per_key must be >= 1, got 0"),
    ],
    ids=lambda v: str(v) if isinstance(v, dict) else "",
)
def test_pattern_options_of_the_wrong_type_or_range_are_refused_naming_the_option(
    arguments: dict[str, Any], expected: str
) -> None:
    with pytest.raises(PatternError) as caught:
        PatternOptions(**arguments)
    assert str(caught.value).startswith(expected)
