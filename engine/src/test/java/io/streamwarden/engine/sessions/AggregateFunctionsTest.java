package io.streamwarden.engine.sessions;

import static io.streamwarden.engine.sessions.SessionTestUtilities.at;
import static io.streamwarden.engine.sessions.SessionTestUtilities.oneAggregate;
import static io.streamwarden.engine.sessions.SessionTestUtilities.valued;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.streamwarden.engine.sessions.SessionTestUtilities.UserDriver;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What each aggregate function gives for a session, with explicit event times: nulls are
 * skipped (except by {@code count()}), ties in event time go by arrival, and sums are exact.
 * A gap of 30 minutes; each test's session closes at minute 100.
 */
class AggregateFunctionsTest {
  /** The aggregates of the one session that {@code batches} (at watermark 0) make. */
  private static List<Object> results(SessionPlan plan, Event[]... batches) {
    UserDriver u = new UserDriver(plan);
    for (Event[] batch : batches) {
      u.rawBatch(0, batch);
    }
    List<Emitted> out = u.rawWatermark(at(100));
    assertEquals(1, out.size(), "one session");
    return Arrays.asList(out.get(0).results);
  }

  private static Object result(String function, String kind, Event... events) {
    return results(oneAggregate(function, kind), events).get(0);
  }

  private static Event[] batch(Event... events) {
    return events;
  }

  // -- count ---------------------------------------------------------------------------------

  @Test
  void countWithoutInputCountsEveryEventAndWithAnInputItsValues() {
    SessionPlan plan = SessionTestUtilities.plan(30, 0, "[\"string\"]",
        "[{\"function\": \"count\"}, {\"function\": \"count\", \"input\": 0}]");
    assertEquals(List.of(3L, 2L),
        results(plan, batch(valued(at(1), "a"), valued(at(2), (Object) null),
            valued(at(3), "a"))));
  }

  // -- sum and avg ---------------------------------------------------------------------------

  @Test
  void aSumOfLongsIsExactAndNullWithoutValues() {
    assertEquals(Long.MAX_VALUE - 1, result("sum", "long", valued(at(1), Long.MAX_VALUE),
        valued(at(2), (Object) null), valued(at(3), -1L)));
    assertEquals(null, result("sum", "long", valued(at(1), (Object) null)));
  }

  @Test
  void aSumOfLongsThatOverflowsThrows() {
    UserDriver u = new UserDriver(oneAggregate("sum", "long"));
    u.rawBatch(0, valued(at(1), Long.MAX_VALUE));
    assertThrows(ArithmeticException.class, () -> u.rawBatch(0, valued(at(2), 1L)));
  }

  @ParameterizedTest(name = "{0} in batches of {1}")
  @CsvSource({"'1e16, 1.0, -1e16', 3", "'1e16, -1e16, 1.0', 1", "'1.0, 1e16, -1e16', 2",
      "'-1e16, 1e16, 1.0', 1", "'-1e16, 1.0, 1e16', 3"})
  void aSumOfDoublesIsTheExactSumRoundedOnceInAnyOrderAndBatching(String values, int size) {
    Event[] events = doubles(values);
    assertEquals(1.0, result("sum", "double", events));
    assertEquals(1.0, results(oneAggregate("sum", "double"), split(events, size)).get(0));
    assertEquals(1.0 / 3, result("avg", "double", events));
  }

  @Test
  void aSumOfTenTimesZeroPointOneIsOneAsTheExactSumRoundsTo() {
    Event[] events = new Event[10];
    for (int i = 0; i < 10; i++) {
      events[i] = valued(at(i), 0.1);
    }
    assertEquals(1.0, result("sum", "double", events)); // a double loop gives 0.9999999999999999
  }

  @Test
  void nanAndTheInfinitiesCombineAsInIeeeArithmetic() {
    assertEquals(Double.NaN, result("sum", "double", valued(at(1), 1.0),
        valued(at(2), Double.NaN)));
    assertEquals(Double.NaN, result("sum", "double", valued(at(1), Double.POSITIVE_INFINITY),
        valued(at(2), Double.NEGATIVE_INFINITY)));
    assertEquals(Double.NEGATIVE_INFINITY, result("avg", "double", valued(at(1), 1.0),
        valued(at(2), Double.NEGATIVE_INFINITY)));
  }

