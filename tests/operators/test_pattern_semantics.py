"""Pattern semantics, hand-worked and from Flink's CEP documentation (whose documented outputs
these reproduce), driven through ``PatternTester``: Spark evaluates the conditions, the Java
NFA the operator runs does the matching."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pyspark.sql import Column
from pyspark.sql import functions as F

from streamwarden.errors import PatternError
from streamwarden.operators.patterns import AfterMatch, Pattern
from streamwarden.testing import PatternTester
from streamwarden.testing.pattern_tester import matched_names

pytestmark = pytest.mark.spark

WINDOW = timedelta(hours=1)


def named(prefix: str) -> Column:
    return F.col("name").startswith(prefix)


def stream(*names: str, key: str = "k", step_ms: int = 1000) -> list[dict[str, Any]]:
    return [{"key": key, "ts": (i + 1) * step_ms, "name": n} for i, n in enumerate(names)]


def name_tester(spark: Any, pattern: Pattern, **options: Any) -> PatternTester:
    """A tester that carries each event's ``name``, which :func:`matched_names` reads."""
    return PatternTester(spark, pattern, fields=("name",), **options)


def matches(spark: Any, pattern: Pattern, *names: str) -> list[list[str]]:
    return matched_names(name_tester(spark, pattern).run(stream(*names)))


def a_then_b(contiguity: str) -> Pattern:
    start = Pattern.begin("a").where(named("a"))
    chained = getattr(start, contiguity)("b")
    return chained.where(named("b")).within(WINDOW)


# -- contiguity: Flink docs, "Combining Patterns" ------------------------------------------
@pytest.mark.parametrize(
    ("contiguity", "expected"),
    [
        ("next", []),
        ("followed_by", [["a", "b1"]]),
        ("followed_by_any", [["a", "b1"], ["a", "b2"]]),
    ],
)
def test_contiguity_between_stages(spark: Any, contiguity: str, expected: list[Any]) -> None:
    assert matches(spark, a_then_b(contiguity), "a", "c", "b1", "b2") == expected


# -- contiguity inside loops: Flink docs, consecutive() -------------------------------------
def c_a_plus_b(consecutive: bool) -> Pattern:
    p = Pattern.begin("start").where(named("C")).followed_by("middle").where(named("A"))
    p = p.one_or_more()
    if consecutive:
        p = p.consecutive()
    return p.followed_by("end").where(named("B")).within(WINDOW)


def test_consecutive_loop_breaks_on_a_non_matching_event(spark: Any) -> None:
    got = matches(spark, c_a_plus_b(True), "C", "D", "A1", "A2", "A3", "D", "A4", "B")
    assert sorted(got) == sorted(
        [["C", "A1", "B"], ["C", "A1", "A2", "B"], ["C", "A1", "A2", "A3", "B"]]
    )


def test_relaxed_loop_ignores_non_matching_events(spark: Any) -> None:
    got = matches(spark, c_a_plus_b(False), "C", "D", "A1", "A2", "A3", "D", "A4", "B")
    assert sorted(got) == sorted(
        [
            ["C", "A1", "B"],
            ["C", "A1", "A2", "B"],
            ["C", "A1", "A2", "A3", "B"],
            ["C", "A1", "A2", "A3", "A4", "B"],
        ]
    )


# -- after-match skip strategies: Flink docs table for `b+ c` on b1 b2 b3 c ------------------
def b_plus_c(skip: AfterMatch) -> Pattern:
    return (
        Pattern.begin("b")
        .where(named("b"))
        .one_or_more()
        .next("c")
        .where(named("c"))
        .within(WINDOW)
        .skip(skip)
    )


