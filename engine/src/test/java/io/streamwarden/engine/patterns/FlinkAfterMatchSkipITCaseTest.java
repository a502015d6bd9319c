package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.FlinkCases.PRICE;
import static io.streamwarden.engine.patterns.FlinkCases.assertMatches;
import static io.streamwarden.engine.patterns.FlinkCases.ev;
import static io.streamwarden.engine.patterns.FlinkCases.match;
import static io.streamwarden.engine.patterns.FlinkCases.matches;
import static io.streamwarden.engine.patterns.FlinkCases.name;
import static io.streamwarden.engine.patterns.FlinkCases.nameContains;
import static io.streamwarden.engine.patterns.NfaTestUtilities.any;
import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.patterns.NfaTestUtilities.KeyDriver;
import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Flink CEP's {@code AfterMatchSkipITCase}: its patterns, events and expected matches; where
 * Flink expects its {@code FlinkRuntimeException} ({@code throwExceptionOnMiss}), the engine
 * throws its {@link SkipMissException}.
 *
 * <p>Ported from apache/flink at commit 01c950f8.
 */
class FlinkAfterMatchSkipITCaseTest {
  private static String[] sixAs() {
    String[] as = new String[6];
    for (int i = 0; i < 6; i++) {
      as[i] = ev("a" + (i + 1), "a", 0.0);
    }
    return as;
  }

  @Test
  void testNoSkip() {
    String[] a = sixAs();
    PatternBuilder p = begin("start", name("a")).times(3).skip("no_skip");
    assertMatches(matches(p, a), match(a[0], a[1], a[2]), match(a[1], a[2], a[3]),
        match(a[2], a[3], a[4]), match(a[3], a[4], a[5]));
  }

  // Flink's TwoVariablesFollowedByAny
  private static final String TA1 = ev("a1", "a", 0.0), TB1 = ev("b1", "b", 0.0);
  private static final String TA2 = ev("a2", "a", 0.0), TB2 = ev("b2", "b", 0.0);

  private static List<String> twoVariablesFollowedByAny(String skip) {
    PatternBuilder p = begin("start", name("a")).followedByAny("end", name("b")).skip(skip);
    return matches(p, TA1, TB1, TA2, TB2);
  }

  @Test
  void testNoSkipWithFollowedByAny() {
    assertMatches(twoVariablesFollowedByAny("no_skip"), match(TA1, TB1), match(TA1, TB2),
        match(TA2, TB2));
  }

  @Test
  void testSkipToNextWithFollowedByAny() {
    assertMatches(twoVariablesFollowedByAny("skip_to_next"), match(TA1, TB1), match(TA2, TB2));
  }

  // Flink's QuantifierAtEndOfPattern
  private static final String QA1 = ev("a1", "a", 0.0), QB1 = ev("b1", "b", 0.0);
  private static final String QB2 = ev("b2", "b", 0.0), QB3 = ev("b3", "b", 0.0);

  private static List<String> quantifierAtEndOfPattern(String skip) {
    PatternBuilder p = begin("start", name("a")).next("end", name("b")).oneOrMore().skip(skip);
    return matches(p, QA1, QB1, QB2, QB3);
  }

  @Test
  void testNoSkipWithQuantifierAtTheEnd() {
    assertMatches(quantifierAtEndOfPattern("no_skip"), match(QA1, QB1, QB2, QB3),
        match(QA1, QB1, QB2), match(QA1, QB1));
  }

  @Test
  void testSkipToNextWithQuantifierAtTheEnd() {
    assertMatches(quantifierAtEndOfPattern("skip_to_next"), match(QA1, QB1));
  }

  @Test
  void testSkipPastLast() {
    String[] a = sixAs();
    PatternBuilder p = begin("start", name("a")).times(3).skip("skip_past_last_event");
    assertMatches(matches(p, a), match(a[0], a[1], a[2]), match(a[3], a[4], a[5]));
  }

  private static String[] abs(int n) {
    String[] ab = new String[n];
    for (int i = 0; i < n; i++) {
      ab[i] = ev("ab" + (i + 1), "ab", 0.0);
    }
    return ab;
  }

  private static PatternBuilder twoAsThenTwoBs() {
    return begin("start", nameContains("a")).times(2).next("end", nameContains("b")).times(2);
  }

