package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.FlinkCases.PRICE;
import static io.streamwarden.engine.patterns.FlinkCases.assertMatches;
import static io.streamwarden.engine.patterns.FlinkCases.ev;
import static io.streamwarden.engine.patterns.FlinkCases.match;
import static io.streamwarden.engine.patterns.FlinkCases.matches;
import static io.streamwarden.engine.patterns.FlinkCases.name;
import static io.streamwarden.engine.patterns.FlinkCases.sub;
import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;

import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Flink CEP's {@code IterativeConditionsITCase}. Its conditions sum the prices of a stage's
 * events (plus the current event's, for the loop's own condition) and compare the sum with a
 * bound; the engine's typed aggregate conditions ({@code where_aggregate}) express exactly
 * that. (The same seven cases are in older versions of {@code NFAITCase}.)
 *
 * <p>Ported from apache/flink at commit 2b4f9907.
 */
class FlinkIterativeConditionsITCaseTest {
  private static final String S1 = ev("startEvent1", "start", 1.0);
  private static final String S2 = ev("startEvent2", "start", 2.0);
  private static final String S3 = ev("startEvent3", "start", 3.0);
  private static final String S4 = ev("startEvent4", "start", 4.0);
  private static final String M1 = sub("middleEvent1", "foo1", 1.0, 10);
  private static final String M2 = sub("middleEvent2", "foo2", 2.0, 10);
  private static final String M3 = sub("middleEvent3", "foo3", 3.0, 10);
  private static final String M4 = sub("middleEvent4", "foo4", 1.0, 10);
  private static final String NEXT = ev("nextOne", "next-one", 1.0);
  private static final String END = ev("endEvent", "end", 1.0);

  /** {@code subtype(SubEvent.class)} with a name starting with {@code foo}. */
  private static final Predicate<String> FOO =
      e -> e.split(":").length == 4 && e.split(":")[1].startsWith("foo");

  private static List<String> branching(boolean eager) {
    PatternBuilder p = begin("start", name("start")).followedBy("middle", FOO).oneOrMore()
        .whereAggregate("sum", PRICE, "middle", "<", 5.0);
    if (!eager) {
      p.allowCombinations();
    }
    p.followedBy("end", name("end"));
    return matches(p, S1, M1, M2, S2, M3, M4, NEXT, END);
  }

  @Test
  void testIterativeWithBranchingPatternEager() {
    assertMatches(branching(true), match(S1, END, M1, M2, M4), match(S1, END, M2, M1),
        match(S1, END, M1), match(S2, END, M3, M4), match(S2, END, M3));
  }

  @Test
  void testIterativeWithBranchingPatternCombinations() {
    assertMatches(branching(false), match(S1, END, M1, M2, M4), match(S1, END, M2, M1),
        match(S1, END, M3, M1), match(S2, END, M3, M4), match(S1, END, M4, M1),
        match(S1, END, M1), match(S2, END, M3));
  }

  private static List<String> loopingStarting(boolean eager) {
    PatternBuilder p = begin("start", name("start"))
        .whereAggregate("sum", PRICE, "start", "<", 5.0).oneOrMore();
    if (!eager) {
      p.allowCombinations();
    }
    p.optional().followedBy("end", name("end"));
    return matches(p, S1, S2, S3, END);
  }

  @Test
  void testIterativeWithLoopingStartingEager() {
    assertMatches(loopingStarting(true), match(S1, S2, END), match(S1, END), match(S2, END),
        match(S3, END), match(END));
  }

  @Test
  void testIterativeWithLoopingStartingCombination() {
    assertMatches(loopingStarting(false), match(S1, S2, END), match(S1, S3, END),
        match(S1, END), match(S2, END), match(S3, END), match(END));
  }

  @Test
  void testIterativeWithPrevPatternDependency() {
    PatternBuilder p = begin("start", name("start")).oneOrMore().followedBy("end", name("end"))
        .whereAggregate("sum", PRICE, "start", ">=", 2.0);
    assertMatches(matches(p, S1, S2, END), match(S1, S2, END), match(S2, END));
  }

  @Test
  void testIterativeWithABACPattern() {
    PatternBuilder p = begin("start", name("start")).followedByAny("middle1", FOO)
        .followedBy("middle2", name("start")).whereAggregate("sum", PRICE, "middle2", "<=", 5.0)
        .oneOrMore().followedBy("end", name("end"));
    assertMatches(matches(p, S1, M1, S2, S3, M2, S4, M3, M4, END),
        match(S1, S2, S3, M1, END), match(S1, M1, S2, END), match(S1, M2, S4, END),
        match(S2, M2, S4, END), match(S3, M2, S4, END));
  }

  @Test
  void testIterativeWithPrevPatternDependencyAfterBranching() {
    PatternBuilder p = begin("start", name("start")).oneOrMore().followedByAny("middle1", FOO)
        .followedByAny("end", name("end")).whereAggregate("sum", PRICE, "start", ">=", 2.0);
    assertMatches(matches(p, S1, S2, M1, S3, M2, END), match(S1, S2, M1, END),
        match(S2, M1, END), match(S1, S2, M2, END), match(S1, S2, S3, M2, END),
        match(S2, S3, M2, END), match(S2, M2, END), match(S3, M2, END));
  }
}
