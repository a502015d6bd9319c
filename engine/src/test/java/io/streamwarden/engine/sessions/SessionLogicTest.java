package io.streamwarden.engine.sessions;

import static io.streamwarden.engine.sessions.SessionTestUtilities.MIN;
import static io.streamwarden.engine.sessions.SessionTestUtilities.USER;
import static io.streamwarden.engine.sessions.SessionTestUtilities.at;
import static io.streamwarden.engine.sessions.SessionTestUtilities.event;
import static io.streamwarden.engine.sessions.SessionTestUtilities.eventsAt;
import static io.streamwarden.engine.sessions.SessionTestUtilities.plan;
import static io.streamwarden.engine.sessions.SessionTestUtilities.valued;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.streamwarden.engine.sessions.SessionTestUtilities.UserDriver;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The session rules of {@link SessionLogic} with explicit event times: events in, emitted
 * sessions and dead letters out (the spec of tests/operators/test_session_rules.py, at the level
 * of the rules). A gap of 30 minutes unless a test says otherwise.
 */
class SessionLogicTest {
  private static final long GAP = 30;

  // -- gap and closing -----------------------------------------------------------------------

  @ParameterizedTest(name = "second event {0} ms after the first: {1} session(s)")
  @CsvSource({"1799999, 1", "1800000, 2", "1800001, 2"})
  void aGapOfExactlyGapOrMoreStartsANewSession(long secondAfterMs, int sessions) {
    UserDriver u = new UserDriver(plan(GAP, 0));
    assertEquals(List.of(), u.batch(0, event(0), event(secondAfterMs)));
    List<String> out = u.watermark(at(3 * GAP));
    assertEquals(sessions, out.size());
    if (sessions == 1) {
      assertEquals(List.of("session 0m..1799999ms events=2 bytes=100 rev=0"), out);
    } else {
      assertEquals(List.of("session 0m..0m events=1 bytes=50 rev=0",
          "session " + SessionTestUtilities.time(secondAfterMs) + ".."
              + SessionTestUtilities.time(secondAfterMs) + " events=1 bytes=50 rev=0"), out);
    }
  }

  @Test
  void aSessionIsEmittedOnceTheWatermarkReachesItsEndPlusGap() {
    UserDriver u = new UserDriver(plan(GAP, 0));
    assertEquals(List.of(), u.batch(at(0), eventsAt(0, 5)));
    assertEquals(List.of(), u.watermark(at(35) - 1));
    assertEquals(List.of("session 0m..5m events=2 bytes=100 rev=0"), u.watermark(at(35)));
    assertEquals(List.of(), u.watermark(at(36)));
  }

  @Test
  void stateIsFreedWhenASessionClosesWithoutLateness() {
    UserDriver u = new UserDriver(plan(GAP, 0));
    u.batch(at(0), eventsAt(0));
    assertEquals(1, u.state.getSessions().size());
    u.watermark(at(30));
    assertTrue(u.state.holdsNothing());
    assertEquals(UserSessions.NO_TIMER, u.nextDeadline());
  }

  @Test
  void outOfOrderEventsInOneBatchGiveTheSameSessionAsInOrder() {
    UserDriver u = new UserDriver(plan(GAP, 0, "[\"string\"]",
        "[{\"function\": \"first\", \"input\": 0}, {\"function\": \"last\", \"input\": 0}]"));
    u.batch(at(0), valued(at(10), "b"), valued(at(5), "a"), valued(at(12), "c"));
    List<Emitted> out = u.rawWatermark(at(60));
    assertEquals(1, out.size());
    SessionAgg s = out.get(0).session;
    assertEquals(List.of(at(5), at(12), 3L), List.of(s.getStartMs(), s.getEndMs(),
        s.getEventCount()));
    assertEquals(List.of("a", "c"), Arrays.asList(out.get(0).results));
  }

  // -- late events and revisions -------------------------------------------------------------

  @Test
  void aLateEventUpdatesItsClosedSessionOncePerBatchKeepingItsId() {
    UserDriver u = new UserDriver(plan(GAP, 10));
    u.batch(at(0), eventsAt(0, 2));
    List<Emitted> first = u.rawWatermark(at(33));
    assertEquals(List.of("session 0m..2m events=2 bytes=100 rev=0"),
        SessionTestUtilities.describe(first));
    List<Emitted> late = u.logic.onEvents(USER, u.state, eventsAt(1, 3), at(35));
    assertEquals(List.of("session 0m..3m events=4 bytes=200 rev=1"),
        SessionTestUtilities.describe(late));
    assertEquals(first.get(0).session.getSessionId(), late.get(0).session.getSessionId());
  }

