package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.FlinkCases.assertMatches;
import static io.streamwarden.engine.patterns.FlinkCases.ev;
import static io.streamwarden.engine.patterns.FlinkCases.match;
import static io.streamwarden.engine.patterns.FlinkCases.matches;
import static io.streamwarden.engine.patterns.FlinkCases.matchesAt;
import static io.streamwarden.engine.patterns.FlinkCases.name;
import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;

import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Flink CEP's {@code NotPatternITCase} (flink-libraries/flink-cep/src/test/java/org/apache/
 * flink/cep/nfa/NotPatternITCase.java): its patterns, events and expected matches, all
 * twenty-nine cases.
 *
 * <p>Ported from apache/flink at commit 1a0227f8.
 */
class FlinkNotPatternITCaseTest {
  static final String A1 = ev("a1", "a", 1.0);

  private static PatternBuilder start() {
    return begin("start", name("a"));
  }

  @Test
  void testNotNext() {
    String a1 = ev("a1", "a", 1.0), c1 = ev("c1", "c", 2.0), b1 = ev("b1", "b", 3.0);
    String c2 = ev("c2", "c", 4.0), d = ev("d", "d", 4.0);
    PatternBuilder p = start().notNext("notPattern", name("b"))
        .followedByAny("middle", name("c")).followedBy("end", name("d"));
    assertMatches(matches(p, a1, c1, b1, c2, d), match(a1, c1, d), match(a1, c2, d));
  }

  @Test
  void testNotNextNoMatches() {
    String a1 = ev("a1", "a", 1.0), b1 = ev("b1", "b", 3.0), c1 = ev("c1", "c", 2.0);
    String c2 = ev("c2", "c", 4.0), d = ev("d", "d", 4.0);
    PatternBuilder p = start().notNext("notPattern", name("b"))
        .followedBy("middle", name("c")).followedBy("end", name("d"));
    assertMatches(matches(p, a1, b1, c1, c2, d));
  }

  @Test
  void testNotNextNoMatchesAtTheEnd() {
    String a1 = ev("a1", "a", 1.0), c1 = ev("c1", "c", 2.0), c2 = ev("c2", "c", 4.0);
    String d = ev("d", "d", 4.0), b1 = ev("b1", "b", 3.0);
    PatternBuilder p = start().followedByAny("middle", name("c"))
        .followedByAny("end", name("d")).notNext("notPattern", name("b"));
    assertMatches(matches(p, a1, c1, c2, d, b1));
  }

  @Test
  void testNotFollowedBy() {
    String a1 = ev("a1", "a", 1.0), c1 = ev("c1", "c", 2.0), b1 = ev("b1", "b", 3.0);
    String c2 = ev("c2", "c", 4.0), d = ev("d", "d", 4.0);
    PatternBuilder p = start().notFollowedBy("notPattern", name("b"))
        .followedByAny("middle", name("c")).followedBy("end", name("d"));
    assertMatches(matches(p, a1, c1, b1, c2, d), match(a1, c1, d));
  }

  @Test
  void testNotFollowedByBeforeOptional() {
    String a1 = ev("a1", "a", 1.0), c1 = ev("c1", "c", 2.0), b1 = ev("b1", "b", 3.0);
    String c2 = ev("c2", "c", 4.0), d = ev("d", "d", 4.0);
    PatternBuilder p = start().notFollowedBy("notPattern", name("b"))
        .followedByAny("middle", name("c")).optional().followedBy("end", name("d"));
    assertMatches(matches(p, a1, c1, b1, c2, d), match(a1, c1, d));
  }

  @Test
  void testTimesWithNotFollowedBy() {
    String a1 = ev("a1", "a", 1.0), b1 = ev("b1", "b", 2.0), c = ev("c", "c", 3.0);
    String b2 = ev("b2", "b", 4.0), d = ev("d", "d", 4.0);
    PatternBuilder p = start().followedByAny("middle", name("b")).times(2)
        .notFollowedBy("notPattern", name("c")).followedBy("end", name("d"));
    assertMatches(matches(p, a1, b1, c, b2, d));
  }