@pytest.mark.parametrize(
    ("skip", "expected"),
    [
        (AfterMatch.no_skip(), [["b1", "b2", "b3", "c"], ["b2", "b3", "c"], ["b3", "c"]]),
        (AfterMatch.skip_to_next(), [["b1", "b2", "b3", "c"], ["b2", "b3", "c"], ["b3", "c"]]),
        (AfterMatch.skip_past_last_event(), [["b1", "b2", "b3", "c"]]),
        (AfterMatch.skip_to_first("b"), [["b1", "b2", "b3", "c"], ["b2", "b3", "c"], ["b3", "c"]]),
        (AfterMatch.skip_to_last("b"), [["b1", "b2", "b3", "c"], ["b3", "c"]]),
    ],
    ids=lambda v: v.kind.value if isinstance(v, AfterMatch) else "",
)
def test_skip_strategies_on_flinks_example(
    spark: Any, skip: AfterMatch, expected: list[list[str]]
) -> None:
    assert matches(spark, b_plus_c(skip), "b1", "b2", "b3", "c") == expected


def test_skip_to_next_versus_no_skip_on_a_loop_at_the_end(spark: Any) -> None:
    pattern = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    pattern = pattern.one_or_more().within(WINDOW)
    events = ("a", "b1", "b2", "b3")
    assert matches(spark, pattern, *events) == [
        ["a", "b1"],
        ["a", "b1", "b2"],
        ["a", "b1", "b2", "b3"],
    ]
    assert matches(spark, pattern.skip(AfterMatch.skip_to_next()), *events) == [["a", "b1"]]


def abc_greedy(skip: AfterMatch) -> Pattern:
    """Flink docs: `(a | b | c) (b | c) c+.greedy d` on `a b c1 c2 c3 d`."""
    return (
        Pattern.begin("x")
        .where(named("a") | named("b") | named("c"))
        .next("y")
        .where(named("b") | named("c"))
        .next("z")
        .where(named("c"))
        .one_or_more()
        .greedy()
        .consecutive()
        .next("w")
        .where(named("d"))
        .within(WINDOW)
        .skip(skip)
    )


def test_greedy_loop_no_skip(spark: Any) -> None:
    got = matches(spark, abc_greedy(AfterMatch.no_skip()), "a", "b", "c1", "c2", "c3", "d")
    assert got == [
        ["a", "b", "c1", "c2", "c3", "d"],
        ["b", "c1", "c2", "c3", "d"],
        ["c1", "c2", "c3", "d"],
    ]


def test_skip_to_first_of_the_greedy_stage(spark: Any) -> None:
    got = matches(spark, abc_greedy(AfterMatch.skip_to_first("z")), "a", "b", "c1", "c2", "c3", "d")
    assert got == [["a", "b", "c1", "c2", "c3", "d"], ["c1", "c2", "c3", "d"]]


# -- quantifiers, hand-worked ----------------------------------------------------------------
def test_times_exactly_takes_that_many_events(spark: Any) -> None:
    pattern = Pattern.begin("a").where(named("a")).times(3).within(WINDOW)
    got = matches(spark, pattern.skip(AfterMatch.skip_past_last_event()), "a1", "a2", "a3", "a4")
    assert got == [["a1", "a2", "a3"]]


def test_times_range_reports_each_length(spark: Any) -> None:
    pattern = (
        Pattern.begin("s")
        .where(named("s"))
        .followed_by("a")
        .where(named("a"))
        .times(2, 3)
        .within(WINDOW)
    )
    assert matches(spark, pattern, "s", "a1", "x", "a2", "a3", "a4") == [
        ["s", "a1", "a2"],
        ["s", "a1", "a2", "a3"],
    ]


def test_optional_stage_may_be_skipped(spark: Any) -> None:
    pattern = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .optional()
        .followed_by("c")
        .where(named("c"))
        .within(WINDOW)
    )
    assert matches(spark, pattern, "a", "x", "c") == [["a", "c"]]
    assert sorted(matches(spark, pattern, "a", "b", "c")) == [["a", "b", "c"], ["a", "c"]]


def a_then_optional_b(*, loop: bool = False) -> Pattern:
    b = Pattern.begin("a").where(named("a")).followed_by("b").where(named("b"))
    return (b.one_or_more() if loop else b).optional().within(WINDOW)


def test_an_optional_last_stage_reports_the_match_without_it_and_with_it(spark: Any) -> None:
    assert matches(spark, a_then_optional_b(), "a", "b") == [["a"], ["a", "b"]]
    assert matches(spark, a_then_optional_b(loop=True), "a", "b1", "x", "b2") == [
        ["a"],
        ["a", "b1"],
        ["a", "b1", "b2"],
    ]
    skip_past = a_then_optional_b().skip(AfterMatch.skip_past_last_event())
    assert matches(spark, skip_past, "a", "b") == [["a"]]