  @Test
  void testSkipToFirst() {
    String[] ab = abs(6);
    assertMatches(matches(twoAsThenTwoBs().skip("skip_to_first", "end"), ab),
        match(ab[0], ab[1], ab[2], ab[3]), match(ab[2], ab[3], ab[4], ab[5]));
  }

  @Test
  void testSkipToLast() {
    String[] ab = abs(7);
    assertMatches(matches(twoAsThenTwoBs().skip("skip_to_last", "end"), ab),
        match(ab[0], ab[1], ab[2], ab[3]), match(ab[3], ab[4], ab[5], ab[6]));
  }

  @Test
  void testSkipPastLast2() {
    String a1 = ev("a1", "a1", 0.0), a2 = ev("a2", "a2", 0.0), b1 = ev("b1", "b1", 0.0);
    String b2 = ev("b2", "b2", 0.0), c1 = ev("c1", "c1", 0.0), c2 = ev("c2", "c2", 0.0);
    String d1 = ev("d1", "d1", 0.0), d2 = ev("d2", "d2", 0.0);
    PatternBuilder p = begin("a", nameContains("a")).followedByAny("b", nameContains("b"))
        .followedByAny("c", nameContains("c")).followedBy("d", nameContains("d"))
        .skip("skip_past_last_event");
    assertMatches(matches(p, a1, a2, b1, b2, c1, c2, d1, d2), match(a1, b1, c1, d1));
  }

  @Test
  void testSkipPastLast3() {
    String a1 = ev("a1", "a1", 0.0), c = ev("c", "c", 0.0), a2 = ev("a2", "a2", 0.0);
    String b2 = ev("b2", "b2", 0.0);
    PatternBuilder p = begin("a", nameContains("a")).next("b", nameContains("b"))
        .skip("skip_past_last_event");
    assertMatches(matches(p, a1, c, a2, b2), match(a2, b2));
  }

  @Test
  void testSkipToFirstWithOptionalMatch() {
    String ab1 = ev("ab1", "ab1", 0.0), c1 = ev("c1", "c1", 0.0), ab2 = ev("ab2", "ab2", 0.0);
    String c2 = ev("c2", "c2", 0.0);
    PatternBuilder p = begin("x", nameContains("x")).oneOrMore().optional()
        .next("b", nameContains("b")).next("c", nameContains("c")).skip("skip_to_first", "b");
    assertMatches(matches(p, ab1, c1, ab2, c2), match(ab1, c1), match(ab2, c2));
  }

  @Test
  void testSkipToFirstAtStartPosition() {
    String ab1 = ev("ab1", "ab1", 0.0), c1 = ev("c1", "c1", 0.0), ab2 = ev("ab2", "ab2", 0.0);
    String c2 = ev("c2", "c2", 0.0);
    PatternBuilder p = begin("b", nameContains("b")).next("c", nameContains("c"))
        .skip("skip_to_first", "b");
    assertMatches(matches(p, ab1, c1, ab2, c2), match(ab1, c1), match(ab2, c2));
  }

  private static final String A1 = ev("a1", "a1", 0.0), B1 = ev("b1", "b1", 0.0);
  private static final String A2 = ev("a2", "a2", 0.0), B2 = ev("b2", "b2", 0.0);
  private static final String B3 = ev("b3", "b3", 0.0), A3 = ev("a3", "a3", 0.0);
  private static final String B4 = ev("b4", "b4", 0.0);

  private static PatternBuilder aThenConsecutiveBs(String skip) {
    return begin("a", nameContains("a")).next("b", nameContains("b")).oneOrMore().consecutive()
        .skip(skip, "b");
  }

  @Test
  void testSkipToFirstWithOneOrMore() {
    assertMatches(matches(aThenConsecutiveBs("skip_to_first"), A1, B1, A2, B2, B3, A3, B4),
        match(A1, B1), match(A2, B2), match(A3, B4));
  }

  // Flink's MissedSkipTo
  private static List<String> missedSkipTo(String skip) {
    return missedSkipTo(skip, false);
  }

  private static List<String> missedSkipTo(String skip, boolean throwOnMiss) {
    String a = ev("a", "a", 0.0), c = ev("c", "c", 0.0);
    PatternBuilder p = begin("a", nameContains("a")).next("b", nameContains("b")).oneOrMore()
        .optional().consecutive().next("c", nameContains("c")).skip(skip, "b");
    if (throwOnMiss) {
      p.throwOnMiss();
    }
    return matches(p, a, c);
  }

