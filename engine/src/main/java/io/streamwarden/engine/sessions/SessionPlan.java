package io.streamwarden.engine.sessions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;

/**
 * Parameters of the sessionization operator, built by the Python side as JSON.
 *
 * <p>All times are epoch milliseconds; Python converts {@code timedelta} values at the boundary.
 */
public final class SessionPlan implements Serializable {
  private static final long serialVersionUID = 1L;

  /** A session ends after this much event time without an event from its user. */
  public final long gapMs;
  /** How long a closed session's summary is kept so that late events can still update it. */
  public final long allowedLatenessMs;
  /** Most events one session accepts; later ones are dead-lettered. */
  public final long maxPages;
  /** Most raw-record bytes one session accepts; later events are dead-lettered. */
  public final long maxSessionBytes;
  /** Whether each session carries the list of its urls (bounded by {@link #maxSessionBytes}). */
  public final boolean collectUrls;
  /**
   * How far behind the watermark a late event that finds no session in state may still be
   * merged into the history store's sessions (0: off). Such an event leaves the engine as a
   * {@link Emitted#HISTORY} record instead of a {@code too_late} dead letter; nothing about it
   * is kept in state.
   */
  public final long historyLatenessMs;

  public SessionPlan(
      long gapMs, long allowedLatenessMs, long maxPages, long maxSessionBytes, boolean collectUrls) {
    this(gapMs, allowedLatenessMs, maxPages, maxSessionBytes, collectUrls, 0);
  }

  public SessionPlan(long gapMs, long allowedLatenessMs, long maxPages, long maxSessionBytes,
      boolean collectUrls, long historyLatenessMs) {
    if (gapMs <= 0) {
      throw new IllegalArgumentException("gapMs must be > 0, got " + gapMs);
    }
    if (allowedLatenessMs < 0) {
      throw new IllegalArgumentException("allowedLatenessMs must be >= 0, got " + allowedLatenessMs);
    }
    if (maxPages < 1 || maxSessionBytes < 1) {
      throw new IllegalArgumentException("maxPages and maxSessionBytes must be >= 1");
    }
    this.gapMs = gapMs;
    this.allowedLatenessMs = allowedLatenessMs;
    this.maxPages = maxPages;
    this.maxSessionBytes = maxSessionBytes;
    if (historyLatenessMs != 0 && historyLatenessMs <= allowedLatenessMs) {
      throw new IllegalArgumentException("historyLatenessMs must be 0 (off) or above "
          + "allowedLatenessMs " + allowedLatenessMs + ", got " + historyLatenessMs);
    }
    this.collectUrls = collectUrls;
    this.historyLatenessMs = historyLatenessMs;
  }

  /** Whether late events beyond the in-state lateness go to the history store. */
  public boolean historyOn() {
    return historyLatenessMs > 0;
  }

  /** Reads a plan such as {@code {"gap_ms": 1800000, "allowed_lateness_ms": 0, ...}}. */
  public static SessionPlan fromJson(String json) {
    try {
      JsonNode node = new ObjectMapper().readTree(json);
      return new SessionPlan(
          required(node, "gap_ms").asLong(),
          required(node, "allowed_lateness_ms").asLong(),
          required(node, "max_pages").asLong(),
          required(node, "max_session_bytes").asLong(),
          node.path("collect_urls").asBoolean(false),
          node.path("history_lateness_ms").asLong(0));
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("session plan is not valid JSON: " + json, e);
    }
  }

  private static JsonNode required(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      throw new IllegalArgumentException("session plan lacks field '" + field + "'");
    }
    return value;
  }
}