  @Test
  void anAverageIsTheExactSumOverTheCountOfValues() {
    assertEquals(1.5, result("avg", "long", valued(at(1), 1L), valued(at(2), (Object) null),
        valued(at(3), 2L)));
    assertEquals((double) (Long.MAX_VALUE - 1), result("avg", "long",
        valued(at(1), Long.MAX_VALUE), valued(at(2), Long.MAX_VALUE - 2)));
    assertEquals(null, result("avg", "double", valued(at(1), (Object) null)));
  }

  // -- min and max ---------------------------------------------------------------------------

  @Test
  void stringsCompareByCodePointNotByUtf16Unit() {
    // U+1F600 is a surrogate pair, below U+FFFD in UTF-16 units but above it as a code point
    Event[] events = {valued(at(1), "\uFFFD"), valued(at(2), "\uD83D\uDE00"),
        valued(at(3), "z")};
    assertEquals("z", result("min", "string", events));
    assertEquals("\uD83D\uDE00", result("max", "string", events));
    assertEquals(List.of("z", "\uFFFD", "\uD83D\uDE00"), result("collect_set", "string",
        events));
  }

  @Test
  void minAndMaxSkipNullsForEveryKind() {
    assertEquals(-3L, result("min", "long", valued(at(1), 5L), valued(at(2), (Object) null),
        valued(at(3), -3L)));
    assertEquals(2.5, result("max", "double", valued(at(1), -1.0), valued(at(2), 2.5)));
    assertEquals(false, result("min", "boolean", valued(at(1), true), valued(at(2), false)));
    assertEquals(true, result("max", "boolean", valued(at(1), true), valued(at(2), false)));
    assertEquals(null, result("max", "string", valued(at(1), (Object) null)));
  }

  // -- first and last ------------------------------------------------------------------------

  @Test
  void firstAndLastAreTheEarliestAndLatestValuesSkippingNulls() {
    Event[] events = {valued(at(3), "c"), valued(at(1), (Object) null), valued(at(2), "b"),
        valued(at(4), (Object) null)};
    assertEquals("b", result("first", "string", events));
    assertEquals("c", result("last", "string", events));
  }

  @Test
  void aTieInEventTimeGoesToTheEarlierArrivalForFirstAndTheLaterForLast() {
    // in one batch, in the order delivered
    assertEquals("x", result("first", "string", valued(at(5), "x"), valued(at(5), "y")));
    assertEquals("y", result("last", "string", valued(at(5), "x"), valued(at(5), "y")));
    assertEquals("y", result("first", "string", valued(at(5), "y"), valued(at(5), "x")));
    // across batches: the later batch arrived later
    SessionPlan first = oneAggregate("first", "string");
    SessionPlan last = oneAggregate("last", "string");
    assertEquals("x", results(first, batch(valued(at(5), "x")), batch(valued(at(5), "y")))
        .get(0));
    assertEquals("y", results(last, batch(valued(at(5), "x")), batch(valued(at(5), "y")))
        .get(0));
  }

  @Test
  void tiedLateEventsThatWaitForALaterEventKeepTheirArrivalOrder() {
    SessionPlan plan = SessionTestUtilities.plan(30, 0, "[\"string\"]",
        "[{\"function\": \"first\", \"input\": 0}, {\"function\": \"last\", \"input\": 0},"
            + " {\"function\": \"collect_list\", \"input\": 0}]");
    UserDriver u = new UserDriver(plan);
    // 80 is too late to start a session at watermark 100: both wait for 101's session
    u.rawBatch(at(100), valued(at(80), "x"), valued(at(80), "y"), valued(at(101), "z"));
    u.rawBatch(at(100), valued(at(80), "w"));
    List<Emitted> out = u.rawWatermark(at(200));
    assertEquals(List.of("x", "z", List.of("x", "y", "w", "z")),
        Arrays.asList(out.get(0).results));
  }

