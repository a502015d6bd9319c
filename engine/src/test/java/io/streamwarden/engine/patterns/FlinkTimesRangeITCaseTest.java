package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.FlinkCases.assertMatches;
import static io.streamwarden.engine.patterns.FlinkCases.match;
import static io.streamwarden.engine.patterns.FlinkCases.matches;
import static io.streamwarden.engine.patterns.FlinkCases.name;
import static io.streamwarden.engine.patterns.FlinkTimesOrMoreITCaseTest.END;
import static io.streamwarden.engine.patterns.FlinkTimesOrMoreITCaseTest.F;
import static io.streamwarden.engine.patterns.FlinkTimesOrMoreITCaseTest.M1;
import static io.streamwarden.engine.patterns.FlinkTimesOrMoreITCaseTest.M2;
import static io.streamwarden.engine.patterns.FlinkTimesOrMoreITCaseTest.M3;
import static io.streamwarden.engine.patterns.FlinkTimesOrMoreITCaseTest.START;
import static io.streamwarden.engine.patterns.FlinkTimesOrMoreITCaseTest.start;

import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import org.junit.jupiter.api.Test;

/**
 * Flink CEP's {@code TimesRangeITCase} (Flink's {@code ConsecutiveData} events), all twelve
 * cases; {@code times(0, m)} is {@code times(1, m).optional()}, as Flink compiles it.
 *
 * <p>Ported from apache/flink at commit 08c3b6c4.
 */
class FlinkTimesRangeITCaseTest {
  @Test
  void testTimesRange() {
    PatternBuilder p = start().next("middle", name("a")).times(1, 3).allowCombinations()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, M1, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M1, M3, END), match(START, M1, END));
  }

  @Test
  void testTimesRangeFromZero() {
    PatternBuilder p = start().next("middle", name("a")).times(0, 2).allowCombinations()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, M1, M2, M3, END), match(START, M1, M2, END),
        match(START, M1, M3, END), match(START, M1, END), match(START, END));
  }

  @Test
  void testTimesRangeStrict() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(0, 3).consecutive()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, M1, F, M2, M3, END), match(START, M2, M3, END),
        match(START, M1, END), match(START, M2, END), match(START, M3, END), match(START, END));
  }

  @Test
  void testTimesRangeNonStrict() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(1, 3)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, M1, F, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M1, M3, END), match(START, M2, M3, END),
        match(START, M1, END), match(START, M2, END), match(START, M3, END));
  }

  @Test
  void testTimesRangeStrictOptional() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(1, 3).consecutive()
        .optional().followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, M1, F, M2, M3, END), match(START, M2, M3, END),
        match(START, M1, END), match(START, M2, END), match(START, M3, END), match(START, END));
  }

  @Test
  void testTimesRangeStrictOptional1() {
    PatternBuilder p = start().next("middle", name("a")).times(1, 3).consecutive().optional()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, M1, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M1, END), match(START, END));
  }

  @Test
  void testTimesRangeNonStrictOptional1() {
    PatternBuilder p = start().followedBy("middle", name("a")).times(1, 3).optional()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, END), match(START, END));
  }

  @Test
  void testTimesRangeNonStrictOptional2() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(2, 3)
        .allowCombinations().optional().followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, M1, F, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M1, M3, END), match(START, M2, M3, END),
        match(START, END));
  }

  @Test
  void testTimesRangeNonStrictOptional3() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(2, 3).optional()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, F, M1, F, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M2, M3, END), match(START, END));
  }

  @Test
  void testTimesRangeNonStrictWithNext() {
    PatternBuilder p = start().next("middle", name("a")).times(2, 3).allowCombinations()
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, M1, F, M2, F, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M1, M3, END));
  }

  @Test
  void testTimesRangeNotStrictWithFollowedBy() {
    PatternBuilder p = start().followedBy("middle", name("a")).times(2, 3)
        .followedBy("end1", name("b"));
    assertMatches(matches(p, START, M1, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END));
  }

  @Test
  void testTimesRangeNotStrictWithFollowedByAny() {
    PatternBuilder p = start().followedByAny("middle", name("a")).times(2, 3)
        .allowCombinations().followedBy("end1", name("b"));
    assertMatches(matches(p, START, M1, M2, M3, END), match(START, M1, M2, M3, END),
        match(START, M1, M2, END), match(START, M2, M3, END), match(START, M1, M3, END));
  }
}
