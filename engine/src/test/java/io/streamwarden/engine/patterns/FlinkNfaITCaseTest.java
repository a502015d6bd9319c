package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.FlinkCases.assertMatches;
import static io.streamwarden.engine.patterns.FlinkCases.ev;
import static io.streamwarden.engine.patterns.FlinkCases.match;
import static io.streamwarden.engine.patterns.FlinkCases.matches;
import static io.streamwarden.engine.patterns.FlinkCases.matchesAt;
import static io.streamwarden.engine.patterns.FlinkCases.name;
import static io.streamwarden.engine.patterns.FlinkCases.sub;
import static io.streamwarden.engine.patterns.FlinkCases.subVolumeAbove;
import static io.streamwarden.engine.patterns.NfaTestUtilities.any;
import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;

import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import org.junit.jupiter.api.Test;

/**
 * Flink CEP's {@code NFAITCase} (the version at commit 00ce3f1b of apache/flink): its patterns,
 * events and expected matches. The cases not ported, and why, are listed in the README's
 * Patterns section.
 */
class FlinkNfaITCaseTest {
  private static final String A = ev("a", "a", 1.0), B = ev("b", "b", 2.0);
  private static final String C = ev("c", "c", 3.0), D = ev("d", "d", 4.0);
  private static final String E = ev("e", "e", 5.0);

  @Test
  void testNoConditionNFA() {
    PatternBuilder p = begin("start", any()).followedBy("end", any());
    assertMatches(matches(p, A, B, C, D, E), match(A, B), match(B, C), match(C, D),
        match(D, E));
  }

  @Test
  void testAnyWithNoConditionNFA() {
    PatternBuilder p = begin("start", any()).followedByAny("end", any());
    assertMatches(matches(p, A, B, C, D, E), match(A, B), match(A, C), match(A, D),
        match(A, E), match(B, C), match(B, D), match(B, E), match(C, D), match(C, E),
        match(D, E));
  }

  @Test
  void testSimplePatternNFA() {
    String start = ev("startEvent", "start", 1.0), middle = sub("middleEvent", "foo", 1, 10);
    String end = ev("endEvent", "end", 1.0);
    PatternBuilder p = begin("start", name("start")).followedBy("middle", subVolumeAbove(5))
        .followedBy("end", name("end"));
    assertMatches(matches(p, start, ev("foobar", "foobar", 1), sub("barfoo", "barfoo", 1, 5),
        middle, ev("start2", "start", 1), end), match(start, middle, end));
  }

  @Test
  void testStrictContinuityWithResults() {
    String m1 = ev("middleEvent1", "a", 2.0), end = ev("end", "b", 4.0);
    PatternBuilder p = begin("middle", name("a")).next("end", name("b"));
    assertMatches(matches(p, m1, end), match(m1, end));
  }

  @Test
  void testStrictContinuityNoResults() {
    String m1 = ev("middleEvent1", "a", 2.0), m2 = ev("middleEvent2", "c", 3.0);
    String end = ev("end", "b", 4.0);
    PatternBuilder p = begin("middle", name("a")).next("end", name("b"));
    assertMatches(matches(p, m1, m2, end));
  }

  @Test
  void testSimplePatternWithTimeWindowNFA() {
    String start = ev("startEvent", "start", 1.0), middle = ev("middleEvent", "middle", 1.0);
    String end = ev("endEvent", "end", 1.0);
    PatternBuilder p = begin("start", name("start")).followedBy("middle", name("middle"))
        .followedBy("end", name("end")).within(10);
    assertMatches(matchesAt(p, new long[] {1, 2, 3, 4, 11, 13}, ev("s1", "start", 1), start,
        middle, ev("foobar", "foobar", 1), end, ev("end6", "end", 1)),
        match(start, middle, end));
  }

