"""Wrong arguments to the pattern API are refused with the method or option, the stage, the
value given and what to pass instead; never a TypeError or AttributeError from inside."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Window
from pyspark.sql import functions as F

from streamwarden.errors import PatternError, UsageError
from streamwarden.operators.patterns import Pattern, PatternOptions, detect
from streamwarden.operators.patterns.skip import AfterMatch
from streamwarden.testing import PatternTester

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
            "use streamwarden.settings.units.parse_duration('30m')",
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


def test_a_greedy_loop_at_the_end_of_a_pattern_is_refused_as_flink_sql_does(spark: Any) -> None:
    # Flink CEP's own GreedyITCase expected the longest run once, every prefix now
    # (testEndWithZeroOrMoreGreedy): which prefixes match is no settled rule, so it is refused
    loop = A.where(F.lit(True)).followed_by("b").where(F.lit(True)).one_or_more()
    with pytest.raises(PatternError, match=r"stage 'b': a greedy loop cannot end a pattern"):
        loop.greedy().within(timedelta(minutes=5)).check()
    closed = loop.greedy().followed_by("c").where(F.lit(True)).within(timedelta(minutes=5))
    closed.check()  # a greedy loop followed by a stage is Flink's documented use


def test_a_greedy_last_stage_is_refused_by_its_shape_alone_saying_what_to_do() -> None:
    # no Spark: the rule reads the stages' quantifiers, not their conditions; the engine's
    # plan refuses it with the same words (FlinkGreedyITCaseTest.testEndWithZeroOrMoreGreedy)
    for loop in (A.followed_by("b").one_or_more(), A.followed_by("b").times(2, 5)):
        with pytest.raises(PatternError) as caught:
            loop.greedy().within(timedelta(minutes=5)).check()
        message = str(caught.value)
        assert message.startswith("stage 'b': a greedy loop cannot end a pattern, as in Flink SQL")
        assert message.endswith("follow it with a stage, or drop greedy()")


def test_times_from_zero_makes_the_stage_optional_as_flink_does() -> None:
    stage = A.times(0, 2).stages[0]
    assert (stage.min_times, stage.max_times, stage.optional) == (1, 2, True)
    with pytest.raises(PatternError, match=r"need 1 <= n <= m, or 0 = n < m"):
        A.times(0)
    with pytest.raises(PatternError, match=r"need 1 <= n <= m, or 0 = n < m"):
        A.times(0, 0)


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


# -- detect ------------------------------------------------------------------------------------
def scans() -> Pattern:
    scan = F.col("url").startswith("/scan/")
    return (
        Pattern.begin("scan")
        .where(scan)
        .followed_by("other_host")
        .where(scan)
        .where_previous("url", "!=", "scan")
        .within(timedelta(minutes=30))
    )


def scan_events(spark: Any, folder: Path) -> Any:
    return spark.readStream.schema("user_id string, ts long, url string").json(str(folder))


def test_detect_on_something_other_than_a_dataframe_is_refused_saying_what_it_needs() -> None:
    with pytest.raises(UsageError) as caught:
        detect([{"user_id": "u"}], A, key="user_id", time="ts")  # type: ignore[arg-type]
    assert str(caught.value).startswith(
        "detect(events, ...): events must be a streaming Spark DataFrame such as "
        "spark.readStream.json('landing/', schema=...), got a list"
    )


@pytest.mark.spark
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"pattern": "scan then scan"},
            "detect(events, pattern): pattern must be a Pattern such as "
            "Pattern.begin('first').where(...).within(timedelta(minutes=30)), got a str",
        ),
        ({"key": 1}, "detect(..., key=...): key must be a column name (a str), got 1 (int)"),
        (
            {"fields": "url"},
            "detect(..., fields=...): fields must be a list of column names such as ['url'], "
            "got 'url' (str)",
        ),
        (
            {"options": {"emit_timeouts": True}},
            "detect(..., options=...): options must be a PatternOptions such as "
            "PatternOptions(emit_timeouts=True), got a dict",
        ),
    ],
    ids=["pattern-str", "key-int", "fields-str", "options-dict"],
)
def test_detect_with_arguments_of_the_wrong_type_is_refused_saying_what_to_pass(
    spark: Any, tmp_path: Path, arguments: dict[str, Any], expected: str
) -> None:
    call = {"pattern": scans(), "key": "user_id", "time": "ts", **arguments}
    with pytest.raises(UsageError) as caught:
        detect(scan_events(spark, tmp_path), **call)
    assert str(caught.value).startswith(expected)


@pytest.mark.spark
def test_detect_on_a_batch_dataframe_is_refused_before_any_query_runs(spark: Any) -> None:
    batch = spark.createDataFrame([("u", 0, "/scan/a")], "user_id string, ts long, url string")
    with pytest.raises(UsageError) as caught:
        detect(batch, scans(), key="user_id", time="ts")
    message = str(caught.value)
    assert message.startswith("detect(events): events is a batch DataFrame")
    assert ".trigger(availableNow=True)" in message


@pytest.mark.spark
def test_an_event_time_column_of_text_is_refused_saying_how_to_convert_it(
    spark: Any, tmp_path: Path
) -> None:
    events = spark.readStream.schema("user_id string, ts string, url string").json(str(tmp_path))
    with pytest.raises(PatternError) as caught:
        detect(events, scans(), key="user_id", time="ts")
    assert str(caught.value).startswith(
        "column 'ts' (time) is string; detect needs a timestamp or epoch milliseconds"
    )
    assert "F.to_timestamp('ts')" in str(caught.value)


@pytest.mark.spark
@pytest.mark.parametrize("kind", ["timestamp", "long"])
def test_an_event_time_column_of_timestamps_or_epoch_millis_is_accepted(
    spark: Any, tmp_path: Path, kind: str
) -> None:
    events = spark.readStream.schema(f"user_id string, ts {kind}, url string").json(str(tmp_path))
    assert detect(events, scans(), key="user_id", time="ts").combined.isStreaming


@pytest.mark.spark
@pytest.mark.parametrize(
    ("second_stage", "expected"),
    [
        (
            lambda p: p.where(F.col("uri").startswith("/scan/")),
            "stage 'other_host': its condition cannot be evaluated: "
            "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or "
            "function parameter with name `uri` cannot be resolved.",
        ),
        (
            lambda p: p.where(F.col("url")),
            "stage 'other_host': its condition gives string, not a boolean (columns: user_id, "
            "ts, url); write a boolean over those columns",
        ),
        (
            lambda p: p.where(F.lit(True)).where_previous("host", "!=", "scan"),
            "stage 'other_host': where_previous('host', '!=', 'scan') compares column 'host', "
            "which is not in the events; columns: user_id, ts, url",
        ),
        (
            lambda p: p.where(F.count("*") > 1),
            "stage 'other_host': its condition cannot be evaluated: [INVALID_WHERE_CONDITION]",
        ),
        (
            lambda p: p.where(F.lag("url").over(Window.partitionBy("user_id").orderBy("ts")) > ""),
            "stage 'other_host': its condition cannot be evaluated: "
            "[WINDOW_FUNCTION_NOT_ALLOWED_IN_CLAUSE]",
        ),
    ],
    ids=["unknown-column", "not-boolean", "where_previous-unknown-field", "aggregate", "window"],
)
def test_a_stage_condition_the_events_cannot_answer_is_a_pattern_error_naming_the_stage(
    spark: Any,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    second_stage: Callable[[Pattern], Pattern],
    expected: str,
) -> None:
    start = Pattern.begin("scan").where(F.col("url").startswith("/scan/"))
    pattern = second_stage(start.followed_by("other_host")).within(timedelta(minutes=30))
    with pytest.raises(PatternError) as caught:
        detect(scan_events(spark, tmp_path), pattern, key="user_id", time="ts")
    message = str(caught.value)
    assert message.startswith(expected)
    assert "\n" not in message  # one line: no query plan, no Java trace
    assert "Exception" not in capfd.readouterr().err  # nor is the trace logged to stderr


# -- PatternTester -----------------------------------------------------------------------------
@pytest.mark.spark
def test_pattern_tester_refuses_naive_datetimes_saying_what_to_pass(spark: Any) -> None:
    tester = PatternTester(spark, scans())
    naive = {"key": "u", "ts": datetime(2026, 1, 1), "url": "/scan/a"}
    with pytest.raises(UsageError, match=r"times must be timezone-aware datetimes, got the naive"):
        tester.run_batch([naive], watermark=0)


@pytest.mark.spark
@pytest.mark.parametrize(
    ("event", "error", "expected"),
    [
        ({"key": "u", "ts": "2026-01-01", "url": "/scan/a"}, UsageError, "got '2026-01-01' (str)"),
        ({"key": "u", "ts": True, "url": "/scan/a"}, UsageError, "got True (bool)"),
        ({"key": "u", "url": "/scan/a"}, UsageError, "each event needs a 'key' and a 'ts'"),
        ({"key": "u", "ts": 0, "uri": "/scan/a"}, PatternError, "the events lack 'url'"),
    ],
    ids=["ts-text", "ts-bool", "no-ts", "no-url"],
)
def test_pattern_tester_refuses_events_it_cannot_read_saying_what_is_wrong(
    spark: Any, event: dict[str, Any], error: type[Exception], expected: str
) -> None:
    tester = PatternTester(spark, scans())
    with pytest.raises(error, match=re.escape(expected)):
        tester.run_batch([event], watermark=0)


@pytest.mark.spark
def test_pattern_tester_refuses_a_pattern_or_fields_of_the_wrong_type(spark: Any) -> None:
    with pytest.raises(UsageError, match="pattern must be a Pattern"):
        PatternTester(spark, None)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="fields must be a list of field names"):
        PatternTester(spark, scans(), fields="url")
