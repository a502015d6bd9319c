package io.streamwarden.engine.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.streamwarden.engine.sessions.Emitted;
import io.streamwarden.engine.sessions.Event;
import io.streamwarden.engine.sessions.SessionAgg;
import io.streamwarden.engine.sessions.SessionLogic;
import io.streamwarden.engine.sessions.SessionPlan;
import io.streamwarden.engine.sessions.TimerPolicy;
import io.streamwarden.engine.sessions.UserSessions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Drives {@link SessionLogic} the way Spark's transformWithState does, without Spark: per
 * micro-batch, each key's rows are handled first, then every timer at or below the watermark
 * fires. Keys with no state hold no entry, as in the state store. Talks JSON so that Python
 * tests can drive it over py4j cheaply (one call per batch).
 */
public final class SessionHarness {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final SessionLogic logic;
  private final Map<String, UserSessions> states = new TreeMap<>();

  public SessionHarness(String planJson) {
    this.logic = new SessionLogic(SessionPlan.fromJson(planJson));
  }

  /**
   * Runs one micro-batch. {@code eventsJson} is a list of
   * {@code {"key", "ts_ms", "page", "url", "size", "raw"}}; returns the emitted records as JSON.
   */
  public String runBatch(String eventsJson, long watermarkMs) throws Exception {
    Map<String, List<Event>> byKey = new LinkedHashMap<>();
    for (JsonNode n : JSON.readTree(eventsJson)) {
      byKey.computeIfAbsent(n.get("key").asText(), k -> new ArrayList<>()).add(new Event(
          n.get("ts_ms").asLong(), n.path("page").asLong(1), n.path("url").asText(""),
          n.path("size").asLong(1), n.path("raw").asText("")));
    }
    List<Emitted> out = new ArrayList<>();
    for (Map.Entry<String, List<Event>> e : byKey.entrySet()) {
      UserSessions state = states.getOrDefault(e.getKey(), new UserSessions());
      out.addAll(logic.onEvents(e.getKey(), state, e.getValue(), watermarkMs));
      save(e.getKey(), state, watermarkMs);
    }
    for (String key : new ArrayList<>(states.keySet())) {
      UserSessions state = states.get(key);
      if (state.getTimerMs() != UserSessions.NO_TIMER && state.getTimerMs() <= watermarkMs) {
        state.setTimerMs(UserSessions.NO_TIMER);
        out.addAll(logic.onWatermark(key, state, watermarkMs));
        save(key, state, watermarkMs);
      }
    }
    return toJson(out);
  }

  /** The state of one key as JSON, or {@code null} if the key holds none. */
  public String peek(String key) throws Exception {
    UserSessions s = states.get(key);
    return s == null ? null : JSON.writeValueAsString(s);
  }

  /** How many keys hold state: what Spark reports as the operator's state rows. */
  public int stateRows() {
    return states.size();
  }

  private void save(String key, UserSessions state, long watermarkMs) {
    state.setTimerMs(
        TimerPolicy.timerToHold(state.getTimerMs(), logic.nextDeadline(state), watermarkMs));
    if (state.holdsNothing()) {
      states.remove(key);
    } else {
      states.put(key, state);
    }
  }

  private static String toJson(List<Emitted> out) throws Exception {
    ArrayNode array = JSON.createArrayNode();
    for (Emitted e : out) {
      ObjectNode n = array.addObject();
      n.put("kind", e.kind);
      n.put("user_id", e.userId);
      if (e.session != null) {
        SessionAgg s = e.session;
        n.put("session_id", s.getSessionId());
        n.put("start_ms", s.getStartMs());
        n.put("end_ms", s.getEndMs());
        n.put("page_count", s.getPageCount());
        n.put("bytes", s.getBytes());
        n.put("first_url", s.getFirstUrl());
        n.put("last_url", s.getLastUrl());
        n.put("revision", s.getRevision());
        n.put("truncated", s.isTruncated());
        n.set("urls", JSON.valueToTree(s.getUrls()));
        n.set("merged_session_ids", JSON.valueToTree(e.mergedIds));
      } else {
        n.put("event_ts_ms", e.event.tsMs);
        n.put("raw", e.event.raw);
        n.put("reason", e.reason);
        n.put("detail", e.detail);
      }
    }
    return JSON.writeValueAsString(array);
  }
}