def test_a_match_that_could_have_grown_is_not_reported_again_as_timed_out(spark: Any) -> None:
    tester = name_tester(spark, a_then_optional_b(), emit_timeouts=True)
    out = tester.run(stream("a", "x"))
    assert matched_names(out) == [["a"]]
    assert matched_names(out, "timeout") == []
    assert tester.state_rows == 0


def test_greedy_takes_events_the_next_stage_would_also_accept(spark: Any) -> None:
    loop = Pattern.begin("s").where(named("s")).followed_by("n").where(named("n")).one_or_more()
    plain = loop.followed_by("e").where(named("n2")).within(WINDOW)
    greedy = loop.greedy().followed_by("e").where(named("n2")).within(WINDOW)
    events = ("s", "n1", "n2")
    assert matches(spark, plain, *events) == [["s", "n1", "n2"]]
    assert matches(spark, greedy, *events) == []  # n2 was taken by the loop; no end event left


# -- negations ---------------------------------------------------------------------------------
def test_not_next_discards_when_the_very_next_event_meets_it(spark: Any) -> None:
    pattern = (
        Pattern.begin("a")
        .where(named("a"))
        .not_next("no")
        .where(named("x"))
        .followed_by("b")
        .where(named("b"))
        .within(WINDOW)
    )
    assert matches(spark, pattern, "a", "x", "b") == []
    assert matches(spark, pattern, "a", "y", "x", "b") == [["a", "b"]]


def test_not_followed_by_discards_on_any_event_before_the_next_stage(spark: Any) -> None:
    pattern = (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("no")
        .where(named("x"))
        .followed_by("b")
        .where(named("b"))
        .within(WINDOW)
    )
    assert matches(spark, pattern, "a", "y", "x", "b") == []
    assert matches(spark, pattern, "a", "y", "b", "x") == [["a", "b"]]


def test_not_followed_by_at_the_end_matches_when_the_window_closes_clean(spark: Any) -> None:
    pattern = (
        Pattern.begin("a")
        .where(named("a"))
        .not_followed_by("no")
        .where(named("x"))
        .within(timedelta(seconds=10))
    )
    tester = name_tester(spark, pattern)
    clean = tester.run(stream("a1", "y"))  # no x within 10 s of a1
    assert matched_names(clean) == [["a1"]]
    tester = name_tester(spark, pattern)
    spoiled = tester.run(stream("a1", "y", "x"))
    assert matched_names(spoiled) == []


def a_loop_then_no_c(*, combinations: bool) -> Pattern:
    loop = Pattern.begin("a").where(named("a")).one_or_more()
    loop = loop.allow_combinations() if combinations else loop
    return loop.not_followed_by("c").where(named("c")).within(timedelta(seconds=10))


def test_a_loop_before_a_final_not_followed_by_reports_each_match_once(spark: Any) -> None:
    got = matches(spark, a_loop_then_no_c(combinations=True), "a1", "a2")
    assert sorted(got) == [["a1"], ["a1", "a2"], ["a2"]]
    assert matches(spark, a_loop_then_no_c(combinations=False), "a", "x") == [["a"]]


def test_a_partial_match_held_at_two_nfa_positions_times_out_once(spark: Any) -> None:
    # after x, {a} waits both in the loop (for more a) and at b (for b): one partial match
    loop = Pattern.begin("a").where(named("a")).one_or_more().followed_by("b").where(named("b"))
    tester = name_tester(spark, loop.within(timedelta(seconds=10)), emit_timeouts=True)
    assert matched_names(tester.run(stream("a", "x")), "timeout") == [["a"]]


def test_a_negation_cannot_be_optional() -> None:
    start = Pattern.begin("a").where(named("a"))
    with pytest.raises(PatternError, match="negation 'no' cannot be optional"):
        start.not_followed_by("no").where(named("x")).optional()


