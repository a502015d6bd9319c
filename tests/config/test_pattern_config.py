"""A pipeline config can declare a pattern; its mistakes fail at load (structure) or before the
query starts (the ``where`` SQL), each with the stage named."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pyspark.sql import functions as F

from streamwarden.config import ValidationConfig, load_config, parse_config
from streamwarden.errors import ConfigError
from streamwarden.operators.base import operator_of
from streamwarden.operators.patterns import AfterMatch, Contiguity
from streamwarden.operators.patterns.from_config import (
    compile_conditions,
    options_from_config,
    pattern_from_config,
)
from streamwarden.operators.patterns.pattern import StageKind
from streamwarden.operators.patterns.records import validated_events
from streamwarden.operators.sessions.settings import SessionsConfig
from streamwarden.schema.model import Schema
from streamwarden.validation.validate import REASON
from tests.config.test_loader import MINIMAL, SCHEMA, write

PATTERN = (
    """
name = "scans"
operator = "patterns"
"""
    + SCHEMA
    + """
[source]
path = "landing"
[patterns]
within = "30m"
skip = "skip_past_last_event"
[[patterns.stages]]
name = "scan"
contiguity = "begin"
where = "url LIKE '/scan/%'"
[[patterns.stages]]
name = "other"
where = "url LIKE '/scan/%'"
previous = [{ field = "url", op = "!=", stage = "scan" }]
[sinks.matches]
path = "out/matches"
[sinks.dead_letters]
path = "out/dead"
[checkpoint]
path = "out/checkpoint"
"""
)

#: The pageview records the dict configs below declare.
PAGEVIEWS = {
    "key": "user_id",
    "time": "ts",
    "fields": "user_id STRING, ts BIGINT, page_number INT, url STRING",
}


def stages(*entries: dict[str, object], **patterns: object) -> dict[str, object]:
    """A patterns config as a dict, with the given stages and [patterns] settings."""
    return {
        "operator": "patterns",
        "schema": PAGEVIEWS,
        "source": {"path": "landing"},
        "patterns": {"within": "30m", **patterns, "stages": list(entries)},
        "sinks": {"matches": {"path": "m"}, "dead_letters": {"path": "d"}},
        "checkpoint": {"path": "c"},
    }


BEGIN = {"name": "a", "contiguity": "begin", "where": "page_number = 1"}
PREVIOUS_A = {"field": "url", "op": "!=", "stage": "a"}


def test_a_pattern_config_loads_with_its_defaults_and_paths_resolved(tmp_path):
    config = load_config(write(tmp_path, PATTERN))
    assert config.operator == "patterns"
    p = config.section
    assert p is not None
    assert (p.key, p.fields, p.within) == (None, None, timedelta(minutes=30))
    assert p.key_of(config.schema) == "user_id"  # the schema's key
    assert p.fields_of(config.schema) == ["user_id", "ts", "page_number", "url"]  # every field
    assert p.max_out_of_orderness == timedelta(minutes=1)
    assert (p.max_partials_per_key, p.emit_timeouts) == (1000, False)
    assert config.sinks["matches"] is not None
    assert config.sinks["matches"].path == tmp_path / "out" / "matches"
    assert "timeouts" not in config.sinks and "sessions" not in config.sinks
    assert operator_of(config).idle_timeout(config) == p.idle_timeout == timedelta(minutes=5)


def test_an_existing_sessions_config_still_means_the_sessions_operator(tmp_path):
    config = load_config(write(tmp_path, MINIMAL))
    assert config.operator == "sessions" and isinstance(config.section, SessionsConfig)


def test_the_declared_pattern_is_built_stage_by_stage():
    config = parse_config(
        stages(
            BEGIN,
            {
                "name": "b",
                "contiguity": "next",
                "where": "true",
                "times": 2,
                "times_max": 4,
                "greedy": True,
                "consecutive": True,
            },
            {"name": "d", "contiguity": "not_followed_by", "where": "true"},
            {"name": "c", "contiguity": "followed_by_any", "where": "true", "optional": True},
            {
                "name": "e",
                "where": "true",
                "one_or_more": True,
                "previous": [{"field": "page_number", "op": ">", "stage": "b"}],
            },
            skip="skip_to_first",
            skip_stage="b",
            max_partials_per_key=10,
            max_out_of_orderness="2m",
            emit_timeouts=True,
        )
        | {
            "sinks": {
                "matches": {"path": "m"},
                "timeouts": {"path": "t"},
                "dead_letters": {"path": "d"},
            }
        }
    )
    assert config.section is not None
    pattern = pattern_from_config(config.section, config.schema)
    _, b, d, c, e = pattern.stages
    assert (b.contiguity, b.min_times, b.max_times, b.greedy, b.inner) == (
        Contiguity.STRICT,
        2,
        4,
        True,
        Contiguity.STRICT,
    )
    assert (c.contiguity, c.optional) == (Contiguity.ANY, True)
    assert d.kind == StageKind.NOT_FOLLOWED_BY
    assert (e.min_times, e.max_times, e.previous[0].stage) == (1, None, "b")
    assert pattern.window == timedelta(minutes=30)
    assert pattern.after_match == AfterMatch.skip_to_first("b")
    options = options_from_config(config.section)
    assert (options.max_partials_per_key, options.emit_timeouts) == (10, True)
    assert options.max_out_of_orderness == timedelta(minutes=2)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (stages({**BEGIN, "contiguity": "next"}), "first stage 'a' must have contiguity = 'begin'"),
        (stages(BEGIN, {**BEGIN, "name": "b"}), "stage 'b': only the first stage may be 'begin'"),
        (stages(BEGIN, within="0s"), "patterns.within must be > 0"),
        (stages(BEGIN, skip="skip_to_last"), "needs skip_stage naming a stage (a)"),
        (stages(BEGIN, skip_stage="a"), "skip_stage only goes with skip_to_first"),
        (stages(BEGIN, skip_throw_on_miss=True), "skip_throw_on_miss only goes with skip_to_first"),
        (stages(BEGIN, max_partials_per_key=0), "patterns.max_partials_per_key"),
        (stages(), "patterns.stages"),
        (stages({**BEGIN, "contiguity": "sometimes"}), "patterns.stages.0.contiguity"),
        (stages({**BEGIN, "wher": "x"}), "patterns.stages.0.wher: unknown setting"),
        (stages({**BEGIN, "times_max": 3}), "stage 'a': times_max needs times"),
        (stages({**BEGIN, "greedy": True}), "stages.0 ('a'): greedy() needs a looping stage"),
        (
            stages(BEGIN, {"name": "b", "where": "true", "one_or_more": True, "greedy": True}),
            "stage 'b': a greedy loop cannot end a pattern",
        ),
        (
            stages(BEGIN, {"name": "b", "where": "true", "until": "true"}),
            "stages.1 ('b'): until() needs a looping stage",
        ),
        (
            stages(BEGIN, {"name": "b", "where": "true", "times": 3, "times_max": 2}),
            "stages.1 ('b'): times(3, 2)",
        ),
        (
            stages(
                BEGIN,
                {
                    "name": "b",
                    "where": "true",
                    "previous": [{"field": "url", "op": "!=", "stage": "zz"}],
                },
            ),
            "stages.1 ('b'): stage 'b' compares with 'zz'",
        ),
        (
            stages(
                BEGIN,
                {"name": "no", "contiguity": "not_followed_by", "where": "true", "optional": True},
                {"name": "c", "where": "true"},
            ),
            "stages.1 ('no'): negation 'no' cannot be optional",
        ),
        (stages(BEGIN, emit_timeouts=True), "emit_timeouts = true and [sinks.timeouts] go"),
        (stages(BEGIN, key="host"), "patterns.key: 'host' is not a declared field"),
        (stages(BEGIN, fields=["url", "ip"]), "patterns.fields: 'ip' is not a declared field"),
        ({**stages(BEGIN), "operator": "sessions"}, "sessions' needs [sinks.sessions]"),
        ({k: v for k, v in stages(BEGIN).items() if k != "patterns"}, "needs a [patterns] section"),
    ],
)
def test_pattern_mistakes_fail_at_load_naming_the_setting(data, expected):
    with pytest.raises(ConfigError) as caught:
        parse_config(data)
    assert expected in str(caught.value)


@pytest.fixture(scope="module")
def events(spark):
    """The columns a condition sees, from an (empty) validated frame."""
    return validated_events(
        spark.createDataFrame([], "raw string"), Schema(**PAGEVIEWS), ValidationConfig()
    )


def conditions(events, *wheres: str):
    entries = [{**BEGIN, "where": wheres[0]}]
    entries += [{"name": f"s{i}", "where": w} for i, w in enumerate(wheres[1:], 1)]
    config = parse_config(stages(*entries))
    assert config.section is not None
    return compile_conditions(config.section, events, config.schema)


@pytest.mark.spark
def test_where_expressions_compile_to_spark_columns_over_the_validated_events(events):
    compiled = conditions(
        events, "url LIKE '/scan/%' AND page_number < 3", "hour(timestamp_millis(ts)) >= 9"
    )
    assert set(compiled) == {"a", "s1"}
    assert events.select(compiled["a"], compiled["s1"], F.lit(1)).columns  # resolves


@pytest.mark.spark
@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("page_number >= ", "cannot be evaluated: [PARSE_SYNTAX_ERROR]"),
        ("no_such_column = 1", "no_such_column"),
        ("page_number + 1", "gives int, not a boolean"),
    ],
)
def test_bad_where_sql_is_a_config_error_naming_the_stage(events, where, expected):
    with pytest.raises(ConfigError) as caught:
        conditions(events, "true", where)
    message = str(caught.value)
    assert "patterns.stages.1 ('s1')" in message and expected in message
    assert "at org.apache" not in message


@pytest.mark.spark
def test_a_where_sees_the_declared_fields_and_not_the_pipelines_control_columns(events):
    assert REASON in events.columns  # there, but not for a condition
    with pytest.raises(ConfigError) as caught:
        conditions(events, "true", f"{REASON} IS NULL")
    message = str(caught.value)
    listed = message.split("(declared fields: ")[1].split(")")[0]
    assert listed == "user_id, ts, page_number, url"


def test_a_loop_may_end_at_an_until_condition_and_the_first_stage_may_be_optional():
    config = parse_config(
        stages(
            {**BEGIN, "optional": True},
            {"name": "b", "where": "true", "one_or_more": True, "until": "page_number > 10"},
            {"name": "no", "contiguity": "not_next", "where": "true"},
        )
    )
    assert config.section is not None
    a, b, no = pattern_from_config(config.section, config.schema).stages
    assert a.optional and b.until is not None and no.kind == StageKind.NOT_NEXT


def test_times_zero_with_a_maximum_makes_a_stage_optional():
    config = parse_config(stages(BEGIN, {"name": "b", "where": "true", "times": 0, "times_max": 2}))
    assert config.section is not None
    b = pattern_from_config(config.section, config.schema).stages[1]
    assert (b.min_times, b.max_times, b.optional) == (1, 2, True)
    with pytest.raises(ConfigError, match=r"stages.1 \('b'\): times\(0, None\)"):
        parse_config(stages(BEGIN, {"name": "b", "where": "true", "times": 0}))


def test_a_loop_may_end_at_an_aggregate_of_its_events():
    until = [{"agg": "count", "stage": "b", "op": ">=", "value": 3}]
    config = parse_config(
        stages(
            BEGIN, {"name": "b", "where": "true", "one_or_more": True, "until_aggregates": until}
        )
    )
    assert config.section is not None
    b = pattern_from_config(config.section, config.schema).stages[1]
    assert [(a.agg, a.field, a.stage, a.value) for a in b.until_aggregates] == [
        ("count", None, "b", 3.0)
    ]
    with pytest.raises(ConfigError, match=r"stages.1 \('b'\): until_aggregate\(\) needs a loop"):
        parse_config(stages(BEGIN, {"name": "b", "where": "true", "until_aggregates": until}))


def test_a_times_or_more_loop_may_bound_the_wait_for_its_first_events():
    loop = {"name": "b", "where": "true", "times_or_more": 2, "loop_gap": "3s"}
    config = parse_config(stages(BEGIN, loop))
    assert config.section is not None
    b = pattern_from_config(config.section, config.schema).stages[1]
    assert (b.min_times, b.max_times, b.loop_gap) == (2, None, timedelta(seconds=3))
    with pytest.raises(ConfigError, match="use one of times, one_or_more and times_or_more"):
        parse_config(stages(BEGIN, {**loop, "one_or_more": True}))
    with pytest.raises(ConfigError, match="loop_gap needs a loop"):
        parse_config(stages(BEGIN, {"name": "b", "where": "true", "loop_gap": "3s"}))


@pytest.mark.spark
def test_an_until_expression_compiles_beside_the_stages_where(events):
    config = parse_config(
        stages(
            BEGIN, {"name": "b", "where": "true", "one_or_more": True, "until": "page_number > 10"}
        )
    )
    assert config.section is not None
    compiled = compile_conditions(config.section, events, config.schema)
    assert set(compiled) == {"a", "b", "b:until"}
    assert pattern_from_config(config.section, config.schema, compiled).stages[1].until is not None


@pytest.mark.spark
def test_bad_until_sql_is_a_config_error_naming_the_stage_and_setting(events):
    config = parse_config(
        stages(BEGIN, {"name": "b", "where": "true", "one_or_more": True, "until": "page_number +"})
    )
    assert config.section is not None
    with pytest.raises(ConfigError) as caught:
        compile_conditions(config.section, events, config.schema)
    assert "patterns.stages.1 ('b'): until = 'page_number +'" in str(caught.value)


def test_a_stage_may_aggregate_the_events_of_an_earlier_stage():
    config = parse_config(
        stages(
            {**BEGIN, "one_or_more": True},
            {
                "name": "b",
                "where": "true",
                "aggregates": [
                    {"agg": "sum", "field": "page_number", "stage": "a", "op": "<", "value": 9}
                ],
            },
        )
    )
    assert config.section is not None
    b = pattern_from_config(config.section, config.schema).stages[1]
    assert [(x.agg, x.field, x.stage, x.op, x.value) for x in b.aggregates] == [
        ("sum", "page_number", "a", "<", 9.0)
    ]


def test_an_aggregate_of_an_unknown_column_fails_at_load_naming_the_stage():
    data = stages(
        BEGIN,
        {
            "name": "b",
            "where": "true",
            "aggregates": [{"agg": "max", "field": "price", "stage": "a", "op": ">", "value": 1}],
        },
    )
    with pytest.raises(ConfigError) as caught:
        parse_config(data)
    assert "patterns.stages.1 ('b').aggregates: 'price' is not a declared field" in str(
        caught.value
    )


def test_within_consecutive_bounds_the_gap_between_a_matchs_events():
    config = parse_config(stages(BEGIN, within_consecutive="5s"))
    assert config.section is not None
    assert pattern_from_config(config.section, config.schema).gap == timedelta(seconds=5)
    with pytest.raises(ConfigError, match=r"patterns\.within_consecutive must be > 0"):
        parse_config(stages(BEGIN, within_consecutive="0s"))


def stage(name: str, **settings: object) -> dict[str, object]:
    return {"name": name, "where": "true", **settings}


def group(name: str, *entries: dict[str, object], **settings: object) -> dict[str, object]:
    return {"name": name, "group": list(entries), **settings}


def test_a_group_entry_builds_a_group_pattern_with_its_quantifiers():
    config = parse_config(
        stages(
            BEGIN,
            group(
                "g",
                stage("b", contiguity="begin"),
                group("h", stage("c", contiguity="begin"), stage("d"), optional=True),
                stage("e", contiguity="next"),
                contiguity="followed_by_any",
                times_or_more=2,
                allow_combinations=True,
                until="page_number = 9",
            ),
            stage("f"),
            skip="skip_to_first",
            skip_stage="c",
        )
    )
    assert config.section is not None
    pattern = pattern_from_config(config.section, config.schema)
    assert pattern.stage_names == ("a", "b", "c", "d", "e", "f")
    g, h = pattern.groups
    assert (g.start, g.end, g.min_times, g.max_times, g.inner) == (1, 5, 2, None, Contiguity.ANY)
    assert g.until is not None and pattern.stages[1].contiguity == Contiguity.ANY
    assert (h.start, h.end, h.optional) == (2, 4, True)
    assert pattern.stages[4].contiguity == Contiguity.STRICT


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (group("g", stage("b"), stage("c")), "stages.1: group 'g': the first stage 'b' must"),
        (group("g", stage("b", contiguity="begin"), stage("c", contiguity="begin")), "'c': only"),
        (group("g"), "stages.1: group 'g': needs at least one stage"),
        (
            group("g", stage("b", contiguity="begin"), where="true"),
            "stages.1: stage 'g': set exactly one of where (a stage) and group (a group)",
        ),
        (stage("g", where=None), "stages.1: stage 'g': set exactly one of where"),
        (
            group("g", stage("b", contiguity="begin"), contiguity="not_next"),
            "stages.1: group 'g': a group cannot be a negation",
        ),
        (
            group("g", stage("b", contiguity="begin"), previous=[PREVIOUS_A]),
            "stages.1: group 'g': a group takes no previous; put conditions on",
        ),
        (
            group("g", stage("b", contiguity="begin"), stage("n", contiguity="not_next")),
            "stages.1: group 'g' ends with negation 'n'",
        ),
        (
            group("g", stage("b", contiguity="begin"), stage("a")),
            "stages.1.group.1 ('a'): the name 'a' is used twice (also at patterns.stages.0",
        ),
        (group("a", stage("b", contiguity="begin")), "stages.1 ('a'): the name 'a' is used twice"),
        (
            group("g", stage("b", contiguity="begin", times=3, times_max=2)),
            "patterns.stages.1.group.0 ('b'): times(3, 2)",
        ),
        (
            group("g", group("h", stage("b", contiguity="begin"), contiguity="begin", greedy=True)),
            "patterns.stages.1.group.0 ('h'): greedy() after the group (b)",
        ),
        (
            group("g", stage("b", contiguity="begin"), until="true"),
            "patterns.stages.1 ('g'): until() needs a looping group",
        ),
        (
            group("g", stage("b", contiguity="begin"), one_or_more=True, loop_gap="1m"),
            "patterns.stages.1 ('g'): times_or_more(1, ",
        ),
        (
            group("g", stage("b", contiguity="begin"), consecutive=True),
            "patterns.stages.1 ('g'): consecutive() and allow_combinations() need a repeated",
        ),
        (
            group("g", stage("b", contiguity="begin", optional=True), optional=True),
            "patterns.stages.1 ('g'): optional() on the group (b): its first stage 'b'",
        ),
        (
            group(
                "g",
                stage("b", contiguity="begin"),
                stage(
                    "c",
                    aggregates=[{"agg": "sum", "field": "ip", "stage": "c", "op": ">", "value": 1}],
                ),
            ),
            "patterns.stages.1.group.1 ('c').aggregates: 'ip' is not a declared field",
        ),
    ],
)
def test_group_mistakes_fail_at_load_naming_the_path(entry, expected):
    with pytest.raises(ConfigError) as caught:
        parse_config(stages(BEGIN, entry))
    message = str(caught.value)
    assert expected in message and len(message.splitlines()) == 2  # the header and one line


def test_a_negation_after_a_group_that_may_be_left_out_is_refused_at_the_negation():
    data = stages(
        BEGIN,
        group("g", stage("b", contiguity="begin"), times=1, times_max=2),
        stage("n", contiguity="not_next"),
        stage("c"),
    )
    with pytest.raises(ConfigError) as caught:
        parse_config(data)
    assert "patterns.stages.2 ('n'): negation 'n' follows the group (b)" in str(caught.value)


def test_skip_stage_names_a_stage_not_a_group():
    data = stages(BEGIN, group("g", stage("b", contiguity="begin")), skip="skip_to_first")
    with pytest.raises(ConfigError) as caught:
        parse_config({**data, "patterns": {**data["patterns"], "skip_stage": "g"}})
    assert "needs skip_stage naming a stage (a, b), got 'g'" in str(caught.value)


@pytest.mark.spark
def test_nested_where_and_until_compile_with_their_path(events):
    entry = group(
        "g",
        stage("b", contiguity="begin", where="page_number = 2"),
        one_or_more=True,
        until="page_number = 9",
    )
    config = parse_config(stages(BEGIN, entry))
    assert config.section is not None
    assert set(compile_conditions(config.section, events, config.schema)) == {"a", "b", "g:until"}
    bad = group("g", stage("b", contiguity="begin"), stage("c", where="nope = 1"))
    config = parse_config(stages(BEGIN, bad))
    assert config.section is not None
    with pytest.raises(ConfigError) as caught:
        compile_conditions(config.section, events, config.schema)
    assert "patterns.stages.1.group.1 ('c'): where = 'nope = 1'" in str(caught.value)