  // -- distinct values and lists -------------------------------------------------------------

  @Test
  void countDistinctAndCollectSetHoldEachValueOnceInAscendingOrder() {
    Event[] events = {valued(at(1), 2.0), valued(at(2), -0.0), valued(at(3), 0.0),
        valued(at(4), (Object) null), valued(at(5), 2.0), valued(at(6), -1.0)};
    assertEquals(3L, result("count_distinct", "double", events)); // -0.0 counts as 0.0
    assertEquals(List.of(-1.0, 0.0, 2.0), result("collect_set", "double", events));
    assertEquals(List.of(false, true), result("collect_set", "boolean", valued(at(1), true),
        valued(at(2), false), valued(at(3), true)));
  }

  @Test
  void collectListKeepsEventTimeOrderWithTiesInArrivalOrder() {
    SessionPlan plan = oneAggregate("collect_list", "long");
    assertEquals(List.of(1L, 2L, 3L, 4L, 5L), results(plan,
        batch(valued(at(3), 4L), valued(at(1), 1L), valued(at(2), 2L)),
        batch(valued(at(2), 3L), valued(at(4), (Object) null), valued(at(9), 5L))).get(0));
  }

  @Test
  void valuesThatAreAllNullGiveNullOrNothingCollected() {
    SessionPlan plan = SessionTestUtilities.plan(30, 0, SessionTestUtilities.EVERY_KIND,
        SessionTestUtilities.everyFunction());
    Event e = valued(at(1), null, null, null, null);
    List<Object> out = results(plan, batch(e));
    List<Object> expected = new ArrayList<>(List.of(1L));
    for (int input = 0; input < 4; input++) {
      expected.add(0L); // count
      // sum, min, max, avg, first, last over numbers; min, max, first, last over the others
      expected.addAll(Arrays.asList(new Object[input < 2 ? 6 : 4]));
      expected.addAll(Arrays.asList(0L, List.of(), List.of()));
    }
    assertEquals(expected, out);
  }

  // -- merges --------------------------------------------------------------------------------

  @Test
  void aLateEventBridgingTwoSessionsMergesEveryAggregateExactly() {
    SessionPlan plan = SessionTestUtilities.plan(30, 45, SessionTestUtilities.EVERY_KIND,
        SessionTestUtilities.everyFunction());
    List<Event> arrived = List.of(
        valued(at(0), 3L, 1e16, "b", true), valued(at(2), null, 1.0, "a", null),
        valued(at(33), 7L, -1e16, "\uD83D\uDE00", false), valued(at(35), 3L, 0.1, null, true),
        valued(at(15), -2L, -0.0, "b", false));
    UserDriver u = new UserDriver(plan);
    u.rawBatch(0, arrived.get(0), arrived.get(1), arrived.get(2), arrived.get(3));
    assertEquals(1, u.rawWatermark(at(34)).size()); // [0, 2] is emitted; [33, 35] is open
    u.reloadState();
    List<Emitted> merged = u.rawBatch(at(40), arrived.get(4));
    merged.addAll(u.rawWatermark(at(100)));
    assertEquals(1, merged.size());
    assertEquals(List.of(SessionLogic.sessionId(SessionTestUtilities.USER, at(0))),
        List.of(merged.get(0).session.getSessionId()));
    assertEquals(AggregateReference.compute(plan.aggregates, arrived),
        Arrays.asList(merged.get(0).results));
  }

  private static Event[] doubles(String csv) {
    String[] parts = csv.split(",");
    Event[] events = new Event[parts.length];
    for (int i = 0; i < parts.length; i++) {
      events[i] = valued(at(i), Double.parseDouble(parts[i].trim()));
    }
    return events;
  }

  /** {@code events} in batches of {@code size}, in order. */
  private static Event[][] split(Event[] events, int size) {
    List<Event[]> batches = new ArrayList<>();
    for (int i = 0; i < events.length; i += size) {
      batches.add(Arrays.copyOfRange(events, i, Math.min(events.length, i + size)));
    }
    return batches.toArray(new Event[0][]);
  }
}
