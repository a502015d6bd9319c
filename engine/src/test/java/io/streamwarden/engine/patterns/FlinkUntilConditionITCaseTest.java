package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.FlinkCases.assertMatches;
import static io.streamwarden.engine.patterns.FlinkCases.ev;
import static io.streamwarden.engine.patterns.FlinkCases.match;
import static io.streamwarden.engine.patterns.FlinkCases.matches;
import static io.streamwarden.engine.patterns.FlinkCases.name;
import static io.streamwarden.engine.patterns.FlinkCases.noPartialsLeft;
import static io.streamwarden.engine.patterns.FlinkCases.price;
import static io.streamwarden.engine.patterns.NfaTestUtilities.any;
import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Flink CEP's {@code UntilConditionITCase}: {@code until()} on a loop, all eleven cases; the
 * iterative until conditions (the sum of the loop's prices) are {@code until_aggregate}s.
 *
 * <p>Ported from apache/flink at commit 0f3b63a7.
 */
class FlinkUntilConditionITCaseTest {
  /** Flink's UNTIL_CONDITION: {@code value.getPrice() == 5.0}. */
  private static final Predicate<String> UNTIL = price(x -> x == 5.0);

  private static final String START = ev("startEvent", "c", 1.0);
  private static final String M1 = ev("middleEvent1", "a", 2.0);
  private static final String M2 = ev("middleEvent2", "a", 3.0);
  private static final String M3 = ev("middleEvent3", "a", 4.0);
  private static final String BREAKING = ev("breaking", "a", 5.0);
  private static final String IGNORED = ev("ignored", "a", 6.0);

  /** {@code c a+ until(price == 5) followedBy(price == 5)} with the loop's options. */
  private static PatternBuilder untilFollowedBy(String middle, boolean optional,
      String inner) {
    PatternBuilder p = begin("start", name("c"));
    p = middle.equals("any") ? p.followedByAny("middle", name("a"))
        : p.followedBy("middle", name("a"));
    p.oneOrMore();
    if (optional) {
      p.optional();
    }
    if (inner.equals("combinations")) {
      p.allowCombinations();
    } else if (inner.equals("consecutive")) {
      p.consecutive();
    }
    return p.until(UNTIL);
  }

  private static PatternBuilder withEnd(PatternBuilder p) {
    return p.followedBy("end", UNTIL);
  }

  @Test
  void testUntilConditionFollowedByOneOrMore() {
    PatternBuilder p = withEnd(untilFollowedBy("relaxed", false, "relaxed"));
    String[] events = {START, M1, M2, BREAKING, IGNORED};
    assertMatches(matches(p, events), match(START, M1, M2, BREAKING), match(START, M1, BREAKING));
    assertTrue(noPartialsLeft(p, events));
  }

  @Test
  void testUntilConditionFollowedByOneOrMoreCombinations() {
    PatternBuilder p = withEnd(untilFollowedBy("relaxed", false, "combinations"));
    String[] events = {START, M1, M2, M3, BREAKING, IGNORED};
    assertMatches(matches(p, events), match(START, M1, M2, M3, BREAKING),
        match(START, M1, M2, BREAKING), match(START, M1, M3, BREAKING),
        match(START, M1, BREAKING));
    assertTrue(noPartialsLeft(p, events));
  }

  @Test
  void testUntilConditionFollowedByOneOrMoreConsecutive() {
    PatternBuilder p = withEnd(untilFollowedBy("relaxed", false, "consecutive"));
    String[] events = {START, M1, M2, BREAKING, IGNORED};
    assertMatches(matches(p, events), match(START, M1, M2, BREAKING), match(START, M1, BREAKING));
    assertTrue(noPartialsLeft(p, events));
  }

  @Test
  void testUntilConditionFollowedByZeroOrMore() {
    PatternBuilder p = withEnd(untilFollowedBy("relaxed", true, "relaxed"));
    String[] events = {START, M1, M2, BREAKING, IGNORED};
    assertMatches(matches(p, events), match(START, M1, M2, BREAKING), match(START, M1, BREAKING),
        match(START, BREAKING));
    assertTrue(noPartialsLeft(p, events));
  }

  @Test
  void testUntilConditionFollowedByZeroOrMoreCombinations() {
    PatternBuilder p = withEnd(untilFollowedBy("relaxed", true, "combinations"));
    String[] events = {START, M1, M2, M3, BREAKING, IGNORED};
    assertMatches(matches(p, events), match(START, M1, M2, M3, BREAKING),
        match(START, M1, M2, BREAKING), match(START, M1, M3, BREAKING),
        match(START, M1, BREAKING), match(START, BREAKING));
    assertTrue(noPartialsLeft(p, events));
  }

  @Test
  void testUntilConditionFollowedByZeroOrMoreConsecutive() {
    PatternBuilder p = withEnd(untilFollowedBy("relaxed", true, "consecutive"));
    String[] events = {START, M1, M2, BREAKING, IGNORED};
    assertMatches(matches(p, events), match(START, M1, M2, BREAKING), match(START, M1, BREAKING),
        match(START, BREAKING));
    assertTrue(noPartialsLeft(p, events));
  }

  private static final String AFTER = ev("middleEvent3", "a", 6.0);

  @Test
  void testUntilConditionFollowedByAnyOneOrMore() {
    PatternBuilder p = untilFollowedBy("any", false, "relaxed");
    assertMatches(matches(p, START, M1, M2, BREAKING, AFTER), match(START, M1, M2),
        match(START, M1), match(START, M2), match(START, AFTER));
  }

  @Test
  void testUntilConditionFollowedByAnyZeroOrMore() {
    PatternBuilder p = untilFollowedBy("any", true, "relaxed");
    assertMatches(matches(p, START, M1, M2, BREAKING, AFTER), match(START, M1, M2),
        match(START, M1), match(START, M2), match(START, AFTER), match(START));
  }

  @Test
  void testUntilConditionWithEmptyWhere() {
    String d = ev("middleEvent3", "d", 1.0);
    PatternBuilder p = begin("start", name("c")).followedBy("middle", any()).oneOrMore()
        .until(UNTIL);
    String[] events = {START, M1, M2, d, BREAKING, IGNORED};
    assertMatches(matches(p, events), match(START, M1, M2, d), match(START, M1, M2),
        match(START, M1));
    assertTrue(noPartialsLeft(p, events));
  }

  /** Flink's iterative until: the prices the loop {@code middle} took so far sum to 6. */
  private static PatternBuilder untilSumIsSix(boolean optional) {
    PatternBuilder p = begin("start", name("c")).followedBy("middle", any()).oneOrMore();
    if (optional) {
      p.optional();
    }
    return p.untilAggregate("sum", FlinkCases.PRICE, "middle", "==", 6.0);
  }

  private static final String D = ev("middleEvent3", "d", 1.0);

  @Test
  void testIterativeUntilConditionOneOrMore() {
    PatternBuilder p = untilSumIsSix(false);
    String[] events = {START, M1, M2, D, BREAKING, IGNORED};
    assertMatches(matches(p, events), match(START, M1, M2, D), match(START, M1, M2),
        match(START, M1));
    assertTrue(noPartialsLeft(p, events));
  }

  @Test
  void testIterativeUntilConditionZeroOrMore() {
    PatternBuilder p = untilSumIsSix(true);
    String[] events = {START, M1, M2, D, BREAKING, IGNORED};
    assertMatches(matches(p, events), match(START, M1, M2, D), match(START, M1, M2),
        match(START, M1), match(START));
    assertTrue(noPartialsLeft(p, events));
  }
}
