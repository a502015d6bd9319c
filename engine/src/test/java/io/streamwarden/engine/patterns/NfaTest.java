package io.streamwarden.engine.patterns;

import static io.streamwarden.engine.patterns.NfaTestUtilities.any;
import static io.streamwarden.engine.patterns.NfaTestUtilities.begin;
import static io.streamwarden.engine.patterns.NfaTestUtilities.named;
import static io.streamwarden.engine.patterns.NfaTestUtilities.only;
import static io.streamwarden.engine.patterns.NfaTestUtilities.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.patterns.NfaTestUtilities.KeyDriver;
import io.streamwarden.engine.patterns.NfaTestUtilities.PatternBuilder;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The NFA of {@link Nfa} in the style of Flink CEP's {@code NFAITCase}: events with explicit
 * times in, matches, timeouts and overflows out, no Spark. The cases follow
 * tests/operators/test_pattern_semantics.py, many from Flink's CEP documentation.
 */
class NfaTest {
  private static final long TEN_S = 10_000L;

  private static PatternBuilder aThenB(String contiguity) {
    PatternBuilder p = begin("a", named("a"));
    switch (contiguity) {
      case "next":
        return p.next("b", named("b"));
      case "followed_by":
        return p.followedBy("b", named("b"));
      default:
        return p.followedByAny("b", named("b"));
    }
  }

  private static List<String> sorted(List<String> lines) {
    List<String> copy = new ArrayList<>(lines);
    Collections.sort(copy);
    return copy;
  }

