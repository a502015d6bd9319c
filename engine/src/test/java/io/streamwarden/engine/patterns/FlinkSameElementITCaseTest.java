package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.FlinkCases.PRICE;
import static io.streamwarden.engine.patterns.FlinkCases.assertMatches;
import static io.streamwarden.engine.patterns.FlinkCases.ev;
import static io.streamwarden.engine.patterns.FlinkCases.match;
import static io.streamwarden.engine.patterns.FlinkCases.matches;
import static io.streamwarden.engine.patterns.FlinkCases.name;
import static io.streamwarden.engine.patterns.NfaTestUtilities.any;
import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.patterns.NfaTestUtilities.KeyDriver;
import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Flink CEP's {@code SameElementITCase}: events equal to each other (Flink compares events by
 * value, so equal events carry the same label here), all eight cases.
 *
 * <p>Ported from apache/flink at commit 171709aa.
 */
class FlinkSameElementITCaseTest {
  private static final String START = ev("startEvent", "c", 1.0);

  @Test
  void testEagerZeroOrMoreSameElement() {
    String m1 = ev("middleEvent1", "a", 2.0), m2 = ev("middleEvent2", "a", 3.0);
    String m3 = ev("middleEvent3", "a", 4.0), end1 = ev("end1", "b", 5.0);
    String d = ev("d", "d", 6.0);
    PatternBuilder p = begin("start", name("c")).followedBy("middle", name("a")).oneOrMore()
        .optional().followedBy("end1", name("b"));
    assertMatches(matches(p, START, m1, m1, m1, m2, d, m3, m3, end1),
        match(START, m1, m1, m1, m2, m3, m3, end1), match(START, m1, m1, m1, m2, m3, end1),
        match(START, m1, m1, m1, m2, end1), match(START, m1, m1, m1, end1),
        match(START, m1, m1, end1), match(START, m1, end1), match(START, end1));
  }

  @Test
  void testClearingBuffer() {
    String a1 = ev("a1", "a", 1.0), b1 = ev("b1", "b", 2.0), c1 = ev("c1", "c", 2.0);
    String d = ev("d", "d", 2.0);
    PatternBuilder p = begin("a", name("a")).followedBy("b", name("b"))
        .followedBy("c", name("c")).followedBy("d", name("d"));
    KeyDriver key = new KeyDriver(p.plan());
    List<String> out = key.batch(10_000, new ArrayList<>(p.stream(a1, b1, c1, d)));
    assertEquals(List.of("match " + String.join(" ", a1, b1, c1, d)), out);
    assertTrue(key.state.partials.isEmpty(), "only the start state remains (held implicitly)");
  }

  @Test
  void testZeroOrMoreSameElement() {
    String m1 = ev("middleEvent1", "a", 2.0), m2 = ev("middleEvent2", "a", 3.0);
    String m3 = ev("middleEvent3", "a", 4.0), end1 = ev("end1", "b", 5.0);
    String d = ev("d", "d", 6.0);
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).oneOrMore()
        .optional().allowCombinations().followedByAny("end1", name("b"));
    // middleEvent1a and middleEvent3a equal middleEvent1 and middleEvent3
    assertMatches(matches(p, START, m1, m1, m2, d, m3, m3, end1),
        match(START, m1, m1, m2, m3, m3, end1),
        match(START, m1, m1, m2, m3, end1), match(START, m1, m1, m2, m3, end1),
        match(START, m1, m1, m3, m3, end1), match(START, m1, m2, m3, m3, end1),
        match(START, m1, m2, m3, m3, end1),
        match(START, m1, m1, m2, end1), match(START, m1, m1, m3, end1),
        match(START, m1, m1, m3, end1), match(START, m1, m2, m3, end1),
        match(START, m1, m2, m3, end1), match(START, m1, m3, m3, end1),
        match(START, m2, m3, m3, end1), match(START, m1, m2, m3, end1),
        match(START, m1, m2, m3, end1), match(START, m1, m3, m3, end1),
        match(START, m1, m1, end1), match(START, m1, m2, end1), match(START, m1, m3, end1),
        match(START, m1, m3, end1), match(START, m1, m2, end1), match(START, m1, m3, end1),
        match(START, m1, m3, end1), match(START, m2, m3, end1), match(START, m2, m3, end1),
        match(START, m3, m3, end1),
        match(START, m1, end1), match(START, m1, end1), match(START, m2, end1),
        match(START, m3, end1), match(START, m3, end1),
        match(START, end1));
  }

  @Test
  void testSimplePatternWSameElement() {
    String m1 = ev("middleEvent1", "a", 2.0), end1 = ev("end1", "b", 5.0);
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a"))
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, m1, m1, end1), match(START, m1, end1),
        match(START, m1, end1));
  }

  @Test
  void testEndWLoopingWSameElement() {
    String m1 = ev("middleEvent1", "a", 2.0), end = ev("end", "b", 5.0);
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).oneOrMore()
        .optional();
    // middleEvent1a and middleEvent1b equal middleEvent1
    assertMatches(matches(p, START, m1, m1, m1, end), match(START), match(START, m1),
        match(START, m1), match(START, m1), match(START, m1, m1), match(START, m1, m1),
        match(START, m1, m1, m1));
  }

  @Test
  void testRepeatingPatternWSameElement() {
    String m11 = ev("middle1Event1", "a", 2.0), m12 = ev("middle1Event2", "a", 3.0);
    String m13 = ev("middle1Event3", "a", 4.0), m21 = ev("middle2Event1", "b", 5.0);
    String d = ev("d", "d", 6.0);
    PatternBuilder p = begin("start", name("c")).followedBy("middle1", name("a")).oneOrMore()
        .optional().followedBy("middle2", name("b")).optional().followedBy("end", name("a"));
    assertMatches(matches(p, START, m11, m11, m12, d, m21, m13), match(START, m11),
        match(START, m11, m11), match(START, m21, m13),
        match(START, m11, m11, m12), match(START, m11, m21, m13),
        match(START, m11, m11, m12, m13), match(START, m11, m11, m21, m13),
        match(START, m11, m11, m12, m21, m13));
  }

  @Test
  void testIterativeConditionWSameElement() {
    String m1 = ev("middleEvent1", "a", 2.0), end = ev("end", "b", 5.0);
    PatternBuilder p = begin("start", name("c")).followedByAny("middle", name("a")).oneOrMore()
        .optional().allowCombinations().followedBy("end", any())
        .whereAggregate("sum", PRICE, "middle", "==", 4.0);
    // middleEvent1a and middleEvent1b equal middleEvent1
    assertMatches(matches(p, START, m1, m1, m1, end), match(START, m1, m1, end),
        match(START, m1, m1, m1), match(START, m1, m1, end));
  }

  @Test
  void testClearingBufferWithUntilAtTheEnd() {
    String a1 = ev("a1", "a", 1.0), d = ev("d1", "d", 2.0); // d1 to d4 are equal
    PatternBuilder p = begin("a", name("a")).followedBy("d", name("d")).oneOrMore()
        .untilAggregate("count", -1, "d", "==", 3);
    String[] events = {a1, d, d, d, d};
    assertMatches(matches(p, events), match(a1, d, d, d), match(a1, d, d), match(a1, d));
    assertTrue(FlinkCases.noPartialsLeft(p, events));
  }
}
