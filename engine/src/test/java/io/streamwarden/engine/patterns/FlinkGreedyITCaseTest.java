package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.FlinkCases.assertMatches;
import static io.streamwarden.engine.patterns.FlinkCases.ev;
import static io.streamwarden.engine.patterns.FlinkCases.match;
import static io.streamwarden.engine.patterns.FlinkCases.matches;
import static io.streamwarden.engine.patterns.FlinkCases.name;
import static io.streamwarden.engine.patterns.FlinkCases.price;
import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.patterns.NfaTestUtilities.Group;
import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import org.junit.jupiter.api.Test;

/**
 * Flink CEP's {@code GreedyITCase}: its patterns, events and expected matches, every case.
 *
 * <p>Ported from apache/flink at commit 01676656: 16 cases compare matches as Flink expected
 * them there; the 3 that end the pattern with a greedy loop test that the plan is refused.
 */
class FlinkGreedyITCaseTest {
  private static final String C = ev("c", "c", 1.0);
  private static final String A1 = ev("a1", "a", 2.0), A2 = ev("a2", "a", 2.0);
  private static final String A3 = ev("a3", "a", 2.0), D = ev("d", "d", 3.0);
  private static final String DUMMY = ev("dummy", "dummy", 1111);

  /** {@code c a* d} (greedy); {@code +} when not {@code optional}. */
  private static PatternBuilder cAsD(boolean optional) {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).oneOrMore();
    if (optional) {
      p.optional();
    }
    return p.greedy().followedBy("end", name("d"));
  }

  @Test
  void testGreedyZeroOrMore() {
    assertMatches(matches(cAsD(true), C, A1, A2, A3, D), match(C, A1, A2, A3, D));
  }

  @Test
  void testGreedyZeroOrMoreConsecutiveEndWithOptional() {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).oneOrMore()
        .optional().consecutive().greedy().followedBy("end", name("d")).optional();
    assertMatches(matches(p, C, A1, A2, A3, D), match(C, A1, A2, A3, D));
  }

  @Test
  void testGreedyZeroOrMoreInBetween() {
    assertMatches(matches(cAsD(true), C, DUMMY, A1, DUMMY, A2, DUMMY, A3, D),
        match(C, A1, A2, A3, D));
  }

  @Test
  void testGreedyZeroOrMoreWithDummyEventsAfterQuantifier() {
    assertMatches(matches(cAsD(true), C, A1, A2, DUMMY, D), match(C, A1, A2, D));
  }

  @Test
  void testGreedyZeroOrMoreWithDummyEventsBeforeQuantifier() {
    assertMatches(matches(cAsD(true), C, DUMMY, D), match(C, D));
  }

  private static PatternBuilder cAsOptionalDThenE() {
    return begin("start", name("c")).followedBy("middle1", name("a")).oneOrMore().optional()
        .greedy().followedBy("middle2", name("d")).optional().followedBy("end", name("e"));
  }

  @Test
  void testGreedyZeroOrMoreBeforeOptional() {
    String e = ev("e", "e", 3.0);
    assertMatches(matches(cAsOptionalDThenE(), C, A1, A2, DUMMY, e), match(C, A1, A2, e));
  }

  @Test
  void testGreedyZeroOrMoreBeforeOptional2() {
    String e = ev("e", "e", 3.0);
    assertMatches(matches(cAsOptionalDThenE(), C, A1, A2, D, e), match(C, A1, A2, e),
        match(C, A1, A2, D, e));
  }

  @Test
  void testGreedyOneOrMore() {
    assertMatches(matches(cAsD(false), C, A1, A2, A3, D), match(C, A1, A2, A3, D));
  }

  @Test
  void testGreedyOneOrMoreInBetween() {
    assertMatches(matches(cAsD(false), C, DUMMY, A1, DUMMY, A2, DUMMY, A3, D),
        match(C, A1, A2, A3, D));
  }

  @Test
  void testGreedyOneOrMoreWithDummyEventsAfterQuantifier() {
    assertMatches(matches(cAsD(false), C, A1, A2, DUMMY, D), match(C, A1, A2, D));
  }

  @Test
  void testGreedyOneOrMoreWithDummyEventsBeforeQuantifier() {
    assertMatches(matches(cAsD(false), C, DUMMY, D));
  }

  /*
   * The three cases below end the pattern with a greedy loop. At 01676656 Flink expected only
   * the longest run (c a1 a2; c a1 a2 a3 a4); Flink now expects every prefix (c, c a1,
   * c a1 a2 ...; testEndWithGreedyTimesRange) and Flink SQL refuses such a pattern. The plan
   * refuses it too, so these cases test the refusal, not Flink's matches.
   */

  /** The plan is refused, naming the greedy last stage and what to do. */
  private static void assertRefused(PatternBuilder p) {
    IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, p::plan);
    assertTrue(refused.getMessage().startsWith("stage 'end': a greedy loop cannot end a "
        + "pattern"), refused.getMessage());
    assertTrue(refused.getMessage().endsWith("follow it with a stage, or drop greedy()"));
  }

  @Test
  void testEndWithZeroOrMoreGreedy() {
    assertRefused(begin("start", name("c")).followedBy("end", name("a")).oneOrMore()
        .optional().greedy());
  }

  @Test
  void testEndWithZeroOrMoreConsecutiveGreedy() {
    assertRefused(begin("start", name("c")).followedBy("end", name("a")).oneOrMore()
        .optional().consecutive().greedy());
  }

  @Test
  void testGreedyTimesRange() {
    assertRefused(begin("start", name("c")).followedBy("end", name("a")).times(2, 5)
        .greedy());
  }

  /** {@code c a* d} (greedy) until the price is above 3. */
  private static PatternBuilder cAsUntilD(boolean optional) {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).oneOrMore();
    if (optional) {
      p.optional();
    }
    return p.greedy().until(price(x -> x > 3.0)).followedBy("end", name("d"));
  }

  private static final String UA1 = ev("a1", "a", 2.0), UA2 = ev("a2", "a", 3.0);
  private static final String UA3 = ev("a3", "a", 3.0), UA4 = ev("a4", "a", 4.0);
  private static final String UD = ev("d", "d", 3.0);

  @Test
  void testGreedyUtilZeroOrMoreWithDummyEventsAfterQuantifier() {
    assertMatches(matches(cAsUntilD(true), C, UA1, UA2, UA3, UA4, UD),
        match(C, UA1, UA2, UA3, UD));
  }

  @Test
  void testGreedyUtilWithDummyEventsBeforeQuantifier() {
    assertMatches(matches(cAsUntilD(true), C, UA4, UA1, UA2, UA3, UD), match(C, UD));
  }

  @Test
  void testGreedyUtilOneOrMoreWithDummyEventsAfterQuantifier() {
    assertMatches(matches(cAsUntilD(false), C, UA1, UA2, UA3, UA4, UD),
        match(C, UA1, UA2, UA3, UD));
  }

  @Test
  void testGreedyUtilOneOrMoreWithDummyEventsBeforeQuantifier() {
    assertMatches(matches(cAsUntilD(false), C, UA4, UA1, UA2, UA3, UD));
  }

  @Test
  void testGreedyZeroOrMoreBeforeGroupPattern() {
    String a1 = ev("a1", "a", 1.0), a2 = ev("a2", "a", 1.0), a3 = ev("a3", "a", 1.0);
    String d1 = ev("d1", "d", 1.0), e1 = ev("e1", "e", 1.0), d2 = ev("d2", "d", 1.0);
    String e2 = ev("e2", "e", 1.0), f = ev("f", "f", 3.0), dummy = ev("dummy", "dummy", 2.0);
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).oneOrMore()
        .optional().greedy()
        .followedBy(Group.of(begin("middle1", name("d")).followedBy("middle2", name("e")))
            .times(2))
        .followedBy("end", name("f"));
    assertMatches(matches(p, C, a1, a2, dummy, a3, d1, e1, d2, e2, f),
        match(C, a1, a2, a3, d1, e1, d2, e2, f));
  }
}
