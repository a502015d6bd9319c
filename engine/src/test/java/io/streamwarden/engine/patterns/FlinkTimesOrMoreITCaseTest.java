package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.FlinkCases.assertMatches;
import static io.streamwarden.engine.patterns.FlinkCases.ev;
import static io.streamwarden.engine.patterns.FlinkCases.match;
import static io.streamwarden.engine.patterns.FlinkCases.matches;
import static io.streamwarden.engine.patterns.FlinkCases.matchesAt;
import static io.streamwarden.engine.patterns.FlinkCases.name;
import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;

import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import org.junit.jupiter.api.Test;

/**
 * Flink CEP's {@code TimesOrMoreITCase}, run with both of its parameters: {@code time = null}
 * (the first eleven tests, events one second apart) and {@code time = 3 ms} (the eleven
 * {@code _time3ms} tests: {@code timesOrMore(2, 3 ms)}, a window while the loop waits for its
 * first events, with Flink's timestamps, on which the window depends).
 *
 * <p>Ported from apache/flink at commit 09f589b3.
 */
class FlinkTimesOrMoreITCaseTest {
  // Flink's ConsecutiveData
  static final String START = ev("startEvent", "c", 1.0), M1 = ev("middleEvent1", "a", 2.0);
  static final String M2 = ev("middleEvent2", "a", 3.0), M3 = ev("middleEvent3", "a", 4.0);
  static final String END = ev("end", "b", 5.0), F = ev("f", "f", 1.0);

  static PatternBuilder start() {
    return begin("start", name("c"));
  }