  @Test
  void testIgnoreStateOfTimesWithNotFollowedBy() {
    String a1 = ev("a1", "a", 1.0), e = ev("e", "e", 2.0), c1 = ev("c1", "c", 3.0);
    String b1 = ev("b1", "b", 4.0), c2 = ev("c2", "c", 5.0), d1 = ev("d1", "d", 6.0);
    String d2 = ev("d2", "d", 7.0);
    PatternBuilder p = start().notFollowedBy("notPattern", name("b"))
        .followedByAny("middle", name("c")).times(2).optional().followedBy("end", name("d"));
    assertMatches(matches(p, a1, d1, e, b1, c1, c2, d2), match(a1, d1));
  }

  @Test
  void testTimesWithNotFollowedByAfter() {
    String a1 = ev("a1", "a", 1.0), e = ev("e", "e", 2.0), c1 = ev("c1", "c", 3.0);
    String b1 = ev("b1", "b", 4.0), b2 = ev("b2", "b", 5.0), d1 = ev("d1", "d", 7.0);
    String d2 = ev("d2", "d", 8.0);
    PatternBuilder p = start().followedByAny("middle", name("b")).times(2)
        .notFollowedBy("notPattern", name("c")).followedBy("end", name("d"));
    assertMatches(matches(p, a1, d1, e, b1, b2, c1, d2));
  }

  @Test
  void testNotFollowedByBeforeOptionalAtTheEnd() {
    String a1 = ev("a1", "a", 1.0), c1 = ev("c1", "c", 2.0), b1 = ev("b1", "b", 3.0);
    String c2 = ev("c2", "c", 4.0);
    PatternBuilder p = start().notFollowedBy("notPattern", name("b"))
        .followedByAny("end", name("c")).optional();
    assertMatches(matches(p, a1, c1, b1, c2), match(a1, c1), match(a1));
  }

  @Test
  void testNotFollowedByBeforeOptionalTimes() {
    String a1 = ev("a1", "a", 1.0), c1 = ev("c1", "c", 2.0), b1 = ev("b1", "b", 3.0);
    String c2 = ev("c2", "c", 4.0), d = ev("d", "d", 4.0);
    PatternBuilder p = start().notFollowedBy("notPattern", name("b"))
        .followedByAny("middle", name("c")).times(2).optional().followedBy("end", name("d"));
    assertMatches(matches(p, a1, c1, b1, c2, d), match(a1, c1, c2, d));
  }

  @Test
  void testNotFollowedByWithBranchingAtStart() {
    String a1 = ev("a1", "a", 1.0), b1 = ev("b1", "b", 3.0), c1 = ev("c1", "c", 2.0);
    String a2 = ev("a2", "a", 4.0), c2 = ev("c2", "c", 5.0), d = ev("d", "d", 6.0);
    PatternBuilder p = start().notFollowedBy("notPattern", name("b"))
        .followedBy("middle", name("c")).followedBy("end", name("d"));
    assertMatches(matches(p, a1, b1, c1, a2, c2, d), match(a2, c2, d));
  }

  // -- Flink's NotFollowByData -----------------------------------------------------------------
  static final String B1 = ev("B_1", "b", 2.0), B2 = ev("B_2", "b", 3.0);
  static final String B3 = ev("B_3", "b", 4.0), C1 = ev("C_1", "c", 5.0);
  static final String B4 = ev("B_4", "b", 6.0), B5 = ev("B_5", "b", 7.0);
  static final String B6 = ev("B_6", "b", 8.0), D1 = ev("D_1", "d", 9.0);
  static final String A = ev("A_1", "a", 1.0);

  private static PatternBuilder bStage(PatternBuilder p, boolean allMatches) {
    return allMatches ? p.followedByAny("b*", name("b")) : p.followedBy("b*", name("b"));
  }