  @Test
  void aClosedSummaryIsKeptForTheAllowedLatenessThenForgotten() {
    UserDriver u = new UserDriver(plan(GAP, 10));
    u.batch(at(0), eventsAt(0));
    assertEquals(List.of("session 0m..0m events=1 bytes=50 rev=0"), u.watermark(at(30)));
    assertEquals(1, u.state.getSessions().size());
    assertEquals(at(40), u.nextDeadline());
    assertEquals(List.of(), u.watermark(at(40)));
    assertTrue(u.state.holdsNothing());
  }

  @Test
  void anEventLaterThanTheAllowedLatenessIsDeadLetteredTooLate() {
    UserDriver u = new UserDriver(plan(GAP, 10));
    u.batch(at(0), eventsAt(0));
    u.watermark(at(45));
    assertEquals(List.of("dead_letter 1m too_late"), u.batch(at(45), eventsAt(1)));
    assertTrue(u.state.holdsNothing());
  }

  @Test
  void aLateEventJoinsTheOpenSessionALaterEventOfTheSameBatchOpens() {
    UserDriver u = new UserDriver(plan(GAP, 0));
    // 80 is behind the watermark with no session of its own; 101 opens one within the gap
    assertEquals(List.of(), u.batch(at(100), eventsAt(80, 101)));
    assertEquals(List.of("session 80m..101m events=2 bytes=100 rev=0"), u.watermark(at(200)));
  }

  @Test
  void aChainOfLateEventsReachesTheSessionOfALaterEventInTheSameBatch() {
    UserDriver u = new UserDriver(plan(GAP, 0));
    assertEquals(List.of(), u.batch(at(100), eventsAt(20, 45, 72, 101, 5)));
    assertEquals(List.of("session 5m..101m events=5 bytes=250 rev=0"), u.watermark(at(200)));
    assertEquals(List.of("dead_letter 120m too_late"), u.batch(at(290), eventsAt(300, 120)));
  }

  @Test
  void aSessionPastItsLatenessHorizonIsNotJoinedEvenBeforeItsTimerFires() {
    UserDriver u = new UserDriver(plan(GAP, 10));
    u.batch(at(0), eventsAt(0));
    assertEquals(List.of("session 0m..0m events=1 bytes=50 rev=0", "dead_letter 1m too_late"),
        u.batch(at(45), eventsAt(1)));
    assertTrue(u.state.holdsNothing());
  }

  @Test
  void aLateEventWithoutASessionButWithinTheLatenessStartsOne() {
    UserDriver u = new UserDriver(plan(GAP, 10));
    assertEquals(List.of(), u.batch(at(60), eventsAt(55)));
    assertEquals(List.of("session 55m..55m events=1 bytes=50 rev=0"), u.watermark(at(90)));
  }

  // -- bridging merges -----------------------------------------------------------------------

  @Test
  void aLateEventBridgingTwoEmittedSessionsMergesThemIntoTheEarlierOne() {
    UserDriver u = new UserDriver(plan(GAP, 45));
    u.batch(at(0), eventsAt(0, 31));
    List<Emitted> a = u.rawWatermark(at(34));
    List<Emitted> b = u.rawWatermark(at(64));
    assertEquals(List.of("session 0m..0m events=1 bytes=50 rev=0"),
        SessionTestUtilities.describe(a));
    assertEquals(List.of("session 31m..31m events=1 bytes=50 rev=0"),
        SessionTestUtilities.describe(b));
    List<Emitted> merged = u.logic.onEvents(USER, u.state, eventsAt(15), at(69));
    assertEquals(List.of("session 0m..31m events=3 bytes=150 rev=1 merged=1"),
        SessionTestUtilities.describe(merged));
    assertEquals(a.get(0).session.getSessionId(), merged.get(0).session.getSessionId());
    assertEquals(List.of(b.get(0).session.getSessionId()), merged.get(0).mergedIds);
    assertEquals(1, u.state.getSessions().size());
  }