  @Test
  void testTimesOrMore() {
    PatternBuilder p = start().followedBy("middle", name("a")).times(2, -1).allowCombinations()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, M1, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M1, M3, END));
  }

  @Test
  void testTimesOrMoreNonStrict() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(2, -1)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, M1, F, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M1, M3, END), match(START, M2, M3, END));
  }

  @Test
  void testTimesOrMoreStrict() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(2).consecutive()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, M1, F, M2, M3, END), match(START, M2, M3, END));
  }

  @Test
  void testTimesOrMoreStrictOptional() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(2, -1).consecutive()
        .optional().followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, M1, F, M2, M3, END), match(START, M2, M3, END),
        match(START, END));
  }

  @Test
  void testTimesOrMoreStrictOptional2() {
    PatternBuilder p = start().next("middle", name("a")).times(2, -1).consecutive().optional()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, M1, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, END));
  }

  @Test
  void testTimesOrMoreNonStrictOptional() {
    PatternBuilder p = start().followedBy("middle", name("a")).times(2, -1).optional()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, END), match(START, END));
  }

  @Test
  void testTimesOrMoreNonStrictOptional2() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(2, -1)
        .allowCombinations().optional().followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, M1, F, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M2, M3, END), match(START, END),
        match(START, M1, M3, END));
  }

  @Test
  void testTimesOrMoreNonStrictOptional3() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(2, -1).optional()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, M1, F, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M2, M3, END), match(START, END));
  }

  @Test
  void testTimesOrMoreNonStrictWithNext() {
    PatternBuilder p = start().next("middle", name("a")).times(2, -1).allowCombinations()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, M1, F, M2, F, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M1, M3, END));
  }

  @Test
  void testTimesOrMoreNotStrictWithFollowedBy() {
    PatternBuilder p = start().followedBy("middle", name("a")).times(2, -1)
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, M1, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END));
  }

  @Test
  void testTimesOrMoreNotStrictWithFollowedByAny() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(2, -1)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matches(p, START, M1, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M2, M3, END), match(START, M1, M3, END));
  }

  // -- time = 3 ms: timesOrMore(2, Duration.ofMillis(3)), Flink's timestamps ------------------

  /** The window Flink's run gives {@code timesOrMore(2, time)}. */
  private static final long TIME = 3;

  /** Flink's timestamps of {@code START, F, M1, F, M2, M3, END}. */
  private static final long[] WITH_F = {1, 2, 3, 4, 5, 6, 7};

  @Test
  void testTimesOrMore_time3ms() {
    PatternBuilder p = start().followedBy("middle", name("a")).timesOrMore(2, TIME)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matchesAt(p, new long[] {1, 2, 3, 4, 6}, START, M1, M2, M3, END),
        match(START, M1, M2, M3, END), match(START, M1, M2, END), match(START, M1, M3, END));
  }

  @Test
  void testTimesOrMoreNonStrict_time3ms() {
    PatternBuilder p = start().followedByAny("middle", name("a")).timesOrMore(2, TIME)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matchesAt(p, WITH_F, START, F, M1, F, M2, M3, END),
        match(START, M1, M2, M3, END), match(START, M1, M2, END));
  }

  @Test
  void testTimesOrMoreStrict_time3ms() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(2).consecutive()
        .followedBy("end1", name("b"));
    assertMatches(matchesAt(p, WITH_F, START, F, M1, F, M2, M3, END),
        match(START, M2, M3, END));
  }

  @Test
  void testTimesOrMoreStrictOptional_time3ms() {
    PatternBuilder p = start().followedByAny("middle", name("a")).timesOrMore(2, TIME)
        .consecutive().optional().followedBy("end1", name("b"));
    assertMatches(matchesAt(p, WITH_F, START, F, M1, F, M2, M3, END),
        match(START, M2, M3, END), match(START, END));
  }

  @Test
  void testTimesOrMoreStrictOptional2_time3ms() {
    PatternBuilder p = start().next("middle", name("a")).timesOrMore(2, TIME).consecutive()
        .optional().followedBy("end1", name("b"));
    assertMatches(matchesAt(p, new long[] {1, 3, 5, 6, 7}, START, M1, M2, M3, END),
        match(START, M1, M2, M3, END), match(START, M1, M2, END), match(START, END));
  }

  @Test
  void testTimesOrMoreNonStrictOptional_time3ms() {
    PatternBuilder p = start().followedBy("middle", name("a")).timesOrMore(2, TIME).optional()
        .followedBy("end1", name("b"));
    assertMatches(matchesAt(p, new long[] {1, 2, 7}, START, F, END), match(START, END));
  }

  @Test
  void testTimesOrMoreNonStrictOptional2_time3ms() {
    PatternBuilder p = start().followedByAny("middle", name("a")).timesOrMore(2, TIME)
        .allowCombinations().optional().followedBy("end1", name("b"));
    assertMatches(matchesAt(p, WITH_F, START, F, M1, F, M2, M3, END),
        match(START, M1, M2, M3, END), match(START, M1, M2, END), match(START, M2, M3, END),
        match(START, END));
  }

  @Test
  void testTimesOrMoreNonStrictOptional3_time3ms() {
    PatternBuilder p = start().followedByAny("middle", name("a")).timesOrMore(2, TIME)
        .optional().followedBy("end1", name("b"));
    assertMatches(matchesAt(p, WITH_F, START, F, M1, F, M2, M3, END),
        match(START, M1, M2, M3, END), match(START, M1, M2, END), match(START, M2, M3, END),
        match(START, END));
  }

  @Test
  void testTimesOrMoreNonStrictWithNext_time3ms() {
    PatternBuilder p = start().next("middle", name("a")).timesOrMore(2, TIME)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matchesAt(p, WITH_F, START, M1, F, M2, F, M3, END),
        match(START, M1, M2, M3, END), match(START, M1, M2, END));
  }

  @Test
  void testTimesOrMoreNotStrictWithFollowedBy_time3ms() {
    PatternBuilder p = start().followedBy("middle", name("a")).timesOrMore(2, TIME)
        .followedBy("end1", name("b"));
    assertMatches(matchesAt(p, new long[] {1, 2, 4, 6, 7}, START, M1, M2, M3, END),
        match(START, M1, M2, M3, END), match(START, M1, M2, END));
  }

  @Test
  void testTimesOrMoreNotStrictWithFollowedByAny_time3ms() {
    PatternBuilder p = start().followedByAny("middle", name("a")).timesOrMore(2, TIME)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matchesAt(p, new long[] {1, 2, 4, 6, 7}, START, M1, M2, M3, END),
        match(START, M1, M2, M3, END), match(START, M1, M2, END));
  }
}