  // -- contiguity ----------------------------------------------------------------------------

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "next|", "followed_by|match a b1", "followed_by_any|match a b1;match a b2"})
  void contiguityBetweenStages(String contiguity, String expected) {
    List<String> want = expected == null ? List.of() : List.of(expected.split(";"));
    assertEquals(want, run(aThenB(contiguity), "a", "c", "b1", "b2"));
  }

  private static PatternBuilder cThenAsThenB(boolean consecutive) {
    PatternBuilder p = begin("start", named("C")).followedBy("middle", named("A")).oneOrMore();
    if (consecutive) {
      p.consecutive();
    }
    return p.followedBy("end", named("B"));
  }

  @Test
  void aConsecutiveLoopBreaksOnANonMatchingEvent() {
    assertEquals(List.of("match C A1 A2 A3 B", "match C A1 A2 B", "match C A1 B"),
        sorted(run(cThenAsThenB(true), "C", "D", "A1", "A2", "A3", "D", "A4", "B")));
  }

  @Test
  void aRelaxedLoopIgnoresNonMatchingEvents() {
    assertEquals(List.of("match C A1 A2 A3 A4 B", "match C A1 A2 A3 B", "match C A1 A2 B",
        "match C A1 B"),
        sorted(run(cThenAsThenB(false), "C", "D", "A1", "A2", "A3", "D", "A4", "B")));
  }

  // -- after-match skip strategies (Flink docs: `b+ c` on b1 b2 b3 c) --------------------------

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "no_skip||match b1 b2 b3 c;match b2 b3 c;match b3 c",
      "skip_to_next||match b1 b2 b3 c;match b2 b3 c;match b3 c",
      "skip_past_last_event||match b1 b2 b3 c",
      "skip_to_first|b|match b1 b2 b3 c;match b2 b3 c;match b3 c",
      "skip_to_last|b|match b1 b2 b3 c;match b3 c"})
  void skipStrategiesOnFlinksExample(String skip, String stage, String expected) {
    PatternBuilder p = begin("b", named("b")).oneOrMore().next("c", named("c")).skip(skip, stage);
    assertEquals(List.of(expected.split(";")), run(p, "b1", "b2", "b3", "c"));
  }

  @Test
  void skipToNextVersusNoSkipOnALoopAtTheEnd() {
    PatternBuilder p = begin("a", named("a")).followedBy("b", named("b")).oneOrMore();
    assertEquals(List.of("match a b1", "match a b1 b2", "match a b1 b2 b3"),
        run(p, "a", "b1", "b2", "b3"));
    assertEquals(List.of("match a b1"), run(p.skip("skip_to_next"), "a", "b1", "b2", "b3"));
  }

  /** Flink docs: {@code (a | b | c) (b | c) c+.greedy d} on {@code a b c1 c2 c3 d}. */
  private static PatternBuilder abcGreedy() {
    return begin("x", named("a").or(named("b")).or(named("c")))
        .next("y", named("b").or(named("c")))
        .next("z", named("c")).oneOrMore().greedy().consecutive()
        .next("w", named("d"));
  }

  @Test
  void aGreedyLoopWithoutSkip() {
    assertEquals(List.of("match a b c1 c2 c3 d", "match b c1 c2 c3 d", "match c1 c2 c3 d"),
        run(abcGreedy(), "a", "b", "c1", "c2", "c3", "d"));
  }

  @Test
  void skipToFirstOfTheGreedyStage() {
    assertEquals(List.of("match a b c1 c2 c3 d", "match c1 c2 c3 d"),
        run(abcGreedy().skip("skip_to_first", "z"), "a", "b", "c1", "c2", "c3", "d"));
  }

  // -- quantifiers ---------------------------------------------------------------------------

  @Test
  void timesExactlyTakesThatManyEvents() {
    PatternBuilder p = begin("a", named("a")).times(3).skip("skip_past_last_event");
    assertEquals(List.of("match a1 a2 a3"), run(p, "a1", "a2", "a3", "a4"));
  }

  @Test
  void aTimesRangeReportsEachLength() {
    PatternBuilder p = begin("s", named("s")).followedBy("a", named("a")).times(2, 3);
    assertEquals(List.of("match s a1 a2", "match s a1 a2 a3"),
        run(p, "s", "a1", "x", "a2", "a3", "a4"));
  }

  @Test
  void anOptionalStageMayBeSkipped() {
    PatternBuilder p = begin("a", named("a")).followedBy("b", named("b")).optional()
        .followedBy("c", named("c"));
    assertEquals(List.of("match a c"), run(p, "a", "x", "c"));
    assertEquals(List.of("match a b c", "match a c"), sorted(run(p, "a", "b", "c")));
  }

  @Test
  void anOptionalLastStageReportsTheMatchWithoutItAndWithIt() {
    PatternBuilder single = begin("a", named("a")).followedBy("b", named("b")).optional();
    assertEquals(List.of("match a", "match a b"), run(single, "a", "b"));
    PatternBuilder loop = begin("a", named("a")).followedBy("b", named("b")).oneOrMore()
        .optional();
    assertEquals(List.of("match a", "match a b1", "match a b1 b2"),
        run(loop, "a", "b1", "x", "b2"));
    assertEquals(List.of("match a"), run(single.skip("skip_past_last_event"), "a", "b"));
  }

  @Test
  void aMatchThatCouldHaveGrownIsNotReportedAgainAsTimedOut() {
    PatternBuilder p = begin("a", named("a")).followedBy("b", named("b")).optional()
        .emitTimeouts();
    KeyDriver key = new KeyDriver(p.plan());
    List<String> out = new ArrayList<>(key.batch(-1, p.stream("a", "x")));
    out.addAll(key.watermark(2000 + NfaTestUtilities.HOUR_MS + 1));
    assertEquals(List.of("match a"), out);
    assertTrue(key.state.holdsNothing());
  }

  @Test
  void aGreedyLoopTakesEventsTheNextStageWouldAlsoAccept() {
    PatternBuilder plain = begin("s", named("s")).followedBy("n", named("n")).oneOrMore()
        .followedBy("e", named("n2"));
    PatternBuilder greedy = begin("s", named("s")).followedBy("n", named("n")).oneOrMore()
        .greedy().followedBy("e", named("n2"));
    assertEquals(List.of("match s n1 n2"), run(plain, "s", "n1", "n2"));
    assertEquals(List.of(), run(greedy, "s", "n1", "n2")); // the loop took n2
  }

  // -- negations -----------------------------------------------------------------------------

  @Test
  void notNextDiscardsWhenTheVeryNextEventMeetsIt() {
    PatternBuilder p = begin("a", named("a")).notNext("no", named("x"))
        .followedBy("b", named("b"));
    assertEquals(List.of(), run(p, "a", "x", "b"));
    assertEquals(List.of("match a b"), run(p, "a", "y", "x", "b"));
  }

  @Test
  void notFollowedByDiscardsOnAnyEventBeforeTheNextStage() {
    PatternBuilder p = begin("a", named("a")).notFollowedBy("no", named("x"))
        .followedBy("b", named("b"));
    assertEquals(List.of(), run(p, "a", "y", "x", "b"));
    assertEquals(List.of("match a b"), run(p, "a", "y", "b", "x"));
  }

  @Test
  void notFollowedByAtTheEndMatchesWhenTheWindowClosesClean() {
    PatternBuilder p = begin("a", named("a")).notFollowedBy("no", named("x")).within(TEN_S);
    KeyDriver key = new KeyDriver(p.plan());
    assertEquals(List.of(), key.batch(-1, p.stream("a1", "y")));
    assertEquals(List.of(), key.watermark(TEN_S)); // the window of a1 (at 1 s) is still open
    assertEquals(List.of("match a1"), key.watermark(TEN_S + 1000));
    assertEquals(List.of(), run(p, "a1", "y", "x"));
  }

  @Test
  void aLoopBeforeAFinalNotFollowedByReportsEachMatchOnce() {
    PatternBuilder combinations = begin("a", named("a")).oneOrMore().allowCombinations()
        .notFollowedBy("c", named("c")).within(TEN_S);
    assertEquals(List.of("match a1", "match a1 a2", "match a2"),
        sorted(run(combinations, "a1", "a2")));
    PatternBuilder plain = begin("a", named("a")).oneOrMore().notFollowedBy("c", named("c"))
        .within(TEN_S);
    assertEquals(List.of("match a"), run(plain, "a", "x"));
  }

  // -- within and timeouts -------------------------------------------------------------------

  @Test
  void aPartialMatchHeldAtTwoNfaPositionsTimesOutOnce() {
    PatternBuilder p = begin("a", named("a")).oneOrMore().followedBy("b", named("b"))
        .within(TEN_S).emitTimeouts();
    assertEquals(List.of("timeout a @11000"), run(p, "a", "x"));
  }

  @Test
  void eventsFurtherApartThanTheWindowDoNotMatch() {
    PatternBuilder p = aThenB("followed_by").within(TEN_S);
    assertEquals(List.of("match a b"), run(p, "a", "b"));
    KeyDriver key = new KeyDriver(p.plan());
    List<String> out = new ArrayList<>(
        key.batch(-1, List.of(p.event("a", 1), p.event("b", TEN_S + 1))));
    out.addAll(key.watermark(3 * TEN_S));
    assertEquals(List.of(), out);
    assertTrue(key.state.holdsNothing());
  }

  @Test
  void timedOutPartialMatchesAreReportedOnceAtTheirDeadline() {
    PatternBuilder p = aThenB("followed_by").within(TEN_S).emitTimeouts();
    KeyDriver key = new KeyDriver(p.plan());
    assertEquals(List.of(), key.batch(-1, p.stream("a1", "x")));
    assertEquals(List.of(), key.watermark(5_000));
    assertEquals(List.of("timeout a1 @11000"), key.watermark(20_000));
    assertEquals(List.of(), key.watermark(40_000));
    assertTrue(key.state.holdsNothing());
  }

  @Test
  void eventsAreMatchedInEventTimeOrderAcrossBatches() {
    PatternBuilder p = aThenB("next");
    KeyDriver key = new KeyDriver(p.plan());
    List<String> out = new ArrayList<>(key.batch(0, List.of(p.event("b", 2000))));
    out.addAll(key.batch(500, List.of(p.event("a", 1000))));
    assertEquals(2, key.state.buffer.size()); // both wait for the watermark
    out.addAll(key.watermark(3000));
    assertEquals(List.of("match a b"), out);
  }

  @Test
  void theNextDeadlineIsTheFirstWaitingEventOrTheEarliestWindowEnd() {
    PatternBuilder p = aThenB("followed_by").within(30_000);
    KeyDriver key = new KeyDriver(p.plan());
    assertEquals(KeyState.NO_TIMER, key.nfa.nextDeadline(key.state));
    key.batch(0, p.stream("a", "x", "y")); // all three wait: the first at 1 s is due first
    assertEquals(1000, key.nfa.nextDeadline(key.state));
    key.watermark(3000); // {a} waits for a b until 1 s + 30 s
    assertEquals(31_000, key.nfa.nextDeadline(key.state));
    key.watermark(31_000);
    assertTrue(key.state.holdsNothing());
    assertEquals(KeyState.NO_TIMER, key.nfa.nextDeadline(key.state));
  }

  // -- conditions on earlier events ----------------------------------------------------------

  @Test
  void wherePreviousComparesNumbersAsNumbers() {
    PatternBuilder numeric = begin("a", any()).followedBy("b", any())
        .wherePrevious(">", "a", true);
    assertEquals(List.of("match 9 10"), run(numeric, "9", "10"));
    PatternBuilder text = begin("a", any()).followedBy("b", any())
        .wherePrevious(">", "a", false);
    assertEquals(List.of(), run(text, "9", "10")); // as text, "10" > "9" is false
  }

  // -- caps ----------------------------------------------------------------------------------

  @Test
  void partialMatchesPerKeyAreCappedAndTheOverflowReported() {
    PatternBuilder p = aThenB("followed_by").maxPartialsPerKey(3);
    KeyDriver key = new KeyDriver(p.plan());
    List<String> out = key.batch(-1, p.stream("a1", "a2", "a3", "a4", "a5"));
    out = new ArrayList<>(out);
    out.addAll(key.watermark(10_000));
    assertEquals(List.of("overflow 1", "overflow 1"), out);
    assertEquals(3, key.state.partials.size());
  }

  @Test
  void theBufferCapRefusesTheLastEventsInContentOrderAndCountsOnlyWaitingOnes() {
    PatternBuilder p = aThenB("followed_by");
    KeyState s = new KeyState();
    Nfa nfa = new Nfa(p.plan());
    List<PEvent> fresh = p.stream("a", "b", "a", "b", "a");
    Collections.reverse(fresh); // delivery order does not matter
    List<String> sources = new ArrayList<>();
    for (PEvent e : fresh) {
      sources.add(e.values[0] + "@" + e.tsMs);
    }
    assertEquals(List.of("b@4000", "a@5000"), BufferCap.refuse(s, fresh, sources, 3, 0));
    nfa.buffer(s, fresh);
    assertEquals(3, BufferCap.waiting(s, 0));
    assertEquals(1, BufferCap.waiting(s, 2000)); // the watermark has passed two of them
    List<PEvent> more = new ArrayList<>(List.of(p.event("b", 6000)));
    assertEquals(List.of("b@6000"), BufferCap.refuse(s, more, List.of("b@6000"), 3, 500));
    assertTrue(more.isEmpty());
  }

  // -- state ---------------------------------------------------------------------------------

  @Test
  void keyStateSurvivesItsBinaryEncodingWithSharedEvents() {
    PatternBuilder p = aThenB("followed_by_any").emitTimeouts();
    KeyDriver key = new KeyDriver(p.plan());
    key.batch(1500, p.stream("a", "b1", "b2", "b3"));
    KeyState copy = KeyState.decode(key.state.encode());
    assertEquals(key.state.buffer.size(), copy.buffer.size());
    assertEquals(key.state.partials, copy.partials);
    assertEquals(key.state.nextSeq, copy.nextSeq);
    assertFalse(copy.holdsNothing());
    // the decoded state goes on exactly as the original would
    KeyDriver again = new KeyDriver(p.plan());
    List<String> fromCopy = new ArrayList<>();
    Nfa nfa = again.nfa;
    List<Found> found = new ArrayList<>();
    nfa.advance(copy, 10_000, found);
    fromCopy.addAll(NfaTestUtilities.describe(found));
    assertEquals(key.watermark(10_000), fromCopy);
  }

  @Test
  void aKeyStateOfTheFirstFormatIsReadSoAnEarlierCheckpointRestarts() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    out.writeByte(1); // the format before held matches and committed branches
    out.writeLong(7); // nextSeq
    out.writeLong(3); // nextOrd
    out.writeLong(61_000); // timer
    out.writeInt(0); // nothing buffered
    out.writeInt(1); // one event taken by partial matches
    out.writeLong(1000); // its time, mask, seq, ord, one value
    out.writeLong(1);
    out.writeLong(5);
    out.writeLong(2);
    out.writeShort(1);
    out.writeBoolean(true);
    out.writeUTF("a");
    out.writeInt(1); // one partial match: stage 0, count 1, no guard, the event at stage 0
    out.writeInt(0);
    out.writeInt(1);
    out.writeInt(-1);
    out.writeInt(1);
    out.writeInt(0);
    out.writeInt(0);
    out.flush();

    KeyState old = KeyState.decode(bytes.toByteArray());

    assertEquals(7, old.nextSeq);
    assertEquals(61_000, old.timerMs);
    assertEquals(1, old.partials.size());
    assertFalse(old.partials.get(0).committed);
    assertTrue(old.held.isEmpty());
    assertEquals("a", old.partials.get(0).events.get(0).values[0]);
    // written back in the current format, it reads the same
    assertEquals(old.partials, KeyState.decode(old.encode()).partials);
  }

  @Test
  void aKeyStateOfAnUnknownFormatIsRefusedSayingWhatToDo() {
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> KeyState.decode(new byte[] {9, 0}));
    assertTrue(e.getMessage().contains("new checkpoint location"), e.getMessage());
  }

  // -- matches held under a skip strategy -----------------------------------------------------

  /** An event named {@code name} with a second field, {@code value}, for comparisons. */
  private static PEvent valued(PatternBuilder p, String name, String value, long tsMs) {
    return new PEvent(tsMs, p.event(name, tsMs).mask, new String[] {name, value});
  }

  @Test
  void aHeldMatchIsReleasedWhenTheEarlierPartialDiesNotOnlyAtItsDeadline() {
    // a !x b, b's value equal to a's: [a2 b2] completes while [a1] (earlier) is still open, so
    // it waits; x then discards [a1], and [a2 b2] is reported at x, not at a1's deadline
    PatternBuilder p = begin("a", named("a")).notFollowedBy("x", named("x"))
        .followedBy("b", named("b")).wherePrevious(1, "==", "a", false)
        .skip("skip_past_last_event");
    KeyDriver key = new KeyDriver(p.plan());
    assertEquals(List.of(), key.batch(3000, List.of(valued(p, "a1", "1", 1000),
        valued(p, "a2", "2", 2000), valued(p, "b2", "2", 3000))));
    assertEquals(1, key.state.held.size());
    assertEquals(List.of("match a2 b2"), key.batch(4000, List.of(valued(p, "x", "0", 4000))));
    assertTrue(key.state.holdsNothing());
  }

  // -- within between consecutive events --------------------------------------------------------

  @Test
  void aGapLongerThanWithinConsecutiveEndsThePartialMatchAtItsLastEventPlusTheGap() {
    PatternBuilder p = begin("a", named("a")).followedBy("b", named("b")).oneOrMore()
        .followedBy("c", named("c")).within(100_000).withinConsecutive(5_000).emitTimeouts();
    KeyDriver key = new KeyDriver(p.plan());
    List<String> out = new ArrayList<>(key.batch(-1, List.of(p.event("a", 1_000),
        p.event("b1", 3_000), p.event("b2", 7_000), p.event("c", 20_000))));
    out.addAll(key.watermark(200_000));
    // b2 came 4 s after b1, c 13 s after b2: each partial ends 5 s after its last event
    assertEquals(List.of("timeout a b1 @8000", "timeout a b1 b2 @12000"), sorted(out));
    PatternBuilder q = begin("a", named("a")).followedBy("b", named("b")).oneOrMore()
        .followedBy("c", named("c")).within(100_000).withinConsecutive(5_000);
    assertEquals(List.of("match a b1 b2 c", "match a b1 c"),
        sorted(only("match", run(q, "a", "x", "b1", "x", "b2", "x", "c"))));
  }

  @Test
  void aLoopGapEndsTheWaitForTheLoopsFirstEventsButNotTheWaitAfterItsMinimum() {
    PatternBuilder p = begin("a", named("a")).followedBy("b", named("b")).timesOrMore(2, 5_000)
        .followedBy("c", named("c")).within(100_000).emitTimeouts();
    KeyDriver key = new KeyDriver(p.plan());
    List<String> out = new ArrayList<>(key.batch(-1, List.of(p.event("a1", 1_000),
        p.event("a2", 10_000), p.event("b1", 12_000), p.event("b2", 14_000),
        p.event("b3", 40_000))));
    out.addAll(key.watermark(200_000));
    // a1 waited more than 5 s for its first b; a2's loop has its two b by 14 s, after which
    // the wait (26 s for b3, then for c, with or without b3) is bounded by within alone
    assertEquals(List.of("timeout a1 @6000", "timeout a2 b1 b2 @110000",
        "timeout a2 b1 b2 b3 @110000"), sorted(out));
  }

  /** A plan whose two stages' extra fields are {@code first} and {@code second}. */
  private static String twoStagePlan(String first, String second) {
    String stage = "{\"name\": \"%s\", \"kind\": \"normal\", \"contiguity\": \"relaxed\","
        + " \"inner\": \"relaxed\", \"min\": 1, \"max\": 1%s}";
    return "{\"stages\": [" + String.format(stage, "a", first) + ", "
        + String.format(stage, "b", second) + "], \"within_ms\": 1000, \"skip\": {\"kind\":"
        + " \"no_skip\"}, \"max_partials_per_key\": 10, \"max_buffered_per_key\": 10,"
        + " \"emit_timeouts\": false, \"slow_key_threshold_ms\": 0}";
  }

  @Test
  void groupEdgesOfAPlanAreChecked() {
    PatternPlan ok = PatternPlan.fromJson(twoStagePlan(", \"optional\": true, \"skip_to\": 2",
        ", \"loop_to\": 0"));
    assertEquals(2, ok.stages.get(0).skipTo);
    assertEquals(0, ok.stages.get(1).loopTo);
    assertEquals(2, ok.stages.get(1).skipTo); // the default: the next stage
    assertThrows(IllegalArgumentException.class,
        () -> PatternPlan.fromJson(twoStagePlan(", \"skip_to\": 2", ""))); // not optional
    assertThrows(IllegalArgumentException.class,
        () -> PatternPlan.fromJson(twoStagePlan(", \"optional\": true, \"skip_to\": 0", "")));
    assertThrows(IllegalArgumentException.class,
        () -> PatternPlan.fromJson(twoStagePlan("", ", \"loop_to\": 0"))); // to a mandatory
  }
}
