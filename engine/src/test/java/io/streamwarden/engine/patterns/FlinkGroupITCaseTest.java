package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.FlinkCases.assertMatches;
import static io.streamwarden.engine.patterns.FlinkCases.ev;
import static io.streamwarden.engine.patterns.FlinkCases.match;
import static io.streamwarden.engine.patterns.FlinkCases.matches;
import static io.streamwarden.engine.patterns.FlinkCases.name;
import static io.streamwarden.engine.patterns.FlinkCases.noPartialsLeft;
import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.patterns.NfaTestUtilities.Group;
import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import org.junit.jupiter.api.Test;

/**
 * Flink CEP's {@code GroupITCase}, every case. A group (a sub-pattern with a quantifier) is
 * built with {@link Group}, which writes a copy of its stages per round into the plan, as
 * Python's {@code compile} does (a loop: its minimum of rounds, then a round whose last stage
 * goes back to its first); the three cases whose group has no quantifier are written in line.
 *
 * <p>Ported from apache/flink at commit 1ac1e0d7.
 */
class FlinkGroupITCaseTest {
  private static final String C = ev("c", "c", 1.0), A1 = ev("a1", "a", 2.0);
  private static final String B1 = ev("b1", "b", 3.0), D = ev("d", "d", 3.0);
  private static final String A2 = ev("a2", "a", 4.0), B2 = ev("b2", "b", 5.0);
  private static final String E = ev("e", "e", 6.0);

  /** {@code c (a b) <negation> d e}, the group (a b) in line. */
  private static PatternBuilder cGroupThen(boolean notNext) {
    PatternBuilder p = begin("start", name("c")).followedByAny("middle1", name("a"))
        .followedBy("middle2", name("b"));
    p = notNext ? p.notNext("notPattern", name("d")) : p.notFollowedBy("notPattern", name("d"));
    return p.followedBy("end", name("e"));
  }

  @Test
  void testGroupNotFollowedBy() {
    assertMatches(matches(cGroupThen(false), C, A1, B1, D, A2, B2, E), match(C, A2, B2, E));
  }

  @Test
  void testGroupNotNext() {
    assertMatches(matches(cGroupThen(true), C, A1, B1, D, A2, B2, E), match(C, A2, B2, E));
  }

  @Test
  void testGroupStartsWithOptionalPattern() {
    String a = ev("a", "a", 1.0), c = ev("c", "c", 2.0), d = ev("d", "d", 3.0);
    PatternBuilder p = begin("start", name("a")).next("middle1", name("b")).optional()
        .next("middle2", name("c")).next("d", name("d"));
    assertMatches(matches(p, a, c, d), match(a, c, d));
  }

  /** The group {@code (a b)} of most cases: middle1 = a, then (followedBy) middle2 = b. */
  private static Group ab() {
    return Group.of(begin("middle1", name("a")).followedBy("middle2", name("b")));
  }

  /** {@code (a (b c){3})}, its inner group consecutive between rounds when asked. */
  private static Group aThenBcTimes3(boolean consecutive) {
    Group bc = Group.of(begin("middle2", name("b")).followedBy("middle3", name("c"))).times(3);
    if (consecutive) {
      bc.consecutive();
    }
    return Group.of(begin("middle1", name("a")).followedBy(bc));
  }

  @Test
  void testGroupFollowedByTimes() {
    String c = ev("c", "c", 1.0), a1 = ev("a1", "a", 2.0), b1 = ev("b1", "b", 3.0);
    String a2 = ev("a2", "a", 4.0), b2 = ev("b2", "b", 5.0), d = ev("d", "d", 6.0);
    PatternBuilder p = begin("start", name("c")).followedBy(ab().times(2))
        .followedBy("end", name("d"));
    assertMatches(matches(p, c, a1, b1, a2, b2, d), match(c, a1, b1, a2, b2, d));
  }

  @Test
  void testGroupFollowedByOptional() {
    String c = ev("c", "c", 1.0), a1 = ev("a1", "a", 2.0), a2 = ev("a2", "a", 2.0);
    String b = ev("b", "b", 3.0), d = ev("d", "d", 4.0);
    PatternBuilder p = begin("start", name("c")).followedBy(ab().optional())
        .followedBy("end", name("d"));
    assertMatches(matches(p, c, a1, a2, b, d), match(c, d), match(c, a1, b, d));
  }

