package io.streamwarden.engine.sessions;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Builders for the session-rule tests (in the spirit of Flink CEP's {@code NFATestUtilities}):
 * events at explicit minutes of event time, one user's state driven batch by batch, and each
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

  /** A pageview of {@link #USER} at {@code tsMs} with url "/" and 50 bytes. */
  static Event event(long tsMs) {
    return event(tsMs, "/", 50);
  }

  static Event event(long tsMs, String url, long size) {
    return new Event(tsMs, 1, url, size, USER + "@" + tsMs);
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
    return new SessionPlan(gapMinutes * MIN, latenessMinutes * MIN, 10_000, 1L << 40, false);
  }

  /** One user's state under the rules, driven the way the processor drives it. */
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
   * {@code session 0m..5m pages=2 bytes=100 rev=0} (then {@code truncated}, {@code merged=N}
   * when set), or {@code dead_letter 1m too_late}.
   */
  static String describe(Emitted e) {
    if (Emitted.DEAD_LETTER.equals(e.kind)) {
      return "dead_letter " + time(e.event.tsMs) + " " + e.reason;
    }
    SessionAgg s = e.session;
    StringBuilder b = new StringBuilder("session ")
        .append(time(s.getStartMs())).append("..").append(time(s.getEndMs()))
        .append(" pages=").append(s.getPageCount())
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

  /** Whole minutes as {@code 5m}, anything else as {@code 1799999ms}. */
  static String time(long ms) {
    return ms % MIN == 0 ? (ms / MIN) + "m" : ms + "ms";
  }
}
