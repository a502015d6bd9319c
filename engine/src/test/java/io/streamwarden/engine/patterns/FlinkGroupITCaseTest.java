package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.FlinkCases.assertMatches;
import static io.streamwarden.engine.patterns.FlinkCases.ev;
import static io.streamwarden.engine.patterns.FlinkCases.match;
import static io.streamwarden.engine.patterns.FlinkCases.matches;
import static io.streamwarden.engine.patterns.FlinkCases.name;
import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;

import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import org.junit.jupiter.api.Test;

/**
 * Flink CEP's {@code GroupITCase}. Group patterns (a sub-pattern with a quantifier) are not in
 * the DSL; the three cases whose group has no quantifier are the same pattern with the group's
 * stages written in line, and are ported so. The other fifteen are not ported.
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
}