  @Test
  void testFollowedByGroupTimesOptional() {
    String c = ev("c", "c", 1.0), a = ev("a", "a", 2.0), d = ev("d", "d", 3.0);
    PatternBuilder p = begin("start", name("c")).followedBy(ab().times(2).optional())
        .followedBy("end", name("d"));
    assertMatches(matches(p, c, a, d), match(c, d));
  }

  private static final String[] ABC3 = {ev("c", "c", 1.0), ev("a1", "a", 2.0),
      ev("b1", "b", 3.0), ev("a2", "a", 4.0), ev("b2", "b", 5.0), ev("a3", "a", 4.0),
      ev("b3", "b", 5.0), ev("d", "d", 6.0)};

  @Test
  void testGroupFollowedByAnyTimesCombinations() {
    String[] x = ABC3;
    PatternBuilder p = begin("start", name("c")).followedByAny(ab().times(2).allowCombinations())
        .followedBy("end", name("d"));
    assertMatches(matches(p, x), match(x[0], x[1], x[2], x[3], x[4], x[7]),
        match(x[0], x[1], x[2], x[5], x[6], x[7]), match(x[0], x[3], x[4], x[5], x[6], x[7]));
  }

  @Test
  void testGroupFollowedByAnyTimesOptional() {
    String[] x = ABC3;
    PatternBuilder p = begin("start", name("c")).followedByAny(ab().times(2).optional())
        .followedBy("end", name("d"));
    assertMatches(matches(p, x), match(x[0], x[7]), match(x[0], x[1], x[2], x[3], x[4], x[7]),
        match(x[0], x[3], x[4], x[5], x[6], x[7]));
  }

  private static final String[] NEST = {ev("d", "d", 1.0), ev("a1", "a", 2.0),
      ev("b1", "b", 3.0), ev("c1", "c", 4.0), ev("b2", "b", 5.0), ev("c2", "c", 4.0),
      ev("b3", "b", 5.0), ev("c3", "c", 4.0), ev("a2", "a", 2.0), ev("b4", "b", 3.0),
      ev("c4", "c", 4.0), ev("b5", "b", 5.0), ev("c5", "c", 4.0), ev("b6", "b", 5.0),
      ev("c6", "c", 4.0), ev("e", "e", 6.0)};

  @Test
  void testGroupNestTimes() {
    String[] x = NEST;
    PatternBuilder p = begin("start", name("d")).followedByAny(aThenBcTimes3(false).times(0, 2))
        .followedBy("end", name("e"));
    String[] first = java.util.Arrays.copyOfRange(x, 1, 8);
    String[] second = java.util.Arrays.copyOfRange(x, 8, 15);
    assertMatches(matches(p, x), match(x[0], x[15]), match(join(x[0], first, x[15])),
        match(join(x[0], second, x[15])), match(x));
  }

  @Test
  void testGroupNestTimesConsecutive() {
    java.util.List<String> events = new java.util.ArrayList<>(java.util.Arrays.asList(NEST));
    events.add(11, ev("breaking", "breaking", 99.0));
    String[] x = events.toArray(new String[0]);
    PatternBuilder p = begin("start", name("d"))
        .followedByAny(aThenBcTimes3(true).times(0, 2).consecutive())
        .followedBy("end", name("e"));
    String[] first = java.util.Arrays.copyOfRange(x, 1, 8);
    assertMatches(matches(p, x), match(x[0], x[16]), match(join(x[0], first, x[16])));
  }

  @Test
  void testGroupBegin() {
    String a1 = ev("a1", "a", 2.0), b1 = ev("b1", "b", 3.0), a2 = ev("a2", "a", 4.0);
    String b2 = ev("b2", "b", 5.0), d = ev("d", "d", 6.0);
    PatternBuilder p = begin(ab().times(1, 2)).followedBy("end", name("d"));
    assertMatches(matches(p, a1, b1, a2, b2, d), match(a1, b1, d), match(a2, b2, d),
        match(a1, b1, a2, b2, d));
  }