  @Test
  void testSkipToFirstElementOfMatch() {
    PatternBuilder p = begin("a", nameContains("a")).skip("skip_to_first", "a").throwOnMiss();
    assertThrows(SkipMissException.class, () -> matches(p, ev("a1", "a1", 0.0)));
  }

  @Test
  void testSkipToFirstNonExistentPosition() {
    assertThrows(SkipMissException.class, () -> missedSkipTo("skip_to_first", true));
  }

  @Test
  void testSkipToLastNonExistentPosition() {
    assertThrows(SkipMissException.class, () -> missedSkipTo("skip_to_last", true));
  }

  @Test
  void testSkipToFirstNonExistentPositionWithoutException() {
    assertMatches(missedSkipTo("skip_to_first"), match(ev("a", "a", 0), ev("c", "c", 0)));
  }

  @Test
  void testSkipToLastNonExistentPositionWithoutException() {
    // Flink's case, as written there, uses skipToFirst
    assertMatches(missedSkipTo("skip_to_first"), match(ev("a", "a", 0), ev("c", "c", 0)));
  }

  @Test
  void testSkipToLastWithOneOrMore() {
    assertMatches(matches(aThenConsecutiveBs("skip_to_last"), A1, B1, A2, B2, B3, A3, B4),
        match(A1, B1), match(A2, B2), match(A3, B4));
  }

  private static List<String> greedyAsThenB(String skip) {
    PatternBuilder p = begin("a", nameContains("a")).oneOrMore().consecutive().greedy()
        .next("b", nameContains("b")).skip(skip, "a");
    return matches(p, A1, A2, A3, B1);
  }

  @Test
  void testSkipPastLastWithOneOrMoreAtBeginning() {
    assertMatches(greedyAsThenB("skip_past_last_event"), match(A1, A2, A3, B1));
  }

  @Test
  void testSkipToLastWithOneOrMoreAtBeginning() {
    assertMatches(greedyAsThenB("skip_to_last"), match(A1, A2, A3, B1), match(A3, B1));
  }

  @Test
  void testSkipToFirstWithOneOrMoreAtBeginning() {
    assertMatches(greedyAsThenB("skip_to_first"), match(A1, A2, A3, B1), match(A2, A3, B1),
        match(A3, B1));
  }

  @Test
  void testNoSkipWithOneOrMoreAtBeginning() {
    assertMatches(greedyAsThenB("no_skip"), match(A1, A2, A3, B1), match(A2, A3, B1),
        match(A3, B1));
  }

  @Test
  void testSkipToFirstDiscarding() {
    String a = ev("a", "a", 0.0), b = ev("b", "b", 0.0), c1 = ev("c1", "c1", 0.0);
    String c2 = ev("c2", "c2", 0.0), c3 = ev("c3", "c3", 0.0), d = ev("d", "d", 0.0);
    PatternBuilder p = begin("a or c", nameContains("a").or(nameContains("c")))
        .followedBy("b or c", nameContains("b").or(nameContains("c")))
        .followedBy("c*", nameContains("c")).oneOrMore().greedy()
        .followedBy("d", nameContains("d")).skip("skip_to_first", "c*");
    assertMatches(matches(p, a, b, c1, c2, c3, d), match(a, b, c1, c2, c3, d),
        match(c1, c2, c3, d));
  }

  @Test
  void testSkipBeforeOtherAlreadyCompleted() {
    String a1 = ev("a1", "a1", 0.0), c1 = ev("c1", "c1", 0.0), a2 = ev("a2", "a2", 1.0);
    String c2 = ev("c2", "c2", 0.0), b1 = ev("b1", "b1", 1.0), b2 = ev("b2", "b2", 0.0);
    PatternBuilder p = begin("a", nameContains("a")).followedBy("c", nameContains("c"))
        .followedBy("b", nameContains("b")).wherePrevious(PRICE, "==", "a", true)
        .skip("skip_to_first", "c");
    assertMatches(matches(p, a1, c1, a2, c2, b1, b2), match(a1, c1, b2), match(a2, c2, b1));
  }

  @Test
  void testSharedBufferIsProperlyCleared() {
    PatternBuilder p = begin("start", any()).times(2).skip("skip_past_last_event");
    KeyDriver key = new KeyDriver(p.plan());
    List<PEvent> events = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      events.add(p.event(ev("a", "a", 1.0), i + 1));
    }
    key.batch(10, events);
    assertTrue(key.state.holdsNothing());
  }
}