  private static List<String> notNextAfterOneOrMore(boolean allMatches) {
    PatternBuilder p = bStage(begin("a", name("a")), allMatches).oneOrMore()
        .notNext("not c", name("c")).followedBy("d", name("d"));
    return matches(p, A, B1, C1, B2, D1);
  }

  @Test
  void testNotNextAfterOneOrMoreSkipTillNext() {
    assertMatches(notNextAfterOneOrMore(false));
  }

  @Test
  void testNotNextAfterOneOrMoreSkipTillAny() {
    assertMatches(notNextAfterOneOrMore(true), match(A, B2, D1));
  }

  private static List<String> notFollowedByAfterOneOrMore(boolean eager, boolean allMatches) {
    PatternBuilder p = bStage(begin("a", name("a")), allMatches).oneOrMore();
    if (!eager) {
      p.allowCombinations();
    }
    p.notFollowedBy("not c", name("c")).followedBy("d", name("d"));
    return matches(p, A, B1, B2, B3, C1, B4, B5, B6, D1);
  }

  @Test
  void testNotFollowedByNextAfterOneOrMoreEager() {
    assertMatches(notFollowedByAfterOneOrMore(true, false));
  }

  @Test
  void testNotFollowedByAnyAfterOneOrMoreEager() {
    assertMatches(notFollowedByAfterOneOrMore(true, true), match(A, B4, B5, B6, D1),
        match(A, B4, B5, D1), match(A, B4, D1), match(A, B5, B6, D1), match(A, B5, D1),
        match(A, B6, D1));
  }

  @Test
  void testNotFollowedByNextAfterOneOrMoreCombinations() {
    assertMatches(notFollowedByAfterOneOrMore(false, false));
  }

  @Test
  void testNotFollowedByAnyAfterOneOrMoreCombinations() {
    assertMatches(notFollowedByAfterOneOrMore(false, true), match(A, B4, B5, B6, D1),
        match(A, B4, B5, D1), match(A, B4, B6, D1), match(A, B4, D1), match(A, B5, B6, D1),
        match(A, B5, D1), match(A, B6, D1));
  }

  private static List<String> notFollowedByBefore(boolean eager, boolean allMatches,
      boolean optional) {
    PatternBuilder p = bStage(begin("a", name("a")).notFollowedBy("not c", name("c")),
        allMatches).oneOrMore();
    if (optional) {
      p.optional();
    }
    if (!eager) {
      p.allowCombinations();
    }
    p.followedBy("d", name("d"));
    return matches(p, A, B1, C1, B4, B5, B6, D1);
  }

  private static final String[] EAGER_BEFORE = {match(A, B1, B4, B5, B6, D1),
      match(A, B1, B4, B5, D1), match(A, B1, B4, D1), match(A, B1, D1)};
  private static final String[] COMBINATIONS_BEFORE = {match(A, B1, B4, B5, B6, D1),
      match(A, B1, B4, B6, D1), match(A, B1, B4, B5, D1), match(A, B1, B4, D1),
      match(A, B1, B5, B6, D1), match(A, B1, B5, D1), match(A, B1, B6, D1), match(A, B1, D1)};

  @Test
  void testNotFollowedByAnyBeforeOneOrMoreEager() {
    assertMatches(notFollowedByBefore(true, true, false), EAGER_BEFORE);
  }

  @Test
  void testNotFollowedByAnyBeforeOneOrMoreCombinations() {
    assertMatches(notFollowedByBefore(false, true, false), COMBINATIONS_BEFORE);
  }

  @Test
  void testNotFollowedByBeforeOneOrMoreEager() {
    assertMatches(notFollowedByBefore(true, false, false), EAGER_BEFORE);
  }

  @Test
  void testNotFollowedByBeforeOneOrMoreCombinations() {
    assertMatches(notFollowedByBefore(false, false, false), COMBINATIONS_BEFORE);
  }

