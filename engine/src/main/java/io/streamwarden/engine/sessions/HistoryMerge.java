package io.streamwarden.engine.sessions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The entry the history store's merge calls (from Python, through py4j, on the driver): late
 * events that left the engine as {@link Emitted#HISTORY} records, merged into the stored
 * sessions of their users by {@link SessionLogic#mergeHistory}, the same rules as in state.
 *
 * <p>The request is JSON: {@code {"watermark_ms": W, "users": [{"user_id": U, "sessions":
 * [stored session...], "events": [{"ts_ms", "page", "url", "size", "raw"}...]}...]}}, a stored
 * session holding the fields of a session row ({@code session_id, start_ms, end_ms, page_count,
 * bytes, first_url, last_url, urls, url_times, revision, truncated}). The answer is {@code
 * {"rows": [...]}}: session rows (revised or new, with {@code merged_session_ids}) and dead
 * letters ({@code event_ts_ms, raw, reason, detail}), each with {@code kind} and {@code
 * user_id}, as {@link io.streamwarden.engine.EngineOutput} names its columns.
 */
public final class HistoryMerge {
  private static final ObjectMapper JSON = new ObjectMapper();

  private HistoryMerge() {}

  public static String mergeJson(String planJson, String requestJson) {
    SessionLogic logic = new SessionLogic(SessionPlan.fromJson(planJson));
    try {
      JsonNode request = JSON.readTree(requestJson);
      long watermarkMs = request.get("watermark_ms").asLong();
      ObjectNode answer = JSON.createObjectNode();
      ArrayNode rows = answer.putArray("rows");
      for (JsonNode user : request.get("users")) {
        String userId = user.get("user_id").asText();
        UserSessions stored = new UserSessions();
        for (JsonNode s : user.get("sessions")) {
          stored.getSessions().add(stored(s));
        }
        stored.getSessions().sort((a, b) -> Long.compare(a.getStartMs(), b.getStartMs()));
        List<Event> events = new ArrayList<>();
        for (JsonNode e : user.get("events")) {
          events.add(new Event(e.get("ts_ms").asLong(), e.get("page").asLong(),
              text(e, "url"), e.get("size").asLong(), text(e, "raw")));
        }
        for (Emitted out : logic.mergeHistory(userId, stored, events, watermarkMs)) {
          rows.add(row(out));
        }
      }
      return JSON.writeValueAsString(answer);
    } catch (IOException e) {
      throw new IllegalArgumentException("history merge request is not valid JSON", e);
    }
  }

  private static SessionAgg stored(JsonNode s) {
    SessionAgg a = new SessionAgg();
    a.setSessionId(s.get("session_id").asText());
    a.setStartMs(s.get("start_ms").asLong());
    a.setEndMs(s.get("end_ms").asLong());
    a.setPageCount(s.get("page_count").asLong());
    a.setBytes(s.get("bytes").asLong());
    a.setFirstUrl(text(s, "first_url"));
    a.setLastUrl(text(s, "last_url"));
    a.setRevision(s.get("revision").asInt());
    a.setTruncated(s.path("truncated").asBoolean(false));
    a.setClosed(true);
    JsonNode urls = s.get("urls");
    JsonNode times = s.get("url_times");
    if (urls != null && !urls.isNull() && times != null && !times.isNull()) {
      List<String> u = new ArrayList<>();
      List<Long> t = new ArrayList<>();
      urls.forEach(n -> u.add(n.isNull() ? null : n.asText()));
      times.forEach(n -> t.add(n.asLong()));
      a.setUrls(u);
      a.setUrlTimes(t);
    }
    return a;
  }

  private static ObjectNode row(Emitted e) {
    ObjectNode r = JSON.createObjectNode();
    r.put("kind", e.kind);
    r.put("user_id", e.userId);
    if (Emitted.SESSION.equals(e.kind)) {
      SessionAgg s = e.session;
      r.put("session_id", s.getSessionId());
      r.put("start_ms", s.getStartMs());
      r.put("end_ms", s.getEndMs());
      r.put("page_count", s.getPageCount());
      r.put("bytes", s.getBytes());
      r.put("first_url", s.getFirstUrl());
      r.put("last_url", s.getLastUrl());
      if (s.getUrls() != null) {
        s.getUrls().forEach(r.putArray("urls")::add);
        s.getUrlTimes().forEach(r.putArray("url_times")::add);
      }
      r.put("revision", s.getRevision());
      r.put("truncated", s.isTruncated());
      if (e.mergedIds != null) {
        e.mergedIds.forEach(r.putArray("merged_session_ids")::add);
      }
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