  @Test
  void testFollowedByOptionalGroupPattern() {
    String a = ev("a", "a", 1.0), d1 = ev("d1", "d", 2.0), d2 = ev("d2", "d", 3.0);
    PatternBuilder p = begin("start", name("a"))
        .followedBy(Group.of(begin("middle1", name("b")).next("middle2", name("c"))).optional())
        .next("d", name("d"));
    assertMatches(matches(p, a, d1, d2), match(a, d1));
  }

  private static final String[] CABABD = {ev("c", "c", 1.0), ev("a1", "a", 2.0),
      ev("b1", "b", 3.0), ev("a2", "a", 4.0), ev("b2", "b", 5.0), ev("d", "d", 6.0)};

  @Test
  void testGroupFollowedByOneOrMore() {
    String[] x = CABABD;
    PatternBuilder p = begin("start", name("c")).followedBy(ab().oneOrMore())
        .followedBy("end", name("d"));
    assertMatches(matches(p, x), match(x[0], x[1], x[2], x[5]), match(x));
  }

  @Test
  void testGroupFollowedByZeroOrMore() {
    String[] x = CABABD;
    PatternBuilder p = begin("start", name("c")).followedBy(ab().oneOrMore().optional())
        .followedBy("end", name("d"));
    assertMatches(matches(p, x), match(x[0], x[5]), match(x[0], x[1], x[2], x[5]), match(x));
  }

  @Test
  void testGroupFollowedByAnyOneOrMore() {
    String[] x = ABC3;
    PatternBuilder p = begin("start", name("c")).followedByAny(ab().oneOrMore())
        .followedBy("end", name("d"));
    assertMatches(matches(p, x), match(x[0], x[1], x[2], x[7]), match(x[0], x[3], x[4], x[7]),
        match(x[0], x[5], x[6], x[7]), match(x[0], x[1], x[2], x[3], x[4], x[7]),
        match(x[0], x[3], x[4], x[5], x[6], x[7]), match(x));
  }

  @Test
  void testGroupNextZeroOrMore() {
    String[] x = {ev("c", "c", 1.0), ev("a1", "a", 2.0), ev("b1", "b", 3.0),
        ev("a2", "a", 3.0), ev("b2", "b", 3.0), ev("a3", "a", 4.0), ev("b3", "b", 3.0),
        ev("d", "d", 1.0)};
    PatternBuilder p = begin("start", name("c"))
        .next(ab().oneOrMore().optional().consecutive()).followedBy("end", name("d"));
    assertMatches(matches(p, x), match(x[0], x[7]), match(x[0], x[1], x[2], x[7]),
        match(x[0], x[1], x[2], x[3], x[4], x[7]), match(x));
  }

  @Test
  void testGroupNest() {
    String d = ev("d", "d", 1.0), a1 = ev("a1", "a", 2.0), b1 = ev("b1", "b", 3.0);
    String c1 = ev("c1", "c", 4.0), b2 = ev("b2", "b", 5.0), c2 = ev("c2", "c", 4.0);
    String e = ev("e", "e", 6.0);
    Group bc = Group.of(begin("middle2", name("b")).followedBy("middle3", name("c")))
        .oneOrMore().optional();
    PatternBuilder p = begin("start", name("d"))
        .followedBy(Group.of(begin("middle1", name("a")).followedBy(bc)).optional())
        .followedBy("end", name("e"));
    assertMatches(matches(p, d, a1, b1, c1, b2, c2, e), match(d, e), match(d, a1, e),
        match(d, a1, b1, c1, e), match(d, a1, b1, c1, b2, c2, e));
  }

  @Test
  void testGroupFollowedByOneOrMoreWithUntilCondition() {
    String[] x = CABABD;
    PatternBuilder p = begin("start", name("c")).followedBy(ab().oneOrMore().until(name("d")))
        .followedBy("end", name("d"));
    assertMatches(matches(p, x), match(x[0], x[1], x[2], x[5]), match(x));
    assertTrue(noPartialsLeft(p, x)); // Flink: one partial match left, its start state's
  }

  private static String[] join(String head, String[] middle, String tail) {
    String[] all = new String[middle.length + 2];
    all[0] = head;
    System.arraycopy(middle, 0, all, 1, middle.length);
    all[all.length - 1] = tail;
    return all;
  }
}
