package io.streamwarden.engine.sessions;

import static io.streamwarden.engine.sessions.SessionTestUtilities.at;
import static io.streamwarden.engine.sessions.SessionTestUtilities.valued;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.sessions.SessionTestUtilities.UserDriver;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/**
 * The aggregates' state: a compact, versioned encoding of the accumulators that reads back to
 * the same results, is refused when written under another plan or format, and is decoded and
 * re-encoded only for the sessions an event touches.
 */
class AggregateStateTest {
  private static final SessionPlan PLAN = SessionTestUtilities.plan(30, 60,
      SessionTestUtilities.EVERY_KIND, SessionTestUtilities.everyFunction());
  private static final AggregatePlan AGGS = PLAN.aggregates;
  private static final List<Event> EVENTS = List.of(
      valued(at(1), 3L, 0.1, "b", true), valued(at(2), null, -0.0, "\uD83D\uDE00", null),
      valued(at(2), -7L, Double.NaN, "a", false), valued(at(3), Long.MIN_VALUE + 10, 1e-300, "", true),
      valued(at(4), 3L, null, null, null));

  private static Accumulator[] filled(List<Event> events) {
    Accumulator[] accs = AGGS.newAccumulators();
    events.forEach(e -> AGGS.add(accs, e));
    return accs;
  }

  @Test
  void everyAccumulatorReadsBackWhatItWroteAndGoesOnAlike() {
    for (int upTo = 0; upTo <= EVENTS.size(); upTo++) {
      Accumulator[] direct = filled(EVENTS.subList(0, upTo));
      byte[] state = AGGS.encode(direct);
      Accumulator[] decoded = AGGS.decode(state);
      assertEquals(Arrays.asList(AggregatePlan.results(direct)),
          Arrays.asList(AggregatePlan.results(decoded)));
      assertEquals(AggregatePlan.heldBytes(direct), AggregatePlan.heldBytes(decoded));
      assertArrayEquals(state, AGGS.encode(decoded));
      Event next = valued(at(9), 1L, 2.5, "c", false);
      AGGS.add(direct, next);
      AGGS.add(decoded, next);
      assertEquals(Arrays.asList(AggregatePlan.results(direct)),
          Arrays.asList(AggregatePlan.results(decoded)), "after " + upTo + " events and one");
    }
  }

  @Test
  void theStateStartsWithItsFormatVersion() {
    assertEquals(AggregatePlan.FORMAT_VERSION, AGGS.encode(filled(EVENTS))[0]);
  }

  @Test
  void stateWrittenUnderOtherAggregatesIsRefusedNotMisread() {
    SessionPlan other = SessionTestUtilities.oneAggregate("first", "string");
    byte[] state = other.aggregates.encode(other.aggregates.newAccumulators());
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> SessionTestUtilities.oneAggregate("last", "string").aggregates.decode(state));
    assertTrue(e.getMessage().contains("start it from a new checkpoint"), e.getMessage());
  }

  @Test
  void stateOfAnotherFormatVersionCutShortOrWithExtraBytesIsRefused() {
    byte[] state = AGGS.encode(filled(EVENTS));
    byte[] version = state.clone();
    version[0] = 9;
    assertTrue(assertThrows(IllegalStateException.class, () -> AGGS.decode(version))
        .getMessage().contains("format version 9"));
    assertThrows(IllegalStateException.class,
        () -> AGGS.decode(Arrays.copyOf(state, state.length - 1)));
    assertThrows(IllegalStateException.class,
        () -> AGGS.decode(Arrays.copyOf(state, state.length + 1)));
  }

  @Test
  void theStateHoldsValuesNotEvents() {
    SessionPlan plan = SessionTestUtilities.plan(30, 0, "[\"string\", \"double\"]",
        "[{\"function\": \"first\", \"input\": 0}, {\"function\": \"last\", \"input\": 0},"
            + " {\"function\": \"sum\", \"input\": 1}, {\"function\": \"count\"}]");
    UserDriver u = new UserDriver(plan);
    u.rawBatch(0, valued(at(0), "/home", 1.5));
    int one = u.state.getSessions().get(0).getAggregates().length;
    for (int i = 1; i < 500; i++) {
      u.rawBatch(0, valued(at(0) + i, "/page", 1.5));
    }
    int many = u.state.getSessions().get(0).getAggregates().length;
    assertTrue(many <= one + 4, one + " bytes for one event, " + many + " for 500");
  }

  @Test
  void onlyTheSessionsAnEventTouchesAreDecodedAndEncodedAgain() {
    UserDriver u = new UserDriver(PLAN);
    u.rawBatch(0, EVENTS.toArray(new Event[0]));
    u.rawBatch(0, valued(at(100), 1L, 1.0, "x", true));
    u.reloadState();
    byte[] untouched = u.state.getSessions().get(0).getAggregates();
    byte[] touched = u.state.getSessions().get(1).getAggregates();
    u.rawBatch(0, valued(at(101), 2L, 2.0, "y", false));
    assertSame(untouched, u.state.getSessions().get(0).getAggregates());
    assertNotSame(touched, u.state.getSessions().get(1).getAggregates());
  }

  @Test
  void theStoredBeanHasTheEncodedAggregatesAndNotTheLiveAccumulators() {
    StructType session = (StructType) ((org.apache.spark.sql.types.ArrayType)
        Encoders.bean(UserSessions.class).schema().apply("sessions").dataType()).elementType();
    assertEquals(List.of("aggregates", "bytes", "closed", "endMs", "eventCount", "mergedIds",
        "revision", "sessionId", "startMs", "truncated"), Arrays.asList(session.fieldNames()));
    assertEquals(DataTypes.BinaryType, session.apply("aggregates").dataType());
  }
}