# -- conditions on earlier events --------------------------------------------------------------
def test_where_previous_compares_with_the_earlier_stages_event(spark: Any) -> None:
    pattern = (
        Pattern.begin("first")
        .where(F.col("kind") == "scan")
        .followed_by("second")
        .where(F.col("kind") == "scan")
        .where_previous("host", "!=", "first")
        .within(WINDOW)
        .skip(AfterMatch.skip_past_last_event())
    )
    events = [
        {"key": "actor", "ts": 1000, "kind": "scan", "host": "h1"},
        {"key": "actor", "ts": 2000, "kind": "scan", "host": "h1"},
        {"key": "actor", "ts": 3000, "kind": "scan", "host": "h2"},
    ]
    out = PatternTester(spark, pattern, fields=("host",)).run(events)
    assert [[e.values[0] for e in m.events] for m in out] == [["h1", "h2"]]


def test_the_tester_compares_numbers_as_numbers_as_detect_does(spark: Any) -> None:
    pattern = (
        Pattern.begin("a")
        .where(F.lit(True))
        .followed_by("b")
        .where(F.lit(True))
        .where_previous("size", ">", "a")
        .within(WINDOW)
    )
    events = [{"key": "k", "ts": 1000, "size": 9}, {"key": "k", "ts": 2000, "size": 10}]
    out = PatternTester(spark, pattern, fields=("size",)).run(events)
    assert matched_names(out) == [["9", "10"]]  # as text, "10" > "9" would be false


# -- time: window, timeouts, order, lateness ---------------------------------------------------
def test_events_further_apart_than_the_window_do_not_match(spark: Any) -> None:
    pattern = a_then_b("followed_by").within(timedelta(seconds=10))
    assert matches(spark, pattern, "a", "b") == [["a", "b"]]
    far = [{"key": "k", "ts": 0 + 1, "name": "a"}, {"key": "k", "ts": 10_001, "name": "b"}]
    assert matched_names(name_tester(spark, pattern).run(far)) == []


def test_timed_out_partial_matches_are_reported_once_each(spark: Any) -> None:
    pattern = a_then_b("followed_by").within(timedelta(seconds=10))
    tester = name_tester(spark, pattern, emit_timeouts=True)
    out = tester.run_batch(stream("a1", "x", key="k1") + stream("a2", key="k2"), -1)
    out += tester.run_batch([], 5_000)
    out += tester.run_batch([], 20_000)
    out += tester.run_batch([], 40_000)
    timeouts = sorted((o.key, matched_names([o], "timeout")[0][0]) for o in out)
    assert timeouts == [("k1", "a1"), ("k2", "a2")]
    assert tester.state_rows == 0


def test_events_are_matched_in_event_time_order_across_batches(spark: Any) -> None:
    pattern = a_then_b("next")
    tester = name_tester(spark, pattern)
    out = tester.run_batch([{"key": "k", "ts": 2000, "name": "b"}], 0)
    out += tester.run_batch([{"key": "k", "ts": 1000, "name": "a"}], 500)
    out += tester.run_batch([], 3000)
    assert matched_names(out) == [["a", "b"]]


def test_an_event_behind_the_watermark_is_dead_lettered_too_late(spark: Any) -> None:
    tester = name_tester(spark, a_then_b("followed_by"))
    out = tester.run_batch([{"key": "k", "ts": 1000, "name": "a"}], 5000)
    assert [(o.kind, o.reason) for o in out] == [("dead_letter", "too_late")]
    assert tester.state_rows == 0


def test_events_past_a_keys_buffer_cap_are_dead_lettered_and_the_rest_still_match(
    spark: Any,
) -> None:
    tester = name_tester(spark, a_then_b("followed_by"), max_buffered_per_key=3)
    burst = stream("a", "b", "a", "b", "a") + stream("a", "b", key="other")
    out = tester.run_batch(burst, 0)
    refused = [(o.key, o.event_ts_ms, o.reason) for o in out]
    # the last two of k's five waiting events (content order: event time first) do not fit
    assert refused == [("k", 4000, "key_buffer_full"), ("k", 5000, "key_buffer_full")]
    assert tester.peek_state("k").buffered == 3
    # while three events still wait, another one is refused too
    out = tester.run_batch([{"key": "k", "ts": 6000, "name": "b"}], 500)
    assert [(o.key, o.reason) for o in out] == [("k", "key_buffer_full")]
    # once the watermark has passed them, they no longer count against the cap
    out = tester.run_batch([{"key": "k", "ts": 7000, "name": "b"}], 3000)
    out += tester.run_batch([], 8000)
    assert sorted(matched_names(out)) == [["a", "b"], ["a", "b"], ["a", "b"]]
    assert not [o for o in out if o.kind == "dead_letter"]


