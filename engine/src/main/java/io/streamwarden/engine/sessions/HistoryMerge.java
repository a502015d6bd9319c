package io.streamwarden.engine.sessions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.streamwarden.engine.EngineOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The entry the history store's merge calls (from Python, through py4j, on the driver): late
 * events that left the engine as {@link Emitted#HISTORY} records, merged into the stored
 * sessions of their keys by {@link SessionLogic#mergeHistory}, the same rules as in state.
 *
 * <p>The request is JSON: {@code {"watermark_ms": W, "users": [{"key": K, "sessions": [stored
 * session...], "events": [{"ts_ms", "size", "raw", "values": [...]}...]}...]}}, a stored session
 * holding the fields of a session row ({@code session_id, start_ms, end_ms, event_count, bytes,
 * revision, truncated, state}; {@code state} is the base64 aggregate state a session row
 * carries, null only for a plan without aggregates) and an event's {@code values} typed by the
 * plan's inputs ({@link ValuesJson}). The answer is {@code {"rows": [...]}}: session rows
 * (revised or new, with {@code merged_session_ids}, {@code agg_i} and {@code state}, always set
 * here) and dead letters ({@code event_ts_ms, raw, reason, detail}), each with {@code kind} and
 * {@code key}, as {@link EngineOutput#schema} names its columns.
 */
public final class HistoryMerge {
  private HistoryMerge() {}

  public static String mergeJson(String planJson, String requestJson) {
    SessionPlan plan = SessionPlan.fromJson(planJson).withKeepState(true);
    SessionLogic logic = new SessionLogic(plan);
    JsonNode request;
    try {
      request = ValuesJson.JSON.readTree(requestJson);
    } catch (IOException e) {
      throw new IllegalArgumentException("history merge request is not valid JSON", e);
    }
    long watermarkMs = request.get("watermark_ms").asLong();
    ObjectNode answer = ValuesJson.JSON.createObjectNode();
    ArrayNode rows = answer.putArray("rows");
    for (JsonNode user : request.get("users")) {
      String key = user.get("key").asText();
      UserSessions stored = new UserSessions();
      for (JsonNode s : user.get("sessions")) {
        stored.getSessions().add(stored(s, plan.aggregates));
      }
      stored.getSessions().sort((a, b) -> Long.compare(a.getStartMs(), b.getStartMs()));
      List<Event> events = new ArrayList<>();
      for (JsonNode e : user.get("events")) {
        events.add(new Event(e.get("ts_ms").asLong(), e.get("size").asLong(), text(e, "raw"),
            ValuesJson.read(e.get("values"), plan.aggregates)));
      }
      for (Emitted out : logic.mergeHistory(key, stored, events, watermarkMs)) {
        rows.add(row(out));
      }
    }
    return answer.toString();
  }

  private static SessionAgg stored(JsonNode s, AggregatePlan aggregates) {
    SessionAgg a = new SessionAgg();
    a.setSessionId(s.get("session_id").asText());
    a.setStartMs(s.get("start_ms").asLong());
    a.setEndMs(s.get("end_ms").asLong());
    a.setEventCount(s.get("event_count").asLong());
    a.setBytes(s.get("bytes").asLong());
    a.setRevision(s.get("revision").asInt());
    a.setTruncated(s.path("truncated").asBoolean(false));
    a.setClosed(true);
    String state = text(s, "state");
    if (state != null) {
      a.setAggregates(Base64.getDecoder().decode(state));
    } else if (aggregates.size() > 0) {
      throw new IllegalArgumentException("stored session " + a.getSessionId() + " has no "
          + "state, but the plan has " + aggregates.size() + " aggregates: its aggregates "
          + "cannot be merged (a history store's sessions need the state their rows carry)");
    }
    return a;
  }

  private static ObjectNode row(Emitted e) {
    ObjectNode r = ValuesJson.JSON.createObjectNode();
    r.put("kind", e.kind);
    r.put("key", e.key);
    if (Emitted.SESSION.equals(e.kind)) {
      SessionAgg s = e.session;
      r.put("session_id", s.getSessionId());
      r.put("start_ms", s.getStartMs());
      r.put("end_ms", s.getEndMs());
      r.put("event_count", s.getEventCount());
      r.put("bytes", s.getBytes());
      r.put("revision", s.getRevision());
      r.put("truncated", s.isTruncated());
      if (e.mergedIds != null) {
        e.mergedIds.forEach(r.putArray("merged_session_ids")::add);
      }
      for (int i = 0; i < e.results.length; i++) {
        r.set(EngineOutput.aggregateColumn(i), ValuesJson.node(e.results[i]));
      }
      r.put("state", SessionRows.base64(e.state));
    } else {
      r.put("event_ts_ms", e.event.tsMs);
      r.put("raw", e.event.raw);
      r.put("reason", e.reason);
      r.put("detail", e.detail);
    }
    return r;
  }

  private static String text(JsonNode node, String field) {
    JsonNode v = node.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }
}