  @Test
  void testBranchingPattern() {
    String start = ev("startEvent", "start", 1.0);
    String m1 = sub("middleEvent1", "foo1", 1, 10), m2 = sub("middleEvent2", "foo2", 1, 10);
    String m3 = sub("middleEvent3", "foo3", 1, 10);
    String n1 = sub("nextOne1", "next-one", 1, 2), n2 = sub("nextOne2", "next-one", 1, 2);
    String end = ev("endEvent", "end", 1.0);
    PatternBuilder p = begin("start", name("start"))
        .followedByAny("middle-first", subVolumeAbove(5))
        .followedByAny("middle-second", subVolumeAbove(-1).and(name("next-one")))
        .followedByAny("end", name("end"));
    assertMatches(matches(p, start, m1, m2, m3, n1, n2, end), match(start, m1, n1, end),
        match(start, m2, n1, end), match(start, m3, n1, end), match(start, m1, n2, end),
        match(start, m2, n2, end), match(start, m3, n2, end));
  }

  // -- c a* ... (startEvent c, middleEvents a) ------------------------------------------------
  private static final String S = ev("startEvent", "c", 1.0);
  private static final String M1 = ev("middleEvent1", "a", 2.0);
  private static final String M2 = ev("middleEvent2", "a", 3.0);
  private static final String M3 = ev("middleEvent3", "a", 4.0);

