package io.streamwarden.engine.sessions;

import static io.streamwarden.engine.sessions.SessionTestUtilities.USER;
import static io.streamwarden.engine.sessions.SessionTestUtilities.at;
import static io.streamwarden.engine.sessions.SessionTestUtilities.describe;
import static io.streamwarden.engine.sessions.SessionTestUtilities.event;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.streamwarden.engine.sessions.SessionTestUtilities.UserDriver;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Late events beyond the in-state lateness but within the history lateness: the engine hands
 * them out as history records, and {@link SessionLogic#mergeHistory} merges them into stored
 * sessions with the rules of the state. Gap 30 minutes, allowed lateness 10 minutes, history
 * lateness 3 days.
 */
class HistoryMergeTest {
  private static final long DAY = 24 * 60;
  private static final SessionPlan PLAN = new SessionPlan(
      at(30), at(10), 10_000, 1L << 40, at(3 * DAY), AggregatePlan.NONE, false);

  /** A stored session of {@link #USER} with an id, a revision, and events every minute. */
  private static SessionAgg stored(long fromMinute, long toMinute, int revision) {
    SessionAgg s = SessionAgg.of(event(at(fromMinute)), AggregatePlan.NONE);
    for (long m = fromMinute + 1; m <= toMinute; m++) {
      s.add(event(at(m)), AggregatePlan.NONE);
    }
    s.setSessionId(SessionLogic.sessionId(USER, at(fromMinute)));
    s.setRevision(revision);
    s.setClosed(true);
    s.setMergedIds(null);
    return s;
  }

  private static List<String> merge(List<SessionAgg> sessions, long watermarkMs, Event... events) {
    UserSessions stored = new UserSessions();
    stored.setSessions(new ArrayList<>(sessions));
    return describe(new SessionLogic(PLAN).mergeHistory(USER, stored,
        new ArrayList<>(Arrays.asList(events)), watermarkMs));
  }

  @Test
  void anEventBeyondAllowedLatenessButWithinHistoryLatenessLeavesAsAHistoryRecord() {
    UserDriver u = new UserDriver(PLAN);
    List<Emitted> out = u.logic.onEvents(USER, u.state,
        new ArrayList<>(List.of(event(at(DAY)), event(at(DAY) - at(2 * DAY)))), at(DAY));
    assertEquals(1, out.size());
    assertEquals(Emitted.HISTORY, out.get(0).kind);
    assertEquals(at(DAY) - at(2 * DAY), out.get(0).event.tsMs);
    assertEquals(1, u.state.getSessions().size(), "only the on-time event is in state");
  }

  @Test
  void anEventBeyondHistoryLatenessIsTooLate() {
    UserDriver u = new UserDriver(PLAN);
    List<String> out = u.batch(at(4 * DAY), event(at(4 * DAY) - at(3 * DAY)));
    assertEquals(List.of("dead_letter " + (at(DAY) / SessionTestUtilities.MIN) + "m too_late"),
        out);
  }

  @Test
  void aHistoryEventThatJoinsASessionInStateStaysInState() {
    UserDriver u = new UserDriver(PLAN);
    u.batch(at(100), event(at(95)));
    // 40 minutes late, beyond the allowed lateness, but within the gap of the session in state
    assertEquals(List.of(), u.batch(at(100), event(at(70))));
    assertEquals(2, u.state.getSessions().get(0).getEventCount());
  }

  @Test
  void withoutHistoryLatenessTheEngineNeverHandsOutHistoryRecords() {
    UserDriver u = new UserDriver(SessionTestUtilities.plan(30, 10));
    List<String> out = u.batch(at(DAY), event(at(10)));
    assertEquals(List.of("dead_letter 10m too_late"), out);
  }

  @Test
  void aLateEventJoinsItsStoredSessionAsTheNextRevisionKeepingItsId() {
    SessionAgg s = stored(0, 5, 0);
    UserSessions stored = new UserSessions();
    stored.setSessions(new ArrayList<>(List.of(s)));
    List<Emitted> out = new SessionLogic(PLAN).mergeHistory(USER, stored,
        new ArrayList<>(List.of(event(at(20)))), at(DAY));
    assertEquals(List.of("session 0m..20m events=7 bytes=350 rev=1"), describe(out));
    assertEquals(SessionLogic.sessionId(USER, 0), out.get(0).session.getSessionId());
  }

  @Test
  void eventsOfOneBatchGiveOneRevisionPerSession() {
    assertEquals(List.of("session 0m..40m events=9 bytes=450 rev=3"),
        merge(List.of(stored(0, 5, 2)), at(DAY), event(at(20)), event(at(40)), event(at(3))));
  }

  @Test
  void aLateEventBridgingTwoStoredSessionsMergesThemIntoTheEarlierOne() {
    List<Emitted> out = mergeRaw(List.of(stored(0, 5, 0), stored(50, 55, 1)), at(DAY),
        event(at(30)));
    assertEquals(List.of("session 0m..55m events=13 bytes=650 rev=1 merged=1"), describe(out));
    assertEquals(List.of(SessionLogic.sessionId(USER, at(50))), out.get(0).mergedIds);
  }

  @Test
  void aLateEventTouchingNoStoredSessionStartsOneAndUntouchedOnesAreNotEmitted() {
    assertEquals(List.of("session 100m..110m events=2 bytes=100 rev=0"),
        merge(List.of(stored(0, 5, 0)), at(DAY), event(at(110)), event(at(100))));
  }

  @Test
  void theCapsOfTheStateHoldForStoredSessions() {
    SessionPlan capped = new SessionPlan(at(30), at(10), 7, 1L << 40, at(3 * DAY),
        AggregatePlan.NONE, false);
    UserSessions stored = new UserSessions();
    stored.setSessions(new ArrayList<>(List.of(stored(0, 5, 0))));
    List<String> out = describe(new SessionLogic(capped).mergeHistory(USER, stored,
        new ArrayList<>(List.of(event(at(6)), event(at(7)))), at(DAY)));
    assertEquals(List.of("dead_letter 7m session_event_cap",
        "session 0m..6m events=7 bytes=350 rev=1 truncated"), out);
  }

  @Test
  void theJsonEntryMergesEachKeyAndAnswersRowsWithTheEngineOutputNames() throws Exception {
    String request = "{\"watermark_ms\": " + at(DAY) + ", \"users\": [{\"key\": \"u\", "
        + "\"sessions\": [{\"session_id\": \"s0\", \"start_ms\": 0, \"end_ms\": " + at(5)
        + ", \"event_count\": 2, \"bytes\": 100, \"revision\": 4, \"truncated\": false, "
        + "\"state\": null}], \"events\": [{\"ts_ms\": " + at(9)
        + ", \"size\": 10, \"raw\": \"r\", \"values\": []}]}]}";
    String plan = "{\"gap_ms\": " + at(30) + ", \"allowed_lateness_ms\": " + at(10)
        + ", \"max_events\": 100, \"max_session_bytes\": 1000, \"history_lateness_ms\": "
        + at(3 * DAY) + "}";
    JsonNode rows = new ObjectMapper().readTree(HistoryMerge.mergeJson(plan, request))
        .get("rows");
    assertEquals(1, rows.size());
    JsonNode r = rows.get(0);
    assertEquals("session", r.get("kind").asText());
    assertEquals("u", r.get("key").asText());
    assertEquals("s0", r.get("session_id").asText());
    assertEquals(5, r.get("revision").asInt());
    assertEquals(3, r.get("event_count").asLong());
    assertEquals(110, r.get("bytes").asLong());
    assertTrue(r.get("merged_session_ids") == null);
    assertTrue(r.get("state").isNull(), "a plan without aggregates has no state");
  }

  private static List<Emitted> mergeRaw(List<SessionAgg> sessions, long watermarkMs,
      Event... events) {
    UserSessions stored = new UserSessions();
    stored.setSessions(new ArrayList<>(sessions));
    return new SessionLogic(PLAN).mergeHistory(USER, stored,
        new ArrayList<>(Arrays.asList(events)), watermarkMs);
  }

  // -- aggregates ----------------------------------------------------------------------------

  private static final String AGGREGATE_PLAN = SessionTestUtilities.withFields(
      SessionTestUtilities.planJson(30, 10, 10_000, 1L << 40, SessionTestUtilities.EVERY_KIND,
          SessionTestUtilities.everyFunction()),
      "\"history_lateness_ms\": " + at(3 * DAY) + ", \"keep_state\": true");

  /** An event of the JSON request: its time, size, raw and values. */
  private static String eventJson(Event e) {
    return "{\"ts_ms\": " + e.tsMs + ", \"size\": " + e.size + ", \"raw\": \"" + e.raw
        + "\", \"values\": " + ValuesJson.write(e.values) + "}";
  }

  @Test
  void storedAggregateStateMergesLateEventsAsIfTheyHadComeInTime() throws Exception {
    SessionPlan plan = SessionPlan.fromJson(AGGREGATE_PLAN);
    List<Event> inTime = List.of(
        SessionTestUtilities.valued(at(0), 5L, 1e16, "b", true),
        SessionTestUtilities.valued(at(3), null, 1.0, "\uD83D\uDE00", null),
        SessionTestUtilities.valued(at(50), 2L, -1e16, "a", false));
    Event late = SessionTestUtilities.valued(at(25), -1L, 0.5, "b", false);
    // the engine ran the in-time events and emitted two sessions, their state kept
    UserDriver u = new UserDriver(plan);
    u.logic.onEvents(USER, u.state, new ArrayList<>(inTime), 0);
    List<Emitted> emitted = u.rawWatermark(at(200));
    assertEquals(2, emitted.size());
    StringBuilder sessions = new StringBuilder();
    for (Emitted e : emitted) {
      SessionAgg s = e.session;
      sessions.append(sessions.length() == 0 ? "" : ", ").append("{\"session_id\": \"")
          .append(s.getSessionId()).append("\", \"start_ms\": ").append(s.getStartMs())
          .append(", \"end_ms\": ").append(s.getEndMs()).append(", \"event_count\": ")
          .append(s.getEventCount()).append(", \"bytes\": ").append(s.getBytes())
          .append(", \"revision\": 0, \"truncated\": false, \"state\": \"")
          .append(Base64.getEncoder().encodeToString(e.state)).append("\"}");
    }
    String request = "{\"watermark_ms\": " + at(DAY) + ", \"users\": [{\"key\": \"" + USER
        + "\", \"sessions\": [" + sessions + "], \"events\": [" + eventJson(late) + "]}]}";
    JsonNode rows = new ObjectMapper().readTree(HistoryMerge.mergeJson(AGGREGATE_PLAN, request))
        .get("rows");
    assertEquals(1, rows.size());
    JsonNode r = rows.get(0);
    assertEquals(List.of(emitted.get(1).session.getSessionId()),
        List.of(r.get("merged_session_ids").get(0).asText()));
    List<Object> expected = AggregateReference.compute(plan.aggregates,
        List.of(inTime.get(0), inTime.get(1), inTime.get(2), late));
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(ValuesJson.node(expected.get(i)).toString(), r.get("agg_" + i).toString(),
          "agg_" + i);
    }
    Accumulator[] state = plan.aggregates.decode(Base64.getDecoder().decode(
        r.get("state").asText()));
    assertEquals(expected, Arrays.asList(AggregatePlan.results(state)));
  }

  @Test
  void aStoredSessionWithoutStateCannotTakeAggregates() {
    String request = "{\"watermark_ms\": " + at(DAY) + ", \"users\": [{\"key\": \"u\", "
        + "\"sessions\": [{\"session_id\": \"s0\", \"start_ms\": 0, \"end_ms\": 0, "
        + "\"event_count\": 1, \"bytes\": 1, \"revision\": 0, \"state\": null}], "
        + "\"events\": []}]}";
    String message = assertThrows(IllegalArgumentException.class,
        () -> HistoryMerge.mergeJson(AGGREGATE_PLAN, request)).getMessage();
    assertTrue(message.startsWith("stored session s0 has no state"), message);
  }
}