  @Test
  void testNotFollowedByBeforeZeroOrMoreEagerSkipTillNext() {
    assertMatches(notFollowedByBefore(true, false, true), EAGER_BEFORE);
  }

  @Test
  void testNotFollowedByBeforeZeroOrMoreCombinationsSkipTillNext() {
    assertMatches(notFollowedByBefore(false, false, true), COMBINATIONS_BEFORE);
  }

  @Test
  void testNotFollowedByBeforeZeroOrMoreEagerSkipTillAny() {
    assertMatches(notFollowedByBefore(true, true, true), EAGER_BEFORE);
  }

  @Test
  void testNotFollowedByBeforeZeroOrMoreCombinationsSkipTillAny() {
    assertMatches(notFollowedByBefore(false, true, true), COMBINATIONS_BEFORE);
  }

  @Test
  void testNotFollowedByWithinFirstAndLastAtEnd() {
    String a1 = ev("a1", "a", 1.0), b1 = ev("b1", "b", 2.0), a2 = ev("a2", "a", 3.0);
    String c = ev("c", "c", 4.0), b2 = ev("b2", "b", 5.0), a3 = ev("a3", "a", 7.0);
    String b3 = ev("b3", "b", 8.0);
    PatternBuilder p = begin("a", name("a")).notFollowedBy("b", name("b")).within(3);
    assertMatches(matchesAt(p, new long[] {1, 2, 4, 5, 10, 11, 13}, a1, b1, a2, c, b2, a3, b3),
        match(a2));
  }

  @Test
  void testNotFollowedByWithinPreviousAndCurrentAtEnd() {
    String a1 = ev("a1", "a", 1.0), b1 = ev("b1", "b", 2.0), a2 = ev("a2", "a", 3.0);
    String c = ev("c", "c", 4.0), b2 = ev("b2", "b", 5.0), a3 = ev("a3", "a", 7.0);
    String b3 = ev("b3", "b", 8.0);
    // within(3 ms, PREVIOUS_AND_CURRENT); the whole match is bounded too, by a longer within
    PatternBuilder p = begin("a", name("a")).notFollowedBy("b", name("b")).within(1000)
        .withinConsecutive(3);
    assertMatches(matchesAt(p, new long[] {1, 2, 4, 5, 10, 11, 13}, a1, b1, a2, c, b2, a3, b3),
        match(a2));
  }

  @Test
  void testNotFollowByBeforeTimesWithin() {
    String a1 = ev("a1", "a", 1.0), b1 = ev("b1", "b", 2.0), a2 = ev("a2", "a", 3.0);
    String c1 = ev("c1", "c", 4.0), c2 = ev("c2", "c", 5.0), a3 = ev("a3", "a", 7.0);
    String c3 = ev("c3", "c", 8.0), c4 = ev("c4", "c", 8.0);
    PatternBuilder p = begin("a", name("a")).notFollowedBy("b", name("b"))
        .followedBy("c", name("c")).times(0, 2).within(3);
    assertMatches(
        matchesAt(p, new long[] {1, 2, 10, 11, 12, 20, 21, 24}, a1, b1, a2, c1, c2, a3, c3, c4),
        match(a1), match(a2), match(a2, c1), match(a2, c1, c2), match(a3), match(a3, c3));
  }

  @Test
  void testNotFollowedByWithinAtEndAfterMatch() {
    String a1 = ev("a1", "a", 1.0), a2 = ev("a2", "a", 2.0), a3 = ev("a3", "a", 3.0);
    String c1 = ev("c1", "c", 4.0), c2 = ev("c2", "c", 5.0);
    PatternBuilder p = begin("a", name("a")).oneOrMore().allowCombinations()
        .followedBy("c", name("c")).notFollowedBy("b", name("b")).within(5)
        .skip("skip_past_last_event");
    assertMatches(matchesAt(p, new long[] {1, 2, 3, 4, 10}, a1, a2, a3, c1, c2),
        match(a1, a2, a3, c1));
  }
}