def test_state_is_gone_once_the_window_has_passed_even_if_the_key_goes_quiet(spark: Any) -> None:
    tester = name_tester(spark, a_then_b("followed_by").within(timedelta(seconds=30)))
    tester.run_batch(stream("a", "x", "y"), 0)
    tester.run_batch([], 3_000)
    assert tester.peek_state("k") is not None  # the partial match {a} waits for a b
    tester.run_batch([], 31_000)
    assert tester.peek_state("k") is None


def test_partial_matches_per_key_are_capped_and_the_overflow_reported(spark: Any) -> None:
    pattern = a_then_b("followed_by")
    tester = name_tester(spark, pattern, max_partials_per_key=3)
    out = tester.run(stream("a1", "a2", "a3", "a4", "a5"), close=False)
    out += tester.run_batch([], 10_000)
    assert sum(o.dropped for o in out if o.kind == "overflow") == 2
    assert len(tester.peek_state("k").partials) == 3


# -- a pattern that cannot run is refused with the fix -----------------------------------------
def test_a_pattern_without_deadline_is_refused(spark: Any) -> None:
    with pytest.raises(PatternError, match=r"add \.within"):
        PatternTester(spark, Pattern.begin("a").where(named("a")))


def test_comparing_with_an_unknown_stage_is_refused() -> None:
    with pytest.raises(PatternError, match="not an earlier stage"):
        Pattern.begin("a").where(named("a")).followed_by("b").where_previous("x", "==", "zz")


# -- the tester as the README shows it ---------------------------------------------------------
def test_the_readme_pattern_runs_in_a_tester_built_as_the_readme_shows(spark: Any) -> None:
    scan = F.col("url").startswith("/scan/")
    pattern = (
        Pattern.begin("scan")
        .where(scan)
        .followed_by("other_host")
        .where(scan)
        .where_previous("url", "!=", "scan")
        .within(timedelta(minutes=30))
        .skip(AfterMatch.skip_past_last_event())
    )
    tester = PatternTester(spark, pattern)
    events = [
        {"key": "actor-1", "ts": 1000, "url": "/scan/h1"},
        {"key": "actor-1", "ts": 2000, "url": "/home"},
        {"key": "actor-1", "ts": 3000, "url": "/scan/h2"},
    ]
    out = tester.run_batch(events, watermark=0)
    assert tester.peek_state("actor-1") is not None  # waiting for the watermark
    out += tester.run_batch([], watermark=4000)
    # where_previous compares url, so url is carried though no fields were given
    assert [[e.values for e in o.events] for o in out] == [[("/scan/h1",), ("/scan/h2",)]]
    assert tester.state_rows == 0


# -- Flink's own CEP test cases (the full ports are the engine's Flink*ITCaseTest JUnit classes)
def test_a_negation_after_a_loop_discards_the_loop_partial_flink_not_pattern_itcase(
    spark: Any,
) -> None:
    # NotPatternITCase.testNotFollowedByNextAfterOneOrMoreEager: nothing matches
    pattern = (
        Pattern.begin("a")
        .where(named("A"))
        .followed_by("b")
        .where(named("B"))
        .one_or_more()
        .not_followed_by("not_c")
        .where(named("C"))
        .followed_by("d")
        .where(named("D"))
        .within(WINDOW)
    )
    assert matches(spark, pattern, "A1", "B1", "B2", "B3", "C1", "B4", "B5", "B6", "D1") == []


