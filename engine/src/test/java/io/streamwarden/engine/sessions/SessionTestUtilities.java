package io.streamwarden.engine.sessions;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Builders for the session-rule tests (in the spirit of Flink CEP's {@code NFATestUtilities}):
 * events at explicit minutes of event time, one key's state driven batch by batch, and each
 * emitted record written as one line of text so that a test states its exact output.
 */
final class SessionTestUtilities {
  static final long MIN = 60_000L;
  static final String USER = "u";

  private SessionTestUtilities() {}

  /** Event time {@code minutes} after the epoch, in milliseconds. */
  static long at(long minutes) {
    return minutes * MIN;
  }

  /** An event of {@link #USER} at {@code tsMs} of 50 bytes, without input values. */
  static Event event(long tsMs) {
    return event(tsMs, 50);
  }

  static Event event(long tsMs, long size) {
    return new Event(tsMs, size, USER + "@" + tsMs);
  }

  /** An event of 50 bytes at {@code tsMs} with input values. */
  static Event valued(long tsMs, Object... values) {
    return new Event(tsMs, 50, USER + "@" + tsMs, values);
  }

  /** Events at each of {@code minutes}. */
  static List<Event> eventsAt(long... minutes) {
    List<Event> events = new ArrayList<>();
    for (long m : minutes) {
      events.add(event(at(m)));
    }
    return events;
  }

  /** Plan with a gap and allowed lateness in minutes and caps high enough not to matter. */
  static SessionPlan plan(long gapMinutes, long latenessMinutes) {
    return new SessionPlan(gapMinutes * MIN, latenessMinutes * MIN, 10_000, 1L << 40);
  }

  /**
   * Plan with a gap and allowed lateness in minutes, high caps, and the plan's {@code inputs}
   * and {@code aggregates} given as their JSON lists.
   */
  static SessionPlan plan(long gapMinutes, long latenessMinutes, String inputs,
      String aggregates) {
    return SessionPlan.fromJson(planJson(gapMinutes, latenessMinutes, 10_000, 1L << 40, inputs,
        aggregates));
  }

  static String planJson(long gapMinutes, long latenessMinutes, long maxEvents,
      long maxSessionBytes, String inputs, String aggregates) {
    return "{\"gap_ms\": " + gapMinutes * MIN + ", \"allowed_lateness_ms\": "
        + latenessMinutes * MIN + ", \"max_events\": " + maxEvents
        + ", \"max_session_bytes\": " + maxSessionBytes + ", \"inputs\": " + inputs
        + ", \"aggregates\": " + aggregates + "}";
  }

  /** {@code planJson} with more fields, such as {@code "\"keep_state\": true"}. */
  static String withFields(String planJson, String fields) {
    int end = planJson.lastIndexOf('}');
    return planJson.substring(0, end) + ", " + fields + "}";
  }

  /** The plan's one aggregate {@code function} over its one input of {@code kind}. */
  static SessionPlan oneAggregate(String function, String kind) {
    return plan(30, 0, "[\"" + kind + "\"]",
        "[{\"function\": \"" + function + "\", \"input\": 0}]");
  }

  /** The inputs of {@link #everyFunction}: one of each kind. */
  static final String EVERY_KIND = "[\"long\", \"double\", \"string\", \"boolean\"]";

  /**
   * The aggregates list of {@code count()} and every function over every input of {@link
   * #EVERY_KIND} it takes.
   */
  static String everyFunction() {
    StringBuilder b = new StringBuilder("[{\"function\": \"count\"}");
    for (int input = 0; input < 4; input++) {
      for (AggregateFunction f : AggregateFunction.values()) {
        if (input < 2 || !f.numbersOnly()) {
          b.append(", {\"function\": \"").append(f.planName).append("\", \"input\": ")
              .append(input).append('}');
        }
      }
    }
    return b.append(']').toString();
  }

  /** One key's state under the rules, driven the way the processor drives it. */
  static final class UserDriver {
    final SessionLogic logic;
    final UserSessions state = new UserSessions();

    UserDriver(SessionPlan plan) {
      this.logic = new SessionLogic(plan);
    }

    /** One micro-batch of the user's events under {@code watermarkMs}, described. */
    List<String> batch(long watermarkMs, List<Event> events) {
      return describe(logic.onEvents(USER, state, new ArrayList<>(events), watermarkMs));
    }

    List<String> batch(long watermarkMs, Event... events) {
      return batch(watermarkMs, Arrays.asList(events));
    }

    /** The event-time timer firing at {@code watermarkMs}, described. */
    List<String> watermark(long watermarkMs) {
      return describe(logic.onWatermark(USER, state, watermarkMs));
    }

    List<Emitted> rawWatermark(long watermarkMs) {
      return logic.onWatermark(USER, state, watermarkMs);
    }

    /** One micro-batch, undescribed. */
    List<Emitted> rawBatch(long watermarkMs, Event... events) {
      return logic.onEvents(USER, state, new ArrayList<>(Arrays.asList(events)), watermarkMs);
    }

    /**
     * The state as the store would give it back: a serialized copy, so that every session's
     * aggregates are decoded from their encoded state when next touched.
     */
    void reloadState() {
      try {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        try (java.io.ObjectOutputStream out = new java.io.ObjectOutputStream(bytes)) {
          out.writeObject(state.getSessions());
        }
        try (java.io.ObjectInputStream in = new java.io.ObjectInputStream(
            new java.io.ByteArrayInputStream(bytes.toByteArray()))) {
          @SuppressWarnings("unchecked")
          List<SessionAgg> copy = (List<SessionAgg>) in.readObject();
          state.setSessions(copy);
        }
      } catch (java.io.IOException | ClassNotFoundException e) {
        throw new IllegalStateException(e);
      }
    }

    long nextDeadline() {
      return logic.nextDeadline(state);
    }
  }

  static List<String> describe(List<Emitted> emitted) {
    List<String> lines = new ArrayList<>(emitted.size());
    for (Emitted e : emitted) {
      lines.add(describe(e));
    }
    return lines;
  }

  /**
   * {@code session 0m..5m events=2 bytes=100 rev=0} (then {@code truncated}, {@code merged=N}
   * when set), or {@code dead_letter 1m too_late}.
   */
  static String describe(Emitted e) {
    if (Emitted.DEAD_LETTER.equals(e.kind)) {
      return "dead_letter " + time(e.event.tsMs) + " " + e.reason;
    }
    SessionAgg s = e.session;
    StringBuilder b = new StringBuilder("session ")
        .append(time(s.getStartMs())).append("..").append(time(s.getEndMs()))
        .append(" events=").append(s.getEventCount())
        .append(" bytes=").append(s.getBytes())
        .append(" rev=").append(s.getRevision());
    if (s.isTruncated()) {
      b.append(" truncated");
    }
    if (e.mergedIds != null) {
      b.append(" merged=").append(e.mergedIds.size());
    }
    return b.toString();
  }

  /** JSON text as a tree. */
  static com.fasterxml.jackson.databind.JsonNode json(String text) {
    try {
      return ValuesJson.JSON.readTree(text);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException(text, e);
    }
  }

  /** Whole minutes as {@code 5m}, anything else as {@code 1799999ms}. */
  static String time(long ms) {
    return ms % MIN == 0 ? (ms / MIN) + "m" : ms + "ms";
  }
}
