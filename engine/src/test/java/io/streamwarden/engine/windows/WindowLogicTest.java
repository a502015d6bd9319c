package io.streamwarden.engine.windows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.sessions.AggregatePlan;
import io.streamwarden.engine.sessions.Emitted;
import io.streamwarden.engine.sessions.Event;
import io.streamwarden.engine.sessions.UserSessions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The window rules of {@link WindowLogic} with explicit event times in minutes: events in,
 * windows and dead letters out, each written as one line of text.
 */
class WindowLogicTest {
  private static final long MIN = 60_000L;

  /** One group's state, driven batch by batch as the processor drives it. */
  private static final class Group {
    final WindowLogic logic;
    final UserSessions state = new UserSessions();

    Group(WindowPlan plan) {
      logic = new WindowLogic(plan);
    }

    List<String> batch(long watermarkMin, long... minutes) {
      List<Event> events = new ArrayList<>();
      for (long m : minutes) {
        events.add(new Event(m * MIN, 10, "e@" + m));
      }
      return lines(logic.onEvents("g", state, events, watermarkMin * MIN));
    }

    List<String> watermark(long minutes) {
      return lines(logic.onWatermark("g", state, minutes * MIN));
    }
  }

  private static WindowPlan plan(long sizeMin, long slideMin, long latenessMin, boolean updates,
      long maxEvents) {
    return new WindowPlan(sizeMin * MIN, slideMin * MIN, latenessMin * MIN, updates, maxEvents,
        1L << 40, AggregatePlan.NONE);
  }

  private static List<String> lines(List<Emitted> out) {
    List<String> lines = new ArrayList<>();
    for (Emitted e : out) {
      if (Emitted.SESSION.equals(e.kind)) {
        lines.add(String.format("window %dm..%dm events=%d rev=%d%s",
            e.session.getStartMs() / MIN, e.session.getEndMs() / MIN,
            e.session.getEventCount(), e.session.getRevision(),
            e.session.isTruncated() ? " truncated" : ""));
      } else {
        lines.add(e.reason + " " + e.event.raw);
      }
    }
    return lines;
  }

  @Test
  void aTumblingWindowIsEmittedOnceWhenItsEndPlusLatenessPasses() {
    Group g = new Group(plan(10, 10, 5, false, 100));
    assertEquals(List.of(), g.batch(0, 1, 9, 12));
    assertEquals(List.of(), g.watermark(14)); // end 10 + lateness 5 not reached
    assertEquals(List.of("window 0m..10m events=2 rev=0"), g.watermark(15));
    assertEquals(List.of("window 10m..20m events=1 rev=0"), g.watermark(25));
    assertTrue(g.state.holdsNothing());
    assertEquals(UserSessions.NO_TIMER, g.logic.nextDeadline(g.state));
  }

  @Test
  void aLateEventInsideTheLatenessJoinsItsWindowBeforeTheFinalEmission() {
    Group g = new Group(plan(10, 10, 5, false, 100));
    assertEquals(List.of(), g.batch(0, 3));
    assertEquals(List.of(), g.batch(12, 4)); // behind the watermark, window open for late ones
    assertEquals(List.of("window 0m..10m events=2 rev=0"), g.watermark(15));
  }

  @Test
  void anEventBeyondTheLatenessIsTooLateNeverSilent() {
    Group g = new Group(plan(10, 10, 5, false, 100));
    assertEquals(List.of("too_late e@9"), g.batch(15, 9));
    assertTrue(g.state.holdsNothing());
  }

  @Test
  void aHoppingEventJoinsAllItsWindowsOrIsTooLateForAll() {
    Group g = new Group(plan(10, 5, 0, false, 100));
    assertEquals(List.of(), g.batch(0, 7)); // windows 0..10 and 5..15
    assertEquals(List.of("window 0m..10m events=1 rev=0"), g.watermark(10));
    // 8 falls in 0..10 (closed) and 5..15 (open): the first to close decides, so it is late
    assertEquals(List.of("too_late e@8"), g.batch(10, 8));
    assertEquals(List.of("window 5m..15m events=1 rev=0"), g.watermark(15));
  }

  @Test
  void updatesEmitOneRevisionPerBatchThatChangedAWindow() {
    Group g = new Group(plan(10, 10, 5, true, 100));
    assertEquals(List.of("window 0m..10m events=3 rev=0"), g.batch(0, 1, 2, 3));
    assertEquals(List.of(), g.batch(4)); // no event: nothing changed
    assertEquals(List.of("window 0m..10m events=5 rev=1", "window 10m..20m events=1 rev=0"),
        g.batch(11, 4, 5, 12));
    assertEquals(List.of(), g.watermark(15)); // freed, its last revision already out
    assertEquals(1, g.state.getSessions().size());
  }

  @Test
  void anEventPastTheCapOfAnyOfItsWindowsIsDeadLetteredAndTheWindowFlagged() {
    Group g = new Group(plan(10, 10, 0, false, 2));
    assertEquals(List.of("window_event_cap e@3"), g.batch(0, 1, 2, 3));
    assertEquals(List.of("window 0m..10m events=2 rev=0 truncated"), g.watermark(10));
  }

  @Test
  void windowsAreAlignedToTheEpochAlsoBeforeIt() {
    Group g = new Group(plan(10, 10, 0, false, 100));
    assertEquals(List.of(), g.batch(-100, -3));
    assertEquals(List.of("window -10m..0m events=1 rev=0"), g.watermark(0));
  }

  @Test
  void aPlanWhoseSizeIsNotAWholeMultipleOfItsSlideIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> plan(10, 3, 0, false, 1));
    assertThrows(IllegalArgumentException.class,
        () -> WindowPlan.fromJson("{\"size_ms\": 60000, \"slide_ms\": 60000, "
            + "\"allowed_lateness_ms\": 0, \"emit\": \"sometimes\", \"max_events\": 1, "
            + "\"max_window_bytes\": 1}"));
  }
}