def test_until_ends_a_loop_and_the_next_stage_may_take_its_event(spark: Any) -> None:
    # UntilConditionITCase.testUntilConditionFollowedByOneOrMore
    breaking = F.col("name") == "stop"
    pattern = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(named("a"))
        .one_or_more()
        .until(breaking)
        .followed_by("end")
        .where(breaking)
        .within(WINDOW)
    )
    got = matches(spark, pattern, "c", "a1", "a2", "stop", "a3")
    assert sorted(got) == [["c", "a1", "a2", "stop"], ["c", "a1", "stop"]]


def test_an_optional_first_stage_lets_the_next_stage_start_a_match(spark: Any) -> None:
    # NFAITCase.testStartWithOptional
    pattern = (
        Pattern.begin("start")
        .where(named("c"))
        .optional()
        .followed_by("end")
        .where(named("b"))
        .within(WINDOW)
    )
    assert sorted(matches(spark, pattern, "c", "b")) == [["b"], ["c", "b"]]


def test_a_pattern_may_end_in_not_next(spark: Any) -> None:
    # the match is reported at the next event, if that event is not the forbidden one
    pattern = Pattern.begin("a").where(named("a")).not_next("no_b").where(named("b")).within(WINDOW)
    assert matches(spark, pattern, "a1", "b", "a2", "c") == [["a2"]]


def test_until_needs_a_loop() -> None:
    with pytest.raises(PatternError, match="until\\(\\) needs a looping stage"):
        Pattern.begin("a").where(named("a")).until(named("x"))


def test_until_conditions_take_the_mask_bits_after_the_stages(spark: Any) -> None:
    from streamwarden.operators.patterns.compile import compile_pattern

    pattern = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .one_or_more()
        .until(named("x"))
        .within(WINDOW)
    )
    plan = compile_pattern(pattern).plan
    assert [s.get("until_bit") for s in plan["stages"]] == [None, 2]


def price_stream(*items: tuple[str, float]) -> list[dict[str, Any]]:
    return [
        {"key": "k", "ts": (i + 1) * 1000, "name": n, "price": p} for i, (n, p) in enumerate(items)
    ]


def test_where_aggregate_bounds_the_sum_over_a_loop_including_the_event_under_test(
    spark: Any,
) -> None:
    # IterativeConditionsITCase.testIterativeWithPrevPatternDependency and the loop's own sum
    pattern = (
        Pattern.begin("start")
        .where(named("s"))
        .where_aggregate("sum", "price", "start", "<", 5)
        .one_or_more()
        .followed_by("end")
        .where(named("e"))
        .where_aggregate("count", None, "start", ">=", 2)
        .within(WINDOW)
    )
    tester = PatternTester(spark, pattern, fields=("name", "price"))
    got = matched_names(tester.run(price_stream(("s1", 1.0), ("s2", 2.0), ("s3", 3.0), ("e", 0.0))))
    assert sorted(got) == [["s1", "s2", "e"]]


def test_where_aggregate_refuses_what_it_cannot_compute() -> None:
    start = Pattern.begin("a").where(named("a"))
    with pytest.raises(PatternError, match="aggregate 'median' is not one of"):
        start.where_aggregate("median", "price", "a", "<", 1)
    with pytest.raises(PatternError, match="sum needs a numeric column name"):
        start.where_aggregate("sum", None, "a", "<", 1)
    with pytest.raises(PatternError, match="'zz' is not this or an earlier stage"):
        start.where_aggregate("sum", "price", "zz", "<", 1)
    with pytest.raises(PatternError, match="the bound must be a number"):
        start.where_aggregate("sum", "price", "a", "<", "5")  # type: ignore[arg-type]


def test_until_aggregate_ends_a_loop_once_the_events_it_took_sum_to_a_bound(spark: Any) -> None:
    # UntilConditionITCase.testIterativeUntilConditionOneOrMore: the sum is over the events
    # the loop took before the event under test (b arrives at 2 + 3 + 1)
    pattern = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by("middle")
        .where(~named("c"))
        .one_or_more()
        .until_aggregate("sum", "price", "middle", "==", 6)
        .within(WINDOW)
    )
    events = price_stream(("c", 1.0), ("a1", 2.0), ("a2", 3.0), ("d", 1.0), ("b", 5.0), ("i", 6.0))
    tester = PatternTester(spark, pattern, fields=("name", "price"))
    got = matched_names(tester.run(events))
    assert sorted(got) == [["c", "a1"], ["c", "a1", "a2"], ["c", "a1", "a2", "d"]]
    plan = tester.compiled.plan["stages"][1]
    assert plan["until_aggregate_conditions"] == [
        {"agg": "sum", "field": 1, "ref_stage": 1, "op": "==", "value": 6.0}
    ]
    assert not tester.compiled.prefilter_safe  # any event may end the loop