  @Test
  void testComplexBranchingAfterZeroOrMore() {
    String end1 = ev("end1", "b", 5.0), end2 = ev("end2", "d", 6.0);
    String end3 = ev("end3", "d", 7.0), end4 = ev("end4", "e", 8.0);
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).oneOrMore()
        .allowCombinations().optional().followedByAny("end1", name("b"))
        .followedByAny("end2", name("d")).followedByAny("end3", name("e"));
    assertMatches(matches(p, S, M1, M2, M3, end1, end2, end3, end4),
        match(S, M1, M2, M3, end1, end2, end4), match(S, M1, M2, end1, end2, end4),
        match(S, M1, M3, end1, end2, end4), match(S, M2, M3, end1, end2, end4),
        match(S, M1, end1, end2, end4), match(S, M2, end1, end2, end4),
        match(S, M3, end1, end2, end4), match(S, end1, end2, end4),
        match(S, M1, M2, M3, end1, end3, end4), match(S, M1, M2, end1, end3, end4),
        match(S, M1, M3, end1, end3, end4), match(S, M2, M3, end1, end3, end4),
        match(S, M1, end1, end3, end4), match(S, M2, end1, end3, end4),
        match(S, M3, end1, end3, end4), match(S, end1, end3, end4));
  }

  @Test
  void testZeroOrMore() {
    String end1 = ev("end1", "b", 5.0);
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).oneOrMore()
        .allowCombinations().optional().followedBy("end1", name("b"));
    assertMatches(matches(p, S, M1, M2, end1), match(S, M1, M2, end1), match(S, M1, end1),
        match(S, M2, end1), match(S, end1));
  }

  @Test
  void testEagerZeroOrMore() {
    String end1 = ev("end1", "b", 5.0);
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).oneOrMore()
        .optional().followedBy("end1", name("b"));
    assertMatches(matches(p, S, M1, M2, ev("d", "d", 6.0), M3, end1),
        match(S, M1, M2, M3, end1), match(S, M1, M2, end1), match(S, M1, end1), match(S, end1));
  }

  @Test
  void testZeroOrMoreAfterZeroOrMore() {
    String d2 = ev("middleEvent2", "d", 3.0), d3 = ev("middleEvent3", "d", 4.0);
    String end = ev("end", "e", 4.0);
    PatternBuilder p = begin("start", name("c")).followedByAny("middle-first", name("a"))
        .oneOrMore().allowCombinations().optional()
        .followedBy("middle-second", name("d")).oneOrMore().allowCombinations().optional()
        .followedBy("end", name("e"));
    assertMatches(matches(p, S, M1, d2, d3, end), match(S, M1, d2, d3, end),
        match(S, M1, d2, end), match(S, d2, d3, end), match(S, d2, end), match(S, M1, end),
        match(S, end));
  }

  @Test
  void testZeroOrMoreAfterBranching() {
    String merging = ev("merging", "f", 3.0), k1 = ev("kleene1", "d", 4.0);
    String k2 = ev("kleene2", "d", 4.0), end = ev("end", "e", 4.0);
    PatternBuilder p = begin("start", name("c")).followedByAny("branching", name("a"))
        .followedByAny("merging", name("f")).followedByAny("kleene", name("d")).oneOrMore()
        .allowCombinations().optional().followedBy("end", name("e"));
    assertMatches(matches(p, S, M1, M2, merging, k1, k2, end), match(S, M1, merging, end),
        match(S, M1, merging, k1, end), match(S, M1, merging, k2, end),
        match(S, M1, merging, k1, k2, end), match(S, M2, merging, end),
        match(S, M2, merging, k1, end), match(S, M2, merging, k2, end),
        match(S, M2, merging, k1, k2, end));
  }

  @Test
  void testStrictContinuityNoResultsAfterZeroOrMore() {
    String start = ev("start", "d", 2.0), m1 = ev("middleEvent1", "a", 2.0);
    String m2 = ev("middleEvent2", "a", 2.0), m3 = ev("middleEvent3", "c", 3.0);
    String end = ev("end", "b", 4.0);
    PatternBuilder p = begin("start", name("d")).followedBy("middle", name("a")).oneOrMore()
        .optional().next("end", name("b"));
    assertMatches(matches(p, start, m1, m2, m3, end));
  }

  @Test
  void testStrictContinuityResultsAfterZeroOrMore() {
    String start = ev("start", "d", 2.0), m1 = ev("middleEvent1", "a", 2.0);
    String m2 = ev("middleEvent2", "a", 2.0), end = ev("end", "b", 4.0);
    PatternBuilder p = begin("start", name("d")).followedByAny("middle", name("a")).oneOrMore()
        .optional().allowCombinations().next("end", name("b"));
    assertMatches(matches(p, start, m1, m2, end), match(start, m1, m2, end),
        match(start, m2, end));
  }

  @Test
  void testAtLeastOne() {
    String end1 = ev("end1", "b", 5.0);
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).oneOrMore()
        .allowCombinations().followedByAny("end1", name("b"));
    assertMatches(matches(p, S, M1, M2, end1), match(S, M1, M2, end1), match(S, M1, end1),
        match(S, M2, end1));
  }

  @Test
  void testBeginWithAtLeastOne() {
    String s1 = ev("startEvent1", "a", 2.0), s2 = ev("startEvent2", "a", 3.0);
    String s3 = ev("startEvent3", "a", 4.0), end1 = ev("end1", "b", 5.0);
    PatternBuilder p = begin("start", name("a")).oneOrMore().allowCombinations()
        .followedBy("end", name("b"));
    assertMatches(matches(p, s1, s2, s3, end1), match(s1, s2, s3, end1), match(s1, s2, end1),
        match(s1, s3, end1), match(s2, s3, end1), match(s1, end1), match(s2, end1),
        match(s3, end1));
  }

  @Test
  void testNextZeroOrMore() {
    String start = ev("startEvent", "start", 1.0), m1 = ev("middleEvent1", "middle", 2.0);
    String m2 = ev("middleEvent2", "middle", 3.0), m3 = ev("middleEvent3", "middle", 4.0);
    String end = ev("endEvent", "end", 1.0);
    PatternBuilder p = begin("start", name("start")).next("middle", name("middle")).oneOrMore()
        .optional().consecutive().followedBy("end", name("end"));
    assertMatches(matches(p, start, ev("event", "event", 1), m1, m2, m3, end),
        match(start, end));
  }

  @Test
  void testAtLeastOneEager() {
    String end1 = ev("end1", "b", 5.0);
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).oneOrMore()
        .followedByAny("end1", name("b"));
    assertMatches(matches(p, S, M1, M2, M3, end1), match(S, M1, M2, M3, end1),
        match(S, M1, M2, end1), match(S, M2, M3, end1), match(S, M3, end1), match(S, M2, end1),
        match(S, M1, end1));
  }

  @Test
  void testOptional() {
    String middle = ev("middleEvent", "a", 4.0), end1 = ev("end1", "b", 5.0);
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).optional()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, S, middle, end1), match(S, middle, end1), match(S, end1));
  }

  @Test
  void testTimes() {
    String end1 = ev("end1", "b", 5.0);
    PatternBuilder p = begin("start", name("c")).next("middle", name("a")).times(2)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matches(p, S, M1, M2, M3, end1), match(S, M1, M2, end1),
        match(S, M1, M3, end1));
  }

  @Test
  void testStartWithTimes() {
    String end1 = ev("end1", "b", 5.0);
    PatternBuilder p = begin("middle", name("a")).times(2).consecutive()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, M1, M2, M3, end1), match(M1, M2, end1), match(M2, M3, end1));
  }

  // Flink's ConsecutiveData
  private static final String CS = FlinkTimesOrMoreITCaseTest.START;
  private static final String C1 = FlinkTimesOrMoreITCaseTest.M1;
  private static final String C2 = FlinkTimesOrMoreITCaseTest.M2;
  private static final String C3 = FlinkTimesOrMoreITCaseTest.M3;
  private static final String CE = FlinkTimesOrMoreITCaseTest.END;
  private static final String F = FlinkTimesOrMoreITCaseTest.F;

  @Test
  void testTimesNonStrictWithNext() {
    PatternBuilder p = begin("start", name("c")).next("middle", name("a")).times(2)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, C1, F, C2, F, C3, CE), match(CS, C1, C2, CE),
        match(CS, C1, C3, CE));
  }

  @Test
  void testTimesNotStrictWithFollowedByEager() {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).times(2)
        .followedBy("end1", name("b"));
    assertMatches(matches(p, CS, C1, C2, C3, CE), match(CS, C1, C2, CE));
  }

  @Test
  void testTimesNotStrictWithFollowedByNotEager() {
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).times(2)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, C1, C2, C3, CE), match(CS, C1, C2, CE), match(CS, C3, C2, CE),
        match(CS, C3, C1, CE));
  }

  @Test
  void testTimesStrictWithNextAndConsecutive() {
    PatternBuilder p = begin("start", name("c")).next("middle", name("a")).times(2)
        .consecutive().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, C1, F, C2, C3, CE));
  }

  @Test
  void testStartWithOptional() {
    String end1 = ev("end1", "b", 5.0);
    PatternBuilder p = begin("start", name("c")).optional().followedBy("end1", name("b"));
    assertMatches(matches(p, S, end1), match(S, end1), match(end1));
  }

  @Test
  void testEndWithZeroOrMore() {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).oneOrMore()
        .optional();
    assertMatches(matches(p, S, M1, M2, M3), match(S, M1, M2, M3), match(S, M1, M2),
        match(S, M1), match(S));
  }

  @Test
  void testStartAndEndWithZeroOrMore() {
    String d1 = ev("end1", "d", 5.0), d2 = ev("end2", "d", 5.0), d3 = ev("end3", "d", 5.0);
    PatternBuilder p = begin("start", name("a")).oneOrMore().optional();
    assertMatches(matches(p, S, M1, M2, M3, d1, d2, d3), match(M1, M2, M3), match(M1, M2),
        match(M1), match(M2, M3), match(M2), match(M3));
  }

  @Test
  void testEndWithOptional() {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).optional();
    assertMatches(matches(p, S, M1), match(S, M1), match(S));
  }

  @Test
  void testEndWithOneOrMore() {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).oneOrMore();
    assertMatches(matches(p, S, M1, M2, M3), match(S, M1, M2, M3), match(S, M1, M2),
        match(S, M1));
  }

  @Test
  void testTimesNonStrictOptional1() {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).times(3)
        .optional().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, F, CE), match(CS, CE));
  }

  @Test
  void testTimesNonStrictOptional2() {
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).times(2)
        .allowCombinations().optional().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, F, C1, F, C2, C3, CE), match(CS, C1, C2, CE),
        match(CS, C1, C3, CE), match(CS, C2, C3, CE), match(CS, CE));
  }

  @Test
  void testTimesNonStrictOptional3() {
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).times(2)
        .optional().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, F, C1, F, C2, C3, CE), match(CS, C1, C2, CE),
        match(CS, C2, C3, CE), match(CS, CE));
  }

  @Test
  void testTimesStrictOptional() {
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).times(2)
        .consecutive().optional().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, F, C1, F, C2, C3, CE), match(CS, C2, C3, CE), match(CS, CE));
  }

  @Test
  void testOneOrMoreStrictOptional() {
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).oneOrMore()
        .consecutive().optional().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, F, C1, F, C2, C3, CE), match(CS, C2, C3, CE),
        match(CS, C1, CE), match(CS, C2, CE), match(CS, C3, CE), match(CS, CE));
  }

  @Test
  void testTimesStrictOptional1() {
    PatternBuilder p = begin("start", name("c")).next("middle", name("a")).times(2)
        .consecutive().optional().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, C1, C2, C3, CE), match(CS, C1, C2, CE), match(CS, CE));
  }

  @Test
  void testOptionalTimesNonStrictWithNext() {
    PatternBuilder p = begin("start", name("c")).next("middle", name("a")).times(2)
        .allowCombinations().optional().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, C1, F, C2, F, C3, CE), match(CS, C1, C2, CE),
        match(CS, C1, C3, CE), match(CS, CE));
  }

  private static final String C4 = ev("middleEvent4", "a", 5.0);
  private static final String D6 = ev("d", "d", 6.0);

  /** Flink's testOneOrMore / testZeroOrMore: {@code c a+ b} (or {@code a*}) on strategies. */
  private static java.util.List<String> loopStrategies(String strategy, boolean optional) {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).oneOrMore();
    if (optional) {
      p.optional();
    }
    if (strategy.equals("strict")) {
      p.consecutive();
    } else if (strategy.equals("any")) {
      p.allowCombinations();
    }
    p.followedBy("end1", name("b"));
    return matches(p, CS, D6, C1, C2, C3, D6, C4, CE);
  }

  @Test
  void testStrictOneOrMore() {
    assertMatches(loopStrategies("strict", false), match(CS, C1, C2, C3, CE),
        match(CS, C1, C2, CE), match(CS, C1, CE));
  }

  @Test
  void testSkipTillNextOneOrMore() {
    assertMatches(loopStrategies("next", false), match(CS, C1, C2, C3, C4, CE),
        match(CS, C1, C2, C3, CE), match(CS, C1, C2, CE), match(CS, C1, CE));
  }

  @Test
  void testSkipTillAnyOneOrMore() {
    assertMatches(loopStrategies("any", false), match(CS, C1, C2, C3, C4, CE),
        match(CS, C1, C3, C4, CE), match(CS, C1, C2, C3, CE), match(CS, C1, C2, C4, CE),
        match(CS, C1, C2, CE), match(CS, C1, C3, CE), match(CS, C1, C4, CE), match(CS, C1, CE));
  }

  @Test
  void testStrictEagerZeroOrMore() {
    assertMatches(loopStrategies("strict", true), match(CS, C1, C2, C3, CE),
        match(CS, C1, C2, CE), match(CS, C1, CE), match(CS, CE));
  }

  @Test
  void testSkipTillAnyZeroOrMore() {
    assertMatches(loopStrategies("any", true), match(CS, C1, C2, C3, C4, CE),
        match(CS, C1, C2, C4, CE), match(CS, C1, C3, C4, CE), match(CS, C1, C4, CE),
        match(CS, C1, C2, C3, CE), match(CS, C1, C2, CE), match(CS, C1, C3, CE),
        match(CS, C1, CE), match(CS, CE));
  }

  @Test
  void testSkipTillNextZeroOrMore() {
    assertMatches(loopStrategies("next", true), match(CS, C1, C2, C3, C4, CE),
        match(CS, C1, C2, C3, CE), match(CS, C1, C2, CE), match(CS, C1, CE), match(CS, CE));
  }

  @Test
  void testTimesStrict() {
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).times(2)
        .consecutive().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, F, C1, F, C2, C3, CE), match(CS, C2, C3, CE));
  }

  @Test
  void testTimesNonStrict() {
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).times(2)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matches(p, CS, F, C1, F, C2, C3, CE), match(CS, C1, C2, CE),
        match(CS, C1, C3, CE), match(CS, C2, C3, CE));
  }

  private static java.util.List<String> startWithLoopStrict(boolean optional) {
    PatternBuilder p = begin("start", name("a")).oneOrMore();
    if (optional) {
      p.optional();
    }
    p.consecutive();
    return matches(p, CS, C1, CS, C2, C3);
  }

  @Test
  void testStartWithZeroOrMoreStrict() {
    assertMatches(startWithLoopStrict(true), match(C1), match(C2, C3), match(C2), match(C3));
  }

  @Test
  void testStartWithOneOrMoreStrict() {
    assertMatches(startWithLoopStrict(false), match(C1), match(C2, C3), match(C2), match(C3));
  }

  /** Flink's clearing-buffer cases: after the window (8 ms) passed, the key holds nothing. */
  private static void assertClears(PatternBuilder p, long[] times, String... events) {
    NfaTestUtilities.KeyDriver key = new NfaTestUtilities.KeyDriver(p.within(8).plan());
    java.util.List<PEvent> input = new java.util.ArrayList<>();
    for (int i = 0; i < events.length; i++) {
      input.add(p.event(events[i], times[i]));
    }
    key.batch(10, input);
    org.junit.jupiter.api.Assertions.assertTrue(key.state.holdsNothing());
  }

  @Test
  void testTimesClearingBuffer() {
    PatternBuilder p = begin("start", name("c")).next("middle", name("a")).times(2)
        .followedBy("end1", name("b"));
    assertClears(p, new long[] {1, 2, 3, 4, 6}, S, M1, M2, M3, ev("end1", "b", 5.0));
  }

  @Test
  void testOptionalClearingBuffer() {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).optional()
        .followedBy("end1", name("b"));
    assertClears(p, new long[] {1, 5, 6}, S, M3, ev("end1", "b", 5.0));
  }

  @Test
  void testAtLeastOneClearingBuffer() {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).oneOrMore()
        .allowCombinations().followedBy("end1", name("b"));
    assertClears(p, new long[] {1, 3, 4, 6}, S, M1, M2, ev("end1", "b", 5.0));
  }

  @Test
  void testZeroOrMoreClearingBuffer() {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).oneOrMore()
        .allowCombinations().optional().followedBy("end1", name("b"));
    assertClears(p, new long[] {1, 3, 4, 6}, S, M1, M2, ev("end1", "b", 5.0));
  }

  /**
   * Documented difference: Flink stamps a timed-out partial match with the time of the event
   * that revealed the timeout (11 and 13 here); streamwarden stamps it with its deadline, start
   * + within (11 and 12), which does not depend on when the next event happens to arrive. The
   * matches and the timed-out partial matches are Flink's.
   */
  @Test
  void testSimplePatternWithTimeoutHandling_documentedDifferenceTimeoutTime() {
    String s1 = ev("start1", "start", 1.0), s2 = ev("start2", "start", 1.0);
    String middle = ev("middle", "middle", 1.0), end5 = ev("end5", "end", 1.0);
    PatternBuilder p = begin("start", name("start")).followedByAny("middle", name("middle"))
        .followedByAny("end", name("end")).within(10).emitTimeouts();
    java.util.List<String> out = FlinkCases.outputsAt(p, new long[] {1, 2, 3, 4, 11, 13}, s1,
        s2, middle, ev("foobar", "foobar", 1), end5, ev("end6", "end", 1));
    java.util.List<String> timeouts = new java.util.ArrayList<>();
    for (String line : NfaTestUtilities.only("timeout", out)) {
      timeouts.add(line.replaceAll(":[^ ]*", ""));
    }
    java.util.Collections.sort(timeouts);
    org.junit.jupiter.api.Assertions.assertEquals(java.util.List.of("timeout start1 @11",
        "timeout start1 middle @11", "timeout start2 @12", "timeout start2 middle @12"),
        timeouts);
    org.junit.jupiter.api.Assertions.assertEquals(1,
        NfaTestUtilities.only("match", out).size());
  }

  @Test
  void testBeginWithZeroOrMore() {
    String m1 = ev("middleEvent1", "a", 2.0), m2 = ev("middleEvent2", "a", 3.0);
    String m3 = ev("middleEvent3", "a", 3.0), end = ev("end", "b", 4.0);
    PatternBuilder p = begin("middle", name("a")).oneOrMore().optional()
        .followedBy("end", name("b"));
    assertMatches(matches(p, m1, m2, m3, end), match(m1, m2, m3, end), match(m1, m2, end),
        match(m2, m3, end), match(m1, end), match(m2, end), match(m3, end), match(end));
  }

  private static final String BSTART = ev("startEvent", "start", 1.0);
  private static final String BM1 = sub("middleEvent1", "foo1", 1, 10);
  private static final String BM2 = sub("middleEvent2", "foo2", 1, 10);
  private static final String BM3 = sub("middleEvent3", "foo3", 1, 10);
  private static final String BN1 = sub("nextOne1", "next-one", 1, 2);
  private static final String BN2 = sub("nextOne2", "next-one", 1, 2);
  private static final String BEND = ev("endEvent", "end", 1.0);

  @Test
  void testBranchingPatternSkipTillNext() {
    PatternBuilder p = begin("start", name("start"))
        .followedBy("middle-first", subVolumeAbove(5))
        .followedBy("middle-second", subVolumeAbove(-1).and(name("next-one")))
        .followedByAny("end", name("end"));
    assertMatches(matches(p, BSTART, BM1, BM2, BM3, BN1, BN2, BEND),
        match(BSTART, BM1, BN1, BEND));
  }

  @Test
  void testBranchingPatternMixedFollowedBy() {
    PatternBuilder p = begin("start", name("start"))
        .followedByAny("middle-first", subVolumeAbove(5))
        .followedBy("middle-second", subVolumeAbove(-1).and(name("next-one")))
        .followedByAny("end", name("end"));
    assertMatches(matches(p, BSTART, BM1, BM2, BM3, BN1, BN2, BEND),
        match(BSTART, BM1, BN1, BEND), match(BSTART, BM2, BN1, BEND),
        match(BSTART, BM3, BN1, BEND));
  }

  @Test
  void testMultipleTakesVersionCollision() {
    String m1 = ev("middleEvent1", "a", 2.0), m2 = ev("middleEvent2", "a", 3.0);
    String m3 = ev("middleEvent3", "a", 4.0), m4 = ev("middleEvent4", "a", 5.0);
    String m5 = ev("middleEvent5", "a", 6.0), end = ev("end", "b", 5.0);
    PatternBuilder p = begin("start", name("c")).followedBy("middle1", name("a")).oneOrMore()
        .allowCombinations().followedBy("middle2", name("a")).oneOrMore().allowCombinations()
        .followedBy("end", name("b"));
    String all = match(S, m1, m2, m3, m4, m5, end);
    assertMatches(matches(p, S, m1, m2, m3, m4, m5, end), all, all, all, all,
        match(S, m1, m2, m3, m4, end), match(S, m1, m2, m4, m5, end),
        match(S, m1, m2, m3, m4, end), match(S, m1, m2, m3, m5, end),
        match(S, m1, m3, m4, m5, end), match(S, m1, m3, m4, m5, end),
        match(S, m1, m2, m3, m4, end), match(S, m1, m2, m3, m5, end),
        match(S, m1, m2, m4, m5, end),
        match(S, m1, m2, m3, end), match(S, m1, m3, m4, end), match(S, m1, m4, m5, end),
        match(S, m1, m2, m3, end), match(S, m1, m2, m4, end), match(S, m1, m2, m5, end),
        match(S, m1, m2, end));
  }
}