  @Test
  void aLateEventBridgingAnEmittedAndAnOpenSessionReemitsWhenItCloses() {
    UserDriver u = new UserDriver(plan(GAP, 10));
    u.batch(at(0), eventsAt(0, 31));
    assertEquals(List.of("session 0m..0m events=1 bytes=50 rev=0"), u.watermark(at(34)));
    assertEquals(List.of(), u.batch(at(39), eventsAt(15)));
    assertEquals(at(61), u.nextDeadline());
    assertEquals(List.of(), u.watermark(at(61) - 1));
    assertEquals(List.of("session 0m..31m events=3 bytes=150 rev=1"), u.watermark(at(61)));
  }

  // -- caps ----------------------------------------------------------------------------------

  @Test
  void eventsPastTheEventCapAreDeadLetteredAndTheSessionTruncated() {
    UserDriver u = new UserDriver(new SessionPlan(GAP * MIN, 0, 3, 1L << 40));
    assertEquals(List.of("dead_letter 3m session_event_cap", "dead_letter 4m session_event_cap"),
        u.batch(at(0), eventsAt(0, 1, 2, 3, 4)));
    assertEquals(List.of("session 0m..2m events=3 bytes=150 rev=0 truncated"),
        u.watermark(at(60)));
  }

  @Test
  void eventsPastTheByteCapAreDeadLetteredAndTheSessionTruncated() {
    UserDriver u = new UserDriver(new SessionPlan(GAP * MIN, 0, 10_000, 250));
    assertEquals(List.of("dead_letter 2m session_byte_cap"), u.batch(at(0),
        event(at(0), 100), event(at(1), 100), event(at(2), 100)));
    assertEquals(List.of("session 0m..1m events=2 bytes=200 rev=0 truncated"),
        u.watermark(at(60)));
  }

  @Test
  void aRecordOverTheByteCapOnItsOwnStartsNoSession() {
    UserDriver u = new UserDriver(new SessionPlan(GAP * MIN, 0, 10_000, 250));
    assertEquals(List.of("dead_letter 0m session_byte_cap"),
        u.batch(at(0), event(at(0), 251)));
    assertTrue(u.state.holdsNothing());
  }

  // -- deadlines -----------------------------------------------------------------------------

  @Test
  void theNextDeadlineIsTheEarliestOfOpenEndPlusGapAndClosedEndPlusGapPlusLateness() {
    UserDriver u = new UserDriver(plan(GAP, 10));
    assertEquals(UserSessions.NO_TIMER, u.nextDeadline());
    u.batch(at(0), eventsAt(0, 100));
    assertEquals(at(30), u.nextDeadline()); // open session [0, 0]: 0 + gap
    u.watermark(at(30)); // emits [0, 0]; closed now, kept until 0 + gap + lateness
    assertEquals(at(40), u.nextDeadline());
    u.watermark(at(40));
    assertEquals(at(130), u.nextDeadline()); // only [100, 100] is left
  }

  @Test
  void aKeptEarlyTimerIsHeldUntilTheWatermarkReachesIt() {
    // the timer for the first deadline (30) is kept when the deadline moves to 50 ...
    assertEquals(at(30), TimerPolicy.timerToHold(at(30), at(50), at(10)));
    // ... but one the watermark has reached is moved at once, and none is kept for no state
    assertEquals(at(50), TimerPolicy.timerToHold(at(30), at(50), at(30)));
    assertEquals(UserSessions.NO_TIMER,
        TimerPolicy.timerToHold(at(30), UserSessions.NO_TIMER, at(10)));
    assertEquals(at(50), TimerPolicy.timerToHold(UserSessions.NO_TIMER, at(50), at(10)));
  }

  // -- identity and collected values ---------------------------------------------------------

  @Test
  void sessionIdsAreDeterministicAndDifferByUserAndStart() {
    assertEquals(SessionLogic.sessionId("u", 0), SessionLogic.sessionId("u", 0));
    assertNotEquals(SessionLogic.sessionId("u", 0), SessionLogic.sessionId("v", 0));
    assertNotEquals(SessionLogic.sessionId("u", 0), SessionLogic.sessionId("u", 1));
    assertEquals(16, SessionLogic.sessionId("u", 0).length());
  }

  @Test
  void valuesAreCollectedInEventTimeOrderAcrossBatches() {
    UserDriver u = new UserDriver(SessionTestUtilities.oneAggregate("collect_list", "string"));
    u.batch(at(0), valued(at(10), "/c"), valued(at(0), "/a"));
    u.batch(at(9), valued(at(5), "/b"));
    List<Emitted> out = u.rawWatermark(at(60));
    assertEquals(List.of("/a", "/b", "/c"), out.get(0).results[0]);
  }
}