def test_until_aggregate_needs_a_loop_and_a_computable_aggregate() -> None:
    start = Pattern.begin("a").where(named("a"))
    with pytest.raises(PatternError, match=r"until_aggregate\(\) needs a looping stage"):
        start.until_aggregate("count", None, "a", ">=", 3)
    with pytest.raises(PatternError, match=r"until_aggregate\(.median.*is not one of"):
        start.one_or_more().until_aggregate("median", "price", "a", "<", 1)


def test_a_loop_gap_bounds_the_wait_for_a_loops_first_events_as_flinks_times_or_more(
    spark: Any,
) -> None:
    # TimesOrMoreITCase.testTimesOrMoreNotStrictWithFollowedByAny, time = 3 ms: a2 comes 3 ms
    # after c (too late to be the loop's first event) and a3 4 ms after a1 (too late to be its
    # second); once the loop has two, a3 may come as late as `within` allows
    pattern = (
        Pattern.begin("start")
        .where(named("c"))
        .followed_by_any("middle")
        .where(named("a"))
        .times_or_more(2, gap=timedelta(milliseconds=3))
        .allow_combinations()
        .followed_by("end")
        .where(named("b"))
        .within(WINDOW)
    )
    times = {"c": 1, "a1": 2, "a2": 4, "a3": 6, "b": 7}
    events = [{"key": "k", "ts": ts, "name": n} for n, ts in times.items()]
    got = matched_names(name_tester(spark, pattern).run(events))
    assert sorted(got) == [["c", "a1", "a2", "a3", "b"], ["c", "a1", "a2", "b"]]


def test_a_loop_gap_must_be_a_positive_duration_within_the_window() -> None:
    loop = Pattern.begin("a").where(named("a"))
    with pytest.raises(PatternError, match=r"times_or_more\(2, 3\) on stage 'a': the gap must"):
        loop.times_or_more(2, 3)  # type: ignore[arg-type]
    with pytest.raises(PatternError, match="the gap must be > 0"):
        loop.one_or_more(timedelta(0))
    too_long = loop.one_or_more(timedelta(hours=2)).within(WINDOW)
    with pytest.raises(PatternError, match=r"gap of its loop .* is longer than the pattern's"):
        too_long.check()


def test_within_consecutive_ends_a_partial_match_when_its_next_event_comes_too_late(
    spark: Any,
) -> None:
    pattern = (
        Pattern.begin("a")
        .where(named("a"))
        .followed_by("b")
        .where(named("b"))
        .within(WINDOW)
        .within_consecutive(timedelta(seconds=5))
    )
    assert matches(spark, pattern, "a", "x", "x", "b") == [["a", "b"]]  # b 3 s after a
    assert matches(spark, pattern, "a", "x", "x", "x", "x", "x", "b") == []  # b 6 s after a


def test_throw_on_miss_stops_with_an_error_naming_the_key_and_the_stage(spark: Any) -> None:
    # AfterMatchSkipITCase.testSkipToFirstNonExistentPosition: b never took an event
    pattern = (
        Pattern.begin("a")
        .where(named("a"))
        .next("b")
        .where(named("b"))
        .one_or_more()
        .optional()
        .consecutive()
        .next("c")
        .where(named("c"))
        .within(WINDOW)
        .skip(AfterMatch.skip_to_first("b", throw_on_miss=True))
    )
    with pytest.raises(Exception, match=r"skip_to_first\('b'\) with throw_on_miss") as caught:
        name_tester(spark, pattern).run(stream("a", "c"))
    assert "key 'k'" in str(caught.value)
