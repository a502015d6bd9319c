package io.streamwarden.engine.sessions;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.Iterator;
import java.util.Set;

/**
 * Parameters of the sessionization operator, built by the Python side as JSON ({@link
 * #fromJson}), with the aggregates the user declared ({@link AggregatePlan}).
 *
 * <p>All times are epoch milliseconds; Python converts {@code timedelta} values at the boundary.
 */
public final class SessionPlan implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final Set<String> KEYS = Set.of("gap_ms", "allowed_lateness_ms", "max_events",
      "max_session_bytes", "history_lateness_ms", "inputs", "aggregates", "keep_state");

  /** A session ends after this much event time without an event from its key. */
  public final long gapMs;
  /** How long a closed session's summary is kept so that late events can still update it. */
  public final long allowedLatenessMs;
  /** Most events one session accepts; later ones are dead-lettered. */
  public final long maxEvents;
  /**
   * Most bytes one session accepts: its records' bytes plus the bytes of the values its
   * aggregates hold ({@link Accumulator#heldBytes}); later events are dead-lettered.
   */
  public final long maxSessionBytes;
  /**
   * How far behind the watermark a late event that finds no session in state may still be
   * merged into the history store's sessions (0: off). Such an event leaves the engine as a
   * {@link Emitted#HISTORY} record instead of a {@code too_late} dead letter; nothing about it
   * is kept in state.
   */
  public final long historyLatenessMs;
  /** The inputs and aggregates each session carries. */
  public final AggregatePlan aggregates;
  /**
   * Whether session rows carry the encoded aggregate state ({@code state}), which the history
   * store needs to merge late events into a stored session later.
   */
  public final boolean keepState;

  /** A plan without aggregates, history lateness or kept state. */
  public SessionPlan(long gapMs, long allowedLatenessMs, long maxEvents, long maxSessionBytes) {
    this(gapMs, allowedLatenessMs, maxEvents, maxSessionBytes, 0, AggregatePlan.NONE, false);
  }

  public SessionPlan(long gapMs, long allowedLatenessMs, long maxEvents, long maxSessionBytes,
      long historyLatenessMs, AggregatePlan aggregates, boolean keepState) {
    if (gapMs <= 0) {
      throw new IllegalArgumentException("session plan: gap_ms must be > 0, got " + gapMs);
    }
    if (allowedLatenessMs < 0) {
      throw new IllegalArgumentException("session plan: allowed_lateness_ms must be >= 0, got "
          + allowedLatenessMs);
    }
    if (maxEvents < 1 || maxSessionBytes < 1) {
      throw new IllegalArgumentException("session plan: max_events and max_session_bytes must "
          + "be >= 1, got " + maxEvents + " and " + maxSessionBytes);
    }
    if (historyLatenessMs != 0 && historyLatenessMs <= allowedLatenessMs) {
      throw new IllegalArgumentException("session plan: history_lateness_ms must be 0 (off) or "
          + "above allowed_lateness_ms " + allowedLatenessMs + ", got " + historyLatenessMs);
    }
    if (historyLatenessMs != 0 && aggregates != null && aggregates.size() > 0 && !keepState) {
      throw new IllegalArgumentException("session plan: history_lateness_ms needs keep_state "
          + "when the plan has aggregates: the history store merges late events into a stored "
          + "session through the aggregate state its row carries");
    }
    this.gapMs = gapMs;
    this.allowedLatenessMs = allowedLatenessMs;
    this.maxEvents = maxEvents;
    this.maxSessionBytes = maxSessionBytes;
    this.historyLatenessMs = historyLatenessMs;
    this.aggregates = aggregates == null ? AggregatePlan.NONE : aggregates;
    this.keepState = keepState;
  }

  /** This plan, with session rows carrying their aggregate state or not. */
  public SessionPlan withKeepState(boolean keep) {
    return new SessionPlan(gapMs, allowedLatenessMs, maxEvents, maxSessionBytes,
        historyLatenessMs, aggregates, keep);
  }

  /** Whether late events beyond the in-state lateness go to the history store. */
  public boolean historyOn() {
    return historyLatenessMs > 0;
  }

  /**
   * Reads a plan such as {@code {"gap_ms": 1800000, "allowed_lateness_ms": 0, "max_events":
   * 300, "max_session_bytes": 4000000, "inputs": ["double"], "aggregates": [{"function": "sum",
   * "input": 0}]}}; {@code history_lateness_ms}, {@code inputs}, {@code aggregates} and {@code
   * keep_state} may be left out.
   *
   * @throws IllegalArgumentException if it is not valid JSON, lacks a field, has an unknown one,
   *     or holds a value out of range
   */
  public static SessionPlan fromJson(String json) {
    JsonNode node;
    try {
      node = new ObjectMapper().readTree(json);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("session plan is not valid JSON: " + json, e);
    }
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException("session plan is not a JSON object: " + json);
    }
    for (Iterator<String> keys = node.fieldNames(); keys.hasNext();) {
      String key = keys.next();
      if (!KEYS.contains(key)) {
        throw new IllegalArgumentException("session plan has an unknown field '" + key
            + "'; the fields are " + new java.util.TreeSet<>(KEYS));
      }
    }
    return new SessionPlan(
        number(node, "gap_ms", true),
        number(node, "allowed_lateness_ms", true),
        number(node, "max_events", true),
        number(node, "max_session_bytes", true),
        number(node, "history_lateness_ms", false),
        AggregatePlan.fromJson(node.get("inputs"), node.get("aggregates")),
        flag(node, "keep_state"));
  }

  private static boolean flag(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      return false;
    }
    if (!value.isBoolean()) {
      throw new IllegalArgumentException("session plan: '" + field + "' must be true or false, "
          + "got " + value);
    }
    return value.asBoolean();
  }

  private static long number(JsonNode node, String field, boolean required) {
    JsonNode value = node.get(field);
    if (value == null || value.isNull()) {
      if (required) {
        throw new IllegalArgumentException("session plan lacks field '" + field + "'");
      }
      return 0;
    }
    if (!value.isIntegralNumber() || !value.canConvertToLong()) {
      throw new IllegalArgumentException("session plan: '" + field + "' must be a whole number, "
          + "got " + value);
    }
    return value.asLong();
  }
}
